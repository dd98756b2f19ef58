//! Try-it sessions against the official Python SDK (2.x), which serves both protocol eras:
//! the same tool asks the user a question as a server→client request in the legacy era and
//! as an `input_required` result in the modern era (answered by retrying the call with
//! `inputResponses`). Both sessions open through `Connection`: the modern one as the probe
//! finds it, the legacy one with the era remembered as legacy (`initialize` at once).

use std::process::Command;
use std::time::Duration;

use plugboard::config::{ServerConfig, TransportKind};
use plugboard::connect::Era;
use plugboard::session::{Answer, CallRequest, Confirmation, QuestionMode, Session};
use serde_json::json;

use crate::support::peers::{Background, free_port, python_command};
use crate::support::sessions::{Script, open, open_known, runtime, text};

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
        let live = open_known("py", config, script.clone(), Some(Era::Legacy))
            .await
            .unwrap();
        let s = &live.session;
        assert_eq!(s.info().era, "legacy");
        assert!(
            s.trace()
                .iter()
                .any(|e| e.method.as_deref() == Some("initialize")),
            "the remembered era's handshake is in the trace"
        );
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
        let config = ServerConfig::remote(TransportKind::Shttp, server.url("/mcp"));
        let live = open("py", config, script.clone()).await.unwrap();
        let (s, events) = (&live.session, &live.events);
        assert_eq!(s.info().era, "modern", "{:?}", s.info());
        assert_eq!(s.info().protocol_version, "2026-07-28");
        assert_eq!(s.info().transport, "shttp");
        assert!(s.offer().tools.iter().any(|t| t.name == "book_table"));

        let booked = s.call_tool(booking(s)).await.unwrap();
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
        assert_eq!(
            trace[0].method.as_deref(),
            Some("server/discover"),
            "the trace opens with the era probe"
        );
        assert!(
            !trace.iter().any(|e| e.method.as_deref() == Some("initialize")),
            "no initialize in the modern era"
        );
        assert_eq!(script.questions()[0].call_id.as_deref(), Some(booked.call_id.as_str()));

        let declined = s.call_tool(booking(s)).await.unwrap();
        assert_eq!(text(&declined.content), "No booking: the user chose decline.");
        assert!(events.all().iter().any(|e| matches!(e,
            plugboard::session::SessionEvent::QuestionSettled { outcome, .. } if outcome == "decline")));
        s.close().await;
    });
}
