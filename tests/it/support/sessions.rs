//! Try-it sessions for the tests: open one with a server config on a runtime of the test's
//! own, answer the server's questions from a script, and keep every event.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use plugboard::config::ServerConfig;
use plugboard::connect::Era;
use plugboard::resolve::resolve;
use plugboard::secrets::MemoryStore;
use plugboard::session::{
    self, Answer, Asker, ContentItem, Question, Session, SessionError, SessionEvent,
    SessionOptions, ToolStates,
};

/// Answers questions in order (declining once the script runs out), remembering each.
#[derive(Default)]
pub struct Script {
    answers: Mutex<VecDeque<Answer>>,
    pub asked: Mutex<Vec<Question>>,
}

impl Script {
    pub fn new(answers: Vec<Answer>) -> Arc<Script> {
        Arc::new(Script {
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(vec![]),
        })
    }

    pub fn then(&self, answer: Answer) {
        self.answers.lock().unwrap().push_back(answer);
    }

    pub fn questions(&self) -> Vec<Question> {
        self.asked.lock().unwrap().clone()
    }
}

impl Asker for Script {
    fn ask(&self, question: Question) -> BoxFuture<'static, Answer> {
        self.asked.lock().unwrap().push(question);
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Answer::Decline);
        Box::pin(async move { answer })
    }
}

/// Every event of a session.
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<SessionEvent>>>);

impl Events {
    pub fn all(&self) -> Vec<SessionEvent> {
        self.0.lock().unwrap().clone()
    }

    pub fn notices(&self) -> Vec<String> {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                SessionEvent::Notice { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    }

    pub fn progress(&self, call_id: &str) -> Vec<f64> {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                SessionEvent::Progress {
                    call_id: id,
                    progress,
                    ..
                } if id == call_id => Some(progress),
                _ => None,
            })
            .collect()
    }
}

/// A session with `server`, its questions answered by `script`, with a recorded event list
/// and a list of the URLs it opened.
pub struct Live {
    pub session: Session,
    pub events: Events,
    pub script: Arc<Script>,
    pub opened: Arc<Mutex<Vec<String>>>,
}

pub fn options(script: Arc<Script>) -> (SessionOptions, Events, Arc<Mutex<Vec<String>>>) {
    let events = Events::default();
    let sink = events.0.clone();
    let opened = Arc::new(Mutex::new(vec![]));
    let record = opened.clone();
    let options = SessionOptions {
        asker: script,
        events: Arc::new(move |e| sink.lock().unwrap().push(e)),
        opener: Some(Arc::new(move |url: &str| {
            record.lock().unwrap().push(url.to_string());
            Ok(())
        })),
        timeout: Some(Duration::from_secs(60)),
        trace: true,
    };
    (options, events, opened)
}

/// A session with `server`, its era found by the probe.
pub async fn open(
    name: &str,
    server: ServerConfig,
    script: Arc<Script>,
) -> Result<Live, SessionError> {
    open_known(name, server, script, None).await
}

/// A session with `server` whose era is remembered as `known` (as a last test would have it).
pub async fn open_known(
    name: &str,
    server: ServerConfig,
    script: Arc<Script>,
    known: Option<Era>,
) -> Result<Live, SessionError> {
    let (options, events, opened) = options(script.clone());
    let mut resolved = resolve(name, &server, &MemoryStore::new(), None).expect("resolves");
    resolved.set_known_era(known);
    let redactor = resolved.redactor().clone();
    let tools = ToolStates::of(&server, plugboard::config::Review::default());
    let session = session::open_resolved(&resolved, redactor, options, tools).await?;
    Ok(Live {
        session,
        events,
        script,
        opened,
    })
}

/// The text items of a result, joined.
pub fn text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ContentItem::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// A multi-thread runtime for one test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
