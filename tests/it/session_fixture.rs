//! Try-it sessions with the fixture's schema tools over every transport (stdio, streamable
//! HTTP, legacy SSE) and in both protocol eras: each keyword family's schema becomes the form
//! it should, the hostile one is bounded, and values round-trip through validation to the
//! server. A modern session opens with the era probe, sends `_meta` on every request and
//! answers `input_required` by retrying; a remembered era that changed is probed again.

use std::time::Duration;

use plugboard::config::{ServerConfig, TransportKind};
use plugboard::connect::Era;
use plugboard::schema::{self, NodeKind, Validator};
use plugboard::session::{Answer, CallRequest, Confirmation, Session, SessionError, SessionEvent};
use serde_json::{Value, json};

use crate::support::fixture::{HttpFixture, fixture_bin};
use crate::support::sessions::{Script, open, open_known, runtime, text};

fn schema_of(session: &Session, tool: &str) -> Value {
    session
        .offer()
        .tools
        .into_iter()
        .find(|t| t.name == tool)
        .unwrap_or_else(|| panic!("no {tool}"))
        .input_schema
}

async fn echo_back(session: &Session, tool: &str, arguments: Value) -> Value {
    let outcome = session
        .call_tool(CallRequest {
            tool: tool.into(),
            arguments,
            confirmation: Confirmation::None,
            timeout: Some(Duration::from_secs(10)),
            call_id: None,
        })
        .await
        .unwrap();
    outcome.structured.unwrap().value.unwrap()["received"].clone()
}

async fn forms_and_round_trips(session: &Session) {
    let nested = schema::compile(&schema_of(session, "schema_nested"));
    let items = &nested.root.property("items").unwrap().node;
    match &items.kind {
        NodeKind::Array {
            items,
            min_items: Some(1),
            max_items: Some(5),
            unique_items: true,
            ..
        } => assert!(items.property("sku").unwrap().required),
        other => panic!("{other:?}"),
    }
    match &nested.root.property("delivery").unwrap().node.kind {
        NodeKind::Choice {
            variants,
            discriminator,
            ..
        } => {
            assert_eq!(discriminator.as_deref(), Some("kind"));
            let labels: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
            assert_eq!(labels, ["Pick up", "Ship"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &nested.root.property("tags").unwrap().node.kind,
        NodeKind::Object {
            additional: Some(_),
            ..
        }
    ));

    let unions = schema::compile(&schema_of(session, "schema_unions"));
    match &unions.root.property("notify").unwrap().node.kind {
        NodeKind::Choice {
            variants,
            discriminator,
            ..
        } => {
            assert_eq!(discriminator.as_deref(), Some("channel"));
            assert_eq!(variants.len(), 3);
        }
        other => panic!("{other:?}"),
    }
    let limit = &unions.root.property("limit").unwrap().node;
    assert!(limit.nullable && matches!(limit.kind, NodeKind::Choice { .. }));

    let refs = schema::compile(&schema_of(session, "schema_refs"));
    assert!(
        refs.defs.contains_key("#/$defs/node"),
        "{:?}",
        refs.defs.keys()
    );
    let owner = &refs.root.property("owner").unwrap().node;
    assert!(owner.property("name").unwrap().required && owner.property("since").unwrap().required);

    let hostile_schema = schema_of(session, "schema_hostile");
    let hostile = schema::compile(&hostile_schema);
    assert!(
        hostile.notes.iter().any(|n| n.contains("nested deeper")),
        "{:?}",
        hostile.notes
    );
    match &hostile.root.property("choice").unwrap().node.kind {
        NodeKind::Enum { options } => assert_eq!(options.len(), 10_000),
        other => panic!("{other:?}"),
    }
    let looped = hostile.root.property("loop").unwrap();
    assert!(matches!(&looped.node.kind, NodeKind::Object { .. }));
    let validator = Validator::new(&hostile_schema);
    assert!(
        validator
            .issues(&json!({"choice": "value-04242", "loop": {"again": {"again": {}}}}))
            .is_empty()
    );
    assert_eq!(
        validator.issues(&json!({"choice": "value-10000"}))[0].path,
        "choice"
    );

    // What the form would send is what the server gets.
    let order = json!({
        "customer": {"name": "Ada", "address": {"city": "London"}},
        "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}],
        "delivery": {"kind": "pickup", "store": "north"},
        "tags": {"gift": "yes"}
    });
    assert_eq!(
        echo_back(session, "schema_nested", order.clone()).await,
        order
    );
    let tree = json!({"tree": {"label": "root", "children": [{"label": "a", "children": [{"label": "b"}]}]}});
    assert_eq!(echo_back(session, "schema_refs", tree.clone()).await, tree);
}

#[test]
fn schema_tools_over_stdio() {
    runtime().block_on(async {
        let server = ServerConfig::stdio(
            fixture_bin().display().to_string(),
            vec!["--schema-tools".into()],
        );
        let live = open("fx", server, Script::new(vec![])).await.unwrap();
        forms_and_round_trips(&live.session).await;
        live.session.close().await;
    });
}

#[test]
fn schema_tools_over_streamable_http_and_sse() {
    for (transport, flag, path) in [
        (TransportKind::Shttp, "http", "/mcp"),
        (TransportKind::Sse, "sse", "/sse"),
    ] {
        let fixture = HttpFixture::start(flag, &["--schema-tools"]);
        runtime().block_on(async {
            let server = ServerConfig::remote(transport, fixture.url(path));
            let live = open("fx", server, Script::new(vec![])).await.unwrap();
            assert_eq!(live.session.info().transport, flag.replace("http", "shttp"));
            forms_and_round_trips(&live.session).await;
            live.session.close().await;
        });
    }
}

#[test]
fn a_server_that_dies_ends_the_session_clearly_and_leaves_no_process() {
    let mark = crate::support::fixture::marker("sessioncrash");
    runtime().block_on(async {
        let server = ServerConfig::stdio(
            fixture_bin().display().to_string(),
            vec![
                "--name".into(),
                mark.clone(),
                "--misbehave".into(),
                "crash-after-initialize".into(),
            ],
        );
        let live = open("fx", server, Script::new(vec![])).await.unwrap();
        // It died on the first list request: the user is told, and a call says so too.
        let waited = std::time::Instant::now();
        while !live
            .events
            .all()
            .iter()
            .any(|e| matches!(e, plugboard::session::SessionEvent::Closed { .. }))
            && waited.elapsed() < Duration::from_secs(5)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let closed = live.events.all().into_iter().find_map(|e| match e {
            plugboard::session::SessionEvent::Closed { reason } => Some(reason),
            _ => None,
        });
        assert_eq!(
            closed.as_deref(),
            Some("the server process exited with code 1")
        );
        assert!(live.session.offer().tools.is_empty());
        let err = live
            .session
            .read_resource("fixture://readme", None, None)
            .await
            .unwrap_err();
        assert!(
            matches!(err, plugboard::session::SessionError::Closed(_)),
            "{err:?}"
        );
        assert!(
            live.session
                .stderr_tail()
                .await
                .unwrap()
                .contains("panic: boom")
        );
        live.session.close().await;
    });
    crate::support::fixture::assert_no_process_left(&mark);
}

/// The fixture in the modern era with its schema tools, refusing any request without the
/// modern `_meta` (`require-meta`).
const MODERN_SCHEMA_TOOLS: [&str; 5] = [
    "--era",
    "modern",
    "--schema-tools",
    "--misbehave",
    "require-meta",
];

/// The trace of a modern session: the era probe first, no `initialize`, and every request of
/// the session naming the modern version in its `_meta`.
fn assert_modern_trace(session: &Session) {
    let trace = session.trace();
    assert_eq!(
        trace.first().and_then(|e| e.method.as_deref()),
        Some("server/discover"),
        "{trace:?}"
    );
    assert!(
        !trace
            .iter()
            .any(|e| e.method.as_deref() == Some("initialize")),
        "{trace:?}"
    );
    let requests: Vec<Value> = trace
        .iter()
        .filter(|e| e.direction == "out" && e.kind == "request")
        .map(|e| serde_json::from_str(&e.json).unwrap())
        .collect();
    assert!(requests.len() >= 3, "discover, lists, calls: {requests:?}");
    for request in &requests {
        assert_eq!(
            request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{request}"
        );
    }
}

#[test]
fn schema_tools_in_the_modern_era_over_stdio_and_streamable_http() {
    runtime().block_on(async {
        let args = MODERN_SCHEMA_TOOLS.iter().map(|a| a.to_string()).collect();
        let server = ServerConfig::stdio(fixture_bin().display().to_string(), args);
        let live = open("fx", server, Script::new(vec![])).await.unwrap();
        let info = live.session.info();
        assert_eq!(
            (
                info.era.as_str(),
                info.protocol_version.as_str(),
                info.transport.as_str()
            ),
            ("modern", "2026-07-28", "stdio")
        );
        forms_and_round_trips(&live.session).await;
        assert_modern_trace(&live.session);
        live.session.close().await;
    });
    // `auto` finds streamable HTTP of the modern era (no SSE fallback).
    for transport in [TransportKind::Shttp, TransportKind::Auto] {
        let fixture = HttpFixture::start("http", &MODERN_SCHEMA_TOOLS);
        runtime().block_on(async {
            let server = ServerConfig::remote(transport, fixture.url("/mcp"));
            let live = open("fx", server, Script::new(vec![])).await.unwrap();
            let info = live.session.info();
            assert_eq!(
                (info.era.as_str(), info.transport.as_str()),
                ("modern", "shttp"),
                "{transport:?}"
            );
            forms_and_round_trips(&live.session).await;
            assert_modern_trace(&live.session);
            live.session.close().await;
        });
    }
}

#[test]
fn a_dual_era_server_over_sse_is_tried_in_the_legacy_era() {
    let fixture = HttpFixture::start("sse", &["--era", "dual", "--schema-tools"]);
    runtime().block_on(async {
        let server = ServerConfig::remote(TransportKind::Sse, fixture.url("/sse"));
        let live = open("fx", server, Script::new(vec![])).await.unwrap();
        let info = live.session.info();
        assert_eq!(
            (info.era.as_str(), info.transport.as_str()),
            ("legacy", "sse")
        );
        forms_and_round_trips(&live.session).await;
        let trace = live.session.trace();
        assert_eq!(
            trace.first().and_then(|e| e.method.as_deref()),
            Some("initialize"),
            "SSE has no modern form: no probe"
        );
        live.session.close().await;
    });
}

fn confirm_call(session: &Session) -> CallRequest {
    CallRequest {
        tool: "echo".into(),
        arguments: json!({"message": "hi"}),
        confirmation: Confirmation::None,
        timeout: Some(Duration::from_secs(10)),
        call_id: Some(session.new_call_id()),
    }
}

/// The fixture asks to confirm every call (`input-required`): a legacy server with an
/// `elicitation/create` request during the call, a modern one with an `input_required` result
/// that the session answers by calling again with `inputResponses` and the same state.
#[test]
fn the_servers_question_during_a_call_is_answered_in_either_era_over_stdio() {
    for (era, rounds) in [("legacy", 1), ("modern", 2)] {
        runtime().block_on(async {
            let server = ServerConfig::stdio(
                fixture_bin().display().to_string(),
                ["--era", era, "--misbehave", "input-required"]
                    .map(String::from)
                    .to_vec(),
            );
            let script = Script::new(vec![
                Answer::Accept {
                    content: Some(json!({"confirmed": true})),
                },
                Answer::Decline,
            ]);
            let live = open("fx", server, script.clone()).await.unwrap();
            let s = &live.session;
            assert_eq!(s.info().era, era);
            let confirmed = s.call_tool(confirm_call(s)).await.unwrap();
            assert!(!confirmed.is_error, "{era}: {confirmed:?}");
            assert_eq!(text(&confirmed.content), "hi", "{era}");
            assert_eq!(confirmed.rounds, rounds, "{era}");
            let asked = script.questions();
            assert_eq!(asked.len(), 1, "{era}");
            assert_eq!(
                asked[0].call_id.as_deref(),
                Some(confirmed.call_id.as_str())
            );

            let declined = s.call_tool(confirm_call(s)).await.unwrap();
            assert!(declined.is_error, "{era}: {declined:?}");
            assert_eq!(
                text(&declined.content),
                "the call was not confirmed",
                "{era}"
            );
            assert!(live.events.all().iter().any(|e| matches!(e,
                SessionEvent::QuestionSettled { outcome, .. } if outcome == "decline")));

            let trace = s.trace();
            let server_asked = trace
                .iter()
                .any(|e| e.method.as_deref() == Some("elicitation/create") && e.direction == "in");
            assert_eq!(server_asked, era == "legacy", "{era}: {trace:?}");
            if era == "modern" {
                let retry: Value = trace
                    .iter()
                    .filter(|e| e.method.as_deref() == Some("tools/call") && e.kind == "request")
                    .map(|e| serde_json::from_str(&e.json).unwrap())
                    .nth(1)
                    .expect("the retry");
                assert_eq!(retry["params"]["requestState"], "confirm:echo");
                assert_eq!(
                    retry["params"]["inputResponses"]["confirm"]["content"],
                    json!({"confirmed": true})
                );
            }
            s.close().await;
        });
    }
}

/// The statuses a session reported for call `call_id`, in order.
fn task_statuses(live: &crate::support::sessions::Live, call_id: &str) -> Vec<String> {
    live.events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            SessionEvent::TaskStatus {
                call_id: of,
                status,
                message,
            } if of == call_id => Some(match message {
                Some(message) => format!("{status}: {message}"),
                None => status,
            }),
            _ => None,
        })
        .collect()
}

/// A modern server (`--tasks`) answers each call with a task of the tasks extension, which
/// the session declares in every request: it is polled with `tasks/get`, its question is
/// asked and answered with `tasks/update`, and it ends with the inline result (accepted,
/// declined) or error (dismissed); a call given up sends `tasks/cancel`. Over stdio and
/// streamable HTTP.
#[test]
fn a_modern_server_s_task_is_followed_to_its_result_over_stdio_and_streamable_http() {
    let fixture = HttpFixture::start("http", &["--era", "modern", "--tasks"]);
    let servers = [
        ServerConfig::stdio(
            fixture_bin().display().to_string(),
            ["--era", "modern", "--tasks"].map(String::from).to_vec(),
        ),
        ServerConfig::remote(TransportKind::Shttp, fixture.url("/mcp")),
    ];
    for server in servers {
        runtime().block_on(async {
            let script = Script::new(vec![
                Answer::Accept {
                    content: Some(json!({"confirmed": true})),
                },
                Answer::Decline,
                Answer::Cancel,
            ]);
            let live = open("fx", server, script.clone()).await.unwrap();
            let s = &live.session;
            let transport = s.info().transport.clone();
            assert_eq!(s.info().era, "modern");

            let done = s.call_tool(confirm_call(s)).await.unwrap();
            assert!(!done.is_error, "{transport}: {done:?}");
            assert_eq!(text(&done.content), "hi", "{transport}");
            assert_eq!(
                task_statuses(&live, &done.call_id),
                [
                    "working: Preparing",
                    "input_required: Waiting for your confirmation",
                    "working: Running the call",
                    "completed"
                ],
                "{transport}"
            );
            assert_eq!(script.questions().len(), 1, "{transport}");
            assert_eq!(
                script.questions()[0].call_id.as_deref(),
                Some(done.call_id.as_str())
            );

            let declined = s.call_tool(confirm_call(s)).await.unwrap();
            assert!(declined.is_error, "{transport}: {declined:?}");
            assert_eq!(text(&declined.content), "the call was not confirmed");

            let dismissed = s.call_tool(confirm_call(s)).await;
            assert!(
                matches!(&dismissed, Err(SessionError::Rpc { code: -32001, message })
                    if message.contains("dismissed")),
                "{transport}: {dismissed:?}"
            );

            // Every request declared the extension; the answer went back with tasks/update.
            let requests: Vec<Value> = s
                .trace()
                .iter()
                .filter(|e| e.direction == "out" && e.kind == "request")
                .map(|e| serde_json::from_str(&e.json).unwrap())
                .collect();
            let call = requests
                .iter()
                .find(|r| r["method"] == "tools/call")
                .unwrap();
            assert_eq!(
                call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
                    ["io.modelcontextprotocol/tasks"],
                json!({}),
                "{call}"
            );
            let update = requests
                .iter()
                .find(|r| r["method"] == "tasks/update")
                .expect("tasks/update");
            assert_eq!(
                update["params"]["inputResponses"]["confirm"]["content"],
                json!({"confirmed": true})
            );
            assert_eq!(
                requests
                    .iter()
                    .filter(|r| r["method"] == "tasks/update")
                    .count(),
                3,
                "one answer per task"
            );

            // Given up while it works: the task is cancelled at the server.
            let call_id = s.new_call_id();
            let mut running = Box::pin(s.call_tool(CallRequest {
                call_id: Some(call_id.clone()),
                ..confirm_call(s)
            }));
            let cancelled = loop {
                tokio::select! {
                    outcome = &mut running => break outcome,
                    _ = tokio::time::sleep(Duration::from_millis(20)) => {
                        if !task_statuses(&live, &call_id).is_empty() {
                            s.cancel(&call_id);
                        }
                    }
                }
            };
            assert!(
                matches!(cancelled, Err(SessionError::Cancelled)),
                "{transport}: {cancelled:?}"
            );
            let mut sent_cancel = false;
            for _ in 0..50 {
                sent_cancel = s
                    .trace()
                    .iter()
                    .any(|t| t.direction == "out" && t.method.as_deref() == Some("tasks/cancel"));
                if sent_cancel {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(sent_cancel, "{transport}: no tasks/cancel");
            s.close().await;
        });
    }
}

/// A session remembers the era of the server's last test; when that changed (a legacy server
/// upgraded to the modern era), the session probes again and the trace shows both attempts
/// (over streamable HTTP the probe goes on a fresh transport, tapped like the first).
#[test]
fn a_remembered_era_that_changed_is_probed_again_over_stdio_and_streamable_http() {
    let check = |live: &crate::support::sessions::Live, transport: &str| {
        let info = live.session.info();
        assert_eq!(
            (info.era.as_str(), info.transport.as_str()),
            ("modern", transport)
        );
        let methods: Vec<String> = live
            .session
            .trace()
            .iter()
            .filter(|e| e.direction == "out" && e.kind == "request")
            .filter_map(|e| e.method.clone())
            .collect();
        let initialize = methods.iter().position(|m| m == "initialize");
        let discover = methods.iter().position(|m| m == "server/discover");
        assert!(
            matches!((initialize, discover), (Some(i), Some(d)) if i < d),
            "{transport}: {methods:?}"
        );
    };
    runtime().block_on(async {
        let server = ServerConfig::stdio(
            fixture_bin().display().to_string(),
            vec!["--era".into(), "modern".into()],
        );
        let live = open_known("fx", server, Script::new(vec![]), Some(Era::Legacy))
            .await
            .unwrap();
        check(&live, "stdio");
        assert!(!live.session.offer().tools.is_empty());
        live.session.close().await;
    });
    let fixture = HttpFixture::start("http", &["--era", "modern"]);
    runtime().block_on(async {
        let server = ServerConfig::remote(TransportKind::Shttp, fixture.url("/mcp"));
        let live = open_known("fx", server, Script::new(vec![]), Some(Era::Legacy))
            .await
            .unwrap();
        check(&live, "shttp");
        assert!(!live.session.offer().tools.is_empty());
        live.session.close().await;
    });
}

/// `auto` against a server that only speaks legacy SSE: the streamable HTTP probe is refused
/// (405) and the session falls back to SSE; the trace has both transports' messages.
#[test]
fn auto_falls_back_to_sse_and_the_trace_has_both_attempts() {
    let fixture = HttpFixture::start("http", &["--misbehave", "sse-only", "--schema-tools"]);
    runtime().block_on(async {
        let server = ServerConfig::remote(TransportKind::Auto, fixture.url("/mcp"));
        let live = open("fx", server, Script::new(vec![])).await.unwrap();
        let info = live.session.info();
        assert_eq!(
            (info.era.as_str(), info.transport.as_str()),
            ("legacy", "sse")
        );
        forms_and_round_trips(&live.session).await;
        let methods: Vec<String> = live
            .session
            .trace()
            .iter()
            .filter(|e| e.direction == "out" && e.kind == "request")
            .filter_map(|e| e.method.clone())
            .collect();
        let discover = methods.iter().position(|m| m == "server/discover");
        let initialize = methods.iter().position(|m| m == "initialize");
        assert!(
            matches!((discover, initialize), (Some(d), Some(i)) if d < i),
            "{methods:?}"
        );
        live.session.close().await;
    });
}

/// A tool with an interactive view (MCP Apps): the session names its page, reads it with a
/// policy that allows no network (nothing was declared), keeps the raw result of the call for
/// the view, and lets a view call only tools the server made visible to views. The CLI says the
/// tool has a view and saves its page to a new file, never over an existing one.
#[test]
fn a_tool_s_interactive_view_is_read_with_its_policy_and_saved_by_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("panel.html");
    let html = "<!doctype html><p>panel <b>ok</b></p><script>parent.postMessage({}, '*')</script>";
    std::fs::write(&page, html).unwrap();
    let server = ServerConfig::stdio(
        fixture_bin().to_string_lossy().into_owned(),
        vec!["--ui-page".into(), page.display().to_string()],
    );
    runtime().block_on(async {
        let live = open("panel", server, Script::new(vec![])).await.unwrap();
        let s = &live.session;
        let ui = s.tool_ui("show_panel").expect("a view");
        assert_eq!(ui.resource_uri, "ui://fixture/panel.html");
        assert!(s.tool_ui("echo").is_none());
        let view = s.app_view("show_panel").await.unwrap();
        assert_eq!(view.html, html);
        assert!(view.csp.contains("connect-src 'none'"), "{}", view.csp);
        assert!(view.domains.is_empty() && view.allow.is_empty());
        let done = s
            .call_tool(CallRequest {
                tool: "show_panel".into(),
                arguments: json!({}),
                confirmation: Confirmation::None,
                timeout: Some(Duration::from_secs(10)),
                call_id: None,
            })
            .await
            .unwrap();
        assert_eq!(done.result.unwrap()["content"][0]["text"], "panel shown");
        assert!(s.view_may_call("show_panel") && s.view_may_call("echo"));
        assert!(!s.view_may_call("no_such_tool"));
        assert!(s.app_view("echo").await.is_err());
        s.close().await;
    });

    let home = crate::support::Home::new();
    let mut add = home.cmd(&["add", "panel", "--no-test", "--no-sandbox", "--stdio", "--"]);
    add.arg(fixture_bin())
        .args(["--ui-page", page.to_str().unwrap()]);
    crate::support::assert_code(&add.output().unwrap(), 0);
    crate::support::assert_code(&home.run(&["test", "panel"]), 0);
    let out = home.run(&["tools", "panel"]);
    let shown = crate::support::stdout(&out);
    assert!(
        shown.contains("`show_panel` has an interactive UI (ui://fixture/panel.html)"),
        "{shown}"
    );
    let saved = dir.path().join("saved.html");
    let save = || {
        home.run(&[
            "read",
            "panel",
            "ui://fixture/panel.html",
            "--save",
            saved.to_str().unwrap(),
        ])
    };
    crate::support::assert_code(&save(), 0);
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), html);
    std::fs::write(&saved, "mine").unwrap();
    crate::support::assert_code(&save(), 2);
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), "mine");
}
