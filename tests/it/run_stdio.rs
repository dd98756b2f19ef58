//! `plugboard run NAME` for stdio servers, as other MCP clients launch it: a real client (the
//! Python SDK's stdio client) reaching a fixture that needs a secret from the keyring; exit code
//! passthrough; SIGTERM forwarded to the server; nothing left behind when stdin closes or when
//! `plugboard run` is killed; disabled servers refused.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fixture::{fixture_bin, live_with_marker, marker, wait_gone};
use crate::support::{
    Home, assert_code, contains_bytes, repo_root, require_keyring, stderr, stdout,
};

/// Install the fixture as stdio server `name` (with `--name <marker>` and `args`), with the
/// secret env `TOKEN` = `token` when given. Returns the marker.
pub fn add_fixture(home: &Home, name: &str, args: &[&str], token: Option<&str>) -> String {
    let mark = marker(name);
    let fixture = fixture_bin();
    let mut argv = vec!["add", name, "--no-test", "--stdio"];
    if token.is_some() {
        argv.extend(["--secret-env", "TOKEN"]);
    }
    argv.extend(["--", fixture.to_str().unwrap(), "--name", &mark]);
    argv.extend(args);
    let mut cmd = home.cmd(&argv);
    if let Some(token) = token {
        cmd.env("PLUGBOARD_SECRET_TOKEN", token);
    }
    let out = cmd.output().unwrap();
    assert_code(&out, 0);
    mark
}

/// The Python SDK's stdio client launching `command args`, calling `tool`.
pub fn python_client(home: &Home, tool: &str, command: &[&str]) -> Value {
    let python = repo_root().join(".tools/peers-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup, which creates it with the mcp SDK",
        python.display()
    );
    let out = Command::new(python)
        .arg(repo_root().join("tests/peers/python_client.py"))
        .arg(tool)
        .args(command)
        .env("PLUGBOARD_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&out, 0);
    serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{e}: stdout {} stderr {}", stdout(&out), stderr(&out)))
}

fn plugboard() -> String {
    crate::support::plugboard_bin()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_python_sdk_client_runs_a_stdio_server_with_its_secret() {
    require_keyring();
    let home = Home::new();
    let token = format!("tok-stdio-{:016x}", rand::random::<u64>());
    let file = home.path().join("expected-token");
    std::fs::write(&file, &token).unwrap();
    let expect = format!("TOKEN=@{}", file.display());
    let mark = add_fixture(&home, "fx", &["--expect-env", &expect], Some(&token));
    // The secret is in the keyring, not in the config or on any command line.
    for (path, bytes) in home.all_file_bytes() {
        if path != file {
            assert!(
                !contains_bytes(&bytes, token.as_bytes()),
                "{}",
                path.display()
            );
        }
    }
    let result = python_client(&home, "check_credentials", &[&plugboard(), "run", "fx"]);
    assert_eq!(result["server"], mark);
    let tools: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tools, ["echo", "add", "check_credentials"]);
    assert_eq!(result["call"]["is_error"], false, "{result}");
    assert!(
        result["call"]["text"]
            .as_str()
            .unwrap()
            .contains("\"ok\":true")
    );
    crate::support::fixture::assert_no_process_left(&mark);
}

/// Start `plugboard run name` with stdin, stdout and stderr piped.
fn spawn_run(home: &Home, name: &str) -> Child {
    home.cmd(&["run", name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a live process carrying `mark` and return its pid.
fn wait_for_marker(mark: &str) -> u32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = live_with_marker(mark).first() {
            return *pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("plugboard run did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_exit_code_passes_through_and_stdout_carries_only_mcp() {
    let home = Home::new();
    add_fixture(&home, "dies", &["--misbehave", "exit-at-once"], None);
    let out = home.run(&["run", "dies"]);
    assert_code(&out, 3);
    assert!(out.stdout.is_empty(), "stdout: {}", stdout(&out));
    assert!(stderr(&out).contains("fatal: fixture configured to fail at startup"));

    // A whole session through a pipe: byte-for-byte answers, exit 0 when stdin closes.
    add_fixture(&home, "ok", &[], None);
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        "\n"
    );
    let out = home.run_with_stdin(&["run", "ok"], input);
    assert_code(&out, 0);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("only JSON-RPC on stdout"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", stdout(&out));
    assert_eq!(lines[1]["result"]["content"][0]["text"], "5");
}

#[test]
fn sigterm_is_forwarded_to_the_server() {
    let home = Home::new();
    let mark = add_fixture(&home, "term", &[], None);
    let mut child = spawn_run(&home, "term");
    let server = wait_for_marker(&mark);
    let started = Instant::now();
    // SAFETY: signalling the plugboard process this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = wait_exit(&mut child, Duration::from_secs(10));
    // The server died of the forwarded SIGTERM (not of our SIGKILL escalation, nor of stdin EOF,
    // which would have been exit 0), and its status is passed through as 128 + 15.
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(wait_gone(server, Duration::from_secs(2)));
    drop(child.stdin.take());
}

#[test]
fn closing_stdin_ends_the_whole_process_group() {
    let home = Home::new();
    let mark = add_fixture(&home, "gc", &["--misbehave", "grandchild"], None);
    let mut child = spawn_run(&home, "gc");
    // The fixture names its grandchild (a `sleep 300` holding the pipes) on stderr, which
    // `plugboard run` passes on.
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines();
    let grandchild: u32 = loop {
        let line = lines.next().expect("stderr open").unwrap();
        if let Some(pid) = line.trim().strip_prefix("GRANDCHILD_PID=") {
            break pid.parse().unwrap();
        }
    };
    let server = wait_for_marker(&mark);
    child.stdin.take().unwrap().write_all(b"").unwrap(); // then dropped: stdin closes
    let status = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(
        status.code(),
        Some(0),
        "the server exits 0 when stdin closes"
    );
    assert!(
        wait_gone(server, Duration::from_secs(2)),
        "server {server} left"
    );
    assert!(
        wait_gone(grandchild, Duration::from_secs(2)),
        "grandchild {grandchild} left"
    );
    crate::support::fixture::assert_no_process_left(&mark);
}

#[test]
fn a_killed_plugboard_run_takes_its_server_along() {
    let home = Home::new();
    // never-answer keeps running after stdin EOF: only the parent-death signal can end it.
    let mark = add_fixture(&home, "stubborn", &["--misbehave", "never-answer"], None);
    let mut child = spawn_run(&home, "stubborn");
    let server = wait_for_marker(&mark);
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    let _ = child.wait();
    assert!(
        wait_gone(server, Duration::from_secs(3)),
        "server {server} outlived plugboard run"
    );
}

#[test]
fn a_killed_plugboard_run_leaves_no_grandchild_either() {
    let home = Home::new();
    let mark = add_fixture(&home, "gk", &["--misbehave", "grandchild"], None);
    let mut child = spawn_run(&home, "gk");
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines();
    let grandchild: u32 = loop {
        let line = lines.next().expect("stderr open").unwrap();
        if let Some(pid) = line.trim().strip_prefix("GRANDCHILD_PID=") {
            break pid.parse().unwrap();
        }
    };
    let server = wait_for_marker(&mark);
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    assert!(
        wait_gone(server, Duration::from_secs(3)),
        "server {server} left"
    );
    assert!(
        wait_gone(grandchild, Duration::from_secs(3)),
        "grandchild {grandchild} outlived plugboard run"
    );
}

#[test]
fn a_disabled_server_is_refused() {
    let home = Home::new();
    let mark = add_fixture(&home, "off", &[], None);
    assert_code(&home.run(&["disable", "off"]), 0);
    let out = home.run(&["run", "off"]);
    assert_code(&out, 2);
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("disabled") && err.contains("plugboard enable off"),
        "{err}"
    );
    assert!(live_with_marker(&mark).is_empty());
    let out = home.run(&["run", "nope"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("no server named `nope`"));
}

/// A server that spells its answers' ids as floats (`"id":2.0`, which JSON allows) must not slip
/// its tool list past the filter; a client request with a non-integer id is refused before it
/// reaches the server.
#[test]
fn answers_with_float_ids_are_still_filtered_and_float_request_ids_are_refused() {
    let home = Home::new();
    add_fixture(&home, "floaty", &["--misbehave", "float-ids"], None);
    assert_code(&home.run(&["test", "floaty"]), 0);
    assert_code(&home.run(&["tools", "floaty", "--disable", "add"]), 0);
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3.5,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        "\n"
    );
    let out = home.run_with_stdin(&["run", "floaty"], input);
    assert_code(&out, 0);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("only JSON-RPC on stdout"))
        .collect();
    let list = lines
        .iter()
        .find(|l| l["result"]["tools"].is_array())
        .unwrap_or_else(|| panic!("no tools/list answer: {}", stdout(&out)));
    assert_eq!(
        list["id"], 2.0,
        "the server's own spelling reaches the client"
    );
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert!(
        !names.contains(&"add"),
        "a disabled tool was listed: {names:?}"
    );
    let refused = lines
        .iter()
        .find(|l| l["error"]["code"] == -32600)
        .unwrap_or_else(|| panic!("the float request id was not refused: {}", stdout(&out)));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("3.5")
    );
    assert!(
        lines.iter().all(|l| l["result"]["content"].is_null()),
        "the refused call reached the server: {}",
        stdout(&out)
    );
}

/// Through `plugboard run`, a tool result loses its terminal controls, bidi controls and tag
/// characters (unless the server keeps them), and a call whose arguments hold the server's
/// secret never reaches it.
#[test]
fn results_lose_their_controls_and_a_call_carrying_a_secret_is_not_sent() {
    let home = Home::new();
    let token = "tok-PLUGBOARD-run-secret-4711";
    add_fixture(&home, "clean", &[], Some(token));
    let call = |id: u32, message: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"message": message}}})
        .to_string()
    };
    let hostile = "ok \u{1b}]52;c;cGF5bG9hZA==\u{7}\u{1b}[2J done \u{202e}txet\u{E0041}";
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        call(2, hostile),
        call(3, &format!("please keep {token} safe")),
    ]
    .join("\n")
        + "\n";
    let answers = |out: &std::process::Output| -> Vec<Value> {
        stdout(out)
            .lines()
            .map(|l| serde_json::from_str(l).expect("only JSON-RPC on stdout"))
            .collect()
    };
    let out = home.run_with_stdin(&["run", "clean"], &input);
    assert_code(&out, 0);
    let lines = answers(&out);
    let echoed = lines.iter().find(|l| l["id"] == 2).unwrap();
    assert_eq!(
        echoed["result"]["content"][0]["text"], "ok ]52;c;cGF5bG9hZA==[2J done txet",
        "{echoed}"
    );
    let refused = lines.iter().find(|l| l["id"] == 3).unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("hold a secret of `clean`")
    );
    assert!(!stdout(&out).contains(token));

    // Kept when the user says so.
    assert_code(
        &home.run(&["edit", "clean", "--keep-control-characters"]),
        0,
    );
    let out = home.run_with_stdin(&["run", "clean"], &input);
    let lines = answers(&out);
    let echoed = lines.iter().find(|l| l["id"] == 2).unwrap();
    assert_eq!(echoed["result"]["content"][0]["text"], hostile);
}
