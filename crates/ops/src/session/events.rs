//! What a session reports while it is open, as it happens: progress of a call, the server's
//! log messages, the questions it asks, notices (a sampling request declined, roots shared),
//! list changes and protocol trace entries. Every string was redacted before it got here.

use std::sync::Arc;

use serde::Serialize;

use super::questions::Question;
use super::trace::TraceEntry;

/// One thing that happened in a session.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SessionEvent {
    /// `notifications/progress` for a running call.
    Progress {
        call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A call the server runs as a task changed status (`working`, `input_required`,
    /// `completed`, `failed`, `cancelled`), with what the server said about it.
    TaskStatus {
        call_id: String,
        status: String,
        message: Option<String>,
    },
    /// `notifications/message`: a log message of the server.
    Log {
        level: String,
        logger: Option<String>,
        text: String,
    },
    /// The server asks the user something; the session's asker answers it.
    Question { question: Question },
    /// A question was answered, withdrawn or timed out.
    QuestionSettled { id: String, outcome: String },
    /// Something the user should know about a call or the session.
    Notice {
        call_id: Option<String>,
        text: String,
    },
    /// The server's `tools`, `resources` or `prompts` changed (the session fetched them again).
    ListChanged { list: String },
    /// A JSON-RPC message went out or came in.
    Trace { entry: TraceEntry },
    /// The connection ended.
    Closed { reason: String },
}

/// Where a session's events go.
pub type EventSink = Arc<dyn Fn(SessionEvent) + Send + Sync>;

/// A sink that drops everything.
pub fn no_events() -> EventSink {
    Arc::new(|_| {})
}
