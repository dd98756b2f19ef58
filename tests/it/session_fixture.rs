//! Try-it sessions with the fixture's schema tools over every transport (stdio, streamable
//! HTTP, legacy SSE): each keyword family's schema becomes the form it should, the hostile
//! one is bounded, and values round-trip through validation to the server.

use std::time::Duration;

use plugboard::config::{ServerConfig, TransportKind};
use plugboard::schema::{self, NodeKind, Validator};
use plugboard::session::{CallRequest, Confirmation, Session};
use serde_json::{Value, json};

use crate::support::fixture::{HttpFixture, fixture_bin};
use crate::support::sessions::{Script, open, runtime};

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
