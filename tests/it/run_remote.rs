//! `plugboard run NAME` for remote servers: stdio bridged to streamable HTTP (a fixture that
//! requires a bearer token, which only Plugboard's store holds) and, through `auto`, to legacy
//! SSE; a real client (the Python SDK's stdio client) lists the tools and calls one.

use crate::run_stdio::python_client;
use crate::support::fixture::HttpFixture;
use crate::support::{Home, assert_code, contains_bytes, require_keyring, stderr, stdout};

fn plugboard() -> String {
    crate::support::plugboard_bin()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_python_sdk_client_reaches_a_bearer_protected_http_server() {
    require_keyring();
    let token = format!("bearer-{:016x}", rand::random::<u64>());
    let fixture = HttpFixture::start("http", &["--expect-bearer", &token]);
    let home = Home::new();
    let out = home.run_with_stdin(
        &[
            "add",
            "web",
            "--url",
            &fixture.url("/mcp"),
            "--transport",
            "shttp",
            "--bearer-stdin",
            "--no-test",
        ],
        &token,
    );
    assert_code(&out, 0);
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, token.as_bytes()),
            "{}",
            path.display()
        );
    }
    let result = python_client(&home, "check_credentials", &[&plugboard(), "run", "web"]);
    assert_eq!(result["server"], fixture.marker);
    let tools = result["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "check_credentials"), "{result}");
    assert_eq!(result["call"]["is_error"], false, "{result}");

    // Without the token the server refuses, and the client is told so (no hang, no secret).
    let bare = Home::new();
    let out = bare.run(&[
        "add",
        "bare",
        "--url",
        &fixture.url("/mcp"),
        "--transport",
        "shttp",
        "--no-test",
    ]);
    assert_code(&out, 0);
    let init = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n"
    );
    let out = bare.run_with_stdin(&["run", "bare"], init);
    let answer: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(answer["id"], 1);
    assert!(
        answer["error"]["message"].as_str().unwrap().contains("401"),
        "{answer}"
    );
    assert!(!stderr(&out).contains(&token));
}

#[test]
fn auto_falls_back_to_sse_for_the_python_sdk_client() {
    let fixture = HttpFixture::start("http", &["--misbehave", "sse-only"]);
    let home = Home::new();
    let out = home.run(&[
        "add",
        "legacy",
        "--url",
        &fixture.url("/mcp"),
        "--transport",
        "auto",
        "--no-test",
    ]);
    assert_code(&out, 0);
    let result = python_client(&home, "echo", &[&plugboard(), "run", "legacy"]);
    assert_eq!(result["server"], fixture.marker);
    assert!(
        result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "echo")
    );
}

/// An OAuth server behind `plugboard run`: the stored token is sent, and when the server answers
/// 401 (the short-lived token expired mid-session) the bridge refreshes it and retries once;
/// the client never sees the 401.
#[test]
fn oauth_tokens_are_added_and_refreshed_after_a_401() {
    #[allow(unused_imports)]
    use std::io::Read as _;
    use std::io::{BufRead, BufReader, Write};
    use std::sync::Arc;
    use std::time::Duration;

    use plugboard::config::ConfigStore;
    use plugboard::oauth::{JobState, OAuthJobs};
    use plugboard::secrets::{KeyringStore, SecretStore};

    use crate::oauth_fixture::{OAuthServer, context, oauth_server_config, sign_in};

    require_keyring();
    let fixture = OAuthServer::start(&["--token-ttl", "2"]);
    let home = Home::new();
    let server = oauth_server_config(&fixture.mcp_url());
    ConfigStore::new(home.path()).add("oa", &server).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store: Arc<dyn SecretStore> = Arc::new(KeyringStore::open().unwrap());
        let ctx = context(home.path(), store, |_| {});
        let done = sign_in(&OAuthJobs::new(ctx), "oa", &server).await;
        assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    });

    let log = home.path().join("run-stderr.txt");
    let mut child = home
        .cmd(&["run", "oa"])
        .env("PLUGBOARD_RUN_TRACE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let mut ask = |line: &str| -> serde_json::Value {
        stdin.write_all(line.as_bytes()).unwrap();
        if line.contains("notifications/") {
            stdin.write_all(b"\n").unwrap();
            stdin.flush().unwrap();
            return serde_json::Value::Null;
        }
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let answer = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| {
                panic!(
                    "no answer to {line}; plugboard run said: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        serde_json::from_str(&answer).unwrap()
    };
    let init = ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(
        init["result"]["serverInfo"]["name"], "oauth-fixture",
        "{init}"
    );
    ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let list = ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(list["result"]["tools"][0]["name"], "whoami", "{list}");
    // Let the access token expire at the server: the next request gets a 401 first.
    std::thread::sleep(Duration::from_millis(2300));
    let call = ask(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
    );
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("scopes:"),
        "{call}"
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    rt.block_on(async {
        assert!(fixture.stat("refreshes").await >= 1);
        assert!(
            fixture.stat("mcp_unauthorized").await >= 1,
            "the 401 happened"
        );
    });
}

/// A remote server that is not running: the client's first request is answered with an error
/// that says where nothing listens, and `run` exits 1.
#[test]
fn a_server_that_is_not_running_is_named_with_its_address() {
    let home = Home::new();
    let port = crate::support::fixture::closed_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    assert_code(&home.run(&["add", "down", "--no-test", "--url", &url]), 0);
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let out = home.run_with_stdin(&["run", "down"], &format!("{initialize}\n"));
    assert_code(&out, 1);
    let answer: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(answer["id"], 1);
    let message = answer["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!(
            "plugboard could not reach the server: connection refused at 127.0.0.1:{port}: is \
             the server running?"
        )
    );
}
