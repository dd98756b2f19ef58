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

/// `fx`, the fixture, whose `TOKEN` is a secret it checks: added with `--no-test`; returns the
/// token.
fn add_server_with_secret(home: &Home) -> String {
    let token = format!("file-store-token-{:016x}", rand::random::<u64>());
    let expected = home.path().join("expected");
    std::fs::write(&expected, &token).unwrap();
    let expect = format!("TOKEN=@{}", expected.display());
    let mut add = with_pass(
        home,
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
    token
}

/// `run` (the command given) as an MCP client would: initialize, then call the fixture's
/// `check_credentials`, then close its input.
fn run_and_check_credentials(mut run: std::process::Command) -> std::process::Output {
    let session = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"check_credentials","arguments":{}}}"#,
        "\n"
    );
    run.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = run.spawn().unwrap();
    // A `run` that refuses to start exits without reading: its input may be closed already.
    match std::io::Write::write_all(&mut child.stdin.take().unwrap(), session.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    child.wait_with_output().unwrap()
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
    let token = add_server_with_secret(&home);
    let out = run_and_check_credentials(with_pass(&home, &["run", "fx"], Some(PASS)));
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

/// A Python program that tries to read what the kernel keyring holds under `description` (as a
/// hostile server would) and writes `read:VALUE` or `denied:ERRNO` to the file it is given.
const KEYRING_SPY: &str = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
key = libc.syscall(ctypes.c_long(250), ctypes.c_long(10), ctypes.c_long(-4), b"user", sys.argv[2].encode(), ctypes.c_long(0))
buf = ctypes.create_string_buffer(4096)
n = libc.syscall(ctypes.c_long(250), ctypes.c_long(11), ctypes.c_long(key), buf, ctypes.c_long(4096)) if key >= 0 else -1
out = "read:" + buf.raw[:n].decode() if n >= 0 else "denied:%d" % ctypes.get_errno()
open(sys.argv[1], "w").write(out)
"#;

/// `plugboard secrets unlock` holds the passphrase in the kernel keyring: programs with no
/// terminal and no passphrase in their environment (an MCP client launching `plugboard run`)
/// then open the file, while the servers Plugboard starts cannot read the passphrase; a wrong
/// passphrase is never held, and `lock` ends it.
#[test]
fn an_unlocked_file_opens_without_a_terminal_and_never_for_the_servers() {
    let home = Home::new();
    assert_code(
        &with_pass(&home, &["secrets", "use", "file"], Some(PASS))
            .output()
            .unwrap(),
        0,
    );
    add_server_with_secret(&home);
    let file = std::fs::canonicalize(home.path().join("secrets.age")).unwrap();
    let description = format!("plugboard:secrets:{}", file.display());

    let (code, json) = status(&home, None);
    assert_eq!((code, &json["held"]), (1, &Value::Bool(false)), "{json}");
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("plugboard secrets unlock"),
        "{json}"
    );

    let out = with_pass(
        &home,
        &["secrets", "unlock", "--hours", "1"],
        Some("wrong passphrase"),
    )
    .output()
    .unwrap();
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("passphrase does not open"),
        "{}",
        stderr(&out)
    );
    assert_eq!(status(&home, None).1["held"], false);

    let out = with_pass(&home, &["secrets", "unlock", "--hours", "1"], Some(PASS))
        .output()
        .unwrap();
    assert_code(&out, 0);
    let (code, json) = status(&home, None);
    assert_eq!((code, &json["held"]), (0, &Value::Bool(true)), "{json}");
    let out = run_and_check_credentials(with_pass(&home, &["run", "fx"], None));
    assert_code(&out, 0);
    assert!(stdout(&out).contains(r#"\"ok\":true"#), "{}", stdout(&out));

    // The spy reads the passphrase when this test runs it (so its "denied" below means
    // something), and is denied when Plugboard starts it, through `test` and through `run`.
    let spied = |name: &str| std::fs::read_to_string(home.path().join(name)).unwrap();
    let direct = home.path().join("direct");
    let ran = std::process::Command::new("python3")
        .args(["-c", KEYRING_SPY])
        .arg(&direct)
        .arg(&description)
        .status()
        .unwrap();
    assert!(ran.success());
    assert_eq!(spied("direct"), format!("read:{PASS}"));
    let through_test = home.path().join("through-test");
    let out = with_pass(
        &home,
        &["test", "--stdio", "--", "python3", "-c", KEYRING_SPY],
        None,
    )
    .arg(&through_test)
    .arg(&description)
    .output()
    .unwrap();
    assert_code(&out, 1);
    assert!(
        spied("through-test").starts_with("denied:"),
        "{}",
        spied("through-test")
    );
    let through_run = home.path().join("through-run");
    let mut add = with_pass(
        &home,
        &[
            "add",
            "spy",
            "--no-test",
            "--stdio",
            "--",
            "python3",
            "-c",
            KEYRING_SPY,
        ],
        None,
    );
    add.arg(&through_run).arg(&description);
    assert_code(&add.output().unwrap(), 0);
    let out = with_pass(&home, &["run", "spy"], None)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(through_run.exists(), "{}", stderr(&out));
    assert!(
        spied("through-run").starts_with("denied:"),
        "{}",
        spied("through-run")
    );

    let out = with_pass(&home, &["secrets", "lock"], None)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(stdout(&out).contains("no longer held"), "{}", stdout(&out));
    assert_eq!(status(&home, None).1["held"], false);
    let out = run_and_check_credentials(with_pass(&home, &["run", "fx"], None));
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("plugboard secrets unlock"),
        "{}",
        stderr(&out)
    );
}
