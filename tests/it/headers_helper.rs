//! Headers from a command (`--headers-helper`): a script stands in for a corporate sign-in tool
//! and prints the header a fixture server requires, whose value rotates in a file the fixture
//! reads at every request. The helper runs without Plugboard's credential variables, its output
//! is in no file, `plugboard run` keeps using its headers until the server refuses them and then
//! runs it again once, a failing helper is reported as such, and another client's
//! `headersHelper` is imported as a helper (without a shell) or left out with the reason.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::fixture::HttpFixture;
use crate::support::{Home, assert_code, contains_bytes, stderr, stdout};

/// A helper script that counts its runs in `count`, records its environment in `env`, and
/// prints `{"X-Corp-Token": <the token file given as its argument>}`.
fn write_helper(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let script = dir.join("corp-token");
    let count = dir.join("runs");
    let env = dir.join("env");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho run >> '{}'\nenv > '{}'\nprintf '{{\"X-Corp-Token\": \"%s\"}}' \"$(cat \"$1\")\"\n",
            count.display(),
            env.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, count, env)
}

fn runs(count: &Path) -> usize {
    std::fs::read_to_string(count)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn token() -> String {
    format!(
        "corp-{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    )
}

#[test]
fn a_helper_s_headers_reach_the_server_rotate_after_a_refusal_and_stay_out_of_files() {
    let work = tempfile::tempdir().unwrap();
    let token_file = work.path().join("token");
    let first = token();
    std::fs::write(&token_file, &first).unwrap();
    let fixture = HttpFixture::start(
        "http",
        &[
            "--expect-header",
            &format!("X-Corp-Token=@{}", token_file.display()),
        ],
    );
    let (script, count, env) = write_helper(work.path());
    let home = Home::new();
    let canary = format!("ghp_canary{:016x}", rand::random::<u64>());
    let out = home
        .cmd(&[
            "add",
            "corp",
            "--url",
            &fixture.url("/mcp"),
            "--transport",
            "shttp",
            "--headers-helper",
            script.to_str().unwrap(),
            "--headers-helper-arg",
            token_file.to_str().unwrap(),
            "--headers-ttl",
            "600",
        ])
        .env("GITHUB_TOKEN", &canary)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    assert_eq!(
        config["servers"]["corp"]["headers_helper"],
        json!({"command": script.to_str().unwrap(), "args": [token_file.to_str().unwrap()], "ttl": 600})
    );
    // The helper ran with the server's name and URL and without Plugboard's credentials.
    let seen = std::fs::read_to_string(&env).unwrap();
    assert!(seen.contains("PLUGBOARD_SERVER_NAME=corp"), "{seen}");
    assert!(
        seen.contains("CLAUDE_CODE_MCP_SERVER_URL=http://127.0.0.1"),
        "{seen}"
    );
    assert!(
        !seen.contains(&canary),
        "a credential variable reached the helper"
    );

    let out = home.run(&["test", "corp", "--json"]);
    assert_code(&out, 0);
    assert!(!stdout(&out).contains(&first));
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, first.as_bytes()),
            "{}",
            path.display()
        );
    }

    // `plugboard run`: the helper runs once for the session, then again only when the server
    // refuses its (rotated) header, and the refused request is retried.
    let before = runs(&count);
    let mut child = home
        .cmd(&["run", "corp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| -> Value {
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        let mut answer = String::new();
        output.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    };
    let init = ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert!(init["result"].is_object(), "{init}");
    let listed = ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#);
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert_eq!(runs(&count), before + 1, "one run for the whole session");
    let second = token();
    std::fs::write(&token_file, &second).unwrap();
    let listed = ask(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#);
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert_eq!(runs(&count), before + 2, "run again after the refusal");
    drop(input);
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(!err.contains(&first) && !err.contains(&second), "{err}");

    // A helper that fails: the test says so and what to do; nothing is sent without it.
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'corp-sso: your session expired, run corp-sso login' >&2\nexit 3\n",
    )
    .unwrap();
    let out = home.run(&["test", "corp", "--json"]);
    assert_code(&out, 1);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["error_kind"], "unauthorized", "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("session expired"),
        "{result}"
    );
    assert!(
        result["hint"].as_str().unwrap().contains("yourself"),
        "{result}"
    );

    // Taken away again.
    assert_code(&home.run(&["edit", "corp", "--no-headers-helper"]), 0);
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    assert!(config["servers"]["corp"].get("headers_helper").is_none());
}

/// Claude Code's `headersHelper` is a shell command line: a plain one becomes a helper (its
/// relative program found beside the file), one that needs a shell is left out with the reason.
#[test]
fn a_client_s_headers_helper_is_imported_without_a_shell() {
    let home = Home::new();
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".mcp.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {
            "plain": {"type": "http", "url": "https://mcp.example.com/mcp", "headersHelper": "./bin/get-token --aud 'my api'"},
            "piped": {"type": "http", "url": "https://other.example.com/mcp", "headersHelper": "corp-sso token | jq -c ."}
        }}"#,
    )
    .unwrap();
    let out = home.run(&[
        "import",
        "--file",
        file.to_str().unwrap(),
        "--format",
        "claude-code",
        "-y",
    ]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("shell syntax"), "{}", stdout(&out));
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    assert_eq!(
        config["servers"]["plain"]["headers_helper"],
        json!({
            "command": project.path().join("bin/get-token").to_str().unwrap(),
            "args": ["--aud", "my api"]
        })
    );
    assert!(config["servers"]["piped"].get("headers_helper").is_none());
    // A stdio server has no headers to get.
    let out = home.run(&[
        "add",
        "local",
        "--headers-helper",
        "/bin/true",
        "--no-test",
        "--stdio",
        "--",
        "true",
    ]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("only a remote server has headers"),
        "{}",
        stderr(&out)
    );
}

/// A Try-it session (and so a gateway's) that stays open asks the helper for the headers of
/// each request: once the ttl has passed the helper runs again without waiting for a refusal,
/// and a request refused with headers kept from before it (the token rotated early) is sent
/// once more with the helper's new ones, in the same session. Over streamable HTTP and over
/// legacy SSE (whose stream stays open with the headers it was opened with).
#[test]
fn a_long_session_gets_new_headers_after_the_ttl_and_after_a_refusal() {
    use plugboard::config::TransportKind;
    for (transport, kind, path) in [
        ("http", TransportKind::Shttp, "/mcp"),
        ("sse", TransportKind::Sse, "/sse"),
    ] {
        long_session_over(transport, kind, path);
    }
}

fn long_session_over(transport: &str, kind: plugboard::config::TransportKind, path: &str) {
    use plugboard::config::{HeadersHelper, ServerConfig};
    use plugboard::session::{CallRequest, Confirmation};
    use std::time::{Duration, Instant};

    use crate::support::sessions::{Script, open, runtime, text};

    const TTL: Duration = Duration::from_secs(2);
    let work = tempfile::tempdir().unwrap();
    let token_file = work.path().join("token");
    std::fs::write(&token_file, token()).unwrap();
    let fixture = HttpFixture::start(
        transport,
        &[
            "--expect-header",
            &format!("X-Corp-Token=@{}", token_file.display()),
        ],
    );
    let (script, count, _) = write_helper(work.path());
    let mut server = ServerConfig::remote(kind, fixture.url(path));
    server.headers_helper = Some(HeadersHelper {
        command: script.to_str().unwrap().to_owned(),
        args: vec![token_file.to_str().unwrap().to_owned()],
        ttl: Some(TTL.as_secs()),
    });
    let echo = |message: &str| CallRequest {
        tool: "echo".into(),
        arguments: json!({ "message": message }),
        confirmation: Confirmation::None,
        timeout: Some(Duration::from_secs(10)),
        call_id: None,
    };
    runtime().block_on(async {
        let live = open("corp-session", server, Script::new(vec![]))
            .await
            .unwrap();
        let s = &live.session;
        let opened = runs(&count);
        assert_eq!(opened, 1, "{transport}: one run to open the session");
        let first = s.call_tool(echo("one")).await.unwrap();
        assert_eq!(text(&first.content), "one");
        assert_eq!(
            runs(&count),
            opened,
            "{transport}: kept while the ttl lasts"
        );

        tokio::time::sleep(TTL + Duration::from_millis(200)).await;
        let after_ttl = s.call_tool(echo("two")).await.unwrap();
        assert_eq!(text(&after_ttl.content), "two");
        assert_eq!(
            runs(&count),
            opened + 1,
            "{transport}: the ttl ran out: a new run"
        );
        let fresh = Instant::now();

        // The token rotates long before the ttl ends: the server refuses the kept header, the
        // helper runs again and the same request goes through.
        std::fs::write(&token_file, token()).unwrap();
        let rotated = s.call_tool(echo("three")).await.unwrap();
        assert!(
            fresh.elapsed() < TTL,
            "{transport}: the refusal, not the ttl, must be what ran the helper"
        );
        assert!(!rotated.is_error, "{transport}: {rotated:?}");
        assert_eq!(text(&rotated.content), "three");
        assert_eq!(
            runs(&count),
            opened + 2,
            "{transport}: one run after the refusal"
        );
        s.close().await;
    });
}
