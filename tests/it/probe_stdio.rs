//! The staged test against real stdio processes (the `mcp-fixture` server): the happy path
//! with pagination, resources and prompts, credential probes, every misbehaviour with its
//! error kind inside its deadline, and no process left behind afterwards.

use std::time::Duration;

use plugboard::config::{ConfigValue, SecretRef};
use plugboard::probe::{Stage, StageEvent, Verification};

use crate::support::fixture::{
    Probed, assert_no_process_left, check_credentials_probe, marker, probe, stdio_config,
    store_with, wait_gone,
};

/// The stages of a successful test of a (legacy) server without a credential probe: the
/// `discover` probe, then `initialize`.
const EVERY_STAGE_BUT_THE_PROBE: [&str; 8] = [
    "resolve",
    "connect",
    "discover",
    "initialize",
    "tools/list",
    "resources/list",
    "prompts/list",
    "close",
];

/// Run the fixture over stdio with `--misbehave <kind>` and `timeout` seconds.
async fn misbehaving(test: &str, kind: &str, timeout: u64) -> (Probed, String) {
    let marker = marker(test);
    let server = stdio_config(&marker, &["--misbehave", kind], timeout);
    let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
    assert!(
        probed.elapsed < Duration::from_secs(timeout + 2),
        "{kind}: took {:?} with a {timeout} s timeout",
        probed.elapsed
    );
    assert_no_process_left(&marker);
    (probed, marker)
}

#[tokio::test]
async fn stdio_happy_path_lists_every_page_resources_and_prompts() {
    let marker = marker("happy");
    let server = stdio_config(&marker, &["--tools", "250", "--page-size", "50"], 20);
    let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
    probed.assert_ok();
    let r = &probed.result;
    assert_eq!(r.tools.len(), 253, "all pages of tools/list");
    assert_eq!(r.verification, Verification::ConnectivityOnly);
    assert_eq!(r.transport.label(), "stdio");
    assert_eq!(r.server.as_ref().unwrap().name, marker);
    assert!(r.protocol_version.is_some());
    assert!(!r.resources.is_empty() && !r.prompts.is_empty());
    assert_eq!(probed.stage_names(), EVERY_STAGE_BUT_THE_PROBE);
    assert!(r.stages.iter().all(|s| s.ok));
    let echo = r.tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.adapted_name, "mcp__fixture__echo");
    assert_eq!(echo.input_schema["type"], "object");
    assert_eq!(echo.annotations.as_ref().unwrap()["readOnlyHint"], true);
    let unique: std::collections::HashSet<_> = r.tools.iter().map(|t| &t.adapted_name).collect();
    assert_eq!(unique.len(), 253);
    // Progress: every stage started and finished, in order.
    let started: Vec<Stage> = probed
        .events
        .iter()
        .filter_map(|e| match e {
            StageEvent::Started { stage } => Some(*stage),
            _ => None,
        })
        .collect();
    let finished = probed
        .events
        .iter()
        .filter(|e| matches!(e, StageEvent::Finished { .. }))
        .count();
    assert_eq!(started.len(), r.stages.len());
    assert_eq!(finished, r.stages.len());
    assert_eq!(started[0], Stage::Resolve);
    // The JSON contract keys.
    let v: serde_json::Value = serde_json::from_str(&probed.json).unwrap();
    for key in [
        "ok",
        "verification",
        "server",
        "protocol_version",
        "era",
        "transport",
        "tools",
        "resources",
        "prompts",
        "stages",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(v["verification"], "connectivity-only");
    assert_eq!(v["stages"][4]["name"], "tools/list");
    assert_eq!(v["era"], "legacy");
    assert!(v["tools"][0].get("adapted_name").is_some());
    assert!(v.get("error_kind").is_none());
    assert_no_process_left(&marker);
}

/// The server answers no list until it has been asked for all three: a client that waits for
/// the tools before asking for the resources would time out.
#[tokio::test]
async fn stdio_lists_are_requested_together() {
    let (probed, _) = misbehaving("together", "lists-together", 5).await;
    probed.assert_ok();
    let r = &probed.result;
    assert!(!r.tools.is_empty() && !r.resources.is_empty() && !r.prompts.is_empty());
    assert_eq!(probed.stage_names(), EVERY_STAGE_BUT_THE_PROBE);
}

#[tokio::test]
async fn stdio_method_not_found_on_resources_is_tolerated() {
    let (probed, _) = misbehaving("rnf", "resources-not-found", 10).await;
    probed.assert_ok();
    assert!(probed.result.resources.is_empty() && probed.result.prompts.is_empty());
    assert!(probed.result.stage(Stage::ResourcesList).unwrap().ok);
}

#[tokio::test]
async fn stdio_credential_probe_verifies_a_matching_env_secret() {
    let marker = marker("verified");
    let mut server = stdio_config(&marker, &["--expect-env", "API_TOKEN=tok-9f8e7d6c5b"], 10);
    server.env.insert(
        "API_TOKEN".into(),
        ConfigValue::Secret(SecretRef::new("API_TOKEN")),
    );
    let store = store_with("fixture", &[("API_TOKEN", "tok-9f8e7d6c5b")]);
    let probed = probe("fixture", &server, &store, Some(check_credentials_probe())).await;
    probed.assert_ok();
    assert_eq!(probed.result.verification, Verification::Verified);
    assert!(probed.result.stage(Stage::CredentialProbe).unwrap().ok);
    assert!(probed.json.contains("\"verified\""));
    assert!(!probed.json.contains("tok-9f8e7d6c5b"));
    assert_no_process_left(&marker);
}

#[tokio::test]
async fn stdio_credential_probe_fails_with_a_wrong_secret() {
    let marker = marker("wrongsecret");
    let mut server = stdio_config(&marker, &["--expect-env", "API_TOKEN=right-value-123"], 10);
    server.env.insert(
        "API_TOKEN".into(),
        ConfigValue::Secret(SecretRef::new("API_TOKEN")),
    );
    let store = store_with("fixture", &[("API_TOKEN", "wrong-value-456")]);
    let probed = probe("fixture", &server, &store, Some(check_credentials_probe())).await;
    probed.assert_kind("credentials");
    let hint = probed.result.hint.clone().unwrap();
    assert!(
        hint.contains("plugboard edit fixture --credential"),
        "{hint}"
    );
    assert!(!probed.json.contains("wrong-value-456"));
    assert_eq!(probed.stage_names().last(), Some(&"close"));
    assert_no_process_left(&marker);
}

#[tokio::test]
async fn stdio_probe_fails_names_the_rejection() {
    let marker = marker("probefails");
    let server = stdio_config(&marker, &["--misbehave", "probe-fails"], 10);
    let probed = probe(
        "fixture",
        &server,
        &store_with("fixture", &[]),
        Some(check_credentials_probe()),
    )
    .await;
    probed.assert_kind("credentials");
    assert_eq!(
        probed.result.hint.as_deref(),
        Some(
            "the credential probe `check_credentials` failed: the token was rejected (invalid_auth). \
             Update it with `plugboard edit fixture --credential`"
        )
    );
    assert_no_process_left(&marker);
}

#[tokio::test]
async fn stdio_probe_not_listed_means_connectivity_only() {
    let marker = marker("noprobe");
    let server = stdio_config(&marker, &[], 10);
    let mut p = check_credentials_probe();
    p.tool = "get_me".into();
    let probed = probe("fixture", &server, &store_with("fixture", &[]), Some(p)).await;
    probed.assert_ok();
    assert_eq!(probed.result.verification, Verification::ConnectivityOnly);
    assert!(probed.result.stage(Stage::CredentialProbe).is_none());
    assert!(probed.result.warnings.iter().any(|w| w.contains("get_me")));
}

#[tokio::test]
async fn stdio_exit_at_once_is_exited_with_its_code_and_stderr() {
    let (probed, _) = misbehaving("exit", "exit-at-once", 5).await;
    probed.assert_kind("exited");
    let hint = probed.result.hint.clone().unwrap();
    assert!(
        hint.contains("exited with code 3 before the handshake"),
        "{hint}"
    );
    assert!(
        probed
            .result
            .stderr_tail
            .as_deref()
            .unwrap_or_default()
            .contains("fatal: fixture configured to fail at startup"),
        "{}",
        probed.pretty()
    );
    // It fails fast, not at the deadline.
    assert!(
        probed.elapsed < Duration::from_secs(3),
        "{:?}",
        probed.elapsed
    );
}

#[tokio::test]
async fn stdio_garbage_on_stdout_is_a_protocol_error() {
    let (probed, _) = misbehaving("garbage", "garbage-stdout", 5).await;
    probed.assert_kind("protocol");
    let hint = probed.result.hint.clone().unwrap();
    assert!(
        hint.starts_with("this server writes logs to stdout; MCP stdio servers must log to stderr"),
        "{hint}"
    );
    assert!(
        probed
            .result
            .error
            .as_deref()
            .unwrap()
            .contains("Starting server")
    );
}

#[tokio::test]
async fn stdio_never_answering_times_out_in_initialize() {
    let (probed, _) = misbehaving("never", "never-answer", 3).await;
    probed.assert_kind("timeout");
    let hint = probed.result.hint.clone().unwrap();
    assert!(
        hint.starts_with("no answer within 3 s: the server may be waiting for input or stuck"),
        "{hint}"
    );
    assert!(!probed.result.stage(Stage::Initialize).unwrap().ok);
}

#[tokio::test]
async fn stdio_hang_after_initialize_times_out_in_tools_list() {
    let (probed, _) = misbehaving("hang", "hang-after-initialize", 3).await;
    probed.assert_kind("timeout");
    assert!(probed.result.stage(Stage::Initialize).unwrap().ok);
    assert!(!probed.result.stage(Stage::ToolsList).unwrap().ok);
    assert!(
        probed
            .result
            .error
            .as_deref()
            .unwrap()
            .contains("tools/list")
    );
}

#[tokio::test]
async fn stdio_slow_start_beyond_the_deadline_times_out() {
    let (probed, _) = misbehaving("slow", "slow-start=10000", 3).await;
    probed.assert_kind("timeout");
}

#[tokio::test]
async fn stdio_slow_start_within_the_deadline_passes() {
    let (probed, _) = misbehaving("slowok", "slow-start=500", 5).await;
    probed.assert_ok();
}

#[tokio::test]
async fn stdio_huge_message_is_refused_not_buffered() {
    let (probed, _) = misbehaving("huge", "huge-message", 10).await;
    probed.assert_kind("protocol");
    assert!(
        probed
            .result
            .hint
            .as_deref()
            .unwrap()
            .contains("message larger than 16 MiB"),
        "{}",
        probed.pretty()
    );
}

#[tokio::test]
async fn stdio_tools_list_error_is_a_server_error() {
    let (probed, _) = misbehaving("toolserr", "tools-list-error", 5).await;
    probed.assert_kind("server");
    assert_eq!(
        probed.result.error.as_deref(),
        Some("JSON-RPC error -32603 on tools/list: database unavailable")
    );
}

#[tokio::test]
async fn stdio_crash_after_initialize_is_exited() {
    let (probed, _) = misbehaving("crash", "crash-after-initialize", 5).await;
    probed.assert_kind("exited");
    assert!(probed.result.error.as_deref().unwrap().contains("code 1"));
    assert!(
        probed
            .result
            .stderr_tail
            .as_deref()
            .unwrap_or_default()
            .contains("panic: boom")
    );
}

#[tokio::test]
async fn stdio_grandchildren_are_killed_with_the_group() {
    let (probed, _) = misbehaving("grandchild", "grandchild", 10).await;
    probed.assert_ok();
    let tail = probed.result.stderr_tail.clone().unwrap_or_default();
    let pid: u32 = tail
        .lines()
        .find_map(|l| l.strip_prefix("GRANDCHILD_PID="))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no GRANDCHILD_PID in stderr: {tail}"));
    assert!(
        wait_gone(pid, Duration::from_secs(2)),
        "grandchild {pid} survived the close"
    );
}

#[tokio::test]
async fn stdio_leaked_secret_never_reaches_the_result() {
    let secret = "sk-live-5ecr3t-Ab9xQz77";
    let marker = marker("leak");
    let mut server = stdio_config(
        &marker,
        &["--misbehave", "leak-secret-env=SERVICE_TOKEN"],
        5,
    );
    server.env.insert(
        "SERVICE_TOKEN".into(),
        ConfigValue::Secret(SecretRef::new("SERVICE_TOKEN")),
    );
    let store = store_with("fixture", &[("SERVICE_TOKEN", secret)]);
    let probed = probe("fixture", &server, &store, None).await;
    probed.assert_kind("server");
    // The fixture printed it to stderr and put it in the tools/list error.
    assert!(
        probed
            .result
            .stderr_tail
            .as_deref()
            .unwrap_or_default()
            .contains("debug: token is")
    );
    assert!(
        !probed.json.contains(secret),
        "the secret leaked into the result: {}",
        probed.json
    );
    assert!(!probed.json.contains("5ecr3t"));
    assert_no_process_left(&marker);
}

#[tokio::test]
async fn plain_env_values_are_redacted_too() {
    let value = "pasted-into-plain-env-8c1d";
    let marker = marker("plainleak");
    let mut server = stdio_config(&marker, &["--misbehave", "leak-secret-env=PASTED"], 5);
    server
        .env
        .insert("PASTED".into(), ConfigValue::Plain(value.into()));
    let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
    probed.assert_kind("server");
    assert!(!probed.json.contains(value), "{}", probed.json);
}

#[tokio::test]
async fn missing_command_is_a_spawn_error_with_a_hint() {
    let server = plugboard::config::ServerConfig::stdio("definitely-not-a-command-xyz", vec![]);
    let probed = probe("ghost", &server, &store_with("ghost", &[]), None).await;
    probed.assert_kind("spawn");
    let hint = probed.result.hint.clone().unwrap();
    assert!(hint.contains("was not found on PATH"), "{hint}");
    assert!(hint.contains("login shell"), "{hint}");
    assert_eq!(probed.stage_names(), ["resolve"]);
    assert!(!probed.result.stages[0].ok);
}

#[tokio::test]
async fn npx_not_found_hint_mentions_node() {
    let mut server = plugboard::config::ServerConfig::stdio("npx", vec!["-y".into(), "x".into()]);
    // A PATH without npx, given to the server itself.
    server
        .env
        .insert("PATH".into(), ConfigValue::Plain("/nonexistent-dir".into()));
    let probed = probe("n", &server, &store_with("n", &[]), None).await;
    if probed.kind() == Some("spawn") {
        assert!(probed.result.hint.as_deref().unwrap().contains("Node.js"));
    }
}

#[tokio::test]
async fn non_executable_command_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.sh");
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    let server = plugboard::config::ServerConfig::stdio(path.to_string_lossy(), vec![]);
    let probed = probe("x", &server, &store_with("x", &[]), None).await;
    probed.assert_kind("spawn");
    assert!(
        probed
            .result
            .error
            .as_deref()
            .unwrap()
            .contains("not executable")
    );
}

#[tokio::test]
async fn missing_secret_is_a_config_error() {
    let marker = marker("nosecret");
    let mut server = stdio_config(&marker, &[], 5);
    server
        .env
        .insert("TOKEN".into(), ConfigValue::Secret(SecretRef::new("TOKEN")));
    let probed = probe("demo", &server, &store_with("demo", &[]), None).await;
    probed.assert_kind("config");
    assert_eq!(
        probed.result.hint.as_deref(),
        Some(
            "the secret `TOKEN` of server `demo` is not set; run `plugboard edit demo \
             --secret-env TOKEN` or reinstall the server"
        )
    );
    assert_no_process_left(&marker);
}

#[tokio::test]
async fn cancelling_a_test_kills_the_process_group() {
    // The app cancels a test by dropping its future: nothing may survive that.
    let marker = marker("cancel");
    let server = stdio_config(&marker, &["--misbehave", "never-answer"], 30);
    let store = store_with("fixture", &[]);
    let resolved = plugboard::resolve::resolve("fixture", &server, &store, None).unwrap();
    let mut test = Box::pin(plugboard::probe::test_server(&resolved, |_| {}));
    let mut seen_alive = false;
    for _ in 0..50 {
        tokio::select! {
            _ = &mut test => panic!("the test should still be waiting"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        if !crate::support::fixture::live_with_marker(&marker).is_empty() {
            seen_alive = true;
            break;
        }
    }
    assert!(seen_alive, "the server never started");
    drop(test);
    assert_no_process_left(&marker);
}
