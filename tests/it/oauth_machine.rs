//! OAuth without a user at the browser, through the CLI against the OAuth fixture: a service
//! account added with `plugboard add --grant client-credentials` keeps its secret in the
//! keyring, gets its token on its first connection (no sign-in), reuses it while it is good,
//! and a wrong secret fails with the authorization server's reason and saves nothing; its
//! secret never goes to another authorization server its MCP server names later. A user's ID
//! token from the organisation's identity provider (enterprise-managed authorization) is
//! exchanged there, with this client's secret at the identity provider when it has one, for a
//! grant the authorization server takes instead of a sign-in.

use std::process::Output;

use plugboard::secrets::{KeyringStore, SecretKey, SecretStore};
use serde_json::Value;

use crate::oauth_fixture::OAuthServer;
use crate::support::{Home, assert_code, output_with_stdin, require_keyring, stderr, stdout};

/// A confidential client registered at `fixture`: its ID and secret.
async fn registered_client(fixture: &OAuthServer) -> (String, String) {
    let registered = fixture
        .register_confidential_client("http://127.0.0.1:9/callback", "client_secret_basic")
        .await;
    let field = |name: &str| registered[name].as_str().unwrap().to_owned();
    (field("client_id"), field("client_secret"))
}

/// `plugboard add NAME --grant client-credentials` for `fixture`'s MCP endpoint, the secret
/// given through the environment.
fn add_service_account(
    home: &Home,
    fixture: &OAuthServer,
    name: &str,
    client_id: &str,
    secret: &str,
) -> Output {
    let mut cmd = home.cmd(&[
        "add",
        name,
        "--url",
        &fixture.mcp_url(),
        "--grant",
        "client-credentials",
        "--client-id",
        client_id,
        "--client-secret",
    ]);
    cmd.env("PLUGBOARD_SECRET_CLIENT_SECRET", secret);
    output_with_stdin(cmd, "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_gets_its_token_without_a_sign_in_and_keeps_its_secret_in_the_keyring() {
    require_keyring();
    let fixture = OAuthServer::start(&[]);
    let (client_id, secret) = registered_client(&fixture).await;
    let home = Home::new();
    let add =
        |name: &str, secret: &str| add_service_account(&home, &fixture, name, &client_id, secret);

    // A wrong secret: the authorization server's refusal, and nothing saved.
    let out = add("svc-wrong", "not-the-secret-0000");
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains("invalid_client"), "{said}");
    assert!(
        !said.contains("not-the-secret-0000"),
        "the secret is quoted: {said}"
    );
    assert!(
        !std::fs::read_to_string(home.config_path())
            .unwrap_or_default()
            .contains("svc-wrong")
    );

    // The right one: tested with a token got without a browser, then saved.
    let out = add("svc", &secret);
    assert_code(&out, 0);
    let obtained = fixture.stat("client_credentials").await;
    assert!(obtained >= 1, "the test before saving got no token");
    assert_eq!(
        fixture.stat("code_exchanges").await,
        0,
        "no sign-in happened"
    );
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(
        !config.contains(&secret),
        "the secret is in the config: {config}"
    );
    let saved: Value = serde_json::from_str(&config).unwrap();
    let auth = &saved["servers"]["svc"]["auth"];
    assert_eq!(auth["grant"]["type"], "client_credentials", "{auth}");
    assert_eq!(auth["client_id"], client_id.as_str());

    // Later connections get a token once and reuse it while it is good.
    for _ in 0..2 {
        let out = home.run(&["test", "svc", "--json"]);
        assert_code(&out, 0);
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(report["ok"], true, "{report}");
    }
    assert_eq!(fixture.stat("client_credentials").await, obtained + 1);
    assert!(
        !home
            .all_file_bytes()
            .iter()
            .any(|(_, bytes)| String::from_utf8_lossy(bytes).contains(&secret)),
        "a file holds the client secret"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_s_secret_never_goes_to_another_authorization_server() {
    require_keyring();
    // Tokens live one second, so the next connection asks for a new one.
    let fixture = OAuthServer::start(&["--token-ttl", "1"]);
    let elsewhere = OAuthServer::start(&[]);
    let (client_id, secret) = registered_client(&fixture).await;
    let home = Home::new();
    assert_code(
        &add_service_account(&home, &fixture, "svc", &client_id, &secret),
        0,
    );
    let obtained = fixture.stat("client_credentials").await;
    assert!(obtained >= 1);

    // The MCP server now names another authorization server (compromised, or moved).
    fixture.name_authorization_server(elsewhere.issuer()).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let out = home.run(&["test", "svc", "--json"]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["ok"], false, "{report}");
    let said = report.to_string();
    assert!(
        said.contains("now names another authorization server"),
        "{said}"
    );
    assert!(!said.contains(&secret), "the secret is quoted: {said}");
    assert_eq!(
        elsewhere.stat("token_requests").await,
        0,
        "the client's secret went to the other authorization server"
    );
    assert_eq!(fixture.stat("client_credentials").await, obtained);
}

/// `plugboard add NAME --grant identity-assertion` for `fixture`'s MCP endpoint with the
/// fixture as the identity provider; the secrets given through the environment.
fn add_enterprise_user(
    home: &Home,
    fixture: &OAuthServer,
    name: &str,
    client: (&str, &str),
    idp_client: (&str, Option<&str>),
    id_token: &str,
) -> Output {
    let endpoint = format!("{}/idp/token", fixture.issuer());
    let url = fixture.mcp_url();
    let mut args = vec![
        "add",
        name,
        "--url",
        &url,
        "--grant",
        "identity-assertion",
        "--client-id",
        client.0,
        "--client-secret",
        "--idp-token-endpoint",
        &endpoint,
        "--idp-client-id",
        idp_client.0,
        "--id-token",
    ];
    if idp_client.1.is_some() {
        args.push("--idp-client-secret");
    }
    let mut cmd = home.cmd(&args);
    cmd.env("PLUGBOARD_SECRET_CLIENT_SECRET", client.1)
        .env("PLUGBOARD_SECRET_ID_TOKEN", id_token);
    if let Some(secret) = idp_client.1 {
        cmd.env("PLUGBOARD_SECRET_IDP_CLIENT_SECRET", secret);
    }
    output_with_stdin(cmd, "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enterprise_user_s_id_token_is_exchanged_with_the_client_s_secret_at_the_identity_provider()
 {
    require_keyring();
    let fixture = OAuthServer::start(&[]);
    let (client_id, secret) = registered_client(&fixture).await;
    // This client at the identity provider is confidential: it must authenticate there.
    let (idp_client_id, idp_secret) = registered_client(&fixture).await;
    let id_token = format!(
        "idt-{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    );
    fixture.set_id_token(&id_token).await;
    let home = Home::new();

    // Without its secret at the identity provider: refused there, said so, nothing saved.
    let out = add_enterprise_user(
        &home,
        &fixture,
        "corp-public",
        (&client_id, &secret),
        (&idp_client_id, None),
        &id_token,
    );
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("identity provider") && said.contains("invalid_client"),
        "{said}"
    );
    assert!(!said.contains(&id_token), "the ID token is quoted: {said}");
    assert_eq!(fixture.stat("idp_clients_refused").await, 1);
    assert_eq!(fixture.stat("identity_assertions").await, 0);
    assert!(
        !std::fs::read_to_string(home.config_path())
            .unwrap_or_default()
            .contains("corp-public")
    );

    // With it: exchanged at the identity provider, the grant taken, tested, saved.
    let out = add_enterprise_user(
        &home,
        &fixture,
        "corp",
        (&client_id, &secret),
        (&idp_client_id, Some(&idp_secret)),
        &id_token,
    );
    assert_code(&out, 0);
    assert_eq!(fixture.stat("idp_exchanges").await, 1);
    assert_eq!(fixture.stat("identity_assertions").await, 1);
    assert_eq!(fixture.stat("code_exchanges").await, 0, "no sign-in");
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    let saved: Value = serde_json::from_str(&config).unwrap();
    let grant = &saved["servers"]["corp"]["auth"]["grant"];
    assert_eq!(grant["type"], "identity_assertion", "{grant}");
    assert_eq!(grant["idp_client_id"], idp_client_id.as_str());
    assert!(grant["idp_client_secret"].is_object(), "{grant}");
    for value in [&secret, &idp_secret, &id_token] {
        assert!(
            !home
                .all_file_bytes()
                .iter()
                .any(|(_, bytes)| String::from_utf8_lossy(bytes).contains(value.as_str())),
            "a file holds a secret"
        );
    }

    // It is in the keyring, under the server's namespace, until the server is removed.
    let namespace = saved["servers"]["corp"]["secret_namespace"]
        .as_str()
        .unwrap_or("corp")
        .to_owned();
    let key = SecretKey::new(&namespace, "OAUTH_IDP_CLIENT_SECRET");
    let store = KeyringStore::open().unwrap();
    assert_eq!(
        store.get(&key).unwrap().map(|s| s.expose().clone()),
        Some(idp_secret.clone())
    );
    let shown = home.run(&["show", "corp", "--json"]);
    assert_code(&shown, 0);
    assert!(!stdout(&shown).contains(&idp_secret));
    assert_code(&home.run(&["remove", "corp"]), 0);
    assert!(
        store.get(&key).unwrap().is_none(),
        "removing the server left its secret at the identity provider in the keyring"
    );
}
