//! Other apps' files: one that is a symbolic link (a dotfiles setup) stays a link, import's
//! rewrite and export writing through it to the file it points to, which then holds no token;
//! the backup of a rewrite keeps no token either, and backups do not pile up.

use serde_json::Value;

use crate::support::{Home, assert_code, require_keyring, stdout};

#[test]
fn a_symlinked_client_file_is_written_through_and_stays_a_link() {
    require_keyring();
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let dotfiles = dir.path().join("dotfiles");
    std::fs::create_dir(&dotfiles).unwrap();
    let real = dotfiles.join("mcp.json");
    let token = format!("ghp_{:036x}", rand::random::<u128>() >> 8);
    std::fs::write(
        &real,
        format!(
            r#"{{"mcpServers": {{"github": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {{"GITHUB_PERSONAL_ACCESS_TOKEN": "{token}"}}}}}}}}"#
        ),
    )
    .unwrap();
    let link = dir.path().join("cursor.json");
    std::os::unix::fs::symlink("dotfiles/mcp.json", &link).unwrap();

    let out = home.run(&[
        "import",
        "--file",
        link.to_str().unwrap(),
        "--format",
        "cursor",
        "--rewrite-source",
        "--no-test",
        "--yes",
    ]);
    assert_code(&out, 0);
    let is_link = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .unwrap()
            .file_type()
            .is_symlink()
    };
    assert!(is_link(&link), "the rewrite replaced the link with a file");
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        !text.contains(&token),
        "the file the link points to keeps the token: {text}"
    );
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["mcpServers"]["github"]["args"][0], "run", "{doc}");

    // The backup beside it is the file as it was, less the token that moved.
    let backups = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(".plugboard-backup-"))
            .collect()
    };
    let made = backups();
    assert_eq!(made.len(), 1, "{made:?}");
    let backup = std::fs::read_to_string(&made[0]).unwrap();
    assert!(
        !backup.contains(&token),
        "the backup keeps the token: {backup}"
    );
    assert!(
        backup.contains("\"GITHUB_PERSONAL_ACCESS_TOKEN\": \"***\""),
        "{backup}"
    );

    let export = || {
        home.run(&[
            "export",
            "--client",
            "cursor",
            "--file",
            link.to_str().unwrap(),
            "--write",
        ])
    };
    let out = export();
    assert_code(&out, 0);
    assert!(
        is_link(&link),
        "the export replaced the link with a file: {}",
        stdout(&out)
    );

    // Each export that changes the file makes a backup; only the newest three stay.
    for n in 0..5 {
        crate::run_stdio::add_fixture(&home, &format!("extra{n}"), &[], None);
        let out = export();
        assert_code(&out, 0);
    }
    assert_eq!(backups().len(), 3, "{:?}", backups());
}

/// A client file with comments, or with a number JSON keeps only approximately: export and
/// import's rewrite refuse to write it (it stays byte for byte) and say how to go on; with
/// --force the export writes it and the backup keeps the original.
#[test]
fn a_rewrite_that_would_lose_comments_or_numbers_is_refused() {
    let home = Home::new();
    crate::run_stdio::add_fixture(&home, "fx", &[], None);
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in [
        (
            "commented.json",
            "{\n  // my servers\n  \"mcpServers\": {}\n}\n",
        ),
        (
            "big.json",
            "{\"mcpServers\": {}, \"limits\": {\"max\": 12345678901234567890123}}\n",
        ),
    ] {
        let path = dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        let export = |force: bool| {
            let mut args = vec![
                "export",
                "--client",
                "cursor",
                "--file",
                path.to_str().unwrap(),
                "--write",
            ];
            if force {
                args.push("--force");
            }
            home.run(&args)
        };
        let out = export(false);
        assert_ne!(out.status.code(), Some(0), "{file}: {}", stdout(&out));
        let err = crate::support::stderr(&out);
        assert!(
            err.contains("--force") && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "{file} changed"
        );
        assert_code(&export(true), 0);
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.contains("\"fx\""), "{written}");
    }
}

/// An entry that is a server installed already (same command and arguments) is recognised,
/// not installed a second time as `NAME-2`; the rewrite makes it launch the installed server.
/// An imported server that fails its test keeps its entry in the client's file as it was.
#[test]
fn import_recognises_installed_servers_and_keeps_failing_entries() {
    require_keyring();
    let home = Home::new();
    let marker = crate::run_stdio::add_fixture(&home, "memory", &[], None);
    let fixture = crate::support::fixture::fixture_bin();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let doc = serde_json::json!({"mcpServers": {
        "memory": {"command": fixture, "args": ["--name", marker]},
        "broken": {"command": "sh", "args": ["-c", "echo not a server >&2; exit 7"]}
    }});
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = home.run(&[
        "import",
        "--file",
        file.to_str().unwrap(),
        "--format",
        "cursor",
        "--rewrite-source",
        "--yes",
        "--json",
    ]);
    assert_code(&out, 0);
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        report["recognised"],
        serde_json::json!([["memory", "memory"]]),
        "{report}"
    );
    assert_eq!(report["kept_in_source"][0][0], "broken", "{report}");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(home.config_path()).unwrap()).unwrap();
    let names: Vec<&String> = config["servers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["memory", "broken"], "{config}");
    let rewritten: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let servers = &rewritten["mcpServers"];
    assert_eq!(servers["memory"]["args"][0], "run", "{rewritten}");
    assert_eq!(servers["memory"]["args"][1], "memory", "{rewritten}");
    assert_eq!(
        servers["broken"]["command"], "sh",
        "the failing entry was rewritten: {rewritten}"
    );
}
