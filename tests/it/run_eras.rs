//! `plugboard run` across the protocol eras, with real clients (the Python SDK: its 2.3 line in
//! each of its modes, and its legacy-only 1.x line) and real servers: a legacy client uses a
//! modern-only remote server, a modern client a legacy one (the fixture, server-everything),
//! for tools, resources and prompts; the servers' questions are relayed both ways (a modern
//! server's `input_required` rounds ↔ requests to a legacy client, a legacy server's requests
//! ↔ `input_required` for a modern client); what cannot be relayed gets a clear JSON-RPC error;
//! the stdio relay serves a modern server, and its tools stay pinned.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::run_stdio::add_fixture;
use crate::support::fixture::HttpFixture;
use crate::support::peers::{Background, everything_command, free_port};
use crate::support::{Home, assert_code, repo_root, stderr, stdout};

fn plugboard() -> String {
    crate::support::plugboard_bin()
        .to_string_lossy()
        .into_owned()
}

/// The Python SDK venvs: the 2.3 line (both eras) and the 1.x line (legacy only).
const SDK_2: &str = ".tools/peers-venv";
const SDK_1: &str = ".tools/peers-venv-1x";

/// `tests/peers/era_client.py` with the SDK of `venv` in `mode`, running `plugboard run NAME`,
/// calling `tool` with `args`.
fn era_client(home: &Home, venv: &str, mode: &str, name: &str, tool: &str, args: &str) -> Value {
    let python = repo_root().join(venv).join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup",
        python.display()
    );
    let out = Command::new(python)
        .arg(repo_root().join("tests/peers/era_client.py"))
        .args([mode, tool, args, &plugboard(), "run", name])
        .env("PLUGBOARD_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&out, 0);
    serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{e}: stdout {} stderr {}", stdout(&out), stderr(&out)))
}

fn add_remote(home: &Home, name: &str, url: &str, transport: &str) {
    assert_code(
        &home.run(&[
            "add",
            name,
            "--no-test",
            "--url",
            url,
            "--transport",
            transport,
        ]),
        0,
    );
}

/// Tools, a call, the resource and the prompt of the fixture, as the client saw them.
#[track_caller]
fn assert_fixture_served(result: &Value, era_version: &str) {
    assert_eq!(result["protocol_version"], era_version, "{result}");
    let tools: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tools, ["echo", "add", "check_credentials"], "{result}");
    assert_eq!(result["call"]["is_error"], false, "{result}");
    assert_eq!(result["call"]["text"], "hi", "{result}");
    assert_eq!(result["resources"], serde_json::json!(["fixture://readme"]));
    assert_eq!(result["read"], "This is the mcp-fixture readme resource.\n");
    assert_eq!(result["prompt"], "Please greet world.");
}

/// The must-show of the modern era: a legacy client (the Python SDK's 1.x stdio client, and
/// the 2.3 client pinned to the legacy handshake) lists and calls the tools of a modern-only
/// remote server through `plugboard run`.
#[test]
fn a_legacy_client_uses_a_modern_only_server() {
    let server = HttpFixture::start("http", &["--era", "modern"]);
    let home = Home::new();
    add_remote(&home, "modern", &server.url("/mcp"), "shttp");
    let old = era_client(
        &home,
        SDK_1,
        "legacy",
        "modern",
        "echo",
        r#"{"message":"hi"}"#,
    );
    assert_fixture_served(&old, "2025-06-18");
    assert_eq!(old["server"], server.marker);
    let pinned = era_client(
        &home,
        SDK_2,
        "legacy",
        "modern",
        "echo",
        r#"{"message":"hi"}"#,
    );
    assert_fixture_served(&pinned, "2025-11-25");
    // A modern client gets the modern server as it is (same era: nothing to translate).
    let modern = era_client(
        &home,
        SDK_2,
        "auto",
        "modern",
        "echo",
        r#"{"message":"hi"}"#,
    );
    assert_fixture_served(&modern, "2026-07-28");
    // `auto` finds the modern server too.
    add_remote(&home, "modern-auto", &server.url("/mcp"), "auto");
    let old = era_client(
        &home,
        SDK_1,
        "legacy",
        "modern-auto",
        "echo",
        r#"{"message":"hi"}"#,
    );
    assert_fixture_served(&old, "2025-06-18");
}

/// A modern client (the Python SDK 2.3, probing and pinned to 2026-07-28) uses legacy servers:
/// the fixture over streamable HTTP and (through `auto`) legacy SSE, and server-everything.
#[test]
fn a_modern_client_uses_legacy_servers() {
    let legacy = HttpFixture::start("http", &["--era", "legacy"]);
    let sse = HttpFixture::start("http", &["--misbehave", "sse-only"]);
    let home = Home::new();
    add_remote(&home, "legacy", &legacy.url("/mcp"), "shttp");
    add_remote(&home, "old-sse", &sse.url("/mcp"), "auto");
    for mode in ["auto", "2026-07-28"] {
        for name in ["legacy", "old-sse"] {
            let result = era_client(&home, SDK_2, mode, name, "echo", r#"{"message":"hi"}"#);
            assert_fixture_served(&result, "2026-07-28");
        }
    }

    let (node, script) = everything_command();
    let port = free_port();
    let mut cmd = Command::new(node);
    cmd.arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let everything = Background::start(cmd, port);
    add_remote(&home, "everything", &everything.url("/mcp"), "shttp");
    let result = era_client(
        &home,
        SDK_2,
        "2026-07-28",
        "everything",
        "echo",
        r#"{"message":"hi"}"#,
    );
    assert_eq!(result["protocol_version"], "2026-07-28", "{result}");
    assert!(result["tools"].as_array().unwrap().len() >= 10, "{result}");
    assert_eq!(result["call"]["is_error"], false, "{result}");
    assert!(
        result["call"]["text"].as_str().unwrap().contains("hi"),
        "{result}"
    );
    assert!(!result["resources"].as_array().unwrap().is_empty());
    assert!(result["prompt"].is_string(), "{result}");
}

/// The servers' questions cross the eras: a modern server's `input_required` round becomes an
/// elicitation request to a legacy client, whose answer retries the call; a legacy server's
/// elicitation request becomes `input_required` for a modern client, whose retry answers it.
#[test]
fn server_questions_are_relayed_between_the_eras() {
    let modern = HttpFixture::start(
        "http",
        &["--era", "modern", "--misbehave", "input-required"],
    );
    let legacy = HttpFixture::start("sse", &["--era", "legacy", "--misbehave", "input-required"]);
    let home = Home::new();
    add_remote(&home, "asks-modern", &modern.url("/mcp"), "shttp");
    add_remote(&home, "asks-legacy", &legacy.url("/sse"), "sse");
    for (venv, mode, name, version) in [
        (SDK_1, "legacy", "asks-modern", "2025-06-18"),
        (SDK_2, "legacy", "asks-modern", "2025-11-25"),
        (SDK_2, "2026-07-28", "asks-legacy", "2026-07-28"),
        (SDK_2, "auto", "asks-legacy", "2026-07-28"),
    ] {
        let result = era_client(&home, venv, mode, name, "echo", r#"{"message":"hi"}"#);
        assert_fixture_served(&result, version);
        assert_eq!(result["elicited"], 1, "{venv} {mode} {name}: {result}");
    }
}

/// A client that cannot answer the server's question (it declared no elicitation capability)
/// gets a JSON-RPC error that says so, instead of a hang.
#[test]
fn a_question_the_client_cannot_answer_is_a_clear_error() {
    let modern = HttpFixture::start(
        "http",
        &["--era", "modern", "--misbehave", "input-required"],
    );
    let home = Home::new();
    add_remote(&home, "asks", &modern.url("/mcp"), "shttp");
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
    ];
    let out = home.run_with_stdin(&["run", "asks"], &(lines.join("\n") + "\n"));
    let answers: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], modern.marker);
    let refused = &answers[1];
    assert_eq!(refused["id"], 2);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("elicitation/create")
            && message.contains("did not declare the elicitation capability"),
        "{message}"
    );
}

/// The stdio relay serves a modern server to a client of either era (its era is known from
/// its test: a legacy client is carried across), and a modern `tools/list` is pinned like a
/// legacy one: changed tools are not exposed until approved.
#[test]
fn the_stdio_relay_serves_a_modern_server_and_keeps_its_tools_pinned() {
    let home = Home::new();
    let suffix = home.path().join("suffix");
    std::fs::write(&suffix, "").unwrap();
    add_fixture(&home, "fx", &["--era", "modern"], None);
    let tested = home.run(&["test", "fx", "--json"]);
    assert_code(&tested, 0);
    let tested: Value = serde_json::from_str(&stdout(&tested)).unwrap();
    assert_eq!(tested["era"], "modern");
    assert_eq!(tested["pin_state"], "pinned", "{tested:#}");
    for (venv, mode, version) in [
        (SDK_2, "auto", "2026-07-28"),
        (SDK_2, "2026-07-28", "2026-07-28"),
        (SDK_2, "legacy", "2025-11-25"),
        (SDK_1, "legacy", "2025-06-18"),
    ] {
        let result = era_client(&home, venv, mode, "fx", "echo", r#"{"message":"hi"}"#);
        assert_eq!(result["call"]["text"], "hi", "{result}");
        assert_eq!(result["protocol_version"], version, "{result}");
        assert_eq!(result["prompt"], "Please greet world.", "{result}");
    }
    // The server's tools change (a new release): the next test sees it, and `run` refuses to
    // expose them until they are approved.
    let config_path = home.config_path();
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    let args = config["servers"]["fx"]["args"].as_array_mut().unwrap();
    args.extend(["--description-suffix".into(), " Now also does more.".into()]);
    std::fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    let changed = home.run(&["test", "fx", "--json"]);
    let changed: Value = serde_json::from_str(&stdout(&changed)).unwrap();
    assert_eq!(changed["era"], "modern");
    assert_eq!(changed["pin_state"], "tools_changed", "{changed:#}");
    let out = home.run(&["run", "fx"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("changed since you approved them"),
        "{}",
        stderr(&out)
    );
    assert_code(&home.run(&["approve", "fx"]), 0);
    let result = era_client(&home, SDK_2, "auto", "fx", "echo", r#"{"message":"hi"}"#);
    assert_eq!(result["call"]["text"], "hi");
}

/// A legacy stdio server (its era known from its test) that asks the client during a call: a
/// modern client gets `input_required` through the stdio relay, and its retry answers the
/// server; a legacy client gets the server's request as it is.
#[test]
fn the_stdio_relay_carries_a_legacy_servers_questions_to_a_modern_client() {
    let home = Home::new();
    add_fixture(
        &home,
        "asks",
        &["--era", "legacy", "--misbehave", "input-required"],
        None,
    );
    let tested = home.run(&["test", "asks", "--json"]);
    let tested: Value = serde_json::from_str(&stdout(&tested)).unwrap();
    assert_eq!(tested["era"], "legacy", "{tested:#}");
    for (venv, mode, version) in [
        (SDK_2, "2026-07-28", "2026-07-28"),
        (SDK_2, "auto", "2026-07-28"),
        (SDK_1, "legacy", "2025-06-18"),
    ] {
        let result = era_client(&home, venv, mode, "asks", "echo", r#"{"message":"hi"}"#);
        assert_fixture_served(&result, version);
        assert_eq!(result["elicited"], 1, "{mode}: {result}");
    }
}
