//! Try-it sessions against the official Python SDK (2.x), which serves both protocol eras:
//! the same tool asks the user a question as a server→client request in the legacy era and
//! as an `input_required` result in the modern era (answered by retrying the call with
//! `inputResponses`). `Connection` speaks the legacy era today, so the modern session is an
//! rmcp client in discover mode started with the session's own hooks (handler and trace).

use std::process::Command;
use std::time::Duration;

use plugboard::config::{ServerConfig, TransportKind};
use plugboard::redact::Redactor;
use plugboard::session::{Answer, CallRequest, Confirmation, ContentItem, QuestionMode, Session};
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, serve_client_with_lifecycle};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::support::peers::{Background, free_port, python_command};
use crate::support::sessions::{Script, open, options, runtime};

fn python_http() -> Background {
    let (python, script) = python_command();
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(script).arg("streamable-http").arg(port.to_string());
    Background::start(cmd, port)
}

fn booking(session: &Session) -> CallRequest {
    CallRequest {
        tool: "book_table".into(),
        arguments: json!({"day": "Friday"}),
        confirmation: Confirmation::Confirmed,
        timeout: Some(Duration::from_secs(30)),
        call_id: Some(session.new_call_id()),
    }
}

fn text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ContentItem::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn answers() -> Vec<Answer> {
    vec![
        Answer::Accept {
            content: Some(json!({"guests": 4, "name": "Grace"})),
        },
        Answer::Decline,
    ]
}

#[test]
fn legacy_era_questions_come_as_requests_of_the_server() {
    let server = python_http();
    let script = Script::new(answers());
    runtime().block_on(async {
        let config = ServerConfig::remote(TransportKind::Shttp, server.url("/mcp"));
        let live = open("py", config, script.clone()).await.unwrap();
        let s = &live.session;
        assert_eq!(s.info().era, "legacy");
        let booked = s.call_tool(booking(s)).await.unwrap();
        assert_eq!(
            text(&booked.content),
            "Booked a table for 4 on Friday under Grace."
        );
        assert_eq!(booked.rounds, 1);
        let QuestionMode::Form { schema, .. } = &script.questions()[0].mode else {
            panic!("not a form");
        };
        assert_eq!(schema["properties"]["guests"]["maximum"], 12);
        let declined = s.call_tool(booking(s)).await.unwrap();
        assert_eq!(
            text(&declined.content),
            "No booking: the user chose decline."
        );
        let trace = s.trace();
        assert!(
            trace
                .iter()
                .any(|e| e.method.as_deref() == Some("elicitation/create") && e.direction == "in")
        );
        s.close().await;
    });
}

#[test]
fn modern_era_input_required_is_answered_by_retrying_the_call() {
    let server = python_http();
    let script = Script::new(answers());
    runtime().block_on(async {
        let (options, events, _) = options(script.clone());
        let preparing = Session::prepare("py", Redactor::empty(), options);
        let hooks = preparing.hooks();
        let client = plugboard::tls::http_client_builder().build().unwrap();
        let transport = StreamableHttpClientTransport::with_client(
            client,
            StreamableHttpClientTransportConfig::with_uri(server.url("/mcp")),
        );
        let service = serve_client_with_lifecycle(
            hooks.service(),
            hooks.tapped(transport),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("the modern era with the Python SDK");
        let s = preparing.over_service(service, TransportKind::Shttp).await;
        assert_eq!(s.info().era, "modern", "{:?}", s.info());
        assert!(s.offer().tools.iter().any(|t| t.name == "book_table"));

        let booked = s.call_tool(booking(&s)).await.unwrap();
        assert_eq!(text(&booked.content), "Booked a table for 4 on Friday under Grace.");
        assert_eq!(booked.rounds, 2, "one input_required round, then the result");
        let trace = s.trace();
        let calls: Vec<serde_json::Value> = trace
            .iter()
            .filter(|e| e.method.as_deref() == Some("tools/call") && e.kind == "request")
            .map(|e| serde_json::from_str(&e.json).unwrap())
            .collect();
        assert_eq!(calls.len(), 2);
        let retry = &calls[1]["params"];
        let responses = retry["inputResponses"].as_object().expect("inputResponses");
        let answer = responses.values().next().unwrap();
        assert_eq!(answer["action"], "accept");
        assert_eq!(answer["content"], json!({"guests": 4, "name": "Grace"}));
        assert!(!trace.iter().any(|e| e.method.as_deref() == Some("elicitation/create") && e.direction == "in"),
            "a modern server sends no requests of its own");
        assert_eq!(script.questions()[0].call_id.as_deref(), Some(booked.call_id.as_str()));

        let declined = s.call_tool(booking(&s)).await.unwrap();
        assert_eq!(text(&declined.content), "No booking: the user chose decline.");
        assert!(events.all().iter().any(|e| matches!(e,
            plugboard::session::SessionEvent::QuestionSettled { outcome, .. } if outcome == "decline")));
        s.close().await;
    });
}
