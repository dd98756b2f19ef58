//! Try-it sessions against server-everything (npm), over stdio and streamable HTTP: tools by
//! result kind, structured content against its output schema, progress, cancellation and
//! timeouts, the server's questions (elicitation in form and URL mode, roots, sampling),
//! resources and templates with completion, prompts with completion, redaction, and the trace.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use plugboard::config::{ConfigValue, ServerConfig, TransportKind};
use plugboard::session::{
    Answer, CallOutcome, CallRequest, CompletionTarget, Confirmation, ContentItem, QuestionMode,
    RootView, Session, SessionError,
};
use serde_json::{Value, json};

use crate::support::peers::{Background, everything_command, free_port};
use crate::support::sessions::{Live, Script, open, runtime};

const SECRET: &str = "sk-live-EVERYTHING-5f1e2d3c4b";

fn stdio_server() -> ServerConfig {
    let (node, script) = everything_command();
    let mut server = ServerConfig::stdio(node, vec![script.display().to_string(), "stdio".into()]);
    server.env.insert(
        "EVERYTHING_API_KEY".into(),
        ConfigValue::Plain(SECRET.into()),
    );
    server
}

fn http_server() -> (Background, ServerConfig) {
    let (node, script) = everything_command();
    let port = free_port();
    let mut cmd = Command::new(node);
    cmd.arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let background = Background::start(cmd, port);
    let server = ServerConfig::remote(TransportKind::Shttp, background.url("/mcp"));
    (background, server)
}

fn request(tool: &str, arguments: Value) -> CallRequest {
    CallRequest {
        tool: tool.into(),
        arguments,
        confirmation: Confirmation::Destructive,
        timeout: Some(Duration::from_secs(60)),
        call_id: None,
    }
}

fn text(outcome: &CallOutcome) -> String {
    outcome
        .content
        .iter()
        .filter_map(|c| match c {
            ContentItem::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(session: &Session, tool: &str, arguments: Value) -> CallOutcome {
    session
        .call_tool(request(tool, arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The calls every transport must get right.
async fn tools_by_kind(live: &Live) {
    let s = &live.session;
    assert_eq!(s.info().era, "legacy");
    assert_eq!(
        s.info().server_name.as_deref(),
        Some("mcp-servers/everything")
    );

    let echo = call(s, "echo", json!({"message": "hello there"})).await;
    assert_eq!(text(&echo), "Echo: hello there");
    assert!(!echo.is_error);

    let sum = call(s, "get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(text(&sum), "The sum of 2 and 3 is 5.");

    let weather = call(s, "get-structured-content", json!({"location": "Chicago"})).await;
    let structured = weather.structured.as_ref().expect("structured content");
    assert_eq!(structured.check, "valid", "{structured:?}");
    assert_eq!(
        structured.value,
        Some(json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );

    let image = call(s, "get-tiny-image", json!({})).await;
    let media = image
        .content
        .iter()
        .find_map(|c| match c {
            ContentItem::Image { media } => Some(media),
            _ => None,
        })
        .expect("an image");
    assert_eq!(media.mime_type, "image/png");
    assert_eq!(media.detected.as_deref(), Some("image/png"));
    assert!(
        media.bytes > 1000.0 && media.data.is_some(),
        "{}",
        media.bytes
    );

    let links = call(s, "get-resource-links", json!({"count": 3})).await;
    let uris: Vec<&str> = links
        .content
        .iter()
        .filter_map(|c| match c {
            ContentItem::ResourceLink { uri, .. } => Some(uri.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(uris.len(), 3, "{:?}", links.content);
    assert!(
        uris.iter().all(|u| u.starts_with("demo://resource/")),
        "{uris:?}"
    );

    // An embedded resource, readable as it came.
    let reference = call(
        s,
        "get-resource-reference",
        json!({"resourceType": "Text", "resourceId": 2}),
    )
    .await;
    assert!(
        reference.content.iter().any(|c| matches!(c,
            ContentItem::Resource { resource } if resource.uri == "demo://resource/dynamic/text/2"
                && resource.text.as_deref().is_some_and(|t| t.contains("Resource 2")))),
        "{:?}",
        reference.content
    );
}

#[test]
fn tools_over_stdio_return_each_kind_of_result() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![]))
            .await
            .unwrap();
        tools_by_kind(&live).await;
        live.session.close().await;
    });
}

#[test]
fn tools_over_streamable_http_return_each_kind_of_result() {
    let (_server, config) = http_server();
    runtime().block_on(async {
        let live = open("everything", config, Script::new(vec![]))
            .await
            .unwrap();
        assert_eq!(live.session.info().transport, "shttp");
        tools_by_kind(&live).await;
        live.session.close().await;
    });
}

#[test]
fn a_secret_in_the_environment_is_redacted_everywhere() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![]))
            .await
            .unwrap();
        let env = call(&live.session, "get-env", json!({})).await;
        let shown = text(&env);
        assert!(shown.contains("EVERYTHING_API_KEY"), "{shown}");
        assert!(!shown.contains(SECRET), "the secret is in the result");
        let trace = serde_json::to_string(&live.session.trace()).unwrap();
        assert!(trace.contains("EVERYTHING_API_KEY") && !trace.contains(SECRET));
        let events = serde_json::to_string(&live.events.all()).unwrap();
        assert!(!events.contains(SECRET));
        live.session.close().await;
    });
}

#[test]
fn progress_arrives_as_it_happens_and_a_long_call_can_be_cancelled() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![]))
            .await
            .unwrap();
        let s = &live.session;
        let mut done = request(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
        );
        done.call_id = Some("quick".into());
        let outcome = s.call_tool(done).await.unwrap();
        assert!(text(&outcome).contains("completed"), "{}", text(&outcome));
        // The last notice comes right before the result and may be handled just after it.
        let waited = Instant::now();
        while live.events.progress("quick").len() < 4 && waited.elapsed() < Duration::from_secs(2) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(live.events.progress("quick"), [1.0, 2.0, 3.0, 4.0]);

        // 30 s of work, cancelled after its first progress.
        let mut long = request(
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
        );
        long.call_id = Some("long".into());
        let started = Instant::now();
        let cancel = async {
            while live.events.progress("long").is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(s.cancel("long"));
        };
        let (outcome, ()) = tokio::join!(s.call_tool(long), cancel);
        assert!(
            matches!(outcome, Err(SessionError::Cancelled)),
            "{outcome:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let trace = s.trace();
        let call_id = trace
            .iter()
            .rfind(|e| e.method.as_deref() == Some("tools/call") && e.kind == "request")
            .and_then(|e| e.id.clone())
            .unwrap();
        let cancelled = trace
            .iter()
            .find(|e| e.method.as_deref() == Some("notifications/cancelled"))
            .expect("notifications/cancelled was sent");
        let sent: Value = serde_json::from_str(&cancelled.json).unwrap();
        assert_eq!(sent["params"]["requestId"].to_string(), call_id);
        assert_eq!(cancelled.direction, "out");
        // The session still works after a cancel.
        assert_eq!(
            text(&call(s, "get-sum", json!({"a": 1, "b": 1})).await),
            "The sum of 1 and 1 is 2."
        );

        // A per-call timeout ends the request the same way.
        let mut slow = request(
            "trigger-long-running-operation",
            json!({"duration": 20, "steps": 2}),
        );
        slow.timeout = Some(Duration::from_secs(1));
        let outcome = s.call_tool(slow).await;
        assert!(
            matches!(outcome, Err(SessionError::TimedOut(_))),
            "{outcome:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let cancels = s
            .trace()
            .iter()
            .filter(|e| e.method.as_deref() == Some("notifications/cancelled"))
            .count();
        assert_eq!(cancels, 2);
        s.close().await;
    });
}

#[test]
fn elicitation_in_form_mode_accept_decline_and_a_bad_answer() {
    let answer = json!({"name": "Ada Lovelace", "check": true, "email": "ada@example.com", "integer": 7, "untitledMultipleSelectEnum": ["Piano"]});
    let script = Script::new(vec![
        Answer::Accept {
            content: Some(answer),
        },
        Answer::Decline,
        // Misses the required `name`: never sent; the question ends as cancelled.
        Answer::Accept {
            content: Some(json!({"integer": 500})),
        },
    ]);
    runtime().block_on(async {
        let live = open("everything", stdio_server(), script.clone())
            .await
            .unwrap();
        let s = &live.session;
        let accepted = call(s, "trigger-elicitation-request", json!({})).await;
        let shown = text(&accepted);
        assert!(shown.contains("- Name: Ada Lovelace"), "{shown}");
        assert!(shown.contains("- Favorite Integer: 7"), "{shown}");
        let questions = script.questions();
        let QuestionMode::Form { form, schema } = &questions[0].mode else {
            panic!("{:?}", questions[0]);
        };
        assert_eq!(schema["required"], json!(["name"]));
        assert!(form.root.property("untitledMultipleSelectEnum").is_some());
        assert!(questions[0].call_id.is_some());

        let declined = call(s, "trigger-elicitation-request", json!({})).await;
        assert!(text(&declined).contains("declined"), "{}", text(&declined));
        let bad = call(s, "trigger-elicitation-request", json!({})).await;
        assert!(text(&bad).contains("cancelled"), "{}", text(&bad));
        s.close().await;
    });
}

#[test]
fn url_elicitation_shows_the_host_and_opens_only_after_a_yes() {
    let script = Script::new(vec![Answer::Decline, Answer::Accept { content: None }]);
    runtime().block_on(async {
        let live = open("everything", stdio_server(), script.clone())
            .await
            .unwrap();
        let s = &live.session;
        let url = "https://auth.example.com/consent?state=abc";
        let declined = call(s, "trigger-url-elicitation", json!({"url": url})).await;
        assert!(
            live.opened.lock().unwrap().is_empty(),
            "opened without a yes"
        );
        assert!(!declined.is_error, "{declined:?}");
        let accepted = call(s, "trigger-url-elicitation", json!({"url": url})).await;
        assert_eq!(*live.opened.lock().unwrap(), [url]);
        assert!(!accepted.is_error, "{accepted:?}");
        match &script.questions()[0].mode {
            QuestionMode::Url { host, url: shown } => {
                assert_eq!(host, "auth.example.com");
                assert_eq!(shown, url);
            }
            other => panic!("{other:?}"),
        }
        // The error path (-32042): the URL is asked for, then the call retried once.
        script.then(Answer::Accept { content: None });
        let retried = call(
            s,
            "trigger-url-elicitation",
            json!({"url": url, "errorPath": true}),
        )
        .await;
        assert!(!retried.is_error, "{retried:?}");
        assert_eq!(live.opened.lock().unwrap().len(), 2);
        s.close().await;
    });
}

#[test]
fn sampling_is_declined_with_a_clear_error_and_roots_are_the_users_choice() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![]))
            .await
            .unwrap();
        let s = &live.session;
        let sampled = call(s, "trigger-sampling-request", json!({"prompt": "hi"})).await;
        assert!(sampled.is_error);
        assert!(
            text(&sampled).contains("Plugboard holds no language model"),
            "{}",
            text(&sampled)
        );
        assert!(
            live.events
                .notices()
                .iter()
                .any(|n| n.contains("declines sampling"))
        );

        let none = call(s, "get-roots-list", json!({})).await;
        assert!(
            text(&none).contains("0 root") || text(&none).to_lowercase().contains("no roots"),
            "{}",
            text(&none)
        );
        s.set_roots(vec![RootView {
            uri: "file:///home/user/project".into(),
            name: Some("project".into()),
        }])
        .await;
        // The server asks again after the change notice.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let chosen = call(s, "get-roots-list", json!({})).await;
        assert!(
            text(&chosen).contains("file:///home/user/project"),
            "{}",
            text(&chosen)
        );
        s.close().await;
    });
}

#[test]
fn resources_templates_and_prompts_with_completion() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![]))
            .await
            .unwrap();
        let s = &live.session;
        let offer = s.offer();
        assert!(offer.resources.len() >= 2, "{:?}", offer.resources);
        let text_template = offer
            .templates
            .iter()
            .find(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}")
            .expect("the text template");
        assert_eq!(text_template.variables, ["resourceId"]);

        let first = &offer.resources[0];
        let read = s.read_resource(&first.uri, None, None).await.unwrap();
        assert_eq!(read.contents[0].uri, first.uri);

        let completion = s
            .complete(
                CompletionTarget::Resource {
                    uri_template: text_template.uri_template.clone(),
                },
                "resourceId",
                "3",
                BTreeMap::new(),
            )
            .await
            .unwrap();
        assert_eq!(completion.values, ["3"]);
        let uri = plugboard::session::template::expand(
            &text_template.uri_template,
            &BTreeMap::from([("resourceId".to_string(), "3".to_string())]),
        );
        let read = s.read_resource(&uri, None, None).await.unwrap();
        assert!(
            read.contents[0]
                .text
                .as_deref()
                .unwrap()
                .starts_with("Resource 3:")
        );

        let prompt = offer
            .prompts
            .iter()
            .find(|p| p.name == "completable-prompt")
            .unwrap();
        assert_eq!(prompt.arguments.len(), 2);
        let departments = s
            .complete(
                CompletionTarget::Prompt {
                    name: prompt.name.clone(),
                },
                "department",
                "E",
                BTreeMap::new(),
            )
            .await
            .unwrap();
        assert_eq!(departments.values, ["Engineering"]);
        let names = s
            .complete(
                CompletionTarget::Prompt {
                    name: prompt.name.clone(),
                },
                "name",
                "",
                BTreeMap::from([("department".to_string(), "Engineering".to_string())]),
            )
            .await
            .unwrap();
        assert_eq!(names.values, ["Alice", "Bob", "Charlie"]);
        let rendered = s
            .get_prompt(
                "completable-prompt",
                BTreeMap::from([
                    ("department".to_string(), "Engineering".to_string()),
                    ("name".to_string(), "Alice".to_string()),
                ]),
                None,
                None,
            )
            .await
            .unwrap();
        assert_eq!(rendered.messages[0].role, "user");
        assert_eq!(
            rendered.messages[0].content,
            ContentItem::Text {
                text: "Please promote Alice to the head of the Engineering team.".into()
            }
        );
        s.close().await;
    });
}

#[test]
fn nothing_is_sent_for_a_bad_argument_an_unconfirmed_or_an_unknown_tool() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![]))
            .await
            .unwrap();
        let s = &live.session;
        let before = s.trace().len();
        let mut bad = request("get-sum", json!({"a": "two"}));
        match s.call_tool(bad.clone()).await {
            Err(SessionError::InvalidArguments { issues }) => {
                let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
                assert!(paths.contains(&"a") && paths.contains(&"b"), "{issues:?}");
            }
            other => panic!("{other:?}"),
        }
        bad.tool = "no-such-tool".into();
        assert!(matches!(
            s.call_tool(bad).await,
            Err(SessionError::UnknownTool { .. })
        ));
        // Not marked read-only: needs a confirmation.
        let mut unconfirmed = request("toggle-simulated-logging", json!({}));
        unconfirmed.confirmation = Confirmation::None;
        assert!(matches!(
            s.call_tool(unconfirmed).await,
            Err(SessionError::NeedsConfirmation { .. })
        ));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let sent_calls = s.trace()[before..]
            .iter()
            .filter(|e| e.method.as_deref() == Some("tools/call"))
            .count();
        assert_eq!(sent_calls, 0, "a refused call reached the server");
        // Read-only tools need none.
        let mut read_only = request("echo", json!({"message": "x"}));
        read_only.confirmation = Confirmation::None;
        assert!(s.call_tool(read_only).await.is_ok());
        s.close().await;
    });
}

#[test]
fn the_trace_has_every_message_both_ways_with_timings_and_sizes() {
    runtime().block_on(async {
        let live = open("everything", stdio_server(), Script::new(vec![])).await.unwrap();
        let s = &live.session;
        call(s, "get-sum", json!({"a": 1, "b": 2})).await;
        // server-everything asks for the roots 350 ms after the handshake.
        let asked = Instant::now();
        while !s.trace().iter().any(|e| e.method.as_deref() == Some("roots/list"))
            && asked.elapsed() < Duration::from_secs(5)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Its log message about them arrives as an event.
        while !live.events.all().iter().any(|e| matches!(e, plugboard::session::SessionEvent::Log { .. }))
            && asked.elapsed() < Duration::from_secs(5)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(live.events.all().iter().any(|e| matches!(e,
            plugboard::session::SessionEvent::Log { level, text, .. } if level == "info" && text.contains("Roots updated"))));
        let trace = s.trace();
        // The handshake opens the trace: `initialize`, or an era probe before it.
        assert_eq!((trace[0].kind.as_str(), trace[0].direction.as_str()), ("request", "out"));
        let first_initialize = trace
            .iter()
            .position(|e| e.kind == "request" && e.method.as_deref() == Some("initialize"))
            .expect("initialize in the trace");
        assert!(
            trace[..first_initialize]
                .iter()
                .all(|e| e.method.as_deref() == Some("server/discover")),
            "only the era probe comes before initialize: {:?}",
            &trace[..first_initialize]
        );
        let answer = trace
            .iter()
            .find(|e| e.kind == "response" && e.method.as_deref() == Some("initialize"))
            .unwrap();
        assert!(answer.latency_ms.unwrap() > 0.0 && answer.bytes > 100);
        assert!(trace.iter().any(|e| e.method.as_deref() == Some("notifications/initialized")));
        // The server's own request (roots/list) and Plugboard's answer to it.
        assert!(trace.iter().any(|e| e.direction == "in" && e.kind == "request"));
        assert!(trace.iter().any(|e| e.direction == "out" && e.kind == "response"));
        let result = trace
            .iter()
            .rfind(|e| e.method.as_deref() == Some("tools/call"))
            .unwrap();
        assert_eq!(result.kind, "response");
        assert!(trace.windows(2).all(|w| w[0].at_ms <= w[1].at_ms && w[0].seq < w[1].seq));
        s.close().await;
    });
}

/// A tool the server runs only as a task (`simulate-research-query`, task support required):
/// the session calls it again as one, follows its status, answers the question the task asks
/// (delivered through `tasks/result`) and returns the report; a task given up is cancelled at
/// the server.
#[test]
fn a_task_is_followed_to_its_result_with_its_question_answered_and_cancelled_when_given_up() {
    let script = Script::new(vec![Answer::Accept {
        content: Some(json!({"interpretation": "programming"})),
    }]);
    runtime().block_on(async {
        let live = open("everything", stdio_server(), script.clone())
            .await
            .unwrap();
        let s = &live.session;
        let report = call(
            s,
            "simulate-research-query",
            json!({"topic": "python", "ambiguous": true}),
        )
        .await;
        assert!(!report.is_error, "{}", text(&report));
        let shown = text(&report);
        assert!(
            shown.contains("# Research Report: python (programming)"),
            "{shown}"
        );
        assert!(shown.contains("`input_required`"), "{shown}");
        let statuses: Vec<(String, String)> = live
            .events
            .all()
            .into_iter()
            .filter_map(|e| match e {
                plugboard::session::SessionEvent::TaskStatus {
                    status, message, ..
                } => Some((status, message.unwrap_or_default())),
                _ => None,
            })
            .collect();
        assert_eq!(
            statuses.first(),
            Some(&("working".to_owned(), "Gathering sources...".to_owned())),
            "{statuses:?}"
        );
        assert!(
            statuses.iter().any(|(s, _)| s == "input_required"),
            "{statuses:?}"
        );
        assert_eq!(script.questions().len(), 1);

        // Given up: the call ends as cancelled and the server is told to stop the task.
        let mut running = Box::pin(s.call_tool(CallRequest {
            call_id: Some("given-up".into()),
            ..request("simulate-research-query", json!({"topic": "rust"}))
        }));
        let waited = Instant::now();
        let cancelled = loop {
            tokio::select! {
                outcome = &mut running => break outcome,
                _ = tokio::time::sleep(Duration::from_millis(100)) => {
                    let started = live.events.all().iter().any(|e| matches!(
                        e,
                        plugboard::session::SessionEvent::TaskStatus { call_id, .. }
                            if call_id == "given-up"
                    ));
                    if started {
                        s.cancel("given-up");
                    }
                    assert!(waited.elapsed() < Duration::from_secs(20));
                }
            }
        };
        assert!(
            matches!(cancelled, Err(SessionError::Cancelled)),
            "{cancelled:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        let trace = s.trace();
        assert!(
            trace
                .iter()
                .any(|t| t.direction == "out" && t.method.as_deref() == Some("tasks/cancel")),
            "no tasks/cancel in the trace"
        );
        s.close().await;
    });
}
