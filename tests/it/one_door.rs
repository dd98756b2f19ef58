//! One door: the same install through the command line and through the app's API gives the
//! same config entry, with the same secret names, for a catalog entry and for a custom server.

use std::collections::BTreeMap;
use std::sync::Arc;

use plugboard::catalog::Catalog;
use plugboard::secrets::MemoryStore;
use plugboard_app_api::api::{Api, CustomAuth, CustomServer, InstallRequest, Transport};
use serde_json::Value;

use crate::support::{Home, assert_code, require_keyring};

/// Server `name`'s config entry without its secret namespace (random per install).
fn entry(config_file: &std::path::Path, name: &str) -> Value {
    let text = std::fs::read_to_string(config_file).unwrap();
    let mut config: Value = serde_json::from_str(&text).unwrap();
    let mut server = config["servers"][name].take();
    assert!(server.is_object(), "no server `{name}` in {text}");
    server.as_object_mut().unwrap().remove("secret_namespace");
    server
}

/// The names (not namespaces) of the secrets the app stored.
fn secret_names(store: &MemoryStore) -> Vec<String> {
    store.keys().iter().map(|k| k.name().to_string()).collect()
}

fn app() -> (tempfile::TempDir, Arc<MemoryStore>, Api) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let api = Api::with_store(dir.path(), store.clone(), Catalog::load_default().unwrap());
    (dir, store, api)
}

#[test]
fn a_catalog_entry_installed_through_either_front_end_gives_the_same_config() {
    require_keyring();
    let home = Home::new();
    let out = home.run_with_stdin(
        &[
            "install",
            "tavily",
            "--secret-stdin",
            "TAVILY_API_KEY",
            "--no-test",
        ],
        "tvly-one-door",
    );
    assert_code(&out, 0);
    let from_cli = entry(&home.config_path(), "tavily");

    let (dir, store, api) = app();
    let form = api.install_form("tavily", None).unwrap();
    api.install(&InstallRequest {
        entry_id: "tavily".into(),
        option_id: form.spec.option_id.clone(),
        name: "tavily".into(),
        values: BTreeMap::from([("TAVILY_API_KEY".into(), "tvly-one-door".into())]),
        store_as_secret: BTreeMap::new(),
        test_id: None,
        no_pin: false,
        allow_secret_args: false,
        editing: None,
        cleared: vec![],
    })
    .unwrap();
    let from_app = entry(&dir.path().join("mcp_config.json"), "tavily");
    assert_eq!(from_cli, from_app);
    assert_eq!(
        from_app["env"]["TAVILY_API_KEY"],
        serde_json::json!({"secret": "TAVILY_API_KEY"})
    );
    assert_eq!(secret_names(&store), ["TAVILY_API_KEY"]);
}

#[test]
fn a_custom_server_with_a_bearer_token_gets_the_same_secret_name_from_either_front_end() {
    require_keyring();
    let home = Home::new();
    let url = "https://example.com/mcp";
    let out = home.run_with_stdin(
        &[
            "add",
            "api",
            "--url",
            url,
            "--transport",
            "shttp",
            "--bearer-stdin",
            "--no-test",
        ],
        "token-one-door",
    );
    assert_code(&out, 0);
    let from_cli = entry(&home.config_path(), "api");

    let (dir, store, api) = app();
    api.save_custom_server(
        None,
        &CustomServer {
            name: "api".into(),
            transport: Transport::Shttp,
            command: String::new(),
            args: vec![],
            cwd: String::new(),
            url: url.into(),
            env: vec![],
            headers: vec![],
            auth: CustomAuth::Bearer {
                token: Some("token-one-door".into()),
                set: None,
            },
            headers_helper: None,
            timeout: None,
        },
        None,
    )
    .unwrap();
    let from_app = entry(&dir.path().join("mcp_config.json"), "api");
    assert_eq!(from_cli["auth"], from_app["auth"]);
    assert_eq!(from_cli["url"], from_app["url"]);
    assert_eq!(from_cli["type"], from_app["type"]);
    assert_eq!(secret_names(&store), ["BEARER_TOKEN"]);
}
