//! Both protocol eras against the fixture in each of its era modes (`legacy`,
//! `modern`, `dual`) over stdio, streamable HTTP and `auto`: the era probe classifies each
//! server right, a modern server gets `_meta` and the modern headers on every request, a
//! legacy server that ignores the probe is still found within a short deadline, a slow modern
//! one is not mistaken for it, unsupported versions name both sides, an `input_required`
//! credential probe is reported, not answered, and an installed server's era is remembered
//! with its health and re-probed when it changes.

use plugboard::config::TransportKind;
use plugboard::connect::Era;
use plugboard::probe::{TestResult, Verification};

use crate::support::fixture::{
    HttpFixture, Probed, assert_no_process_left, check_credentials_probe, fixture_bin, marker,
    probe, remote_config, stdio_config, store_with,
};
use crate::support::{Home, assert_code, stdout};

fn stage_names(result: &TestResult) -> Vec<&'static str> {
    result.stages.iter().map(|s| s.name.as_str()).collect()
}

/// A successful test of `era`: its version, its handshake stages, what a modern server lists.
#[track_caller]
fn assert_era(probed: &Probed, era: Era) {
    probed.assert_ok();
    let r = &probed.result;
    assert_eq!(r.era, Some(era), "{}", probed.pretty());
    assert_eq!(r.tools.len(), 3, "{}", probed.pretty());
    assert!(!r.resources.is_empty() && !r.prompts.is_empty());
    let stages = stage_names(r);
    match era {
        Era::Modern => {
            assert_eq!(r.protocol_version.as_deref(), Some("2026-07-28"));
            assert!(r.supported_versions.contains(&"2026-07-28".to_owned()));
            assert_eq!(
                stages[..4],
                ["resolve", "connect", "discover", "tools/list"],
                "{}",
                probed.pretty()
            );
            assert!(!stages.contains(&"initialize"));
            let hinted: Vec<&str> = r.cache_hints.iter().map(|h| h.method.as_str()).collect();
            assert_eq!(
                hinted,
                [
                    "server/discover",
                    "tools/list",
                    "resources/list",
                    "prompts/list"
                ]
            );
            let tools = &r.cache_hints[1];
            assert_eq!(tools.ttl_ms, Some(60_000));
            assert_eq!(tools.cache_scope.as_deref(), Some("public"));
        }
        _ => {
            assert_eq!(r.protocol_version.as_deref(), Some("2025-11-25"));
            assert_eq!(
                stages[..5],
                ["resolve", "connect", "discover", "initialize", "tools/list"],
                "{}",
                probed.pretty()
            );
            assert!(r.cache_hints.is_empty());
        }
    }
    assert!(
        !r.warnings.iter().any(|w| w.contains("never answered")),
        "the probe was answered: {:?}",
        r.warnings
    );
}

/// The fixture's `--era` modes and the era each is found to speak (a dual-era server is
/// spoken to in the modern era, which Plugboard prefers).
const MODES: [(&str, Era); 3] = [
    ("legacy", Era::Legacy),
    ("modern", Era::Modern),
    ("dual", Era::Modern),
];

#[tokio::test]
async fn every_era_mode_is_classified_over_stdio() {
    for (mode, era) in MODES {
        let marker = marker(&format!("era-{mode}"));
        let server = stdio_config(&marker, &["--era", mode], 20);
        let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
        assert_era(&probed, era);
        assert_eq!(probed.result.transport, TransportKind::Stdio);
        assert_no_process_left(&marker);
    }
}

#[tokio::test]
async fn every_era_mode_is_classified_over_streamable_http_and_auto() {
    for (mode, era) in MODES {
        let fixture = HttpFixture::start("http", &["--era", mode]);
        for transport in [TransportKind::Shttp, TransportKind::Auto] {
            let server = remote_config(transport, &fixture.url("/mcp"), 20);
            let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
            assert_era(&probed, era);
            assert_eq!(probed.result.transport, TransportKind::Shttp);
        }
    }
}

/// Under `require-meta` the server refuses any request without the modern `_meta`, and over
/// HTTP the modern fixture always checks `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
/// against the body: every request of a test passes both.
#[tokio::test]
async fn every_modern_request_carries_meta_and_the_modern_headers() {
    let marker = marker("meta");
    let server = stdio_config(
        &marker,
        &["--era", "modern", "--misbehave", "require-meta"],
        20,
    );
    let probed = probe(
        "fixture",
        &server,
        &store_with("fixture", &[]),
        Some(check_credentials_probe()),
    )
    .await;
    assert_era(&probed, Era::Modern);
    assert_eq!(probed.result.verification, Verification::Verified);
    assert_no_process_left(&marker);

    let fixture = HttpFixture::start("http", &["--era", "modern", "--misbehave", "require-meta"]);
    let server = remote_config(TransportKind::Shttp, &fixture.url("/mcp"), 20);
    let probed = probe(
        "fixture",
        &server,
        &store_with("fixture", &[]),
        Some(check_credentials_probe()),
    )
    .await;
    assert_era(&probed, Era::Modern);
    assert_eq!(probed.result.verification, Verification::Verified);
}

/// A legacy server that never answers a request before `initialize`: the probe sees it read
/// the request and stay silent, and `initialize` follows after a short grace. With a 3 s
/// deadline the test still succeeds (rmcp's own fallback would wait 10 s).
#[tokio::test]
async fn a_legacy_server_ignoring_the_probe_is_found_within_a_short_deadline() {
    let marker = marker("ignores");
    let server = stdio_config(
        &marker,
        &["--era", "legacy", "--misbehave", "ignore-before-initialize"],
        3,
    );
    let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
    probed.assert_ok();
    let r = &probed.result;
    assert_eq!(r.era, Some(Era::Legacy));
    assert_eq!(
        stage_names(r)[..5],
        ["resolve", "connect", "discover", "initialize", "tools/list"]
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("never answered")),
        "{:?}",
        r.warnings
    );
    assert_no_process_left(&marker);
}

/// A legacy server that exits on a request it does not know (older Python SDK servers end with
/// a validation error on `server/discover`): it is started again and spoken to in the legacy
/// era, the test says so, and the first process is not left behind.
#[tokio::test]
async fn a_legacy_server_that_exits_on_the_probe_is_started_again_with_initialize() {
    let marker = marker("exits-on-probe");
    let server = stdio_config(
        &marker,
        &["--era", "legacy", "--misbehave", "exit-on-unknown-request"],
        10,
    );
    let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
    probed.assert_ok();
    let r = &probed.result;
    assert_eq!(r.era, Some(Era::Legacy));
    assert!(!r.tools.is_empty());
    assert!(
        r.warnings.iter().any(|w| w.contains("started again")),
        "{:?}",
        r.warnings
    );
    assert_no_process_left(&marker);
}

/// A server that starts slowly (as an `npx` download does) has not read the probe yet: it is
/// waited for, not taken for a legacy server that ignores the probe.
#[tokio::test]
async fn a_slow_starting_modern_server_is_still_found_modern() {
    for (transport, args) in [
        (
            "stdio",
            vec!["--era", "modern", "--misbehave", "slow-start=1500"],
        ),
        (
            "stdio",
            vec!["--era", "legacy", "--misbehave", "slow-start=1500"],
        ),
    ] {
        let marker = marker("slow");
        let server = stdio_config(&marker, &args, 20);
        let probed = probe("fixture", &server, &store_with("fixture", &[]), None).await;
        let era = if args[1] == "modern" {
            Era::Modern
        } else {
            Era::Legacy
        };
        assert_era(&probed, era);
        assert!(probed.elapsed.as_millis() >= 1500, "{transport}");
        assert_no_process_left(&marker);
    }
}

#[tokio::test]
async fn an_unsupported_version_is_a_protocol_error_naming_both_sides() {
    let check = |probed: &Probed| {
        probed.assert_kind("protocol");
        let r = &probed.result;
        assert_eq!(r.era, Some(Era::Modern), "{}", probed.pretty());
        assert_eq!(r.supported_versions, ["2099-01-01"]);
        assert!(r.protocol_version.is_none());
        let hint = r.hint.as_deref().unwrap();
        assert!(
            hint.contains("the server speaks 2099-01-01") && hint.contains("2026-07-28"),
            "{hint}"
        );
        let failed: Vec<&str> = r
            .stages
            .iter()
            .filter(|s| !s.ok)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(failed, ["discover"], "no fallback to initialize");
        assert!(!stage_names(r).contains(&"initialize"));
    };
    let marker = marker("unsupported");
    let server = stdio_config(
        &marker,
        &["--era", "modern", "--misbehave", "unsupported-version"],
        10,
    );
    check(&probe("fixture", &server, &store_with("fixture", &[]), None).await);
    assert_no_process_left(&marker);

    let fixture = HttpFixture::start(
        "http",
        &["--era", "modern", "--misbehave", "unsupported-version"],
    );
    for transport in [TransportKind::Shttp, TransportKind::Auto] {
        let server = remote_config(transport, &fixture.url("/mcp"), 10);
        check(&probe("fixture", &server, &store_with("fixture", &[]), None).await);
    }
}

/// The credential probe of a modern server that asks for input (`input_required`): nobody is
/// there to answer, so the test passes as reachable, not verified, and says why.
#[tokio::test]
async fn an_input_required_credential_probe_is_connectivity_only_with_a_note() {
    let marker = marker("input");
    let server = stdio_config(
        &marker,
        &["--era", "modern", "--misbehave", "input-required"],
        10,
    );
    let probed = probe(
        "fixture",
        &server,
        &store_with("fixture", &[]),
        Some(check_credentials_probe()),
    )
    .await;
    assert_era(&probed, Era::Modern);
    let r = &probed.result;
    assert_eq!(r.verification, Verification::ConnectivityOnly);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("could not run unattended")
                && w.contains("input_required: elicitation/create")
                && !w.contains("  ")),
        "{:?}",
        r.warnings
    );
    assert!(r.stages.iter().all(|s| s.ok));
    assert_no_process_left(&marker);
}

fn test_json(home: &Home, name: &str) -> serde_json::Value {
    let out = home.run(&["test", name, "--json", "--timeout", "20"]);
    assert_code(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn json_stages(result: &serde_json::Value) -> Vec<String> {
    result["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Point server `name` of `home`'s config at other fixture arguments, as an upgrade of the
/// server would (its stored health stays).
fn set_args(home: &Home, name: &str, args: serde_json::Value) {
    let path = home.config_path();
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let server = config["servers"].get_mut(name).expect("the server");
    match args {
        serde_json::Value::String(url) => server["url"] = url.into(),
        args => server["args"] = args,
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
}

/// An installed server's era is kept with its health: the next test speaks it directly (a
/// legacy server gets `initialize` without the probe), and when the server changes era the
/// remembered one fails safely and a probe finds the new one.
#[test]
fn the_era_is_remembered_with_the_health_and_reprobed_when_it_changes() {
    let home = Home::new();
    let fx = fixture_bin().display().to_string();
    let marker = marker("remember");
    assert_code(
        &home.run(&[
            "add",
            "srv",
            "--no-test",
            "--stdio",
            "--",
            &fx,
            "--name",
            &marker,
            "--era",
            "legacy",
        ]),
        0,
    );
    let first = test_json(&home, "srv");
    assert_eq!(first["era"], "legacy");
    assert!(json_stages(&first).contains(&"discover".to_owned()));
    let second = test_json(&home, "srv");
    assert_eq!(second["era"], "legacy");
    assert_eq!(
        json_stages(&second)[..3],
        ["resolve", "connect", "initialize"],
        "a remembered legacy server gets initialize at once"
    );
    // The server is upgraded to the modern era: the remembered `initialize` is refused, and
    // a probe on the same process finds the new era.
    set_args(
        &home,
        "srv",
        serde_json::json!(["--name", marker, "--era", "modern"]),
    );
    let upgraded = test_json(&home, "srv");
    assert_eq!(upgraded["era"], "modern", "{upgraded:#}");
    assert_eq!(upgraded["protocol_version"], "2026-07-28");
    let health = home.run(&["health", "--json"]);
    assert_code(&health, 0);
    assert!(
        stdout(&health).contains("\"era\": \"modern\""),
        "{}",
        stdout(&health)
    );
    // ... and back: a remembered modern server that is legacy now is found by the probe.
    set_args(
        &home,
        "srv",
        serde_json::json!(["--name", marker, "--era", "legacy"]),
    );
    let back = test_json(&home, "srv");
    assert_eq!(back["era"], "legacy", "{back:#}");
    assert_no_process_left(&marker);
}

/// The same over streamable HTTP, where a remembered legacy era that fails is probed again on
/// a fresh connection.
#[test]
fn a_remembered_era_over_http_is_reprobed_when_it_changes() {
    let home = Home::new();
    let legacy = HttpFixture::start("http", &["--era", "legacy"]);
    let modern = HttpFixture::start("http", &["--era", "modern"]);
    assert_code(
        &home.run(&[
            "add",
            "web",
            "--no-test",
            "--url",
            &legacy.url("/mcp"),
            "--transport",
            "shttp",
        ]),
        0,
    );
    assert_eq!(test_json(&home, "web")["era"], "legacy");
    let again = test_json(&home, "web");
    assert_eq!(
        json_stages(&again)[..3],
        ["resolve", "connect", "initialize"]
    );
    set_args(&home, "web", serde_json::Value::String(modern.url("/mcp")));
    let upgraded = test_json(&home, "web");
    assert_eq!(upgraded["era"], "modern", "{upgraded:#}");
    assert!(upgraded["tools"].as_array().unwrap().len() == 3);
}

/// The doctor runs the same test: a modern-only server is healthy there too, and an
/// unsupported version is reported with both sides' versions.
#[test]
fn the_doctor_speaks_both_eras() {
    let home = Home::new();
    let fx = fixture_bin().display().to_string();
    for (name, args) in [
        ("modern", vec!["--era", "modern"]),
        (
            "future",
            vec!["--era", "modern", "--misbehave", "unsupported-version"],
        ),
    ] {
        let mut add = vec!["add", name, "--no-test", "--stdio", "--", &fx];
        add.extend(args);
        assert_code(&home.run(&add), 0);
    }
    let out = home.run(&["doctor", "modern", "--json", "--timeout", "20"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let test = &report["servers"][0]["test"];
    assert_eq!(test["ok"], true, "{report:#}");
    assert_eq!(test["era"], "modern", "{report:#}");
    let out = home.run(&["doctor", "future", "--json", "--timeout", "20"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        report["servers"][0]["test"]["error_kind"], "protocol",
        "{report:#}"
    );
    assert!(
        report.to_string().contains("the server speaks 2099-01-01"),
        "the versions are named: {report:#}"
    );
}
