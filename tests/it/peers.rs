//! Interoperability: the probe against real third-party servers — server-everything (npm) and
//! the official Python SDK — over stdio, streamable HTTP and legacy SSE, with full tool lists.

use std::process::Command;
use std::time::Duration;

use plugboard::config::{ServerConfig, TransportKind};
use plugboard::probe::{TestResult, test_config};
use plugboard::secrets::MemoryStore;

use crate::support::peers::{Background, everything_command, free_port, python_command};

fn probe(server: ServerConfig) -> TestResult {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = MemoryStore::new();
    rt.block_on(test_config(
        "peer",
        &server,
        &store,
        None,
        Some(Duration::from_secs(60)),
        |_| {},
    ))
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
}

#[test]
fn python_sdk_over_streamable_http() {
    let server = python("streamable-http");
    let result = probe(ServerConfig::remote(
        TransportKind::Shttp,
        server.url("/mcp"),
    ));
    assert_python(&result);
}

#[test]
fn python_sdk_over_sse() {
    let server = python("sse");
    let result = probe(ServerConfig::remote(TransportKind::Sse, server.url("/sse")));
    assert_python(&result);
}
