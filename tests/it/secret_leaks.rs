//! Secrets that must not reach where they were not meant to go: package-index credentials in
//! Plugboard's environment never reach a server.

use serde_json::Value;

use crate::support::{Home, stdout};

/// pip, uv and npm settings pass to stdio servers (their runners need the index and the TLS
/// trust), but the credentials among them do not: not `UV_INDEX_<N>_PASSWORD`, not
/// `npm_config__authToken`, not the password in `PIP_INDEX_URL`'s user info.
#[test]
fn package_index_credentials_never_reach_a_server() {
    let home = Home::new();
    let script = "printf 'url=%s|extra=%s|uvpw=%s|uvuser=%s|npmtok=%s|npmauth=%s|reg=%s\\n' \
        \"$PIP_INDEX_URL\" \"$PIP_EXTRA_INDEX_URL\" \"$UV_INDEX_1_PASSWORD\" \
        \"${UV_INDEX_1_USERNAME-unset}\" \"$npm_config__authToken\" \
        \"$(env | grep -c '^npm_config_//npm.example/:_auth')\" \"$npm_config_registry\" >&2; \
        env | grep -c 'pipSecret9\\|uvSecret9\\|npmSecret9' >&2; exit 3";
    let out = home
        .cmd(&["test", "--json", "--stdio", "--", "sh", "-c", script])
        .env(
            "PIP_INDEX_URL",
            "https://alice:pipSecret9@pip.example/simple",
        )
        .env(
            "PIP_EXTRA_INDEX_URL",
            "https://pypi.org/simple https://bob:pipSecret9x@extra.example/simple",
        )
        .env("UV_INDEX_1_PASSWORD", "uvSecret9")
        .env("UV_INDEX_1_USERNAME", "alice")
        .env("npm_config__authToken", "npmSecret9")
        .env("npm_config_//npm.example/:_authToken", "npmSecret9b")
        .env("npm_config_registry", "https://npm.example/")
        .output()
        .unwrap();
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let tail = result["stderr_tail"].as_str().unwrap_or("");
    assert!(
        tail.contains(
            "url=https://pip.example/simple|extra=https://pypi.org/simple \
             https://extra.example/simple|uvpw=|uvuser=unset|npmtok=|npmauth=0|\
             reg=https://npm.example/"
        ),
        "{tail}"
    );
    assert!(
        tail.lines().any(|l| l.trim() == "0"),
        "a credential reached the server: {tail}"
    );
}

/// A server that logs the first 20 characters of its 40-character token, and whose token line
/// the 64 KiB stderr ring cuts through, gets neither piece into `test --json`, `health` or the
/// files Plugboard keeps.
#[test]
fn pieces_of_a_secret_are_redacted_too() {
    let home = Home::new();
    let token = format!(
        "pb_{:016x}{:021x}",
        rand::random::<u64>(),
        rand::random::<u128>() >> 44
    );
    assert_eq!(token.len(), 40);
    let out = home
        .cmd(&[
            "add",
            "pieces",
            "--no-test",
            "--secret-env",
            "API_TOKEN",
            "--stdio",
            "--",
            crate::support::fixture::fixture_bin().to_str().unwrap(),
            "--misbehave",
            "leak-secret-pieces=API_TOKEN",
        ])
        .env("PLUGBOARD_SECRET_API_TOKEN", &token)
        .output()
        .unwrap();
    crate::support::assert_code(&out, 0);
    let runs: Vec<&str> = (0..=token.len() - 12)
        .map(|at| &token[at..at + 12])
        .collect();
    let leaks = |text: &str| runs.iter().find(|run| text.contains(**run)).copied();
    let out = home.run(&["test", "pieces", "--json"]);
    let shown = format!("{}{}", stdout(&out), crate::support::stderr(&out));
    assert!(shown.contains("token starts with ***"), "{shown}");
    assert_eq!(
        leaks(&shown),
        None,
        "a piece of the token was shown: {shown}"
    );
    let out = home.run(&["health", "--json"]);
    assert_eq!(
        leaks(&stdout(&out)),
        None,
        "health shows a piece of the token"
    );
    for (path, bytes) in home.all_file_bytes() {
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(
            leaks(&text),
            None,
            "{} keeps a piece of the token",
            path.display()
        );
    }
}

/// A bearer token is not sent over plain http to another machine: the test stops before any
/// connection, says why, and goes through once the user allows it for that server.
#[test]
fn credentials_never_go_over_plain_http_to_another_host_unless_allowed() {
    let home = Home::new();
    // This machine's address on its network, not loopback: a listener there stands in for the
    // remote server (and would see the token arrive).
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let Some(address) = outward_address() else {
        eprintln!("skipped: this machine has no non-loopback IPv4 address");
        return;
    };
    let url = format!("http://{address}:{port}/mcp");
    let out = home.run_with_stdin(
        &[
            "add",
            "plain",
            "--url",
            &url,
            "--transport",
            "shttp",
            "--bearer-stdin",
            "--no-test",
        ],
        "token-not-for-plain-http",
    );
    crate::support::assert_code(&out, 0);
    let out = home.run(&["test", "plain", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("plain http") && error.contains(&address),
        "{result}"
    );
    assert!(
        listener.accept().is_err(),
        "a connection reached the plain-http listener"
    );
    // Allowed for this server: the connection is made (the listener sees it).
    let out = home.run(&["edit", "plain", "--allow-insecure-http"]);
    crate::support::assert_code(&out, 0);
    assert!(crate::support::stderr(&out).contains("warning"));
    let mut child = home
        .cmd(&["test", "plain", "--timeout", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let mut seen = false;
    while started.elapsed() < std::time::Duration::from_secs(10) && !seen {
        seen = listener.accept().is_ok();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen, "with the user's leave the server was contacted");
}

/// An IPv4 address of this machine that is not loopback (the one a UDP socket would use).
fn outward_address() -> Option<String> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback()).then(|| ip.to_string())
}
