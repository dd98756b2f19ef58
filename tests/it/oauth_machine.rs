//! OAuth without a user at the browser, through the CLI against the OAuth fixture: a service
//! account added with `plugboard add --grant client-credentials` keeps its secret in the
//! keyring, gets its token on its first connection (no sign-in), reuses it while it is good,
//! and a wrong secret fails with the authorization server's reason and saves nothing.

use serde_json::Value;

use crate::oauth_fixture::OAuthServer;
use crate::support::{Home, assert_code, output_with_stdin, require_keyring, stderr, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_account_gets_its_token_without_a_sign_in_and_keeps_its_secret_in_the_keyring() {
    require_keyring();
    let fixture = OAuthServer::start(&[]);
    let registered = fixture
        .register_confidential_client("http://127.0.0.1:9/callback", "client_secret_basic")
        .await;
    let client_id = registered["client_id"].as_str().unwrap().to_owned();
    let secret = registered["client_secret"].as_str().unwrap().to_owned();
    let home = Home::new();
    let add = |name: &str, secret: &str| {
        let mut cmd = home.cmd(&[
            "add",
            name,
            "--url",
            &fixture.mcp_url(),
            "--grant",
            "client-credentials",
            "--client-id",
            &client_id,
            "--client-secret",
        ]);
        cmd.env("PLUGBOARD_SECRET_CLIENT_SECRET", secret);
        output_with_stdin(cmd, "")
    };

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
