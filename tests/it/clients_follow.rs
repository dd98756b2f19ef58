//! Other apps keep launching the right server: a rename renames the launchers Plugboard wrote
//! (and they start the server under its new name), a remove takes them out, and an entry the
//! user changed since is left alone with a warning.

use serde_json::{Value, json};

use crate::run_stdio::add_fixture;
use crate::support::{Home, assert_code, stderr, stdout};

fn servers_of(path: &std::path::Path) -> serde_json::Map<String, Value> {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["mcpServers"].as_object().cloned().unwrap_or_default()
}

#[test]
fn rename_and_remove_follow_into_other_apps_files() {
    let home = Home::new();
    add_fixture(&home, "notes", &[], None);
    add_fixture(&home, "kept", &[], None);
    let dir = tempfile::tempdir().unwrap();
    let cursor = dir.path().join("cursor.json");
    let claude = dir.path().join("claude.json");
    std::fs::write(
        &claude,
        r#"{"mcpServers": {"mine": {"command": "node", "args": ["x.js"]}}}"#,
    )
    .unwrap();
    for (client, file) in [("cursor", &cursor), ("claude-desktop", &claude)] {
        let out = home.run(&[
            "export",
            "--client",
            client,
            "--file",
            file.to_str().unwrap(),
            "--write",
        ]);
        assert_code(&out, 0);
    }

    let out = home.run(&["rename", "notes", "journal"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("now launches the new name"),
        "{}",
        stdout(&out)
    );
    for file in [&cursor, &claude] {
        let servers = servers_of(file);
        assert!(!servers.contains_key("notes"), "{servers:?}");
        let entry = &servers["journal"];
        assert_eq!(entry["args"], json!(["run", "journal"]), "{entry}");
    }
    assert!(
        servers_of(&claude).contains_key("mine"),
        "another entry was lost"
    );
    // The renamed launcher starts the server.
    let entry = &servers_of(&cursor)["journal"];
    let mut launch = std::process::Command::new(entry["command"].as_str().unwrap());
    launch.args(
        entry["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap()),
    );
    launch.env("PLUGBOARD_HOME", home.path());
    let out = crate::support::output_with_stdin(
        launch,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
    );
    assert_code(&out, 0);
    assert!(stdout(&out).contains("serverInfo"), "{}", stdout(&out));

    // An entry the user changed is left alone, and said so.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&cursor).unwrap()).unwrap();
    doc["mcpServers"]["kept"] = json!({"command": "node", "args": ["by-hand.js"]});
    std::fs::write(&cursor, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let out = home.run(&["remove", "kept"]);
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("still has an entry `kept`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(servers_of(&cursor)["kept"]["args"], json!(["by-hand.js"]));
    assert!(
        !servers_of(&claude).contains_key("kept"),
        "the unchanged launcher stays"
    );

    let out = home.run(&["remove", "journal"]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("was taken out"), "{}", stdout(&out));
    for file in [&cursor, &claude] {
        assert!(
            !servers_of(file).contains_key("journal"),
            "{}",
            file.display()
        );
    }
    assert!(servers_of(&claude).contains_key("mine"));
}
