//! The encrypted-file secret store, chosen with `plugboard secrets use file`: secrets round-trip
//! (into a server's environment too), the file holds no plaintext and is 0600, a wrong
//! passphrase is refused without touching the file, `secrets status` probes the store for real,
//! and `secrets use keyring` goes back.

use std::os::unix::fs::PermissionsExt;

use plugboard::secrets::{FileStore, SecretKey, SecretStore, Sensitive};
use serde_json::Value;

use crate::run_stdio::add_fixture;
use crate::support::{Home, assert_code, contains_bytes, require_keyring, stderr, stdout};

const PASS: &str = "correct horse battery staple";

fn with_pass(home: &Home, args: &[&str], pass: Option<&str>) -> std::process::Command {
    let mut cmd = home.cmd(args);
    cmd.env_remove("PLUGBOARD_SECRETS_PASSPHRASE");
    match pass {
        Some(pass) => {
            cmd.env("PLUGBOARD_SECRETS_PASSPHRASE", pass);
        }
        None => {
            // No controlling terminal, so no prompt can wait for a person.
            use std::os::unix::process::CommandExt;
            // SAFETY: setsid is async-signal-safe.
            unsafe {
                cmd.pre_exec(|| {
                    libc::setsid();
                    Ok(())
                });
            }
        }
    }
    cmd
}

fn status(home: &Home, pass: Option<&str>) -> (i32, Value) {
    let out = with_pass(home, &["secrets", "status", "--json"], pass)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        serde_json::from_str(&stdout(&out)).unwrap(),
    )
}

#[test]
fn file_store_round_trip_refusals_and_status() {
    let home = Home::new();
    let out = with_pass(&home, &["secrets", "use", "file"], Some(PASS))
        .output()
        .unwrap();
    assert_code(&out, 0);
    let settings: Value =
        serde_json::from_slice(&std::fs::read(home.path().join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["secret_store"], "file");
    let file = home.path().join("secrets.age");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // A server whose secret lives in the file reaches its server through `plugboard run`.
    let token = format!("file-store-token-{:016x}", rand::random::<u64>());
    let expected = home.path().join("expected");
    std::fs::write(&expected, &token).unwrap();
    let expect = format!("TOKEN=@{}", expected.display());
    let mut add = with_pass(
        &home,
        &[
            "add",
            "fx",
            "--no-test",
            "--stdio",
            "--secret-env",
            "TOKEN",
            "--",
        ],
        Some(PASS),
    );
    add.arg(crate::support::fixture::fixture_bin())
        .args(["--expect-env", &expect])
        .env("PLUGBOARD_SECRET_TOKEN", &token);
    assert_code(&add.output().unwrap(), 0);
    for (path, bytes) in home.all_file_bytes() {
        if path != expected {
            assert!(
                !contains_bytes(&bytes, token.as_bytes()),
                "plaintext in {}",
                path.display()
            );
        }
    }
    let session = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"check_credentials","arguments":{}}}"#,
        "\n"
    );
    let mut run = with_pass(&home, &["run", "fx"], Some(PASS));
    run.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = run.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), session.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    assert!(stdout(&out).contains(r#"\"ok\":true"#), "{}", stdout(&out));

    // The library store reads the same value with the passphrase.
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    let ns = config["servers"]["fx"]["secret_namespace"]
        .as_str()
        .unwrap();
    let store = FileStore::with_passphrase(&file, Sensitive::new(PASS.into()));
    assert_eq!(
        store
            .get(&SecretKey::new(ns, "TOKEN"))
            .unwrap()
            .unwrap()
            .expose(),
        &token
    );

    // The status probe writes, reads and deletes for real, and leaves the content as it was.
    let (code, json) = status(&home, Some(PASS));
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["store"], "file");
    assert_eq!(json["ok"], true);
    assert_eq!(store.keys().unwrap(), vec![SecretKey::new(ns, "TOKEN")]);

    // A wrong passphrase is a clear error, and the file is untouched by anything.
    let before = std::fs::read(&file).unwrap();
    let (code, json) = status(&home, Some("wrong passphrase"));
    assert_eq!(code, 1);
    assert_eq!(json["ok"], false);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("passphrase does not open"),
        "{json}"
    );
    let out = with_pass(
        &home,
        &["edit", "fx", "--secret-env", "TOKEN"],
        Some("wrong passphrase"),
    )
    .env("PLUGBOARD_SECRET_TOKEN", "another-value-xyz")
    .output()
    .unwrap();
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("passphrase does not open"),
        "{}",
        stderr(&out)
    );
    let out = with_pass(&home, &["run", "fx"], Some("wrong passphrase"))
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file was changed"
    );

    // No passphrase and no terminal: say how to give one; nothing falls back to the keyring.
    let (code, json) = status(&home, None);
    assert_eq!(code, 1);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("PLUGBOARD_SECRETS_PASSPHRASE"),
        "{json}"
    );
    // Choosing the file again with a wrong passphrase refuses and keeps the file.
    let out = with_pass(&home, &["secrets", "use", "file"], Some("wrong passphrase"))
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn back_to_the_keyring() {
    require_keyring();
    let home = Home::new();
    assert_code(
        &with_pass(&home, &["secrets", "use", "file"], Some(PASS))
            .output()
            .unwrap(),
        0,
    );
    let out = home.run(&["secrets", "use", "keyring"]);
    assert_code(&out, 0);
    let (code, json) = status(&home, None);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["store"], "keyring");
    assert_eq!(json["ok"], true);
    // A stdio server with a secret now keeps it in the keyring again.
    add_fixture(&home, "k", &[], Some("keyring-secret-value-123"));
    let file = std::fs::read(home.path().join("secrets.age")).unwrap();
    assert!(!contains_bytes(&file, b"keyring-secret-value-123"));
}

/// A new file is not encrypted with a passphrase anyone could guess in a moment, and it is
/// written with age's default scrypt work factor (2^18), not a cheaper one.
#[test]
fn a_new_file_needs_a_real_passphrase_and_age_work_factor() {
    let home = Home::new();
    for short in ["x", "hunter2", "eleven char"] {
        let out = with_pass(&home, &["secrets", "use", "file"], Some(short))
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{short}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("at least 12 characters"),
            "{}",
            stderr(&out)
        );
        assert!(!home.path().join("secrets.age").exists());
    }
    let out = with_pass(&home, &["secrets", "use", "file"], Some(PASS))
        .output()
        .unwrap();
    assert_code(&out, 0);
    let bytes = std::fs::read(home.path().join("secrets.age")).unwrap();
    let header = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    let stanza = header
        .lines()
        .find(|l| l.starts_with("-> scrypt "))
        .unwrap_or_else(|| panic!("no scrypt stanza: {header}"));
    assert!(stanza.ends_with(" 18"), "{stanza}");
}
