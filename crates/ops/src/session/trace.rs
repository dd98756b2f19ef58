//! The protocol trace of a session: every JSON-RPC message both ways (requests, responses,
//! errors and notifications), with when it went (from the session's start), its size, and for
//! a response the time since its request. Kept redacted, bounded (the last
//! [`MAX_ENTRIES`] messages; the text of one at most [`MAX_TEXT`] bytes), and reported to the
//! session's events as it happens.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde::Serialize;
use serde_json::Value;

use super::events::{EventSink, SessionEvent};
use crate::connect::MessageTap;
use crate::redact::Redactor;

/// Messages kept (older ones are dropped first).
pub const MAX_ENTRIES: usize = 2_000;
/// Bytes of one message's text kept (an image result is cut, its size still told).
pub const MAX_TEXT: usize = 64 * 1024;

/// One message of the trace.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct TraceEntry {
    pub seq: u32,
    /// Milliseconds since the session started.
    pub at_ms: f64,
    /// `out` (Plugboard → server) or `in`.
    pub direction: String,
    /// `request`, `response`, `error` or `notification`.
    pub kind: String,
    /// The method (for a response: its request's).
    pub method: Option<String>,
    pub id: Option<String>,
    /// Size of the JSON-RPC message in bytes.
    pub bytes: u32,
    /// For a response or error: milliseconds since its request.
    pub latency_ms: Option<f64>,
    /// The message, redacted (cut at [`MAX_TEXT`] bytes).
    pub json: String,
    pub truncated: bool,
}

/// The trace of one session.
pub struct Trace {
    started: Instant,
    redactor: Redactor,
    events: EventSink,
    state: Mutex<TraceState>,
}

#[derive(Default)]
struct TraceState {
    entries: VecDeque<TraceEntry>,
    next: u32,
    /// Requests waiting for their response, by direction and id: (method, when).
    pending: HashMap<(bool, String), (Option<String>, f64)>,
}

impl Trace {
    pub fn new(redactor: Redactor, events: EventSink) -> Trace {
        Trace {
            started: Instant::now(),
            redactor,
            events,
            state: Mutex::new(TraceState::default()),
        }
    }

    /// Every kept entry, oldest first.
    pub fn entries(&self) -> Vec<TraceEntry> {
        self.lock().entries.iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TraceState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, outgoing: bool, message: Value) {
        let at_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        let text = serde_json::to_string(&message).unwrap_or_default();
        let bytes = text.len().min(u32::MAX as usize) as u32;
        let id = message.get("id").map(|id| match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let kind = if method.is_some() && id.is_some() {
            "request"
        } else if method.is_some() {
            "notification"
        } else if message.get("error").is_some() {
            "error"
        } else {
            "response"
        };
        // Redacted whole, then cut: a cut first could leave the start of a secret behind.
        let redacted = self.redactor.redact(&text);
        let (cut, truncated) = cut_at(&redacted, MAX_TEXT);
        let json = cut.to_string();
        let entry = {
            let mut state = self.lock();
            let (method, latency_ms) = match (kind, &id) {
                ("request", Some(id)) => {
                    state
                        .pending
                        .insert((outgoing, id.clone()), (method.clone(), at_ms));
                    (method, None)
                }
                ("response" | "error", Some(id)) => {
                    match state.pending.remove(&(!outgoing, id.clone())) {
                        Some((method, sent)) => (method, Some(at_ms - sent)),
                        None => (None, None),
                    }
                }
                _ => (method, None),
            };
            let entry = TraceEntry {
                seq: state.next,
                at_ms,
                direction: if outgoing { "out" } else { "in" }.to_string(),
                kind: kind.to_string(),
                method,
                id,
                bytes,
                latency_ms,
                json,
                truncated,
            };
            state.next += 1;
            if state.entries.len() == MAX_ENTRIES {
                state.entries.pop_front();
            }
            state.entries.push_back(entry.clone());
            entry
        };
        (self.events)(SessionEvent::Trace { entry });
    }
}

impl MessageTap for Trace {
    fn sent(&self, message: &ClientJsonRpcMessage) {
        self.record(true, serde_json::to_value(message).unwrap_or(Value::Null));
    }

    fn received(&self, message: &ServerJsonRpcMessage) {
        self.record(false, serde_json::to_value(message).unwrap_or(Value::Null));
    }
}

/// `text` cut at `max` bytes (on a character boundary), and whether it was cut.
fn cut_at(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn requests_and_responses_are_paired_redacted_and_bounded() {
        let seen = Arc::new(Mutex::new(0usize));
        let counter = seen.clone();
        let trace = Trace::new(
            Redactor::new(["tok-secret-123456"]),
            Arc::new(move |_| *counter.lock().unwrap() += 1),
        );
        trace.record(
            true,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"a": "tok-secret-123456"}}),
        );
        trace.record(
            false,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress"}),
        );
        trace.record(
            false,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"x": "y".repeat(MAX_TEXT)}}),
        );
        // A request of the server, answered by Plugboard.
        trace.record(
            false,
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"}),
        );
        trace.record(
            true,
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -1, "message": "no"}}),
        );
        let entries = trace.entries();
        let kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["request", "notification", "response", "request", "error"]
        );
        assert!(!entries[0].json.contains("tok-secret-123456"));
        assert_eq!(entries[2].method.as_deref(), Some("tools/call"));
        assert!(entries[2].latency_ms.is_some() && entries[2].truncated);
        assert!(entries[2].bytes as usize > MAX_TEXT && entries[2].json.len() <= MAX_TEXT + 64);
        assert_eq!(entries[4].method.as_deref(), Some("roots/list"));
        assert_eq!(*seen.lock().unwrap(), 5);
        for _ in 0..MAX_ENTRIES {
            trace.record(true, serde_json::json!({"jsonrpc": "2.0", "method": "x"}));
        }
        let entries = trace.entries();
        assert_eq!(entries.len(), MAX_ENTRIES);
        assert_eq!(entries[0].seq, 5);
    }
}
