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
