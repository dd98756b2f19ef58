//! The tool filter of `plugboard run`: the server's per-tool state enforced on the JSON-RPC
//! messages between the client and the server, whatever the transport and the protocol era
//! (`tools/list` and `tools/call` are JSON-RPC requests in both).
//!
//! - Client → server ([`ToolFilter::from_client`]): a `tools/call` of a disabled tool is not
//!   forwarded; the client gets a JSON-RPC error (`-32602`, as for an unknown tool) naming the
//!   tool and how to enable it. The ids of `tools/list`, `initialize` / `server/discover` and
//!   `subscriptions/listen` requests are noted.
//! - Server → client ([`ToolFilter::from_server`]): disabled tools are removed from every page
//!   of a `tools/list` result; the capabilities in an `initialize` / `server/discover` result
//!   and a `subscriptions/listen` acknowledgement say `tools.listChanged`, since Plugboard
//!   itself tells the client when the state changes.
//! - State changes ([`ToolFilter::reload`]): the new state applies to the next messages, and
//!   every client that can take it gets `notifications/tools/list_changed`: a legacy client
//!   once it is initialized, a modern one on each `subscriptions/listen` stream that asked for
//!   `toolsListChanged` (tagged with that stream's id).
//!
//! Messages the filter has no business with pass through untouched, byte for byte; a line is
//! parsed only when it could be one of the above.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::config::{Review, ToolPolicy};

/// What the filter enforces: the server's tool policy, the reviewed (approved) tool names, and
/// whether the server is enabled at all (a server disabled while a client is connected shows
/// no tools).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolRules {
    pub policy: ToolPolicy,
    pub review: Review,
    pub server_enabled: bool,
    /// Leave terminal, bidi and tag characters in tool results (`keep_control_characters`).
    pub keep_controls: bool,
}

impl ToolRules {
    pub fn allows(&self, tool: &str) -> bool {
        self.server_enabled && self.policy.state(tool, &self.review).enabled
    }
}

/// What to do with one message from the client.
#[derive(Debug, Default, PartialEq)]
pub struct FromClient<'a> {
    /// What to send on to the server (`None`: nothing).
    pub forward: Option<Cow<'a, [u8]>>,
    /// What to answer the client directly (a refused call).
    pub answer: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct Session {
    rules: ToolRules,
    /// Request ids (as JSON text) whose answers need rewriting, by kind.
    lists: HashSet<String>,
    handshakes: HashSet<String>,
    /// Open `subscriptions/listen` streams that asked for tool list changes: id text → id.
    listeners: HashMap<String, Value>,
    /// A legacy client sent `notifications/initialized`.
    initialized: bool,
    /// The server said it has tools (so a list change means something to the client).
    server_has_tools: bool,
    /// The client's name and version, as it introduced itself.
    client: Option<String>,
    /// Ids of `tools/call` requests whose results are cleaned ([`crate::traffic`]).
    calls: HashSet<String>,
}

/// The filter of one `plugboard run` session.
#[derive(Debug)]
pub struct ToolFilter {
    server: String,
    session: Mutex<Session>,
    /// The server's secrets: a call whose arguments hold one is not sent.
    secrets: Option<crate::redact::Redactor>,
}

const LISTEN_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The two members of a message the filter decides on; everything else is skipped unread.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
}

/// The key that matches a server's answer to the request it answers. JSON gives one number
/// many spellings (`2`, `2.0`, `2e0`): an integral number is keyed by its integer, so an answer
/// that spells its id another way is still recognised (and filtered).
fn id_key(id: &Value) -> String {
    if let Value::Number(n) = id
        && n.as_i64().is_none()
        && n.as_u64().is_none()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() < 9_007_199_254_740_992.0
    {
        return (f as i64).to_string();
    }
    id.to_string()
}

/// MCP request ids are strings or integers; anything else (`1.5`, `true`, `{}`) is refused
/// before it reaches the server.
fn valid_request_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The `-32602` answer to a call that was not sent to the server.
fn invalid_call(id: &Value, message: String, data: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32602, "message": message, "data": data},
    })
}

fn to_line(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

impl ToolFilter {
    pub fn new(server: &str, rules: ToolRules) -> ToolFilter {
        ToolFilter {
            server: server.to_string(),
            session: Mutex::new(Session {
                rules,
                ..Session::default()
            }),
            secrets: None,
        }
    }

    /// The filter, refusing calls whose arguments hold one of `secrets`' secrets.
    pub fn with_secrets(mut self, secrets: crate::redact::Redactor) -> ToolFilter {
        self.secrets = Some(secrets);
        self
    }

    /// The error a call whose arguments hold a secret gets.
    fn secret_refusal(&self, id: &Value, tool: &str) -> Value {
        invalid_call(
            id,
            format!(
                "the arguments of `{tool}` hold a secret of `{}` (a value from Plugboard's \
                 secret store), so the call was not sent: a model should never pass a \
                 credential in a tool's arguments",
                self.server
            ),
            json!({"server": self.server, "tool": tool}),
        )
    }

    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The rules in force.
    pub fn rules(&self) -> ToolRules {
        self.session().rules.clone()
    }

    /// The error a call of disabled tool `tool` gets.
    pub fn refusal(&self, id: &Value, tool: &str) -> Value {
        let enable = format!("plugboard tools {} --enable {tool}", self.server);
        invalid_call(
            id,
            format!(
                "tool `{tool}` of `{}` is disabled in Plugboard, so it was not called; enable it \
                 with `{enable}` (or its switch in the Plugboard app)",
                self.server
            ),
            json!({"server": self.server, "tool": tool, "enable": enable}),
        )
    }

    /// One message (a line without its newline) from the client.
    pub fn from_client<'a>(&self, line: &'a [u8]) -> FromClient<'a> {
        let unchanged = FromClient {
            forward: Some(Cow::Borrowed(line)),
            answer: None,
        };
        if !contains(line, b"\"method\"") {
            return unchanged;
        }
        let Ok(value) = serde_json::from_slice::<Value>(line) else {
            return unchanged;
        };
        let mut session = self.session();
        match value {
            Value::Array(batch) => {
                let mut forward = vec![];
                let mut answers = vec![];
                for message in batch {
                    match self.client_message(&mut session, &message) {
                        Some(answer) => answers.push(answer),
                        None => forward.push(message),
                    }
                }
                if answers.is_empty() {
                    return unchanged;
                }
                FromClient {
                    forward: (!forward.is_empty())
                        .then(|| Cow::Owned(to_line(&Value::Array(forward)))),
                    answer: Some(to_line(&Value::Array(answers))),
                }
            }
            message => match self.client_message(&mut session, &message) {
                Some(answer) => FromClient {
                    forward: None,
                    answer: Some(to_line(&answer)),
                },
                None => unchanged,
            },
        }
    }

    /// Note what `message` means for the session; `Some(answer)` when it is refused.
    fn client_message(&self, session: &mut Session, message: &Value) -> Option<Value> {
        let method = message.get("method").and_then(Value::as_str)?;
        let id = message.get("id");
        if let Some(id) = id.filter(|id| !valid_request_id(id)) {
            return Some(json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {
                    "code": -32600,
                    "message": format!(
                        "request id {id} is neither a string nor an integer, so `{method}` was \
                         not sent to the server"
                    ),
                },
            }));
        }
        let params = message.get("params");
        if session.client.is_none() {
            let info = params.and_then(|p| {
                p.get("clientInfo")
                    .or_else(|| p.pointer("/_meta/io.modelcontextprotocol~1clientInfo"))
            });
            if let Some(name) = info.and_then(|i| i.get("name")).and_then(Value::as_str) {
                let version = info.and_then(|i| i.get("version")).and_then(Value::as_str);
                session.client = Some(match version {
                    Some(v) => format!("{name} {v}"),
                    None => name.to_string(),
                });
            }
        }
        match (method, id) {
            ("tools/call", Some(id)) => {
                let tool = params?.get("name")?.as_str()?;
                if !session.rules.allows(tool) {
                    return Some(self.refusal(id, tool));
                }
                if let (Some(secrets), Some(arguments)) = (&self.secrets, params?.get("arguments"))
                    && secrets.holds_secret(&arguments.to_string())
                {
                    return Some(self.secret_refusal(id, tool));
                }
                if !session.rules.keep_controls {
                    session.calls.insert(id_key(id));
                }
            }
            ("tools/list", Some(id)) => {
                session.lists.insert(id_key(id));
            }
            ("initialize" | "server/discover", Some(id)) => {
                session.handshakes.insert(id_key(id));
            }
            ("subscriptions/listen", Some(id)) => {
                let wants = params
                    .and_then(|p| p.pointer("/notifications/toolsListChanged"))
                    .and_then(Value::as_bool)
                    == Some(true);
                if wants {
                    session.listeners.insert(id_key(id), id.clone());
                }
            }
            ("notifications/initialized", None) => session.initialized = true,
            ("notifications/cancelled", None) => {
                if let Some(request) = params.and_then(|p| p.get("requestId")) {
                    session.listeners.remove(&id_key(request));
                }
            }
            _ => {}
        }
        None
    }

    /// One message (a line without its newline) from the server, rewritten where needed.
    pub fn from_server<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let mut session = self.session();
        let waiting = !session.lists.is_empty()
            || !session.handshakes.is_empty()
            || !session.listeners.is_empty()
            || !session.calls.is_empty();
        if !waiting {
            return Cow::Borrowed(line);
        }
        // Most lines (tool results, logs, progress) are none of ours: find that out from the
        // id and method alone, skipping the rest, before building the whole message.
        if let Ok(head) = serde_json::from_slice::<Head>(line) {
            let ours = match head.method.as_deref() {
                Some(method) => {
                    method == "notifications/subscriptions/acknowledged"
                        || method == "notifications/cancelled"
                }
                None => head.id.as_ref().is_some_and(|id| {
                    let key = id_key(id);
                    session.lists.contains(&key)
                        || session.handshakes.contains(&key)
                        || session.listeners.contains_key(&key)
                        || session.calls.contains(&key)
                }),
            };
            if !ours {
                return Cow::Borrowed(line);
            }
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(line) else {
            return Cow::Borrowed(line);
        };
        let changed = match &mut value {
            Value::Array(batch) => {
                let mut any = false;
                for message in batch {
                    any |= Self::server_message(&mut session, message);
                }
                any
            }
            message => Self::server_message(&mut session, message),
        };
        if changed {
            Cow::Owned(to_line(&value))
        } else {
            Cow::Borrowed(line)
        }
    }

    /// Rewrite `message` in place where needed; whether it changed.
    fn server_message(session: &mut Session, message: &mut Value) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        if method == Some("notifications/cancelled") {
            // The server ended a stream: a listener on it is gone.
            if let Some(request) = message.pointer("/params/requestId") {
                session.listeners.remove(&id_key(request));
            }
            return false;
        }
        if method == Some("notifications/subscriptions/acknowledged") {
            let listening = message
                .pointer(&format!("/params/_meta/{}", LISTEN_ID.replace('/', "~1")))
                .is_some_and(|id| session.listeners.contains_key(&id_key(id)));
            return listening
                && Self::say_list_changed(message, "/params/notifications", "toolsListChanged");
        }
        let Some(id) = message
            .get("id")
            .filter(|_| message.get("method").is_none())
        else {
            return false;
        };
        let key = id_key(id);
        if session.listeners.remove(&key).is_some() {
            // The listen request was answered: its stream is over.
            return false;
        }
        if session.calls.remove(&key) {
            return message
                .get_mut("result")
                .is_some_and(|result| crate::traffic::strip_result(result) > 0);
        }
        if session.lists.remove(&key) {
            let Some(tools) = message
                .pointer_mut("/result/tools")
                .and_then(Value::as_array_mut)
            else {
                return false;
            };
            let before = tools.len();
            tools.retain(|tool| {
                tool.get("name")
                    .and_then(Value::as_str)
                    .is_none_or(|name| session.rules.allows(name))
            });
            return tools.len() != before;
        }
        if session.handshakes.remove(&key) {
            let has_tools = message
                .pointer("/result/capabilities/tools")
                .is_some_and(Value::is_object);
            session.server_has_tools |= has_tools;
            return has_tools
                && Self::say_list_changed(message, "/result/capabilities/tools", "listChanged");
        }
        false
    }

    /// Set `key: true` in the object at `pointer` (if it is an object); whether it changed.
    fn say_list_changed(message: &mut Value, pointer: &str, key: &str) -> bool {
        match message.pointer_mut(pointer).and_then(Value::as_object_mut) {
            Some(object) if object.get(key) != Some(&Value::Bool(true)) => {
                object.insert(key.into(), Value::Bool(true));
                true
            }
            _ => false,
        }
    }

    /// The client's name (as it introduced itself) and whether it is told of tool changes.
    pub fn client(&self) -> (Option<String>, bool) {
        let session = self.session();
        let told =
            (session.initialized && session.server_has_tools) || !session.listeners.is_empty();
        (session.client.clone(), told)
    }

    /// Put new rules in force; returns the notifications to send the client (one line each)
    /// when they change what it may see.
    pub fn reload(&self, rules: ToolRules) -> Vec<Vec<u8>> {
        let mut session = self.session();
        if session.rules == rules {
            return vec![];
        }
        session.rules = rules;
        let mut out = vec![];
        if session.initialized && session.server_has_tools {
            out.push(to_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            ));
        }
        for id in session.listeners.values() {
            out.push(to_line(&json!({
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {LISTEN_ID: id}},
            })));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(disabled: &[&str]) -> ToolRules {
        let mut policy = ToolPolicy::default();
        for d in disabled {
            policy.set(d, false);
        }
        ToolRules {
            policy,
            review: Review::default(),
            server_enabled: true,
            keep_controls: false,
        }
    }

    fn json_of(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn disabled_calls_are_answered_and_lists_filtered_page_by_page() {
        let filter = ToolFilter::new("ev", rules(&["get-env"]));
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get-env","arguments":{}}}"#;
        let verdict = filter.from_client(call);
        assert!(verdict.forward.is_none());
        let answer = json_of(&verdict.answer.unwrap());
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], -32602);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`get-env`")
                && message.contains("plugboard tools ev --enable get-env"),
            "{message}"
        );
        // Other calls and messages pass untouched.
        let echo = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo"}}"#;
        assert_eq!(filter.from_client(echo).forward.as_deref(), Some(&echo[..]));
        let response = br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"get-env"}]}}"#;
        assert_eq!(
            &*filter.from_server(response),
            &response[..],
            "not a list we asked for"
        );
        // Two pages of a listing, each filtered.
        for (id, page) in [
            (
                1,
                r#"[{"name":"echo"},{"name":"get-env"}],"nextCursor":"2""#,
            ),
            (2, r#"[{"name":"get-env"}]"#),
        ] {
            let list = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
            filter.from_client(list.as_bytes());
            let result = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{page}}}}}"#);
            let out = json_of(&filter.from_server(result.as_bytes()));
            let names: Vec<&str> = out["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            assert!(!names.contains(&"get-env"), "{out}");
            if id == 1 {
                assert_eq!(names, ["echo"]);
                assert_eq!(out["result"]["nextCursor"], "2");
            }
        }
    }

    #[test]
    fn batches_are_split_and_state_changes_are_announced() {
        let filter = ToolFilter::new("ev", rules(&[]));
        filter.from_client(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"claude-code","version":"2.1"}}}"#);
        let init = br#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}},"protocolVersion":"2025-11-25"}}"#;
        let out = json_of(&filter.from_server(init));
        assert_eq!(out["result"]["capabilities"]["tools"]["listChanged"], true);
        // Not initialized yet: nothing to announce.
        assert!(filter.reload(rules(&["a"])).is_empty());
        assert_eq!(filter.client(), (Some("claude-code 2.1".into()), false));
        filter.from_client(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(
            filter.client().1,
            "initialized, with tools: told of changes"
        );
        let notes = filter.reload(rules(&["a", "b"]));
        assert_eq!(
            json_of(&notes[0])["method"],
            "notifications/tools/list_changed"
        );
        assert!(
            filter.reload(rules(&["a", "b"])).is_empty(),
            "no change, no notice"
        );
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"c"}}]"#;
        let verdict = filter.from_client(batch);
        assert_eq!(json_of(&verdict.answer.unwrap())[0]["id"], 1);
        assert_eq!(json_of(&verdict.forward.unwrap())[0]["id"], 2);
    }

    #[test]
    fn modern_listeners_get_tagged_notices_and_a_disabled_server_shows_nothing() {
        let filter = ToolFilter::new("ev", rules(&[]));
        filter.from_client(br#"{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}"#);
        let ack = br#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l1"},"notifications":{}}}"#;
        let out = json_of(&filter.from_server(ack));
        assert_eq!(out["params"]["notifications"]["toolsListChanged"], true);
        let mut off = rules(&[]);
        off.server_enabled = false;
        assert!(!off.allows("echo"));
        let notes = filter.reload(off);
        assert_eq!(notes.len(), 1);
        assert_eq!(json_of(&notes[0])["params"]["_meta"][LISTEN_ID], "l1");
        // A tool result while the listener is open passes as it is.
        let result = br#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#;
        assert!(matches!(filter.from_server(result), Cow::Borrowed(_)));
        filter.from_client(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l1"}}"#,
        );
        assert!(filter.reload(rules(&["x"])).is_empty());
        // A stream the server ends is gone too.
        filter.from_client(br#"{"jsonrpc":"2.0","id":"l2","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}"#);
        assert_eq!(filter.reload(rules(&["y"])).len(), 1);
        filter.from_server(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l2"}}"#,
        );
        assert!(filter.reload(rules(&["z"])).is_empty());
    }
}
