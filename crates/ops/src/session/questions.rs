//! The server's questions during a session, in both protocol eras: elicitation (a form
//! rendered by the schema engine, or a URL the user may choose to open), roots (the folders
//! the user chose to share; none unless they chose), and sampling (declined: Plugboard holds
//! no model). Legacy servers send these as requests of their own (`elicitation/create`,
//! `roots/list`, `sampling/createMessage`); modern ones return `input_required` with
//! `inputRequests`, answered by retrying the call with `inputResponses` ([`Questions::fulfil`]).
//!
//! Who answers a form or URL question is the session's [`Asker`]: the app shows a dialog, the
//! CLI prompts on a terminal (and declines without one). Answers are checked against the
//! requested schema before anything goes back to the server.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::events::SessionEvent;
use super::shared::Shared;
use crate::schema::{self, FieldIssue, Form, Validator};

/// JSON-RPC error code a client uses when the user (here: Plugboard) refuses a request.
pub const USER_REJECTED: i32 = -1;

/// What Plugboard says when a server asks for sampling.
pub const SAMPLING_DECLINED: &str = "Plugboard holds no language model, so it declines sampling \
     requests (sampling/createMessage); the server asked for a model completion";

/// A question of the server for the user.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct Question {
    pub id: String,
    /// The call it came with, when that is known.
    pub call_id: Option<String>,
    pub message: String,
    pub mode: QuestionMode,
}

/// What the server wants.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum QuestionMode {
    /// Fill in a form (the requested schema, and its form).
    Form { schema: Value, form: Form },
    /// Open a URL (shown with its host) to do something outside Plugboard.
    Url { url: String, host: String },
}

/// The user's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Answer {
    /// Form: the filled-in values. URL: agreed to open it (no content).
    Accept {
        content: Option<Value>,
    },
    Decline,
    Cancel,
}

impl Answer {
    fn action(&self) -> &'static str {
        match self {
            Answer::Accept { .. } => "accept",
            Answer::Decline => "decline",
            Answer::Cancel => "cancel",
        }
    }
}

/// How the user answers the server's questions (the app's dialogs, a terminal prompt).
pub trait Asker: Send + Sync + 'static {
    /// Ask `question`; the future ends with the answer. It is dropped, unanswered, when the
    /// call the question belongs to ends first.
    fn ask(&self, question: Question) -> BoxFuture<'static, Answer>;

    /// Call `call_id` ended: its questions still open (asked by a legacy server on their
    /// own) are moot.
    fn call_ended(&self, _call_id: &str) {}

    /// The roots to give a server that asks for them, when the asker has roots of its own to
    /// give (a gateway asks its client), or why none can be given now (the server is answered
    /// an error, and may ask again later); `None`: the session's own, the folders the user
    /// chose.
    fn roots(&self) -> Option<BoxFuture<'static, Result<Vec<Value>, String>>> {
        None
    }

    /// Pass a server's `sampling/createMessage` (its `params`, redacted) on, when the asker
    /// has someone to pass it to (a gateway, its client): the `CreateMessageResult`, or why
    /// not. `None`: it is declined (Plugboard holds no model).
    fn sample(&self, _params: Value) -> Option<BoxFuture<'static, Result<Value, String>>> {
        None
    }
}

/// Declines every question (a session without anyone to ask).
pub struct DeclineAll;

impl Asker for DeclineAll {
    fn ask(&self, _question: Question) -> BoxFuture<'static, Answer> {
        Box::pin(async { Answer::Decline })
    }
}

/// Opens an accepted URL in the user's browser.
pub type UrlOpener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// A folder (or other root) the user shares with the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RootView {
    /// A `file://` URI.
    pub uri: String,
    pub name: Option<String>,
}

impl Question {
    /// `answer`, if it is one the server may get: accepted form content must match the
    /// requested schema (then the problems come back, field by field).
    pub fn check(&self, answer: Answer) -> Result<Answer, Vec<FieldIssue>> {
        match (&self.mode, answer) {
            (QuestionMode::Form { schema, .. }, Answer::Accept { content }) => {
                let content = content.unwrap_or_else(|| Value::Object(Map::new()));
                let issues = Validator::new(schema).issues(&content);
                if issues.is_empty() {
                    Ok(Answer::Accept {
                        content: Some(content),
                    })
                } else {
                    Err(issues)
                }
            }
            (QuestionMode::Url { .. }, Answer::Accept { .. }) => {
                Ok(Answer::Accept { content: None })
            }
            (_, other) => Ok(other),
        }
    }
}

/// The session's side of the questions: asks, checks, opens, and answers the server.
pub(super) struct Questions {
    next: AtomicU64,
    asker: Arc<dyn Asker>,
    opener: Option<UrlOpener>,
    roots: RwLock<Vec<RootView>>,
}

impl Questions {
    pub(super) fn new(asker: Arc<dyn Asker>, opener: Option<UrlOpener>) -> Questions {
        Questions {
            next: AtomicU64::new(1),
            asker,
            opener,
            roots: RwLock::new(vec![]),
        }
    }

    pub(super) fn call_ended(&self, call_id: &str) {
        self.asker.call_ended(call_id);
    }

    pub(super) fn roots(&self) -> Vec<RootView> {
        self.roots.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(super) fn set_roots(&self, roots: Vec<RootView>) {
        *self.roots.write().unwrap_or_else(|p| p.into_inner()) = roots;
    }

    /// The answer to `roots/list`: the asker's roots when it has its own (or why it has none
    /// to give now), else the roots the user chose.
    pub(super) async fn list_roots(
        &self,
        shared: &Shared,
        call_id: Option<String>,
    ) -> Result<Value, String> {
        if let Some(asked) = self.asker.roots() {
            return asked.await.map(|roots| json!({"roots": roots}));
        }
        let roots = self.roots();
        let text = match roots.len() {
            0 => "the server asked which folders it may use; none are shared (choose some under Roots)".to_string(),
            n => format!("the server asked which folders it may use; {n} shared"),
        };
        shared.emit(SessionEvent::Notice { call_id, text });
        Ok(json!({"roots": roots}))
    }

    /// The answer to `sampling/createMessage`: the asker's client's, when it has one to pass it
    /// to (the request's text redacted); else a refusal, said to the user too.
    pub(super) async fn sample(
        &self,
        shared: &Shared,
        params: &Value,
        call_id: Option<String>,
    ) -> Result<Value, String> {
        let mut params = params.clone();
        shared.redactor().redact_json(&mut params);
        match self.asker.sample(params) {
            Some(passed) => passed.await,
            None => Err(self.decline_sampling(shared, call_id)),
        }
    }

    /// A refusal of `sampling/createMessage`, said to the user too.
    fn decline_sampling(&self, shared: &Shared, call_id: Option<String>) -> String {
        shared.emit(SessionEvent::Notice {
            call_id,
            text: format!("{SAMPLING_DECLINED}; it was declined"),
        });
        SAMPLING_DECLINED.to_string()
    }

    /// `elicitation/create` (its `params`): ask the user and return the `ElicitResult`.
    pub(super) async fn elicit(
        &self,
        shared: &Shared,
        params: &Value,
        call_id: Option<String>,
    ) -> Value {
        let id = format!("q-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let message = shared.redactor().redact(
            params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("The server asks for input."),
        );
        let url = match params.get("mode").and_then(Value::as_str) {
            Some("url") => Some(params.get("url").and_then(Value::as_str).unwrap_or("")),
            _ => None,
        };
        let mode = match url {
            Some(url) => match web_host(url) {
                Some(host) => QuestionMode::Url {
                    url: shared.redactor().redact(url),
                    host,
                },
                None => {
                    shared.emit(SessionEvent::Notice {
                        call_id,
                        text: format!(
                            "the server asked to open `{}`, which is not a web address; declined",
                            shared.redactor().redact(url)
                        ),
                    });
                    return elicit_result(&Answer::Decline);
                }
            },
            None => {
                let mut schema = params
                    .get("requestedSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"}));
                shared.redactor().redact_json(&mut schema);
                let form = schema::compile(&schema);
                QuestionMode::Form { schema, form }
            }
        };
        let question = Question {
            id: id.clone(),
            call_id,
            message,
            mode,
        };
        shared.emit(SessionEvent::Question {
            question: question.clone(),
        });
        let asked = self.asker.ask(question.clone());
        // If the call ends first, the question is withdrawn.
        let guard = Settle {
            shared,
            id: &id,
            outcome: Some("withdrawn"),
        };
        let answer = asked.await;
        let answer = question.check(answer).unwrap_or(Answer::Cancel);
        let answer = match (&answer, url) {
            (Answer::Accept { .. }, Some(url)) => self.open(shared, url, &question),
            _ => answer,
        };
        guard.settled(answer.action());
        elicit_result(&answer)
    }

    /// Open an accepted URL (the original, unredacted one); a failure to open turns the
    /// answer into a cancel, said to the user.
    fn open(&self, shared: &Shared, url: &str, question: &Question) -> Answer {
        let Some(opener) = &self.opener else {
            shared.emit(SessionEvent::Notice {
                call_id: question.call_id.clone(),
                text: format!(
                    "open this address in your browser: {}",
                    shared.redactor().redact(url)
                ),
            });
            return Answer::Accept { content: None };
        };
        match opener(url) {
            Ok(()) => Answer::Accept { content: None },
            Err(why) => {
                shared.emit(SessionEvent::Notice {
                    call_id: question.call_id.clone(),
                    text: shared
                        .redactor()
                        .redact(&format!("the address could not be opened: {why}")),
                });
                Answer::Cancel
            }
        }
    }

    /// A modern `input_required` result's `inputRequests`: each answered as its legacy
    /// request would be. Sampling cannot be answered, so it fails the call.
    pub(super) async fn fulfil(
        &self,
        shared: &Shared,
        requests: &Map<String, Value>,
        call_id: &str,
    ) -> Result<Map<String, Value>, String> {
        let mut responses = Map::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let response = match method {
                "elicitation/create" => {
                    self.elicit(shared, &params, Some(call_id.to_string()))
                        .await
                }
                "roots/list" => self.list_roots(shared, Some(call_id.to_string())).await?,
                "sampling/createMessage" => {
                    self.sample(shared, &params, Some(call_id.to_string()))
                        .await?
                }
                other => {
                    return Err(format!(
                        "the server asked for `{other}` before it can answer, which Plugboard \
                         does not know"
                    ));
                }
            };
            responses.insert(key.clone(), response);
        }
        Ok(responses)
    }
}

/// Reports a question's end when dropped (withdrawn, unless it was answered).
struct Settle<'a> {
    shared: &'a Shared,
    id: &'a str,
    outcome: Option<&'static str>,
}

impl Settle<'_> {
    fn settled(mut self, outcome: &'static str) {
        self.outcome = Some(outcome);
    }
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        if let Some(outcome) = self.outcome {
            self.shared.emit(SessionEvent::QuestionSettled {
                id: self.id.to_string(),
                outcome: outcome.to_string(),
            });
        }
    }
}

fn elicit_result(answer: &Answer) -> Value {
    match answer {
        Answer::Accept {
            content: Some(content),
        } => json!({"action": "accept", "content": content}),
        Answer::Accept { content: None } => json!({"action": "accept"}),
        Answer::Decline => json!({"action": "decline"}),
        Answer::Cancel => json!({"action": "cancel"}),
    }
}

/// The host of an `http(s)` URL (in ASCII, so look-alike letters show as `xn--…`).
pub fn web_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return None;
    }
    let host = parsed.host_str()?.to_string();
    Some(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::redact::Redactor;

    const SECRET: &str = "s3cret-value-for-the-test";

    /// Passes every sampling request on, keeping what it was given.
    struct Passing(Arc<Mutex<Option<Value>>>);

    impl Asker for Passing {
        fn ask(&self, _question: Question) -> BoxFuture<'static, Answer> {
            Box::pin(async { Answer::Decline })
        }

        fn sample(&self, params: Value) -> Option<BoxFuture<'static, Result<Value, String>>> {
            *self.0.lock().unwrap() = Some(params);
            Some(Box::pin(async { Ok(json!({"role": "assistant"})) }))
        }
    }

    #[tokio::test]
    async fn what_a_server_sends_out_has_its_secrets_redacted() {
        let given = Arc::new(Mutex::new(None));
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let events = Arc::clone(&events);
            Arc::new(move |event: SessionEvent| events.lock().unwrap().push(event))
        };
        let questions = Questions::new(Arc::new(Passing(Arc::clone(&given))), None);
        let shared = Shared::new(Redactor::new([SECRET]), sink, questions);

        let request = json!({"messages": [{"role": "user",
            "content": {"type": "text", "text": format!("use {SECRET} please")}}]});
        let answer = shared.questions.sample(&shared, &request, None).await;
        assert_eq!(answer, Ok(json!({"role": "assistant"})));
        let passed = given.lock().unwrap().clone().unwrap().to_string();
        assert!(!passed.contains(SECRET), "{passed}");
        assert!(passed.contains("please"), "{passed}");

        shared.emit(SessionEvent::Log {
            level: "info".into(),
            logger: Some(format!("logger {SECRET}")),
            text: format!("text {SECRET}"),
        });
        let said = format!("{:?}", events.lock().unwrap());
        assert!(!said.contains(SECRET), "{said}");
        assert!(said.contains("logger") && said.contains("text"), "{said}");
    }
}
