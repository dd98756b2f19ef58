//! Try it as the app drives it (`plugboard_app_api::api`): sessions held by id across commands, the
//! tool's form, validation by field, confirmations, the server's questions answered through
//! `session_answer` (a bad answer refused, the question kept), cancelling, the trace, the
//! diagnostics bundle, and closing (the server's processes gone). No secret crosses.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::executor::block_on;
use plugboard::schema::NodeKind;
use plugboard::secrets::{MemoryStore, SecretKey, SecretStore, Sensitive};
use plugboard::session::{Answer, Confirmation, SessionEvent};
use plugboard_app_api::api::{Api, CallInput};
use serde_json::{Value, json};

use crate::support::fixture::{assert_no_process_left, fixture_bin, marker};
use crate::support::peers::everything_command;

const TOKEN: &str = "app-tryit-Token-77aa11-never-shown";

fn api(servers: Value) -> (tempfile::TempDir, Arc<Api>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mcp_config.json"),
        serde_json::to_string_pretty(&json!({"version": 1, "servers": servers})).unwrap(),
    )
    .unwrap();
    let store = Arc::new(MemoryStore::new());
    for name in ["fx", "everything"] {
        store
            .set(
                &SecretKey::new(name, "TOKEN"),
                &Sensitive::new(TOKEN.to_owned()),
            )
            .unwrap();
    }
    let api = Arc::new(Api::with_store(
        dir.path(),
        store,
        plugboard::catalog::Catalog::default(),
    ));
    (dir, api)
}

fn recorder() -> (
    Arc<Mutex<Vec<SessionEvent>>>,
    impl Fn(SessionEvent) + Send + Sync + 'static,
) {
    let events = Arc::new(Mutex::new(vec![]));
    let sink = events.clone();
    (events, move |e| sink.lock().unwrap().push(e))
}

fn input(tool: &str, arguments: Value, confirmation: Confirmation, call_id: &str) -> CallInput {
    CallInput {
        tool: tool.into(),
        arguments,
        confirmation,
        call_id: call_id.into(),
        timeout_secs: Some(30),
        from_view: false,
    }
}

#[test]
fn an_app_session_with_the_fixture_from_form_to_close() {
    let mark = marker("apptryit");
    let fx = fixture_bin().display().to_string();
    let (_dir, api) = api(json!({"fx": {"type": "stdio", "command": fx,
        "args": ["--name", mark, "--schema-tools"], "env": {"TOKEN": {"secret": "TOKEN"}}}}));
    let (events, sink) = recorder();
    let view = block_on(api.open_session_task("fx".into(), sink)).unwrap();
    assert_eq!(view.info.era, "legacy");
    assert!(view.offer.tools.iter().any(|t| t.name == "schema_nested"));
    let id = view.id.clone();

    let form = api.session_tool_form(&id, "schema_nested").unwrap();
    assert!(matches!(
        form.form.root.property("delivery").unwrap().node.kind,
        NodeKind::Choice { .. }
    ));
    let issues = api
        .session_validate(
            &id,
            "schema_nested",
            &json!({"customer": {}, "items": [], "delivery": {"kind": "ship"}}),
        )
        .unwrap();
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    for path in ["customer.name", "items", "delivery.address"] {
        assert!(paths.contains(&path), "{path}: {issues:?}");
    }

    let refused = block_on(api.session_call_task(
        id.clone(),
        input(
            "purge_records",
            json!({"table": "t"}),
            Confirmation::Confirmed,
            "c1",
        ),
    ))
    .unwrap_err();
    assert_eq!(refused.code, "needs_confirmation");
    let invalid = block_on(api.session_call_task(
        id.clone(),
        input(
            "schema_scalars",
            json!({"title": "x", "count": 99}),
            Confirmation::None,
            "c2",
        ),
    ))
    .unwrap_err();
    assert_eq!(invalid.code, "invalid_arguments");
    let pointers: Vec<&str> = invalid.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(pointers, ["/title", "/count"], "{invalid:?}");

    let purged = block_on(api.session_call_task(
        id.clone(),
        input(
            "purge_records",
            json!({"table": "t"}),
            Confirmation::Destructive,
            "c3",
        ),
    ))
    .unwrap();
    assert!(!purged.is_error);

    let trace = api.session_trace(&id).unwrap();
    assert!(
        trace
            .iter()
            .any(|e| e.method.as_deref() == Some("tools/call"))
    );
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, SessionEvent::Trace { .. }))
    );
    let bundle: Value = serde_json::from_str(
        &block_on(api.diagnostics_task("fx".into(), Some(id.clone()))).unwrap(),
    )
    .unwrap();
    assert_eq!(bundle["session"]["tools"], json!(view.offer.tools.len()));
    assert!(bundle["trace"].as_array().unwrap().len() >= trace.len());

    let everything =
        serde_json::to_string(&(&view, &bundle, &trace, &*events.lock().unwrap())).unwrap();
    assert!(!everything.contains(TOKEN), "the secret crossed");

    block_on(api.close_session_task(id.clone())).unwrap();
    assert_eq!(api.session_offer(&id).unwrap_err().code, "not_found");
    assert_no_process_left(&mark);
}

#[test]
fn questions_are_answered_through_the_app_and_calls_can_be_cancelled() {
    let (node, script) = everything_command();
    let (_dir, api) = api(json!({"everything": {"type": "stdio", "command": node,
        "args": [script.display().to_string(), "stdio"]}}));
    let (events, sink) = recorder();
    let view = block_on(api.open_session_task("everything".into(), sink)).unwrap();
    let id = view.id.clone();
    let call = api.session_call_task(
        id.clone(),
        input(
            "trigger-elicitation-request",
            json!({}),
            Confirmation::Confirmed,
            "ask",
        ),
    );
    let answer = {
        let api = api.clone();
        let id = id.clone();
        let events = events.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let question = loop {
                let found = events.lock().unwrap().iter().find_map(|e| match e {
                    SessionEvent::Question { question } => Some(question.clone()),
                    _ => None,
                });
                if let Some(q) = found {
                    break q;
                }
                assert!(started.elapsed() < Duration::from_secs(20), "no question");
                std::thread::sleep(Duration::from_millis(20));
            };
            assert_eq!(question.call_id.as_deref(), Some("ask"));
            // Misses the required name: refused by field, and still waiting.
            let refused = api
                .session_answer(
                    &id,
                    &question.id,
                    Answer::Accept {
                        content: Some(json!({"integer": 5})),
                    },
                )
                .unwrap_err();
            assert_eq!(refused.code, "invalid");
            assert_eq!(refused.fields[0].field, "/name");
            api.session_answer(
                &id,
                &question.id,
                Answer::Accept {
                    content: Some(json!({"name": "Grace Hopper", "integer": 5})),
                },
            )
            .unwrap();
            assert_eq!(
                api.session_answer(&id, &question.id, Answer::Decline)
                    .unwrap_err()
                    .code,
                "not_found"
            );
        })
    };
    let outcome = block_on(call).unwrap();
    answer.join().unwrap();
    let text = serde_json::to_string(&outcome.content).unwrap();
    assert!(text.contains("- Name: Grace Hopper"), "{text}");

    let long = api.session_call_task(
        id.clone(),
        input(
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
            Confirmation::None,
            "long",
        ),
    );
    let cancel = {
        let api = api.clone();
        let id = id.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            assert!(api.session_cancel(&id, "long"));
        })
    };
    let cancelled = block_on(long).unwrap_err();
    cancel.join().unwrap();
    assert_eq!(cancelled.code, "cancelled");
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, SessionEvent::Progress { call_id, .. } if call_id == "long"))
    );
    api.close_all_sessions();
    assert_eq!(api.session_trace(&id).unwrap_err().code, "not_found");
}
