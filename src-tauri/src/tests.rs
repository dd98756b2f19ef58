//! Tests at the command boundary: the bindings are current, the main window's capability grants
//! exactly the app's commands, the CSP is strict, and no stored secret ever crosses IPC.

use std::sync::Arc;

use plugboard_app_api::api::Api;
use plugboard_sources::catalog::Catalog;
use plugboard_store::secrets::MemoryStore;
use serde_json::{Value, json};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;

use super::*;

/// Regenerates `ui/src/lib/bindings.ts`. CI runs this and then `git diff --exit-code` on the
/// file, so committed bindings that differ from the Rust types fail the build.
#[test]
fn export_typescript_bindings() {
    export_bindings(BINDINGS).expect("bindings export");
    let text = std::fs::read_to_string(BINDINGS).unwrap();
    for command in COMMANDS {
        assert!(
            text.contains(&format!("\"{command}\"")),
            "bindings lack command `{command}`"
        );
    }
    // And the other way: a command the app registers but the window may not call is a
    // feature that fails only in the real window.
    for piece in text.split("__TAURI_INVOKE").skip(2) {
        let Some(start) = piece.find("(\"") else {
            continue;
        };
        let name = &piece[start + 2..];
        let name = &name[..name.find('"').unwrap()];
        assert!(
            COMMANDS.contains(&name),
            "command `{name}` is registered but not in COMMANDS (the window may not call it)"
        );
    }
}

#[test]
fn the_main_window_may_call_exactly_the_app_commands() {
    let cap: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/capabilities/main-window.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(cap["windows"], json!(["main"]));
    let granted: Vec<String> = cap["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = COMMANDS
        .iter()
        .map(|c| format!("allow-{}", c.replace('_', "-")))
        .collect();
    assert_eq!(granted, expected, "capability ≠ command list");
    let dir = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/capabilities")).unwrap();
    assert_eq!(dir.count(), 1, "one capability file: the main window's");
}

#[test]
fn the_csp_is_strict() {
    let conf: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tauri.conf.json")).unwrap(),
    )
    .unwrap();
    let csp = &conf["app"]["security"]["csp"];
    let text = csp.to_string();
    assert!(!text.contains("unsafe-eval"), "{text}");
    assert!(!text.contains("unsafe-inline"), "{text}");
    assert!(
        !text.contains("https:") && !text.contains("*"),
        "no remote sources: {text}"
    );
    assert_eq!(csp["script-src"], "'self'");
    assert_eq!(csp["default-src"], "'self'");
    assert_eq!(csp["object-src"], "'none'");
    // Images and audio of tool results are shown from blob: URLs the UI makes itself.
    assert_eq!(csp["img-src"], "'self' blob:");
    assert_eq!(csp["media-src"], "blob:");
    assert_eq!(csp["connect-src"], "ipc: http://ipc.localhost");
    assert_eq!(conf["app"]["withGlobalTauri"], false);
}

const SECRET: &str = "s3cr3t-Value-That-Must-Stay-Home-91";

fn fixture_catalog() -> Catalog {
    let entry = serde_json::from_value(json!({
        "id": "fixture", "name": "Fixture", "description": "Needs a token.",
        "docs_url": "https://example.com", "categories": ["developer-tools"],
        "options": [{"id": "local", "label": "Local", "transport": {"type": "stdio", "command": "mcp-fixture", "args": [],
            "env_fields": [{"key": "TOKEN", "label": "Token", "kind": "password", "required": true, "help": "A token."}]},
            "auth": {"type": "none"}}]
    }))
    .unwrap();
    Catalog::from_entries(vec![entry])
}

struct Ipc {
    _app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
}

impl Ipc {
    fn new(api: Api) -> Ipc {
        Ipc::with_label(api, "main")
    }

    /// The app with its real context (capabilities, ACL) on the mock runtime, and one window.
    fn with_label(api: Api, label: &str) -> Ipc {
        let app = mock_builder()
            .manage(Arc::new(api))
            .invoke_handler(specta_builder_for::<MockRuntime>().invoke_handler())
            .build(tauri::generate_context!(test = true))
            .expect("mock app");
        let webview = tauri::WebviewWindowBuilder::new(&app, label, Default::default())
            .build()
            .expect("mock window");
        Ipc { _app: app, webview }
    }

    /// Invoke `cmd` through the real IPC path; the raw JSON text of the answer (ok or error).
    fn call(&self, cmd: &str, args: Value) -> Result<String, String> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        match get_ipc_response(&self.webview, request) {
            Ok(body) => Ok(serde_json::to_string(&body.deserialize::<Value>().unwrap()).unwrap()),
            Err(err) => Err(err.to_string()),
        }
    }
}

/// Install a server with a known secret, then call every command and check the secret's bytes
/// appear in no answer, error or the config file.
#[test]
fn no_stored_secret_ever_crosses_ipc() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ipc = Ipc::new(Api::with_store(
        dir.path(),
        store.clone(),
        fixture_catalog(),
    ));
    let installed = ipc
        .call(
            "install_server",
            json!({"request": {"entry_id": "fixture", "option_id": "local", "name": "fx",
                "values": {"TOKEN": SECRET}, "store_as_secret": {}}}),
        )
        .expect("install");
    assert!(installed.contains(r#""set":true"#), "{installed}");
    assert_eq!(store.keys().len(), 1, "the secret went to the store");
    // Tools seen by two tests, the second with a changed description: a review is due.
    let pins = plugboard_ops::pinning::PinStore::in_config_dir(dir.path());
    let tool = |description: &str| plugboard_wire::probe::ToolInfo {
        name: "echo".into(),
        description: Some(description.into()),
        input_schema: json!({"type": "object"}),
        annotations: None,
        adapted_name: "mcp__fx__echo".into(),
        ui: None,
    };
    pins.observe("fx", &[tool("Echoes.")], None, vec![])
        .unwrap();
    pins.observe("fx", &[tool("Echoes.\nUses TOKEN.")], None, vec![])
        .unwrap();

    let mut answers = vec![installed];
    let calls: Vec<(&str, Value)> = vec![
        ("app_info", json!({})),
        (
            "catalog_cards",
            json!({"query": "", "category": null, "filter": "all"}),
        ),
        (
            "catalog_cards",
            json!({"query": "fix", "category": "developer-tools", "filter": "installed"}),
        ),
        ("categories", json!({})),
        // A registry URL that is not one is refused at the field (and the list is unchanged).
        ("add_registry", json!({"url": "ftp://registry.example"})),
        ("edit_form", json!({"name": "fx"})),
        (
            "install_form",
            json!({"entryId": "fixture", "optionId": null}),
        ),
        ("list_servers", json!({})),
        ("server_detail", json!({"name": "fx"})),
        ("custom_server", json!({"name": "fx"})),
        ("set_enabled", json!({"name": "fx", "enabled": false})),
        ("set_enabled", json!({"name": "fx", "enabled": true})),
        (
            "update_credentials",
            json!({"name": "fx", "key": "TOKEN", "value": SECRET}),
        ),
        ("rename_server", json!({"name": "fx", "newName": "fx2"})),
        ("server_detail", json!({"name": "fx2"})),
        // Its form to edit it (the secret only marked as set), and an edit saved.
        ("edit_form", json!({"name": "fx2"})),
        (
            "install_server",
            json!({"request": {"entry_id": "fixture", "option_id": "local", "name": "fx2",
            "values": {"TOKEN": SECRET}, "store_as_secret": {}, "editing": "fx2"}}),
        ),
        // Errors: a duplicate install with the secret, a bad custom server carrying it.
        (
            "install_server",
            json!({"request": {"entry_id": "fixture", "option_id": "local", "name": "fx2",
            "values": {"TOKEN": SECRET}, "store_as_secret": {}}}),
        ),
        (
            "install_server",
            json!({"request": {"entry_id": "fixture", "option_id": "local", "name": "bad name",
            "values": {"TOKEN": SECRET, "NOPE": SECRET}, "store_as_secret": {}}}),
        ),
        (
            "save_custom_server",
            json!({"original": null, "server": {"name": "c", "transport": "shttp",
            "command": "", "args": [], "cwd": "", "url": format!("https://u:{SECRET}@"), "env": [],
            "headers": [{"key": "X-Key", "value": SECRET, "secret": true}],
            "auth": {"type": "bearer", "token": SECRET}, "timeout": null}, "testId": null}),
        ),
        ("custom_server", json!({"name": "fx2"})),
        ("list_servers", json!({})),
        // Pinning: the diff of a server with tools seen (its description carries the secret's
        // name only), approving them; "Use in…": the overview, one server, a refused export.
        ("tool_diff", json!({"name": "fx2"})),
        ("approve_tools", json!({"name": "fx2"})),
        ("tool_diff", json!({"name": "fx2"})),
        // The gateway: profiles created (one refused: a server that is not installed), shown,
        // removed; the activity record.
        (
            "save_profile",
            json!({"name": "work", "servers": ["fx2"], "create": true}),
        ),
        (
            "save_profile",
            json!({"name": "bad", "servers": ["ghost"], "create": true}),
        ),
        ("profiles", json!({})),
        ("remove_profile", json!({"name": "work"})),
        ("activity", json!({"server": null, "last": 50})),
        ("set_profile_lazy", json!({"name": "default", "lazy": true})),
        // A rule given and taken away; one naming no installed server, and a permission that
        // is none, refused.
        (
            "set_profile_rule",
            json!({"name": "default", "rule": "fx2__echo", "permission": "hide"}),
        ),
        (
            "set_profile_rule",
            json!({"name": "default", "rule": "fx2__echo", "permission": null}),
        ),
        (
            "set_profile_rule",
            json!({"name": "default", "rule": "ghost__echo", "permission": "deny"}),
        ),
        (
            "set_profile_rule",
            json!({"name": "default", "rule": "fx2", "permission": "sometimes"}),
        ),
        // A hook added and taken away; one whose event is none, and one without a command,
        // refused.
        (
            "set_profile_hooks",
            json!({"name": "default", "change": {"add": {"event": "pre_tool_use",
                "matcher": "fx2__*", "command": "true"}, "remove": null, "fail_closed": true}}),
        ),
        (
            "set_profile_hooks",
            json!({"name": "default", "change": {"add": null, "remove": {"event": "pre_tool_use",
                "matcher": "fx2__*", "command": "true"}, "fail_closed": false}}),
        ),
        (
            "set_profile_hooks",
            json!({"name": "default", "change": {"add": {"event": "whenever",
                "matcher": "*", "command": "true"}, "remove": null, "fail_closed": null}}),
        ),
        (
            "set_profile_hooks",
            json!({"name": "default", "change": {"add": {"event": "post_tool_use",
                "matcher": "*", "command": "  "}, "remove": null, "fail_closed": null}}),
        ),
        ("running_gateways", json!({})),
        // The gateways' questions: none open; answering one that is not open is refused.
        ("gateway_questions", json!({})),
        (
            "answer_gateway_question",
            json!({"id": "0123456789abcdef0123456789abcdef", "allow": true}),
        ),
        // The sandbox: shown, changed, a change refused.
        ("server_sandbox", json!({"name": "fx2"})),
        (
            "set_sandbox",
            json!({"name": "fx2", "change": {"network": "none"}}),
        ),
        (
            "set_sandbox",
            json!({"name": "fx2", "change": {"network": "a b"}}),
        ),
        // Per-tool control and the budget.
        ("server_tools", json!({"name": "fx2"})),
        (
            "set_tools",
            json!({"name": "fx2", "change": {"disable": ["echo"]}}),
        ),
        ("budget", json!({})),
        ("clients_overview", json!({})),
        ("mark_clients_seen", json!({})),
        (
            "quarantine_entry",
            json!({"client": "no-such-client", "entry": "x"}),
        ),
        (
            "remove_client_entry",
            json!({"client": "no-such-client", "entry": "x"}),
        ),
        ("use_in", json!({"name": "fx2"})),
        (
            "export_to_client",
            json!({"client": "no-such-client", "selection": {"servers": null}}),
        ),
        (
            "export_preview",
            json!({"client": "no-such-client", "selection": {"servers": ["fx2"], "add": true}}),
        ),
        ("config_stamp", json!({})),
        (
            "parse_custom_paste",
            json!({"text": "npx -y @modelcontextprotocol/server-everything"}),
        ),
        // The doctor (its command, `mcp-fixture`, is not on PATH here) and a UI mark.
        ("doctor_server", json!({"runId": "d-1", "name": "fx2"})),
        ("doctor_machine", json!({})),
        ("ui_ready", json!({"mark": "marketplace-ready", "count": 3})),
        // Try it: the diagnostics bundle of a server that cannot start here (its config shape,
        // the failed session), a closed session, a template.
        ("diagnostics", json!({"name": "fx2", "session": null})),
        ("session_offer", json!({"session": "s-404"})),
        (
            "expand_template",
            json!({"template": "demo://x/{id}", "values": {"id": "7"}}),
        ),
    ];
    let mut errors = 0;
    for (cmd, args) in calls {
        match ipc.call(cmd, args) {
            Ok(answer) => answers.push(answer),
            Err(err) => {
                errors += 1;
                assert!(err.contains("\"code\""), "{cmd}: not an ApiError: {err}");
                answers.push(err)
            }
        }
    }
    assert_eq!(errors, 16, "the sixteen bad calls fail: {answers:#?}");
    assert!(
        answers
            .iter()
            .any(|a| a.contains(r#"\"error_kind\": \"spawn\""#)),
        "the bundle tells why the server did not start: {answers:#?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a.contains(r#""code":"command.not_found""#)),
        "the doctor names the missing command: {answers:#?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a.contains(r#""state":"tools_changed""#)),
        "the review shows the changed tools: {answers:#?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a.contains(r#""name":"echo""#) && a.contains(r#""enabled":false"#)),
        "the tool was switched off: {answers:#?}"
    );
    for answer in &answers {
        assert!(!answer.contains(SECRET), "secret crossed IPC: {answer}");
    }
    let removed = ipc.call("remove_server", json!({"name": "fx2"})).unwrap();
    assert!(removed.contains(r#""secrets_deleted":1"#), "{removed}");
    assert!(store.keys().is_empty());
    let missing = ipc
        .call("server_detail", json!({"name": "fx2"}))
        .unwrap_err();
    assert!(missing.contains("not_found"), "{missing}");
}

/// Another window (say, an OAuth sign-in window) gets no IPC at all.
#[test]
fn other_windows_cannot_call_commands() {
    let dir = tempfile::tempdir().unwrap();
    let ipc = Ipc::with_label(
        Api::with_store(dir.path(), Arc::new(MemoryStore::new()), fixture_catalog()),
        "signin",
    );
    let denied = ipc.call("list_servers", json!({})).unwrap_err();
    assert!(denied.contains("not allowed"), "{denied}");
}
