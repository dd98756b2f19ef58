//! The staged test against real HTTP servers (the `mcp-fixture` server on ephemeral loopback
//! ports): streamable HTTP, legacy SSE, `auto` falling back to SSE, authorization, HTTP
//! failures and redirects, and redaction of what a remote server echoes back.

use std::time::Duration;

use plugboard::config::{Auth, ConfigValue, SecretRef, TransportKind};
use plugboard::probe::{Stage, Verification};

use crate::support::fixture::{
    HttpFixture, check_credentials_probe, closed_port, probe, remote_config, store_with,
};

#[tokio::test]
async fn shttp_happy_path_lists_every_page() {
    let fx = HttpFixture::start("http", &["--tools", "250", "--page-size", "50"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 10);
    let probed = probe("remote", &server, &store_with("remote", &[]), None).await;
    probed.assert_ok();
    assert_eq!(probed.result.tools.len(), 253);
    assert_eq!(probed.result.transport, TransportKind::Shttp);
    assert!(!probed.result.resources.is_empty() && !probed.result.prompts.is_empty());
    assert_eq!(probed.result.server.as_ref().unwrap().name, fx.marker);
    assert!(probed.result.stderr_tail.is_none());
    assert_eq!(probed.result.tools[0].adapted_name, "mcp__remote__echo");
}

/// A test asks and closes: no standalone event stream (GET) is opened for messages nobody
/// would read; the legacy session is ended with DELETE. The floor of bench/run makes the same
/// requests, less the era probe, and so does Plugboard: on one connection.
#[tokio::test]
async fn shttp_test_makes_only_the_requests_it_needs() {
    let fx = HttpFixture::start("http", &[]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 10);
    let probed = probe("remote", &server, &store_with("remote", &[]), None).await;
    probed.assert_ok();
    let requests = fx.requests();
    assert!(
        !requests.iter().any(|r| r.starts_with("GET")),
        "{requests:?}"
    );
    // discover (refused: no session), initialize, initialized, three lists, DELETE.
    assert_eq!(
        requests.iter().filter(|r| r.starts_with("POST")).count(),
        6,
        "{requests:?}"
    );
    assert_eq!(requests.last().map(String::as_str), Some("DELETE /mcp"));
    let connections = fx.connections();
    assert_eq!(connections.len(), 1, "{connections:?}");
    let stages: Vec<_> = probed.result.stages.iter().map(|s| s.name).collect();
    assert_eq!(
        stages,
        [
            Stage::Resolve,
            Stage::Connect,
            Stage::Discover,
            Stage::Initialize,
            Stage::ToolsList,
            Stage::ResourcesList,
            Stage::PromptsList,
            Stage::Close
        ]
    );
}

/// The connection is made by the handshake's first request; when none can be made, the
/// `connect` stage is the one that failed, and no handshake stage is reported.
#[tokio::test]
async fn shttp_refused_connections_fail_the_connect_stage() {
    let port = closed_port();
    let server = remote_config(
        TransportKind::Shttp,
        &format!("http://127.0.0.1:{port}/mcp"),
        5,
    );
    let probed = probe("down", &server, &store_with("down", &[]), None).await;
    probed.assert_kind("connection");
    let stages: Vec<_> = probed
        .result
        .stages
        .iter()
        .map(|s| (s.name, s.ok))
        .collect();
    assert_eq!(
        stages,
        [
            (Stage::Resolve, true),
            (Stage::Connect, false),
            (Stage::Close, true)
        ]
    );
}

#[tokio::test]
async fn sse_happy_path_lists_every_page() {
    let fx = HttpFixture::start("sse", &["--tools", "250", "--page-size", "50"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 10);
    let probed = probe("legacy", &server, &store_with("legacy", &[]), None).await;
    probed.assert_ok();
    assert_eq!(probed.result.tools.len(), 253);
    assert_eq!(probed.result.transport, TransportKind::Sse);
    assert!(!probed.result.resources.is_empty());
}

/// The legacy SSE server holds its list answers until all three lists were asked for.
#[tokio::test]
async fn sse_lists_are_requested_together() {
    let fx = HttpFixture::start("sse", &["--misbehave", "lists-together"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 5);
    let probed = probe("legacy", &server, &store_with("legacy", &[]), None).await;
    probed.assert_ok();
    assert!(!probed.result.tools.is_empty() && !probed.result.prompts.is_empty());
    assert!(!probed.result.resources.is_empty());
}

#[tokio::test]
async fn auto_falls_back_to_sse_and_says_so() {
    let fx = HttpFixture::start("http", &["--misbehave", "sse-only"]);
    let server = remote_config(TransportKind::Auto, &fx.url("/mcp"), 10);
    let probed = probe("auto", &server, &store_with("auto", &[]), None).await;
    probed.assert_ok();
    assert_eq!(probed.result.transport, TransportKind::Sse);
    let v: serde_json::Value = serde_json::from_str(&probed.json).unwrap();
    assert_eq!(v["transport"], "sse");
}

#[tokio::test]
async fn auto_uses_streamable_http_when_it_works() {
    let fx = HttpFixture::start("http", &[]);
    let server = remote_config(TransportKind::Auto, &fx.url("/mcp"), 10);
    let probed = probe("auto", &server, &store_with("auto", &[]), None).await;
    probed.assert_ok();
    assert_eq!(probed.result.transport, TransportKind::Shttp);
}

#[tokio::test]
async fn shttp_against_an_sse_only_server_is_http_405() {
    let fx = HttpFixture::start("http", &["--misbehave", "sse-only"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 10);
    let probed = probe("old", &server, &store_with("old", &[]), None).await;
    probed.assert_kind("http");
    assert!(
        probed
            .result
            .hint
            .as_deref()
            .unwrap()
            .contains("--transport auto")
    );
}

#[tokio::test]
async fn bearer_token_missing_wrong_and_right() {
    let token = "bearer-tok-7Hq2Lm9Zx";
    let fx = HttpFixture::start("http", &["--expect-bearer", token]);
    let url = fx.url("/mcp");

    let server = remote_config(TransportKind::Shttp, &url, 10);
    let probed = probe("api", &server, &store_with("api", &[]), None).await;
    probed.assert_kind("unauthorized");
    assert_eq!(
        probed.result.hint.as_deref(),
        Some(
            "the server requires authorization (401); it advertises OAuth: run `plugboard auth api`"
        )
    );

    let mut server = remote_config(TransportKind::Shttp, &url, 10);
    server.auth = Auth::Bearer {
        token: SecretRef::new("TOKEN"),
    };
    let wrong = probe(
        "api",
        &server,
        &store_with("api", &[("TOKEN", "not-the-token-42")]),
        None,
    )
    .await;
    wrong.assert_kind("unauthorized");
    assert!(
        wrong
            .result
            .hint
            .as_deref()
            .unwrap()
            .contains("rejected the credentials")
    );
    assert!(!wrong.json.contains("not-the-token-42"));

    let right = probe(
        "api",
        &server,
        &store_with("api", &[("TOKEN", token)]),
        None,
    )
    .await;
    right.assert_ok();
    assert!(!right.json.contains(token));
    // It refused the request without the token and took the one with it: verified.
    assert_eq!(right.result.verification, Verification::Verified);
}

/// A server that answers with or without the headers it was given does not check them: the
/// test says so and does not call the credentials verified.
#[tokio::test]
async fn a_server_that_ignores_the_credential_is_not_called_verified() {
    let fx = HttpFixture::start("http", &[]);
    let mut server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 10);
    server.auth = Auth::Bearer {
        token: SecretRef::new("TOKEN"),
    };
    let probed = probe(
        "lax",
        &server,
        &store_with("lax", &[("TOKEN", "ignored-token-3x")]),
        None,
    )
    .await;
    probed.assert_ok();
    assert_eq!(probed.result.verification, Verification::ConnectivityOnly);
    assert!(
        probed
            .result
            .warnings
            .iter()
            .any(|w| w.contains("does not check the credentials")),
        "{:?}",
        probed.result.warnings
    );
}

#[tokio::test]
async fn sse_bearer_is_sent_on_every_request() {
    let token = "sse-bearer-4Kd8Pq1W";
    let fx = HttpFixture::start("sse", &["--expect-bearer", token]);
    let mut server = remote_config(TransportKind::Sse, &fx.url("/sse"), 10);
    let missing = probe("s", &server, &store_with("s", &[]), None).await;
    missing.assert_kind("unauthorized");
    server.auth = Auth::Bearer {
        token: SecretRef::new("TOKEN"),
    };
    let right = probe("s", &server, &store_with("s", &[("TOKEN", token)]), None).await;
    right.assert_ok();
}

#[tokio::test]
async fn custom_headers_and_api_keys_are_sent() {
    let fx = HttpFixture::start("http", &["--expect-header", "X-Api-Key=key-55aa66bb"]);
    let url = fx.url("/mcp");
    let server = remote_config(TransportKind::Shttp, &url, 10);
    let missing = probe("h", &server, &store_with("h", &[]), None).await;
    missing.assert_kind("unauthorized");

    let mut server = remote_config(TransportKind::Shttp, &url, 10);
    server.auth = Auth::ApiKey {
        header: "X-Api-Key".into(),
        key: SecretRef::new("KEY"),
    };
    let ok = probe(
        "h",
        &server,
        &store_with("h", &[("KEY", "key-55aa66bb")]),
        None,
    )
    .await;
    ok.assert_ok();

    let mut server = remote_config(TransportKind::Shttp, &url, 10);
    server.headers.insert(
        "X-Api-Key".into(),
        ConfigValue::Plain("key-55aa66bb".into()),
    );
    let ok = probe("h", &server, &store_with("h", &[]), None).await;
    ok.assert_ok();
    assert!(!ok.json.contains("key-55aa66bb"));
}

#[tokio::test]
async fn status_500_is_an_http_error() {
    let fx = HttpFixture::start("http", &["--misbehave", "status-500"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 5);
    let probed = probe("r", &server, &store_with("r", &[]), None).await;
    probed.assert_kind("http");
    assert!(
        probed
            .result
            .hint
            .as_deref()
            .unwrap()
            .starts_with("HTTP 500 from the server")
    );

    let fx = HttpFixture::start("sse", &["--misbehave", "status-500"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 5);
    let probed = probe("r", &server, &store_with("r", &[]), None).await;
    probed.assert_kind("http");
    assert!(!probed.result.stage(Stage::Connect).unwrap().ok);
}

#[tokio::test]
async fn cross_origin_redirects_are_refused() {
    let fx = HttpFixture::start("http", &["--misbehave", "redirect-cross-origin"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 5);
    let probed = probe("r", &server, &store_with("r", &[]), None).await;
    probed.assert_kind("http");
    let hint = probed.result.hint.as_deref().unwrap();
    assert!(hint.contains("redirected to another origin"), "{hint}");
    assert!(hint.contains("use the final URL"), "{hint}");

    let fx = HttpFixture::start("sse", &["--misbehave", "redirect-cross-origin"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 5);
    let probed = probe("r", &server, &store_with("r", &[]), None).await;
    probed.assert_kind("http");
}

#[tokio::test]
async fn refused_connections_name_the_address() {
    let port = closed_port();
    for transport in [
        TransportKind::Shttp,
        TransportKind::Sse,
        TransportKind::Auto,
    ] {
        let server = remote_config(transport, &format!("http://127.0.0.1:{port}/mcp"), 5);
        let probed = probe("down", &server, &store_with("down", &[]), None).await;
        probed.assert_kind("connection");
        assert_eq!(
            probed.result.hint.as_deref(),
            Some(
                format!(
                    "connection refused at 127.0.0.1:{port}: is the server running? Check the host and port"
                )
                .as_str()
            )
        );
        assert!(probed.elapsed < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn unresolvable_hosts_are_connection_errors() {
    let server = remote_config(TransportKind::Shttp, "http://no-such-host.invalid/mcp", 5);
    let probed = probe("dns", &server, &store_with("dns", &[]), None).await;
    probed.assert_kind("connection");
}

#[tokio::test]
async fn remote_huge_messages_are_protocol_errors() {
    let fx = HttpFixture::start("http", &["--misbehave", "huge-message"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 10);
    let probed = probe("big", &server, &store_with("big", &[]), None).await;
    probed.assert_kind("protocol");
    assert!(
        probed
            .result
            .hint
            .as_deref()
            .unwrap()
            .contains("larger than 16 MiB")
    );

    let fx = HttpFixture::start("sse", &["--misbehave", "huge-message"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 10);
    let probed = probe("big", &server, &store_with("big", &[]), None).await;
    probed.assert_kind("protocol");
}

#[tokio::test]
async fn remote_garbage_is_a_protocol_error() {
    let fx = HttpFixture::start("http", &["--misbehave", "garbage-stdout"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 5);
    let probed = probe("g", &server, &store_with("g", &[]), None).await;
    probed.assert_kind("protocol");

    let fx = HttpFixture::start("sse", &["--misbehave", "garbage-stdout"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 3);
    let probed = probe("g", &server, &store_with("g", &[]), None).await;
    probed.assert_kind("protocol");
    assert!(probed.elapsed < Duration::from_secs(5));
}

#[tokio::test]
async fn remote_never_answer_times_out() {
    let fx = HttpFixture::start("http", &["--misbehave", "never-answer"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 3);
    let probed = probe("slow", &server, &store_with("slow", &[]), None).await;
    probed.assert_kind("timeout");
    assert!(
        probed.elapsed < Duration::from_secs(5),
        "{:?}",
        probed.elapsed
    );
}

#[tokio::test]
async fn remote_tools_list_error_and_hang() {
    let fx = HttpFixture::start("http", &["--misbehave", "tools-list-error"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 5);
    let probed = probe("e", &server, &store_with("e", &[]), None).await;
    probed.assert_kind("server");

    let fx = HttpFixture::start("sse", &["--misbehave", "hang-after-initialize"]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 3);
    let probed = probe("e", &server, &store_with("e", &[]), None).await;
    probed.assert_kind("timeout");
    assert!(probed.result.stage(Stage::Initialize).unwrap().ok);
}

#[tokio::test]
async fn remote_leaked_secret_is_redacted() {
    let secret = "hdr-secret-Qw3rTy-991";
    let fx = HttpFixture::start_with_env(
        "http",
        &["--misbehave", "leak-secret-env=LEAKED"],
        &[("LEAKED", secret)],
    );
    let mut server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 5);
    server.headers.insert(
        "X-Token".into(),
        ConfigValue::Secret(SecretRef::new("X_TOKEN")),
    );
    let probed = probe(
        "leaky",
        &server,
        &store_with("leaky", &[("X_TOKEN", secret)]),
        None,
    )
    .await;
    probed.assert_kind("server");
    assert!(!probed.json.contains(secret), "{}", probed.json);
}

#[tokio::test]
async fn remote_credential_probe_runs_over_http() {
    let fx = HttpFixture::start("http", &["--misbehave", "probe-fails"]);
    let server = remote_config(TransportKind::Shttp, &fx.url("/mcp"), 5);
    let probed = probe(
        "p",
        &server,
        &store_with("p", &[]),
        Some(check_credentials_probe()),
    )
    .await;
    probed.assert_kind("credentials");

    let fx = HttpFixture::start("sse", &[]);
    let server = remote_config(TransportKind::Sse, &fx.url("/sse"), 5);
    let probed = probe(
        "p",
        &server,
        &store_with("p", &[]),
        Some(check_credentials_probe()),
    )
    .await;
    probed.assert_ok();
    assert_eq!(
        probed.result.verification,
        plugboard::probe::Verification::Verified
    );
}

#[tokio::test]
async fn auto_with_a_wrong_path_reports_both_transports() {
    let fx = HttpFixture::start("http", &[]);
    let server = remote_config(TransportKind::Auto, &fx.url("/nothing-here"), 5);
    let probed = probe("wrong", &server, &store_with("wrong", &[]), None).await;
    probed.assert_kind("http");
    let error = probed.result.error.as_deref().unwrap();
    assert!(
        error.contains("HTTP 404") && error.contains("SSE fallback"),
        "{error}"
    );
    assert!(
        probed
            .result
            .hint
            .as_deref()
            .unwrap()
            .contains("both transports")
    );
}

/// A one-trick HTTP server on a loopback port: answers every request with `response` (raw
/// HTTP), then holds the connection open for a while. Lives on threads of this process.
fn raw_server(response: &'static str) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.flush();
                std::thread::sleep(Duration::from_secs(8));
            });
        }
    });
    port
}

#[tokio::test]
async fn sse_stream_without_an_endpoint_event_times_out_with_a_clear_reason() {
    let port = raw_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: just a comment\n\n",
    );
    let server = remote_config(
        TransportKind::Sse,
        &format!("http://127.0.0.1:{port}/sse"),
        2,
    );
    let probed = probe("noend", &server, &store_with("noend", &[]), None).await;
    probed.assert_kind("timeout");
    assert!(
        probed
            .result
            .error
            .as_deref()
            .unwrap()
            .contains("`endpoint` event")
    );
}

#[tokio::test]
async fn sse_endpoint_on_another_origin_is_refused() {
    let port = raw_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: http://127.0.0.2:9/messages\n\n",
    );
    let server = remote_config(
        TransportKind::Sse,
        &format!("http://127.0.0.1:{port}/sse"),
        5,
    );
    let probed = probe("xo", &server, &store_with("xo", &[]), None).await;
    probed.assert_kind("protocol");
    assert!(
        probed
            .result
            .error
            .as_deref()
            .unwrap()
            .contains("another origin")
    );
}

#[tokio::test]
async fn a_web_page_is_not_an_mcp_endpoint() {
    let port = raw_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\nConnection: close\r\n\r\n<html></html>",
    );
    let server = remote_config(
        TransportKind::Shttp,
        &format!("http://127.0.0.1:{port}/"),
        5,
    );
    let probed = probe("web", &server, &store_with("web", &[]), None).await;
    probed.assert_kind("protocol");
    assert!(probed.result.hint.as_deref().unwrap().contains("web page"));
}
