//! The OS keyring store against a real Secret Service (gnome-keyring in a private D-Bus session),
//! and the fast, clear failure when there is none.

use std::time::{Duration, Instant};

use plugboard::secrets::{KeyringStore, SecretKey, SecretStore, Sensitive};

use crate::support::{Home, assert_code, require_keyring, stderr};

#[test]
fn keyring_round_trip_with_awkward_values() {
    require_keyring();
    let store = KeyringStore::open().unwrap();
    store.check().unwrap();
    let ns = format!("test-{:x}", rand::random::<u64>());
    let values = [
        "plain",
        "with spaces and \"quotes\" \\ and ünïcødé 🔑",
        &"x".repeat(4096),
    ];
    for (i, value) in values.iter().enumerate() {
        let key = SecretKey::new(&ns, format!("K{i}"));
        store.set(&key, &Sensitive::new(value.to_string())).unwrap();
        assert_eq!(store.get(&key).unwrap().unwrap().expose(), value);
        store.delete(&key).unwrap();
        assert!(store.get(&key).unwrap().is_none());
        store.delete(&key).unwrap();
    }
    // Namespaces keep servers apart.
    let a = SecretKey::new(format!("{ns}-a"), "TOKEN");
    let b = SecretKey::new(format!("{ns}-b"), "TOKEN");
    store.set(&a, &Sensitive::new("for-a".into())).unwrap();
    assert!(store.get(&b).unwrap().is_none());
    store.delete(&a).unwrap();
}

/// With no D-Bus session at all, a command that needs the keyring fails fast with a message
/// that says what is missing and how to fix it, writes nothing, and falls back to nothing.
#[test]
fn without_a_keyring_secret_commands_fail_fast_and_clearly() {
    let home = Home::new();
    let started = Instant::now();
    let out = home
        .cmd(&[
            "install",
            "tavily",
            "--secret-stdin",
            "TAVILY_API_KEY",
            "--no-test",
        ])
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/plugboard-test-bus",
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"tvly-not-stored-anywhere\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_code(&out, 2);
    assert!(started.elapsed() < Duration::from_secs(10));
    let err = stderr(&out);
    assert!(err.contains("no usable OS keyring"), "{err}");
    assert!(err.contains("gnome-keyring"), "the fix is named: {err}");
    assert!(!home.config_path().exists(), "nothing saved");
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !crate::support::contains_bytes(&bytes, b"tvly-not-stored-anywhere"),
            "{}",
            path.display()
        );
    }
    // Commands that need no secret still work.
    let out = home
        .cmd(&["add", "plain", "--no-test", "--stdio", "--", "cmd"])
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/plugboard-test-bus",
        )
        .output()
        .unwrap();
    assert_code(&out, 0);
}

/// A D-Bus session whose Secret Service has no usable login keyring (gnome-keyring started on
/// demand by D-Bus activation, never unlocked): refused at once with a fix, nothing saved.
#[test]
fn a_keyring_that_is_not_set_up_is_refused_clearly() {
    let home = Home::new();
    let daemon_home = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = std::process::Command::new("dbus-run-session")
        .arg("--")
        .arg(crate::support::plugboard_bin())
        .args([
            "install",
            "tavily",
            "--secret-stdin",
            "TAVILY_API_KEY",
            "--no-test",
        ])
        .env("PLUGBOARD_HOME", home.path())
        .env("HOME", daemon_home.path())
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"tvly-never-stored\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_code(&out, 2);
    assert!(started.elapsed() < Duration::from_secs(20));
    let err = stderr(&out);
    assert!(
        err.contains("locked or not set up") || err.contains("no usable OS keyring"),
        "{err}"
    );
    assert!(!home.config_path().exists(), "nothing saved");
}
