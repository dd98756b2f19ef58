//! OAuth end to end against a real authorization server and protected MCP endpoint on loopback
//! (`fixtures/oauth-server`): discovery, dynamic registration, the job state machine, PKCE, the
//! loopback callback and the pasted redirect, tokens in the store, refresh (rotated or not, one
//! at a time), the 401 path, scope step-up, revocation on forget.

use std::sync::Arc;
use std::time::Duration;

use plugboard::oauth::{JobState, OAuthError, OAuthJobs, TOKENS_SECRET, token_status};
use plugboard::secrets::{MemoryStore, SecretKey, SecretStore};
use serde_json::Value;

use crate::oauth_fixture::{
    OAuthServer, assert_no_file_contains, consent, context, deliver, mcp_call, oauth_server_config,
    sign_in, stops_answering,
};

/// The stored token record (the test looks inside the secret store on purpose).
fn stored_tokens(store: &dyn SecretStore, server: &plugboard::config::ServerConfig) -> Value {
    let ns = server.secret_namespace.as_deref().unwrap();
    let raw = store
        .get(&SecretKey::new(ns, TOKENS_SECRET))
        .unwrap()
        .expect("tokens stored");
    serde_json::from_str(raw.expose()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_flow_stores_tokens_and_the_token_opens_the_server() {
    let fixture = OAuthServer::start(&["--iss"]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |_| {});
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());

    // Without a token the server refuses and says where its metadata is.
    let (status, _) = mcp_call(&fixture.mcp_url(), "nothing", "initialize").await;
    assert_eq!(status, 401);
    assert_eq!(ctx.fresh_access_token("srv", &server).await.unwrap(), None);

    let job = jobs.start("srv", &server).unwrap();
    let ready = jobs.wait_until_ready(&job).await.unwrap();
    assert_eq!(ready.state, JobState::AwaitingUser, "{ready:?}");
    let auth_url = url::Url::parse(ready.authorization_url.as_deref().unwrap()).unwrap();
    let q: std::collections::HashMap<_, _> = auth_url.query_pairs().into_owned().collect();
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["resource"], fixture.mcp_url());
    assert_eq!(q["scope"], "mcp:read offline_access");
    assert!(q["redirect_uri"].starts_with("http://127.0.0.1:"));
    assert!(ready.expires_in_secs.unwrap() > 100);

    let location = consent(auth_url.as_str()).await;
    let (code, page) = deliver(&location).await;
    assert_eq!(code, 200, "{page}");
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    assert_eq!(done.error, None);
    assert_eq!(done.authorization_url, None);

    // The listener accepted one callback and is gone.
    let closed = stops_answering(&location).await;
    assert!(
        closed,
        "the callback listener still answers after the sign-in"
    );

    let status = token_status("srv", &server, store.as_ref()).unwrap();
    assert!(status.signed_in && status.refreshable, "{status:?}");
    assert_eq!(status.scopes, vec!["mcp:read", "offline_access"]);

    let token = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    let (status, body) = mcp_call(&fixture.mcp_url(), token.expose(), "initialize").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["serverInfo"]["name"], "oauth-fixture");
    let (status, body) = mcp_call(&fixture.mcp_url(), token.expose(), "tools/list").await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["tools"][0]["name"], "whoami");

    // Tokens and the registration are in the store, under the server's namespace only.
    let ns = server.secret_namespace.clone().unwrap();
    let names: Vec<_> = store
        .keys()
        .iter()
        .map(|k| (k.namespace().to_string(), k.name().to_string()))
        .collect();
    assert_eq!(
        names,
        vec![
            (ns.clone(), "oauth_client".into()),
            (ns, "oauth_tokens".into())
        ]
    );
    let record = stored_tokens(store.as_ref(), &server);
    let refresh = record["refresh_token"].as_str().unwrap().to_string();
    // Nothing token-like anywhere in the config directory, and not in what the job reports.
    assert_no_file_contains(home.path(), &[token.expose(), &refresh]);
    let shown = format!("{:?} {}", done, serde_json::to_string(&done).unwrap());
    assert!(!shown.contains(token.expose().as_str()) && !shown.contains(&refresh));
    assert!(!format!("{token:?}").contains(token.expose().as_str()));
    assert_eq!(fixture.stat("registrations").await, 1);
    assert_eq!(fixture.stat("code_exchanges").await, 1);

    // A second sign-in reuses the registration (same redirect port when free).
    let again = sign_in(&jobs, "srv", &server).await;
    assert_eq!(again.state, JobState::Succeeded, "{again:?}");
    assert_eq!(fixture.stat("registrations").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_lived_tokens_are_refreshed_and_rotated_refresh_tokens_are_kept() {
    let fixture = OAuthServer::start(&["--token-ttl", "3"]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |o| {
        o.refresh_margin = Duration::from_secs(1)
    });
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());
    assert_eq!(
        sign_in(&jobs, "srv", &server).await.state,
        JobState::Succeeded
    );

    let first = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    let first_refresh = stored_tokens(store.as_ref(), &server)["refresh_token"].clone();
    assert_eq!(fixture.stat("refreshes").await, 0);
    tokio::time::sleep(Duration::from_millis(3100)).await;
    // The old token is dead at the server; the fresh one works.
    assert_eq!(
        mcp_call(&fixture.mcp_url(), first.expose(), "ping").await.0,
        401
    );
    let second = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(first, second);
    assert_eq!(fixture.stat("refreshes").await, 1);
    assert_eq!(
        mcp_call(&fixture.mcp_url(), second.expose(), "ping")
            .await
            .0,
        200
    );
    // The server rotated the refresh token; the new one is stored and works next time.
    assert_ne!(
        stored_tokens(store.as_ref(), &server)["refresh_token"],
        first_refresh
    );
    // Within the refresh margin (less than 1 s left): refreshed before it expires.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let third = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        mcp_call(&fixture.mcp_url(), third.expose(), "ping").await.0,
        200
    );
    assert_eq!(fixture.stat("refreshes").await, 2);
    assert_eq!(fixture.stat("refresh_refused").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrotated_refresh_token_is_kept_and_reused() {
    let fixture = OAuthServer::start(&["--token-ttl", "1", "--no-rotate"]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |o| {
        o.refresh_margin = Duration::ZERO
    });
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());
    assert_eq!(
        sign_in(&jobs, "srv", &server).await.state,
        JobState::Succeeded
    );
    let refresh = stored_tokens(store.as_ref(), &server)["refresh_token"].clone();
    for round in 1..=2 {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let token = ctx
            .fresh_access_token("srv", &server)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            mcp_call(&fixture.mcp_url(), token.expose(), "ping").await.0,
            200
        );
        assert_eq!(fixture.stat("refreshes").await, round);
        assert_eq!(
            stored_tokens(store.as_ref(), &server)["refresh_token"],
            refresh
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_refreshes_of_one_server_happen_once() {
    let fixture = OAuthServer::start(&["--token-ttl", "2"]);
    let home = tempfile::tempdir().unwrap();
    let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let server = oauth_server_config(&fixture.mcp_url());
    let first = context(home.path(), store.clone(), |o| {
        o.refresh_margin = Duration::ZERO
    });
    assert_eq!(
        sign_in(&OAuthJobs::new(first.clone()), "srv", &server)
            .await
            .state,
        JobState::Succeeded
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    // Eight independent contexts (as separate processes would be) refresh at once; the lock
    // file serializes them and all but one find the token already refreshed.
    let mut tasks = vec![];
    for _ in 0..8 {
        let ctx = context(home.path(), store.clone(), |o| {
            o.refresh_margin = Duration::ZERO
        });
        let server = server.clone();
        tasks.push(tokio::spawn(async move {
            ctx.fresh_access_token("srv", &server).await
        }));
    }
    let mut tokens = vec![];
    for t in tasks {
        tokens.push(t.await.unwrap().unwrap().unwrap());
    }
    tokens.dedup();
    assert_eq!(tokens.len(), 1, "all callers got the same new token");
    assert_eq!(fixture.stat("refreshes").await, 1);
    assert_eq!(fixture.stat("refresh_refused").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_refreshes_once_even_when_two_callers_report_it() {
    let fixture = OAuthServer::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |_| {});
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());
    assert_eq!(
        sign_in(&jobs, "srv", &server).await.state,
        JobState::Succeeded
    );

    let rejected = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    let renewed = ctx
        .refresh_after_401("srv", &server, &rejected)
        .await
        .unwrap();
    assert_ne!(rejected, renewed);
    assert_eq!(fixture.stat("refreshes").await, 1);
    // A second caller reporting the same rejected token gets the renewed one, no new refresh.
    let again = ctx
        .refresh_after_401("srv", &server, &rejected)
        .await
        .unwrap();
    assert_eq!(again, renewed);
    assert_eq!(fixture.stat("refreshes").await, 1);
    assert_eq!(
        mcp_call(&fixture.mcp_url(), renewed.expose(), "ping")
            .await
            .0,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoked_refresh_token_means_login_required() {
    let fixture = OAuthServer::start(&["--token-ttl", "1"]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |o| {
        o.refresh_margin = Duration::ZERO
    });
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());
    assert_eq!(
        sign_in(&jobs, "srv", &server).await.state,
        JobState::Succeeded
    );
    // Revoke the refresh token at the server behind Plugboard's back.
    let record = stored_tokens(store.as_ref(), &server);
    let ns = server.secret_namespace.as_deref().unwrap();
    let client: Value = serde_json::from_str(
        store
            .get(&SecretKey::new(ns, "oauth_client"))
            .unwrap()
            .unwrap()
            .expose(),
    )
    .unwrap();
    let form = format!(
        "token={}&client_id={}",
        record["refresh_token"].as_str().unwrap(),
        client["client_id"].as_str().unwrap()
    );
    let r = plugboard::tls::http_client_builder()
        .build()
        .unwrap()
        .post(format!("{}/revoke", fixture.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let err = ctx.fresh_access_token("srv", &server).await.unwrap_err();
    assert!(matches!(err, OAuthError::LoginRequired(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("plugboard auth srv") && text.contains("invalid_grant"),
        "{text}"
    );
    assert!(!text.contains(record["refresh_token"].as_str().unwrap()));
    assert!(
        !token_status("srv", &server, store.as_ref())
            .unwrap()
            .signed_in
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forgetting_a_server_revokes_its_tokens_and_deletes_its_secrets() {
    let fixture = OAuthServer::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |_| {});
    let server = oauth_server_config(&fixture.mcp_url());
    assert_eq!(
        sign_in(&OAuthJobs::new(ctx.clone()), "srv", &server)
            .await
            .state,
        JobState::Succeeded
    );
    let token = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        mcp_call(&fixture.mcp_url(), token.expose(), "ping").await.0,
        200
    );

    let outcome = ctx.revoke_and_forget("srv", &server).await.unwrap();
    assert!(outcome.had_tokens && outcome.revoked, "{outcome:?}");
    assert!(outcome.warnings.is_empty());
    assert_eq!(fixture.stat("revocations").await, 2);
    assert_eq!(
        mcp_call(&fixture.mcp_url(), token.expose(), "ping").await.0,
        401
    );
    assert!(store.keys().is_empty(), "{:?}", store.keys());
    assert!(
        std::fs::read_dir(home.path()).unwrap().next().is_none(),
        "lock file removed"
    );
    // Forgetting twice is harmless.
    let again = ctx.revoke_and_forget("srv", &server).await.unwrap();
    assert!(!again.had_tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insufficient_scope_steps_up_once_then_stops() {
    let fixture = OAuthServer::start(&["--write-scope"]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |_| {});
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());
    assert_eq!(
        sign_in(&jobs, "srv", &server).await.state,
        JobState::Succeeded
    );

    let token = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    let response = plugboard::tls::http_client_builder()
        .build()
        .unwrap()
        .post(fixture.mcp_url())
        .bearer_auth(token.expose())
        .header("Content-Type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();

    let scopes = ctx
        .record_insufficient_scope("srv", &server, &challenge)
        .unwrap();
    assert!(scopes.contains(&"mcp:write".to_string()) && scopes.contains(&"mcp:read".to_string()));
    assert_eq!(
        token_status("srv", &server, store.as_ref())
            .unwrap()
            .pending_scopes,
        vec!["mcp:read", "mcp:write"]
    );

    // The next sign-in asks for the union.
    let job = jobs.start("srv", &server).unwrap();
    let ready = jobs.wait_until_ready(&job).await.unwrap();
    assert!(ready.scopes.contains(&"mcp:write".to_string()), "{ready:?}");
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    deliver(&location).await;
    assert_eq!(jobs.wait(&job).await.unwrap().state, JobState::Succeeded);
    let token = ctx
        .fresh_access_token("srv", &server)
        .await
        .unwrap()
        .unwrap();
    let (status, body) = {
        let r = plugboard::tls::http_client_builder()
            .build()
            .unwrap()
            .post(fixture.mcp_url())
            .bearer_auth(token.expose())
            .header("Content-Type", "application/json")
            .body(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami"}}"#)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("mcp:write"));

    // Asked again for scopes the token already has: a new sign-in would not help.
    let err = ctx
        .record_insufficient_scope("srv", &server, &challenge)
        .unwrap_err();
    assert!(matches!(err, OAuthError::StepUpLimit(_)), "{err}");
    assert!(err.to_string().contains("would not help"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_redirect_url_completes_the_job_and_a_foreign_one_is_refused() {
    let fixture = OAuthServer::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |_| {});
    let jobs = OAuthJobs::new(ctx.clone());
    let server = oauth_server_config(&fixture.mcp_url());

    let job = jobs.start("srv", &server).unwrap();
    let ready = jobs.wait_until_ready(&job).await.unwrap();
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let redirect = ready.redirect_uri.clone().unwrap();
    assert!(location.starts_with(&redirect));

    // Another sign-in's response (wrong state): refused, and the job keeps waiting.
    let mut foreign = url::Url::parse(&location).unwrap();
    let pairs: Vec<(String, String)> = foreign
        .query_pairs()
        .into_owned()
        .map(|(k, v)| {
            if k == "state" {
                (k, "someone-else".into())
            } else {
                (k, v)
            }
        })
        .collect();
    foreign.query_pairs_mut().clear().extend_pairs(pairs);
    let err = jobs
        .complete_with_redirect_url(&job, foreign.as_str())
        .await
        .unwrap_err();
    assert!(matches!(err, OAuthError::StateMismatch), "{err}");
    assert!(err.to_string().contains("state"));
    // Not a redirect of this sign-in at all.
    let err = jobs
        .complete_with_redirect_url(&job, "https://example.com/callback?code=x&state=y")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("redirect URI"), "{err}");
    assert_eq!(jobs.status(&job).unwrap().state, JobState::AwaitingUser);

    // The real one, pasted (the browser could not reach the listener).
    jobs.complete_with_redirect_url(&job, &location)
        .await
        .unwrap();
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    assert!(
        token_status("srv", &server, store.as_ref())
            .unwrap()
            .signed_in
    );
    // Completing an ended job is refused clearly.
    let err = jobs
        .complete_with_redirect_url(&job, &location)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already done"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_registered_client_with_a_secret_and_a_fixed_callback_port() {
    use plugboard::config::{Auth, ClientAuthMethod, OAuthSettings, SecretRef};
    use plugboard::oauth::ClientSource;
    use plugboard::secrets::Sensitive;

    let fixture = OAuthServer::start(&[]);
    // The "developer console": register a confidential client for a fixed loopback port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let registered = fixture
        .register_confidential_client(&redirect, "client_secret_post")
        .await;
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let mut server = oauth_server_config(&fixture.mcp_url());
    let ns = server.secret_namespace.clone().unwrap();
    store
        .set(
            &SecretKey::new(&ns, "OAUTH_CLIENT_SECRET"),
            &Sensitive::new(registered["client_secret"].as_str().unwrap().to_string()),
        )
        .unwrap();
    server.auth = Auth::Oauth2(OAuthSettings {
        client_id: Some(registered["client_id"].as_str().unwrap().to_string()),
        client_secret: Some(SecretRef::new("OAUTH_CLIENT_SECRET")),
        client_auth: ClientAuthMethod::ClientSecretPost,
        callback_port: Some(port),
        ..OAuthSettings::default()
    });
    let ctx = context(home.path(), store.clone(), |_| {});
    let jobs = OAuthJobs::new(ctx.clone());
    let done = sign_in(&jobs, "pre", &server).await;
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    assert_eq!(done.redirect_uri.as_deref(), Some(redirect.as_str()));
    let status = token_status("pre", &server, store.as_ref()).unwrap();
    assert_eq!(status.client, Some(ClientSource::PreRegistered));
    // No dynamic registration was made, and nothing was stored about the client.
    assert_eq!(fixture.stat("registrations").await, 1);
    assert!(store.keys().iter().all(|k| k.name() != "oauth_client"));
    // A refresh authenticates with the configured secret.
    let token = ctx
        .fresh_access_token("pre", &server)
        .await
        .unwrap()
        .unwrap();
    let renewed = ctx.refresh_after_401("pre", &server, &token).await.unwrap();
    assert_eq!(
        mcp_call(&fixture.mcp_url(), renewed.expose(), "ping")
            .await
            .0,
        200
    );
    assert_eq!(fixture.stat("refreshes").await, 1);
    // The server now names another authorization server (here: its URL moved to another
    // fixture): the configured client's secret stays with the one it was used with, and the
    // other sees nothing of the sign-in (RFC 9700 §4.4).
    let other = OAuthServer::start(&[]);
    let mut moved = server.clone();
    moved.url = Some(other.mcp_url());
    let job = jobs.start("pre", &moved).unwrap();
    let refused = jobs.wait(&job).await.unwrap();
    assert_eq!(refused.state, JobState::Failed, "{refused:?}");
    let error = refused.error.unwrap();
    assert!(
        error.contains("its client secret is not sent there") && error.contains(&other.base),
        "{error}"
    );
    for counter in [
        "registrations",
        "authorization_requests",
        "code_exchanges",
        "refreshes",
    ] {
        assert_eq!(
            other.stat(counter).await,
            0,
            "{counter} at the other server"
        );
    }
    // The fixed port must be free: a second sign-in while it is taken fails clearly.
    let _taken = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let job = jobs.start("pre", &server).unwrap();
    let failed = jobs.wait(&job).await.unwrap();
    assert_eq!(failed.state, JobState::Failed);
    assert!(failed.error.unwrap().contains(&format!("127.0.0.1:{port}")));
}
