//! `plugboard outdated` and `plugboard update` against the registry fixture publishing newer
//! versions of an installed bundle server (real bundles from the official packer on a loopback
//! HTTPS server): the tool diff shown, the same values and secret carried over, nothing
//! changed when the new version's test fails or the diff is not accepted, a deleted server
//! reported.

use serde_json::{Value, json};

use crate::bundles_cli::{bundle_dirs, json_of, keyring_secret, server_entry};
use crate::support::bundles::{FileServer, mcpb_row, notes_bundle};
use crate::support::registry::RegistryFixture;
use crate::support::{Home, assert_code, output_with_stdin, require_keyring, stderr, stdout};

const NAME: &str = "io.github.plugboard-test/notes";

#[test]
fn update_shows_the_tool_diff_carries_values_and_secrets_and_changes_nothing_when_the_test_fails() {
    require_keyring();
    let registry = RegistryFixture::start(&["--no-snapshot"]);
    let files = FileServer::https();
    let home = Home::new();
    let run = |args: &[&str], stdin: &str| {
        let mut cmd = home.cmd(args);
        cmd.env("PLUGBOARD_REGISTRY_URL", registry.url())
            .env("SSL_CERT_FILE", files.ca.as_ref().unwrap());
        output_with_stdin(cmd, stdin)
    };
    let publish = |version: &str, tools: &[&str], fail: bool| {
        let b = notes_bundle(version, tools, fail);
        let url = files.publish(&b.file, &format!("notes-{version}.mcpb"));
        registry.post(
            "/fixture/rows",
            &json!([mcpb_row(NAME, version, &url, Some(&b.sha256()))]),
        );
    };
    publish("1.0.0", &["describe", "read_note"], false);
    assert_code(&run(&["registry", "sync"], ""), 0);
    let out = run(
        &[
            "install",
            NAME,
            "--set",
            "level=2",
            "--secret-stdin",
            "api_key",
            "--json",
        ],
        "key-v1-abc",
    );
    assert_code(&out, 0);
    let installed_dir = server_entry(&home, "notes")["source"]["bundle"]["dir"]
        .as_str()
        .unwrap()
        .to_owned();

    let out = run(&["outdated", "--json"], "");
    assert_code(&out, 0);
    assert_eq!(json_of(&out)[0]["state"], "current", "{}", stdout(&out));

    // A newer version adds a tool: `outdated` sees it after its own sync.
    publish("1.1.0", &["describe", "read_note", "write_note"], false);
    let out = run(&["outdated", "--json"], "");
    let rows = json_of(&out);
    assert_eq!(rows[0]["name"], "notes");
    assert_eq!(rows[0]["state"], "update_available", "{rows}");
    assert_eq!(rows[0]["installed"], "1.0.0");
    assert_eq!(rows[0]["latest"], "1.1.0");
    assert_eq!(rows[0]["bundle"], true);
    let out = run(&["outdated"], "");
    assert!(
        stdout(&out).contains("update available"),
        "{}",
        stdout(&out)
    );

    let config_v1 = std::fs::read(home.config_path()).unwrap();
    // A dry run shows how the launch changes and starts nothing (starting the new version
    // would hand it the secret); a run that is not told --yes shows the tool diff.
    let out = run(&["update", "notes", "--dry-run", "--json"], "");
    assert_code(&out, 0);
    let report = json_of(&out);
    assert_eq!(report["applied"], false);
    assert!(report.get("test").is_none(), "a dry run tested: {report}");
    assert_eq!(report["launch"]["new_destination"], false, "{report}");
    assert_eq!(report["launch"]["carries_secrets"], true, "{report}");
    assert_eq!(report["from"], "1.0.0");
    assert_eq!(report["to"], "1.1.0");
    let out = run(&["update", "notes"], "");
    assert_code(&out, 2);
    assert!(
        stdout(&out).contains("+ write_note (new tool)"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("pass --yes"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(home.config_path()).unwrap(),
        config_v1,
        "nothing changed"
    );
    assert_eq!(
        bundle_dirs(&home).len(),
        1,
        "the fetched bundles were removed again"
    );

    // A broken newer version: its test fails, and nothing changes.
    publish("1.2.0", &["describe"], true);
    let out = run(&["update", "notes", "--to", "1.2.0", "--yes"], "");
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("broken on purpose"),
        "the test's stderr tail: {}",
        stdout(&out)
    );
    assert_eq!(std::fs::read(home.config_path()).unwrap(), config_v1);
    assert_eq!(bundle_dirs(&home).len(), 1);
    assert!(std::path::Path::new(&installed_dir).exists());
    assert_eq!(
        keyring_secret(&home, "notes", "NOTES_API_KEY").as_deref(),
        Some("key-v1-abc")
    );

    // The good update: same values and secret, the tool diff, the old bundle gone, the
    // user's tool switches kept.
    assert_code(&run(&["tools", "notes", "--disable", "read_note"], ""), 0);
    let out = run(&["update", "notes", "--to", "1.1.0", "--yes", "--json"], "");
    assert_code(&out, 0);
    let report = json_of(&out);
    assert_eq!(report["applied"], true);
    assert_eq!(report["tool_changes"]["added"], json!(["write_note"]));
    let described: Value = serde_json::from_str(
        report["test"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "describe")
            .unwrap()["description"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        described["args"].as_array().unwrap()[..2],
        [json!("--level"), json!("2")],
        "the recorded value: {described}"
    );
    assert_eq!(
        described["key_length"],
        "key-v1-abc".len(),
        "the same secret"
    );
    let entry = server_entry(&home, "notes");
    assert_eq!(entry["source"]["registry"]["version"], "1.1.0");
    assert_eq!(entry["source"]["bundle"]["version"], "1.1.0");
    assert_eq!(entry["tools"]["disabled"], json!(["read_note"]), "{entry}");
    let new_dir = entry["source"]["bundle"]["dir"].as_str().unwrap();
    assert_ne!(new_dir, installed_dir);
    assert!(
        !std::path::Path::new(&installed_dir).exists(),
        "the old bundle is removed"
    );
    assert_eq!(bundle_dirs(&home).len(), 1);
    assert_eq!(
        keyring_secret(&home, "notes", "NOTES_API_KEY").as_deref(),
        Some("key-v1-abc")
    );
    let out = run(&["test", "notes", "--json"], "");
    assert_code(&out, 0);
    let names: Vec<String> = json_of(&out)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["describe", "read_note", "write_note"]);
    let out = run(&["diff", "notes"], "");
    assert_code(&out, 0);

    // The registry deletes the server: `outdated` says so, with the registry's reason.
    registry.post(
        "/fixture/status",
        &json!({"name": NAME, "status": "deleted", "statusMessage": "withdrawn by its author"}),
    );
    let out = run(&["outdated", "--json"], "");
    let row = &json_of(&out)[0];
    assert_eq!(row["state"], "removed", "{}", stdout(&out));
    assert_eq!(
        row["removed"],
        "withdrawn by its author",
        "{}",
        stdout(&out)
    );
    let out = run(&["outdated"], "");
    assert!(
        stdout(&out).contains("removed from the registry: withdrawn by its author"),
        "{}",
        stdout(&out)
    );
    let out = run(&["update", "notes"], "");
    assert_code(&out, 2);
    assert!(stderr(&out).contains("no longer lists"), "{}", stderr(&out));
    assert_code(&run(&["remove", "notes"], ""), 0);
    assert_eq!(bundle_dirs(&home), Vec::<String>::new());
}
