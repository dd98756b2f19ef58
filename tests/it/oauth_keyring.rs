//! OAuth tokens in the real OS keyring (gnome-keyring in the test session): a sign-in stores
//! them there, a new instance (as a new process would) uses and refreshes them without a new
//! login, and forgetting the server revokes them and leaves nothing behind — in the keyring or
//! in the config directory.

use std::sync::Arc;
use std::time::Duration;

use plugboard::oauth::{JobState, OAuthJobs, TOKENS_SECRET, token_status};
use plugboard::secrets::{KeyringStore, SecretKey, SecretStore};

use crate::oauth_fixture::{
    OAuthServer, assert_no_file_contains, context, mcp_call, oauth_server_config, sign_in,
};
use crate::support::require_keyring;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_live_in_the_keyring_and_survive_into_a_new_instance() {
    require_keyring();
    let fixture = OAuthServer::start(&["--token-ttl", "4"]);
    let home = tempfile::tempdir().unwrap();
    let server = oauth_server_config(&fixture.mcp_url());
    let ns = server.secret_namespace.clone().unwrap();

    // First "process": sign in.
    let token = {
        let store: Arc<dyn SecretStore> = Arc::new(KeyringStore::open().unwrap());
        let ctx = context(home.path(), store.clone(), |o| {
            o.refresh_margin = Duration::from_secs(1)
        });
        let done = sign_in(&OAuthJobs::new(ctx.clone()), "kr", &server).await;
        assert_eq!(done.state, JobState::Succeeded, "{done:?}");
        ctx.fresh_access_token("kr", &server)
            .await
            .unwrap()
            .unwrap()
    };

    // Second "process": a new store handle and context find the sign-in, no new login.
    let store: Arc<dyn SecretStore> = Arc::new(KeyringStore::open().unwrap());
    let ctx = context(home.path(), store.clone(), |o| {
        o.refresh_margin = Duration::from_secs(1)
    });
    assert!(
        token_status("kr", &server, store.as_ref())
            .unwrap()
            .signed_in
    );
    let same = ctx
        .fresh_access_token("kr", &server)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(same, token);
    assert_eq!(
        mcp_call(&fixture.mcp_url(), same.expose(), "ping").await.0,
        200
    );
    // Within the refresh margin: refreshed before it expires.
    tokio::time::sleep(Duration::from_millis(3200)).await;
    let refreshed = ctx
        .fresh_access_token("kr", &server)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(refreshed, token);
    assert_eq!(
        mcp_call(&fixture.mcp_url(), refreshed.expose(), "ping")
            .await
            .0,
        200
    );
    assert_eq!(fixture.stat("code_exchanges").await, 1, "no second login");
    assert_eq!(fixture.stat("refreshes").await, 1);

    let raw = store
        .get(&SecretKey::new(&ns, TOKENS_SECRET))
        .unwrap()
        .expect("tokens in the keyring");
    let record: serde_json::Value = serde_json::from_str(raw.expose()).unwrap();
    let refresh = record["refresh_token"].as_str().unwrap().to_string();
    assert_no_file_contains(home.path(), &[token.expose(), refreshed.expose(), &refresh]);

    // Forget: revoked at the server, gone from the keyring.
    let outcome = ctx.revoke_and_forget("kr", &server).await.unwrap();
    assert!(outcome.revoked, "{outcome:?}");
    assert_eq!(
        mcp_call(&fixture.mcp_url(), refreshed.expose(), "ping")
            .await
            .0,
        401
    );
    assert!(
        store
            .get(&SecretKey::new(&ns, TOKENS_SECRET))
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .get(&SecretKey::new(&ns, "oauth_client"))
            .unwrap()
            .is_none()
    );
}
