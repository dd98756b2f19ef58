//! Helpers of the OAuth tests: the `oauth-server` fixture (a real authorization server and a
//! protected MCP endpoint on loopback, run as a child process), a "browser" that consents by
//! following the authorization server's redirect to the loopback listener, and small builders.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use plugboard::config::{Auth, OAuthSettings, ServerConfig, TransportKind};
use plugboard::oauth::{JobState, JobStatus, OAuthContext, OAuthJobs, OAuthOptions};
use plugboard::secrets::SecretStore;
use serde_json::Value;

/// The fixture binary, built once per test run (a no-op when it is up to date).
fn fixture_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = crate::support::repo_root();
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["build", "--quiet", "-p", "oauth-server"])
                .current_dir(&root)
                .status()
                .expect("run cargo build -p oauth-server");
            assert!(status.success(), "cargo build -p oauth-server failed");
            // target/debug/deps/it-<hash> → target/debug/oauth-server
            let exe = std::env::current_exe().expect("test exe");
            let dir = exe.parent().and_then(Path::parent).expect("target dir");
            dir.join("oauth-server")
        })
        .clone()
}

/// A running `oauth-server`; killed on drop.
pub struct OAuthServer {
    child: Child,
    pub base: String,
}

impl OAuthServer {
    pub fn start(args: &[&str]) -> OAuthServer {
        let mut child = Command::new(fixture_binary())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn oauth-server");
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).expect("read PORT=");
        let port = line
            .trim()
            .strip_prefix("PORT=")
            .unwrap_or_else(|| panic!("oauth-server said {line:?}"))
            .to_string();
        OAuthServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The issuer: the fixture's own origin.
    pub fn issuer(&self) -> &str {
        &self.base
    }

    /// From now on the protected resource names `issuer` as its authorization server.
    pub async fn name_authorization_server(&self, issuer: &str) {
        let response = fixture_client()
            .post(format!("{}/control/authorization-server", self.base))
            .body(issuer.to_owned())
            .send()
            .await
            .expect("the fixture answers");
        assert!(response.status().is_success(), "{}", response.status());
    }

    /// The identity provider (`/idp/token`) accepts `id_token` as the user's from now on.
    pub async fn set_id_token(&self, id_token: &str) {
        let response = fixture_client()
            .post(format!("{}/control/id-token", self.base))
            .body(id_token.to_owned())
            .send()
            .await
            .expect("the fixture answers");
        assert!(response.status().is_success(), "{}", response.status());
    }

    /// What the fixture counted (registrations, code_exchanges, refreshes, revocations, ...).
    pub async fn stats(&self) -> Value {
        json_answer(fixture_client().get(format!("{}/stats", self.base))).await
    }

    /// The "developer console": a confidential client registered for `redirect_uri`,
    /// authenticating with `method`; the registration answer (`client_id`, `client_secret`).
    pub async fn register_confidential_client(&self, redirect_uri: &str, method: &str) -> Value {
        let body = serde_json::json!({"redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": method});
        json_answer(
            fixture_client()
                .post(format!("{}/register", self.base))
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        )
        .await
    }

    pub async fn stat(&self, name: &str) -> u64 {
        self.stats()
            .await
            .get(name)
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether nothing answers at `url` any more, within a second (a callback listener that
/// has closed).
pub async fn stops_answering(url: &str) -> bool {
    let client = plugboard::tls::http_client_builder().build().unwrap();
    for _ in 0..50 {
        if client.get(url).send().await.is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

fn fixture_client() -> reqwest::Client {
    plugboard::tls::http_client_builder().build().unwrap()
}

/// The JSON the fixture answers `request` with.
async fn json_answer(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// A client that never follows redirects (the test plays the browser step by step).
pub fn browser() -> reqwest::Client {
    plugboard::tls::http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// "Open" the authorization URL: the fixture consents at once and redirects; return where to.
pub async fn consent(auth_url: &str) -> String {
    let response = browser().get(auth_url).send().await.expect("authorize");
    assert_eq!(
        response.status().as_u16(),
        302,
        "authorize answered {}",
        response.status()
    );
    response
        .headers()
        .get("location")
        .expect("Location")
        .to_str()
        .unwrap()
        .to_string()
}

/// Follow a redirect to the loopback listener; returns (status, page).
pub async fn deliver(location: &str) -> (u16, String) {
    let response = browser().get(location).send().await.expect("callback");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// A remote OAuth server config with its own secret namespace.
pub fn oauth_server_config(url: &str) -> ServerConfig {
    let mut server = ServerConfig::remote(TransportKind::Shttp, url);
    server.auth = Auth::Oauth2(OAuthSettings::default());
    server.secret_namespace = Some(format!("oauth-test-{:016x}", rand::random::<u64>()));
    server
}

pub fn context(
    home: &Path,
    store: Arc<dyn SecretStore>,
    tweak: impl FnOnce(&mut OAuthOptions),
) -> OAuthContext {
    let mut options = OAuthOptions::default();
    tweak(&mut options);
    OAuthContext::with_options(store, home, options).unwrap()
}

/// Run a whole sign-in with the browser playing along; returns the final status.
pub async fn sign_in(jobs: &OAuthJobs, name: &str, server: &ServerConfig) -> JobStatus {
    let job = jobs.start(name, server).unwrap();
    let ready = jobs.wait_until_ready(&job).await.unwrap();
    assert_eq!(ready.state, JobState::AwaitingUser, "{ready:?}");
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let (status, page) = deliver(&location).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("close this window"), "{page}");
    jobs.wait(&job).await.unwrap()
}

/// POST one JSON-RPC request to the MCP endpoint with a bearer token; returns (status, body).
pub async fn mcp_call(url: &str, token: &str, method: &str) -> (u16, Value) {
    let response = plugboard::tls::http_client_builder()
        .build()
        .unwrap()
        .post(url)
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}
            }})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Assert that no file under `dir` contains any of `needles`.
pub fn assert_no_file_contains(dir: &Path, needles: &[&str]) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            for n in needles {
                assert!(
                    !crate::support::contains_bytes(&bytes, n.as_bytes()),
                    "{} contains a token",
                    path.display()
                );
            }
        }
    }
}
