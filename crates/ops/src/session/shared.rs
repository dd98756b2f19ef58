//! What the parts of one session share: its redactor and event sink, the server's questions,
//! the trace, the lists the server offers, and which calls are running (so that progress and
//! legacy-era questions find their call).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use super::events::{EventSink, SessionEvent};
use super::questions::Questions;
use super::trace::Trace;
use crate::redact::Redactor;

/// The tools, resources, resource templates and prompts the server lists (as it sent them).
#[derive(Clone, Debug, Default)]
pub struct Lists {
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    pub templates: Vec<Value>,
    pub prompts: Vec<Value>,
}

impl Lists {
    /// The tool named `name`, as the server listed it.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }
}

/// Ended calls whose late progress notices are still attributed.
const ENDED_KEPT: usize = 16;

pub(super) struct Shared {
    redactor: Redactor,
    events: EventSink,
    pub(super) questions: Questions,
    pub(super) trace: Arc<Trace>,
    pub(super) lists: RwLock<Lists>,
    /// Running calls in the order they started, with their progress tokens; then the last few
    /// that ended (a progress notice sent just before a result may be handled after it).
    running: Mutex<Vec<(String, Option<String>)>>,
    ended: Mutex<std::collections::VecDeque<(String, Option<String>)>>,
    /// The user closed the session (so the server's going away is no news).
    closing: AtomicBool,
    /// Counts `list_changed` notices per list, so that a burst of them is fetched once.
    pub(super) list_notices: Mutex<std::collections::HashMap<&'static str, u64>>,
}

impl Shared {
    pub(super) fn new(redactor: Redactor, events: EventSink, questions: Questions) -> Shared {
        let trace = Arc::new(Trace::new(redactor.clone(), events.clone()));
        Shared {
            redactor,
            events,
            questions,
            trace,
            lists: RwLock::new(Lists::default()),
            running: Mutex::new(vec![]),
            ended: Mutex::new(Default::default()),
            closing: AtomicBool::new(false),
            list_notices: Mutex::new(Default::default()),
        }
    }

    pub(super) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Report `event`, its free text redacted.
    pub(super) fn emit(&self, mut event: SessionEvent) {
        match &mut event {
            SessionEvent::Progress {
                message: Some(text),
                ..
            }
            | SessionEvent::Notice { text, .. }
            | SessionEvent::Closed { reason: text } => *text = self.redactor.redact(text),
            SessionEvent::Log { text, logger, .. } => {
                *text = self.redactor.redact(text);
                if let Some(logger) = logger {
                    *logger = self.redactor.redact(logger);
                }
            }
            _ => {}
        }
        (self.events)(event)
    }

    pub(super) fn set_closing(&self) {
        self.closing.store(true, Ordering::Relaxed);
    }

    pub(super) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }

    pub(super) fn lists(&self) -> Lists {
        self.with_lists(Lists::clone)
    }

    /// `look` at the lists without copying them (for what one call needs of one tool).
    pub(super) fn with_lists<R>(&self, look: impl FnOnce(&Lists) -> R) -> R {
        look(&self.lists.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn running(&self) -> std::sync::MutexGuard<'_, Vec<(String, Option<String>)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn started(&self, call_id: &str) {
        self.running().push((call_id.to_string(), None));
    }

    /// The progress token of `call_id`'s current request.
    pub(super) fn set_progress_token(&self, call_id: &str, token: String) {
        if let Some(entry) = self.running().iter_mut().find(|(id, _)| id == call_id) {
            entry.1 = Some(token);
        }
    }

    pub(super) fn ended(&self, call_id: &str) {
        let mut running = self.running();
        let Some(at) = running.iter().position(|(id, _)| id == call_id) else {
            return;
        };
        let call = running.remove(at);
        let mut ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        if ended.len() == ENDED_KEPT {
            ended.pop_front();
        }
        ended.push_back(call);
    }

    /// The call a progress token belongs to (running, or among the last ended).
    pub(super) fn call_of_token(&self, token: &str) -> Option<String> {
        let of = |call: &(String, Option<String>)| {
            (call.1.as_deref() == Some(token)).then(|| call.0.clone())
        };
        let running = self.running().iter().find_map(of);
        running.or_else(|| {
            self.ended
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .find_map(of)
        })
    }

    /// The call a question sent on its own (legacy era) most likely belongs to: the latest
    /// one running.
    pub(super) fn current_call(&self) -> Option<String> {
        self.running().last().map(|(id, _)| id.clone())
    }
}
