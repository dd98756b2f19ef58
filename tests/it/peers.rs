//! Interoperability: the probe against real third-party servers — server-everything (npm,
//! TypeScript SDK 1.x: legacy), the official Python SDK 2.3 (both eras: found modern over stdio
//! and streamable HTTP) and its 1.x line (legacy) — over stdio, streamable HTTP and legacy SSE,
//! with full tool lists and the era each one speaks.

use std::process::Command;
use std::time::Duration;

use plugboard::config::{ServerConfig, TransportKind};
use plugboard::connect::Era;
use plugboard::probe::{TestOptions, TestResult, test_config};
use plugboard::secrets::MemoryStore;

use crate::support::peers::{
    Background, everything_command, free_port, python_command, python_v1_command,
};

fn probe(server: ServerConfig) -> TestResult {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = MemoryStore::new();
    let options = TestOptions {
        timeout: Some(Duration::from_secs(60)),
        ..Default::default()
    };
    rt.block_on(test_config("peer", &server, &store, &options, |_| {}))
}

#[track_caller]
fn assert_full(result: &TestResult, tools: &[&str]) {
    assert!(
        result.ok,
        "{}",
        serde_json::to_string_pretty(result).unwrap()
    );
    let names: Vec<&str> = result.tools.iter().map(|t| t.name.as_str()).collect();
    for tool in tools {
        assert!(names.contains(tool), "missing tool {tool} in {names:?}");
    }
    for tool in &result.tools {
        assert!(
            tool.adapted_name.starts_with("mcp__peer__"),
            "{}",
            tool.adapted_name
        );
        assert!(
            tool.input_schema.is_object(),
            "{} has no input schema",
            tool.name
        );
    }
}

/// The era, version and handshake stages of `result`: a modern server's handshake is
/// `discover`; a legacy one's is `initialize`, after the `discover` probe.
#[track_caller]
fn assert_era(result: &TestResult, era: Era) {
    let stages: Vec<&str> = result.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(result.era, Some(era), "{stages:?}");
    match era {
        Era::Modern => {
            assert_eq!(result.protocol_version.as_deref(), Some("2026-07-28"));
            assert!(!result.supported_versions.is_empty());
            assert!(
                stages.contains(&"discover") && !stages.contains(&"initialize"),
                "{stages:?}"
            );
        }
        _ => {
            let version = result.protocol_version.as_deref().unwrap_or_default();
            assert!(version.as_bytes() < b"2026".as_slice(), "{version}");
            assert!(stages.contains(&"initialize"), "{stages:?}");
        }
    }
    // No one waited for an unanswered probe: every one of these servers answers it.
    assert!(
        !result.warnings.iter().any(|w| w.contains("never answered")),
        "{:?}",
        result.warnings
    );
}

/// The tools server-everything lists in every mode (its full list has more).
const EVERYTHING_TOOLS: &[&str] = &["echo", "get-sum"];

fn everything_stdio() -> ServerConfig {
    let (node, script) = everything_command();
    ServerConfig::stdio(node, vec![script.display().to_string(), "stdio".into()])
}

fn everything_http(mode: &str) -> Background {
    let (node, script) = everything_command();
    let port = free_port();
    let mut cmd = Command::new(node);
    cmd.arg(script).arg(mode).env("PORT", port.to_string());
    Background::start(cmd, port)
}

#[test]
fn server_everything_over_stdio() {
    let result = probe(everything_stdio());
    assert_full(&result, EVERYTHING_TOOLS);
    assert_era(&result, Era::Legacy);
    assert!(
        result.tools.len() >= 10,
        "only {} tools",
        result.tools.len()
    );
    assert!(!result.resources.is_empty() && !result.prompts.is_empty());
}

#[test]
fn server_everything_over_streamable_http() {
    let server = everything_http("streamableHttp");
    let result = probe(ServerConfig::remote(
        TransportKind::Shttp,
        server.url("/mcp"),
    ));
    assert_full(&result, EVERYTHING_TOOLS);
    assert_era(&result, Era::Legacy);
    let stdio = probe(everything_stdio());
    assert_eq!(
        result.tools.len(),
        stdio.tools.len(),
        "same tools over every transport"
    );
}

#[test]
fn server_everything_over_sse() {
    let server = everything_http("sse");
    let result = probe(ServerConfig::remote(TransportKind::Sse, server.url("/sse")));
    assert_full(&result, EVERYTHING_TOOLS);
    assert_eq!(result.transport, TransportKind::Sse);
    assert_eq!(result.era, Some(Era::Legacy));
}

#[test]
fn server_everything_sse_found_by_auto() {
    let server = everything_http("sse");
    let result = probe(ServerConfig::remote(
        TransportKind::Auto,
        server.url("/sse"),
    ));
    assert_full(&result, EVERYTHING_TOOLS);
    assert_eq!(result.transport, TransportKind::Sse);
}

fn python(mode: &str) -> Background {
    let (python, script) = python_command();
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(mode).arg(port.to_string());
    Background::start(cmd, port)
}

const PYTHON_TOOLS: &[&str] = &["add", "shout", "book_table"];
/// The 1.x line's server (`tests/peers/python_server_v1.py`) has only the first two.
const PYTHON_V1_TOOLS: &[&str] = &["add", "shout"];

#[track_caller]
fn assert_python(result: &TestResult) {
    assert_full(result, PYTHON_TOOLS);
    assert_eq!(result.tools.len(), 3);
    assert_eq!(result.resources.len(), 1, "{:?}", result.resources);
    assert_eq!(result.prompts.len(), 1, "{:?}", result.prompts);
    assert_eq!(result.server.as_ref().unwrap().name, "python-sdk-peer");
}

#[test]
fn python_sdk_over_stdio() {
    let (python, script) = python_command();
    let result = probe(ServerConfig::stdio(
        python.display().to_string(),
        vec![script.display().to_string(), "stdio".into()],
    ));
    assert_python(&result);
    assert_era(&result, Era::Modern);
}

#[test]
fn python_sdk_over_streamable_http() {
    let server = python("streamable-http");
    let result = probe(ServerConfig::remote(
        TransportKind::Shttp,
        server.url("/mcp"),
    ));
    assert_python(&result);
    assert_era(&result, Era::Modern);
    // `auto` finds the same modern server.
    let auto = probe(ServerConfig::remote(
        TransportKind::Auto,
        server.url("/mcp"),
    ));
    assert_python(&auto);
    assert_era(&auto, Era::Modern);
    assert_eq!(auto.transport, TransportKind::Shttp);
}

#[test]
fn python_sdk_over_sse() {
    let server = python("sse");
    let result = probe(ServerConfig::remote(TransportKind::Sse, server.url("/sse")));
    assert_python(&result);
    assert_eq!(result.era, Some(Era::Legacy), "SSE has no modern form");
}

fn python_v1(mode: &str) -> (Vec<String>, Option<Background>) {
    let (python, script) = python_v1_command();
    let mut args = vec![script.display().to_string(), mode.to_owned()];
    if mode == "stdio" {
        args.insert(0, python.display().to_string());
        return (args, None);
    }
    let port = free_port();
    args.push(port.to_string());
    let mut cmd = Command::new(python);
    cmd.args(&args);
    (vec![], Some(Background::start(cmd, port)))
}

#[track_caller]
fn assert_python_v1(result: &TestResult) {
    assert_full(result, PYTHON_V1_TOOLS);
    assert_eq!(result.server.as_ref().unwrap().name, "python-sdk-v1-peer");
    assert_era(result, Era::Legacy);
}

#[test]
fn python_sdk_1x_over_stdio_is_legacy() {
    let (command, _) = python_v1("stdio");
    let result = probe(ServerConfig::stdio(
        command[0].clone(),
        command[1..].to_vec(),
    ));
    assert_python_v1(&result);
}

#[test]
fn python_sdk_1x_over_streamable_http_is_legacy() {
    let (_, server) = python_v1("streamable-http");
    let server = server.expect("a server");
    let result = probe(ServerConfig::remote(
        TransportKind::Shttp,
        server.url("/mcp"),
    ));
    assert_python_v1(&result);
    let auto = probe(ServerConfig::remote(
        TransportKind::Auto,
        server.url("/mcp"),
    ));
    assert_python_v1(&auto);
    assert_eq!(auto.transport, TransportKind::Shttp);
}
