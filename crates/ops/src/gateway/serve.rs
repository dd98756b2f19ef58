//! `plugboard serve` on stdio: one MCP server for a client, in front of a profile's servers.
//! The client may speak either era: a legacy client begins with `initialize` (answered with
//! the merged capabilities and instructions), a modern one sends `server/discover` or requests
//! carrying `_meta` (answered with `resultType` and the lists' caching hints; list changes
//! go out on the streams it opens with `subscriptions/listen`). Requests run
//! concurrently; each answer is written as one line when it is ready, a server's progress on a
//! call reaches the client under the client's own `progressToken`, and a server's question
//! during a call goes to the client as an elicitation named as that server's, as do its
//! requests for the client's roots and model (to a modern client inside the call's answer, the
//! call parked at its server until the client calls again with the answer:
//! `Connection::call_for_modern`). The gateway's own
//! question before a call (`ask`) goes to a legacy client as an elicitation request on the same
//! stream, and to a modern one inside the call's answer (`input_required`), the call going on
//! when it comes again with the answer (`Connection::asker`). When
//! the client's input ends, every server is closed and the gateway exits: no process is left.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::hub::{ASK_TIMEOUT, AskUser, Asked, Caller, ForClient, Hub, ListGenerations, ServerLog};
use super::server_logs::{LOG_LEVELS, LOGS_PER_SECOND, LogLimit, level_index, log_rank};
use super::user_turns::{QUESTIONS_PER_SERVER, Turn, UserTurns};
use crate::connect::era::{
    self, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO,
};
use crate::session::{Answer, Question, QuestionMode};

/// The `_meta` key that ties a notification to the `subscriptions/listen` stream it belongs to.
pub(crate) const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The key of the gateway's own question in a modern client's `inputRequests` and
/// `inputResponses` (may this call run?).
const PERMISSION_KEY: &str = "plugboard-permission";
/// Questions to modern clients awaiting their answer, at most.
const PENDING_ASKS: usize = 64;

/// How long the first `tools/list` waits for servers still starting.
pub const FIRST_LIST_WAIT: Duration = Duration::from_secs(30);

/// The lists a modern client's `subscriptions/listen` stream asked to hear about.
#[derive(Clone, Copy, Debug)]
struct Wanted {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Wanted {
    fn wants(self, list: &str) -> bool {
        match list {
            "tools" => self.tools,
            "prompts" => self.prompts,
            _ => self.resources,
        }
    }
}

/// What the client said about itself.
#[derive(Default)]
struct ClientSide {
    /// `None` until the first message says which era.
    modern: Option<bool>,
    capabilities: Value,
    /// The name it gave, once it has.
    name: Option<String>,
    /// The least severe log level it wants (`logging/setLevel`, as an index of [`LOG_LEVELS`]);
    /// every level until it says.
    log_level: usize,
}

/// How long a client has to say its roots.
const ROOTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// One client's side of the gateway: its era and capabilities, the requests in flight and the
/// questions put to it. Every message for the client goes to `out`, in order.
pub(crate) struct Connection {
    hub: Rc<Hub>,
    out: mpsc::UnboundedSender<Value>,
    /// Makes this client's call ids unique among the gateway's clients (HTTP serves several).
    tag: String,
    client: RefCell<ClientSide>,
    /// Our requests to the client awaiting its answer, by id.
    pending: RefCell<HashMap<String, oneshot::Sender<Value>>>,
    next_id: RefCell<u64>,
    /// Calls in flight: the client's request id → (server, call id), for cancellation.
    calls: RefCell<HashMap<String, (String, String)>>,
    /// Calls in flight whose client asked for progress: call id → the client's token.
    progress_tokens: RefCell<HashMap<String, Value>>,
    /// A modern client's open `subscriptions/listen` requests that asked for list changes, by
    /// their id: the id, and the lists each asked about.
    subscriptions: RefCell<HashMap<String, (Value, Wanted)>>,
    /// The lists' changes this client has been told of.
    told: Cell<ListGenerations>,
    /// What this client's requests leave for its next ones.
    across: Rc<AcrossRequests>,
    /// Serves a single HTTP request of a modern client (which says who it is in each): it
    /// hears a server's log messages only while calling that server.
    one_request: bool,
}

/// What a client's requests leave for its next ones: a connection's own, or over HTTP shared by
/// every request of the modern clients (each request a connection of its own, since each
/// says who sent it; what is left is found by its random `requestState`).
#[derive(Default)]
pub(crate) struct AcrossRequests {
    /// Whether a list of the tools was answered (the first waits for servers still starting).
    listed_once: Cell<bool>,
    /// Questions put to a modern client inside a call's answer, by the `requestState` they
    /// went with: the call they ask about (its tool and arguments), so that an answer is taken
    /// only for that call, once.
    asks: RefCell<Vec<(String, String)>>,
    /// A modern client's calls in flight, by call id: where their server's questions go.
    question_routes: RefCell<HashMap<String, mpsc::UnboundedSender<RelayedQuestion>>>,
    /// A modern client's calls waiting for the answer to their server's question, put to the
    /// client inside the call's answer, by the `requestState` that went with it (oldest first).
    parked: RefCell<Vec<(String, ParkedCall)>>,
}

/// A server's request for the modern client that made the call (an elicitation, `roots/list`
/// or `sampling/createMessage`): what to put in the call's answer, and where the client's
/// response goes (`None`: it never came).
struct RelayedQuestion {
    method: &'static str,
    params: Value,
    reply: oneshot::Sender<Option<Value>>,
}

/// A modern client's call whose server waits for an answer: the call goes on when the client
/// calls again with it (the same tool and arguments, the `requestState`).
struct ParkedCall {
    fingerprint: String,
    reply: oneshot::Sender<Option<Value>>,
    flight: InFlight,
}

/// A call forwarded for a modern client, running on its own: its end, and its server's
/// questions.
struct InFlight {
    call_id: String,
    done: oneshot::Receiver<super::hub::Routed>,
    questions: mpsc::UnboundedReceiver<RelayedQuestion>,
    pending: PendingAsk,
}

/// The key of a server's question in a modern client's `inputRequests` and `inputResponses`.
const SERVER_QUESTION_KEY: &str = "plugboard-server-question";

/// A question put to a modern client for one call: the text and the `requestState` it goes
/// with, set by the asker when it could not answer from the request.
type PendingAsk = Rc<RefCell<Option<(String, String)>>>;

/// Every client connected to one hub: a server's progress on a call and its questions during
/// one go to the client that made the call, as do its requests for roots and completions (to
/// the only client, outside a call) and its log messages (to each client, outside a call); a
/// change of the tools goes to each of them.
pub(crate) struct Clients {
    connections: RefCell<Vec<std::rc::Weak<Connection>>>,
    /// Each server's questions for the user (elicitations, sampling) take turns.
    turns: UserTurns,
    /// So do its requests for the client's roots, among themselves.
    roots_turns: UserTurns,
}

impl Clients {
    /// Wait for `server`'s turn (among `turns`) to put a request to `conn`; `None` when too
    /// many of its requests wait already. A modern client needs no turn: it is put each
    /// request inside the answer to the call it concerns, at the pace it calls.
    async fn turn(turns: &UserTurns, conn: &Connection, server: &str) -> Option<Option<Turn>> {
        if conn.client.borrow().modern == Some(true) {
            return Some(None);
        }
        turns.take(server).await.map(Some)
    }

    /// Start handing the hub's progress, questions and tool list changes to its clients. Must
    /// run inside a `LocalSet`.
    pub fn start(hub: &Rc<Hub>) -> Rc<Clients> {
        let clients = Rc::new(Clients {
            connections: RefCell::default(),
            turns: UserTurns::default(),
            roots_turns: UserTurns::default(),
        });
        // A server's progress on a call goes to its client under the client's own token.
        if let Some(mut progress) = hub.take_progress() {
            let clients = Rc::clone(&clients);
            tokio::task::spawn_local(async move {
                while let Some(p) = progress.recv().await {
                    let owner =
                        clients.find(|c| c.progress_tokens.borrow().contains_key(&p.call_id));
                    if let Some(conn) = owner {
                        conn.progress(p);
                    }
                }
            });
        }
        // A server's question during a call goes to the client calling it, when it can answer.
        if let Some(mut questions) = hub.take_questions() {
            let clients = Rc::clone(&clients);
            tokio::task::spawn_local(async move {
                while let Some(asked) = questions.recv().await {
                    let caller = clients.caller(&asked.server, "elicitation");
                    let Some(conn) = caller else {
                        let _ = asked.reply.send(Answer::Decline);
                        continue;
                    };
                    let clients = Rc::clone(&clients);
                    tokio::task::spawn_local(async move {
                        // Too many of this server's questions wait already: declined.
                        let answer = match Clients::turn(&clients.turns, &conn, &asked.server).await
                        {
                            Some(_turn) => {
                                conn.relay_question(&asked.server, &asked.question).await
                            }
                            None => Answer::Decline,
                        };
                        let _ = asked.reply.send(answer);
                    });
                }
            });
        }
        // A server's request for the client (roots, a completion) goes to the client calling
        // it (the only client, outside a call); without one it gets no roots and no completion.
        if let Some(mut requests) = hub.take_for_client() {
            let clients = Rc::clone(&clients);
            tokio::task::spawn_local(async move {
                while let Some(request) = requests.recv().await {
                    let capability = match &request {
                        ForClient::Roots { .. } => "roots",
                        ForClient::Sampling { .. } => "sampling",
                    };
                    let caller = clients.caller(request.server(), capability).or_else(|| {
                        match clients.live().as_slice() {
                            [only] => Some(Rc::clone(only)),
                            _ => None,
                        }
                    });
                    let clients = Rc::clone(&clients);
                    tokio::task::spawn_local(async move {
                        match request {
                            ForClient::Roots { server, reply } => {
                                let turn = match &caller {
                                    Some(conn) => {
                                        Clients::turn(&clients.roots_turns, conn, &server).await
                                    }
                                    None => None,
                                };
                                let roots = match (caller, turn) {
                                    (Some(conn), Some(_turn)) => conn.client_roots(&server).await,
                                    (Some(_), None) => Err(format!(
                                        "{QUESTIONS_PER_SERVER} requests of `{server}` for the \
                                         client's roots are waiting already; ask again once \
                                         they are answered"
                                    )),
                                    (None, _) => Err(format!(
                                        "no client of the gateway is calling `{server}` to be \
                                         asked for its roots; ask again during a call"
                                    )),
                                };
                                let _ = reply.send(roots);
                            }
                            ForClient::Sampling {
                                server,
                                params,
                                reply,
                            } => {
                                let turn = match &caller {
                                    Some(conn) => {
                                        Clients::turn(&clients.turns, conn, &server).await
                                    }
                                    None => None,
                                };
                                let result = match (caller, turn) {
                                    (Some(conn), Some(_turn)) => {
                                        conn.client_sample(&server, params).await
                                    }
                                    (Some(_), None) => Err(format!(
                                        "sampling declined: {QUESTIONS_PER_SERVER} requests of \
                                         `{server}` for the user are waiting already"
                                    )),
                                    (None, _) => Err(format!(
                                        "sampling declined: no client of the gateway is \
                                         calling `{server}` (Plugboard holds no language model \
                                         of its own)"
                                    )),
                                };
                                let _ = reply.send(result);
                            }
                        }
                    });
                }
            });
        }
        // A server's log message goes to the client calling it, else to every client; a
        // server's messages beyond the limit of a second are left out, and said to be.
        if let Some(mut logs) = hub.take_logs() {
            let clients = Rc::clone(&clients);
            tokio::task::spawn_local(async move {
                let mut limit = LogLimit::default();
                while let Some(log) = logs.recv().await {
                    let admitted = limit.admit(&log.server, std::time::Instant::now());
                    let said = (admitted.left_out_before > 0).then(|| ServerLog {
                        server: log.server.clone(),
                        level: "warning".into(),
                        logger: None,
                        text: format!(
                            "{} log messages of `{}` were left out (more than {LOGS_PER_SECOND} \
                             a second)",
                            admitted.left_out_before, log.server
                        ),
                    });
                    let live = clients.live();
                    let calling: Vec<&Rc<Connection>> =
                        live.iter().filter(|c| c.is_calling(&log.server)).collect();
                    let to: Vec<&Rc<Connection>> = if calling.is_empty() {
                        live.iter().collect()
                    } else {
                        calling
                    };
                    for conn in to {
                        if let Some(said) = &said {
                            conn.log(said);
                        }
                        if admitted.passes {
                            conn.log(&log);
                        }
                    }
                }
            });
        }
        // Tell each client when the tools change (a server came up late, went down, came back).
        {
            let clients = Rc::clone(&clients);
            let changed = Rc::clone(&hub.changed);
            tokio::task::spawn_local(async move {
                loop {
                    changed.notified().await;
                    for conn in clients.live() {
                        conn.lists_changed();
                    }
                }
            });
        }
        clients
    }

    pub fn add(&self, conn: &Rc<Connection>) {
        let mut connections = self.connections.borrow_mut();
        connections.retain(|c| c.strong_count() > 0);
        connections.push(Rc::downgrade(conn));
    }

    /// The client calling `server` that its request goes to: one that declared `capability`
    /// first (with several calling it, another's capabilities do not decide).
    fn caller(&self, server: &str, capability: &str) -> Option<Rc<Connection>> {
        let calling: Vec<Rc<Connection>> = self
            .live()
            .into_iter()
            .filter(|c| c.is_calling(server))
            .collect();
        calling
            .iter()
            .find(|c| c.declares(capability))
            .or(calling.first())
            .cloned()
    }

    /// The connections still in use (the others are forgotten).
    fn live(&self) -> Vec<Rc<Connection>> {
        let mut connections = self.connections.borrow_mut();
        connections.retain(|c| c.strong_count() > 0);
        connections
            .iter()
            .filter_map(std::rc::Weak::upgrade)
            .collect()
    }

    fn find(&self, wanted: impl Fn(&Connection) -> bool) -> Option<Rc<Connection>> {
        self.live().into_iter().find(|c| wanted(c))
    }
}

/// Serve `hub` on this process's stdin and stdout until stdin ends. Must run inside a
/// `LocalSet`.
pub async fn serve_stdio(hub: Rc<Hub>) {
    let (out, mut outgoing) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::task::spawn_local(async move {
        let mut stdout = crate::own_stdio::stdout();
        while let Some(message) = outgoing.recv().await {
            let mut line = serde_json::to_vec(&message).expect("JSON serializes");
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let clients = Clients::start(&hub);
    let conn = Connection::new(Rc::clone(&hub), out, String::new());
    clients.add(&conn);
    hub.start_all();
    let mut lines = BufReader::new(crate::own_stdio::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(m) => m,
            Err(e) => {
                conn.send(not_json(&e));
                continue;
            }
        };
        let conn = Rc::clone(&conn);
        tokio::task::spawn_local(async move { conn.on_message(message).await });
    }
    hub.close().await;
    drop(conn);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
}

/// The answer to a message that is not JSON.
pub(crate) fn not_json(error: &serde_json::Error) -> Value {
    json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32700, "message": format!("not JSON: {error}")}})
}

impl Connection {
    /// A client whose messages go to `out`; `tag` tells its calls from other clients'.
    pub fn new(hub: Rc<Hub>, out: mpsc::UnboundedSender<Value>, tag: String) -> Rc<Connection> {
        Self::with(hub, out, tag, Rc::default(), false)
    }

    /// One request of a modern client over HTTP, whose messages go to `out` (that request's
    /// answer); `across` is what the modern clients' requests leave for their next ones.
    pub fn for_request(
        hub: Rc<Hub>,
        out: mpsc::UnboundedSender<Value>,
        tag: String,
        across: Rc<AcrossRequests>,
    ) -> Rc<Connection> {
        Self::with(hub, out, tag, across, true)
    }

    fn with(
        hub: Rc<Hub>,
        out: mpsc::UnboundedSender<Value>,
        tag: String,
        across: Rc<AcrossRequests>,
        one_request: bool,
    ) -> Rc<Connection> {
        Rc::new(Connection {
            out,
            tag,
            client: RefCell::default(),
            pending: RefCell::default(),
            next_id: RefCell::new(0),
            calls: RefCell::default(),
            progress_tokens: RefCell::default(),
            told: Cell::new(hub.generations()),
            subscriptions: RefCell::default(),
            across,
            one_request,
            hub,
        })
    }

    fn send(&self, message: Value) {
        let _ = self.out.send(message);
    }

    /// Whether the client declared `capability`.
    fn declares(&self, capability: &str) -> bool {
        self.client.borrow().capabilities.get(capability).is_some()
    }

    /// Whether one of this client's calls is in flight on `server`.
    fn is_calling(&self, server: &str) -> bool {
        self.calls.borrow().values().any(|(s, _)| s == server)
    }

    /// A server's log message, when it is as severe as the client asked for: under the
    /// server's name (`SERVER`, or `SERVER/LOGGER` when the server named its logger).
    fn log(&self, log: &ServerLog) {
        if log_rank(&log.level) < self.client.borrow().log_level
            || (self.one_request && !self.is_calling(&log.server))
        {
            return;
        }
        let logger = match &log.logger {
            Some(logger) => format!("{}/{logger}", log.server),
            None => log.server.clone(),
        };
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": log.level, "logger": logger, "data": log.text}}));
    }

    /// A server's progress on one of this client's calls, under the client's token.
    fn progress(&self, p: super::hub::CallProgress) {
        let Some(token) = self.progress_tokens.borrow().get(&p.call_id).cloned() else {
            return;
        };
        let mut params = json!({"progressToken": token, "progress": p.progress});
        if let Some(total) = p.total {
            params["total"] = json!(total);
        }
        if let Some(message) = p.message {
            params["message"] = json!(message);
        }
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}));
    }

    /// Lists changed (a server came up late, went down, came back, or changed its own): for
    /// each list that changed since this client was last told, a legacy client hears it (the
    /// tools once it listed them), a modern one on each stream it opened for that list.
    fn lists_changed(&self) {
        let now = self.hub.generations();
        let told = self.told.replace(now);
        let legacy = self.client.borrow().modern == Some(false);
        let changed = [
            (
                now.tools != told.tools,
                "tools",
                legacy && self.across.listed_once.get(),
            ),
            (now.prompts != told.prompts, "prompts", legacy),
            (now.resources != told.resources, "resources", legacy),
        ];
        for (did, list, tell_legacy) in changed {
            if !did {
                continue;
            }
            let method = format!("notifications/{list}/list_changed");
            if tell_legacy {
                self.send(json!({"jsonrpc": "2.0", "method": method}));
            }
            for (id, wanted) in self.subscriptions.borrow().values() {
                if wanted.wants(list) {
                    self.send(json!({"jsonrpc": "2.0", "method": method,
                        "params": {"_meta": {META_SUBSCRIPTION_ID: id}}}));
                }
            }
        }
    }

    /// Handle one message from the client: a request (answered on `out`), a notification or
    /// the answer to one of our requests.
    pub async fn on_message(self: Rc<Self>, message: Value) {
        let id = message.get("id").cloned();
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let params = message
            .get("params")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        match (method, id) {
            // The client's answer to one of our requests.
            (None, Some(id)) => {
                if let Some(waiting) = self.pending.borrow_mut().remove(&id.to_string()) {
                    let _ = waiting.send(message);
                }
            }
            (Some(method), None) => self.on_notification(&method, &params),
            (Some(method), Some(id)) if method == "subscriptions/listen" => {
                if let Err((code, text)) = self.listen(&params, &id) {
                    self.send(json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": text}}));
                }
            }
            (Some(method), Some(id)) => {
                let answer = self.on_request(&method, &params, &id).await;
                let modern = self.client.borrow().modern == Some(true);
                let reply = match answer {
                    Ok(mut result) => {
                        if modern && let Some(object) = result.as_object_mut() {
                            object
                                .entry("resultType")
                                .or_insert_with(|| json!("complete"));
                            if method.ends_with("/list") {
                                object.entry("ttlMs").or_insert_with(|| json!(0));
                                object
                                    .entry("cacheScope")
                                    .or_insert_with(|| json!("private"));
                            }
                        }
                        json!({"jsonrpc": "2.0", "id": id, "result": result})
                    }
                    Err((code, text)) => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": text}}),
                };
                self.send(reply);
            }
            (None, None) => {}
        }
    }

    fn on_notification(&self, method: &str, params: &Map<String, Value>) {
        // Servers that asked for roots before the client was there got none: they are told
        // once it says it has some, as when it says they changed.
        let roots_now = method == "notifications/initialized" && self.declares("roots");
        if roots_now || method == "notifications/roots/list_changed" {
            let hub = Rc::clone(&self.hub);
            tokio::task::spawn_local(async move { hub.roots_changed().await });
            return;
        }
        if method != "notifications/cancelled" {
            return;
        }
        let Some(request) = params.get("requestId") else {
            return;
        };
        // A cancelled stream ends without an answer.
        self.subscriptions.borrow_mut().remove(&request.to_string());
        if let Some((server, call_id)) = self.calls.borrow().get(&request.to_string()).cloned() {
            self.hub.cancel(&server, &call_id);
        }
    }

    /// A modern client's `subscriptions/listen`: acknowledged with what the gateway honours
    /// (changes of the tool, prompt and resource lists: its servers come up, go down, come
    /// back and change their own), then open until the client cancels it. It is never
    /// answered otherwise.
    fn listen(&self, params: &Map<String, Value>, id: &Value) -> Result<(), (i64, String)> {
        self.note_client("subscriptions/listen", params)?;
        let asked = params.get("notifications").cloned().unwrap_or(json!({}));
        let asks = |key: &str| asked.get(key) == Some(&Value::Bool(true));
        let wanted = Wanted {
            tools: asks("toolsListChanged"),
            prompts: asks("promptsListChanged"),
            resources: asks("resourcesListChanged"),
        };
        let mut honoured = json!({});
        for (key, on) in [
            ("toolsListChanged", wanted.tools),
            ("promptsListChanged", wanted.prompts),
            ("resourcesListChanged", wanted.resources),
        ] {
            if on {
                honoured[key] = json!(true);
            }
        }
        if wanted.tools || wanted.prompts || wanted.resources {
            self.subscriptions
                .borrow_mut()
                .insert(id.to_string(), (id.clone(), wanted));
        }
        self.send(json!({"jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {META_SUBSCRIPTION_ID: id}, "notifications": honoured}}));
        Ok(())
    }

    /// The era and capabilities the client's request shows.
    fn note_client(&self, method: &str, params: &Map<String, Value>) -> Result<(), (i64, String)> {
        let meta = params.get("_meta").and_then(Value::as_object);
        let version = meta
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let mut client = self.client.borrow_mut();
        if method == "initialize" {
            client.modern = Some(false);
            client.capabilities = params.get("capabilities").cloned().unwrap_or(json!({}));
            let name = params
                .get("clientInfo")
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            client.name.clone_from(&name);
            self.hub.set_client(name);
            return Ok(());
        }
        if let Some(version) = version {
            if !era::modern_versions().iter().any(|v| v.as_str() == version) {
                return Err((
                    i64::from(era::UNSUPPORTED_PROTOCOL_VERSION),
                    format!("unsupported protocol version {version}"),
                ));
            }
            client.modern = Some(true);
            if let Some(capabilities) = meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)) {
                client.capabilities = capabilities.clone();
            }
            if let Some(level) = meta
                .and_then(|m| m.get(era::META_LOG_LEVEL))
                .and_then(Value::as_str)
                .and_then(level_index)
            {
                client.log_level = level;
            }
            if let Some(name) = meta
                .and_then(|m| m.get(era::META_CLIENT_INFO))
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
            {
                client.name = Some(name.to_owned());
                self.hub.set_client(Some(name.to_owned()));
            }
        } else if method == "server/discover" {
            client.modern = Some(true);
        }
        Ok(())
    }

    async fn on_request(
        self: &Rc<Self>,
        method: &str,
        params: &Map<String, Value>,
        id: &Value,
    ) -> Result<Value, (i64, String)> {
        self.note_client(method, params)?;
        match method {
            "initialize" => {
                self.hub.settle(FIRST_LIST_WAIT).await;
                let asked = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let version = era::legacy_versions()
                    .iter()
                    .find(|v| v.as_str() == asked)
                    .or(era::legacy_versions().first())
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                let mut result = json!({
                    "protocolVersion": version,
                    "capabilities": capabilities(),
                    "serverInfo": server_info(),
                });
                if let Some(instructions) = self.hub.instructions() {
                    result["instructions"] = Value::String(instructions);
                }
                Ok(result)
            }
            "server/discover" => {
                self.hub.settle(FIRST_LIST_WAIT).await;
                let mut result = json!({
                    "supportedVersions": era::modern_versions().iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                    "capabilities": capabilities(),
                    "_meta": {META_SERVER_INFO: server_info()},
                });
                if let Some(instructions) = self.hub.instructions() {
                    result["instructions"] = Value::String(instructions);
                }
                Ok(result)
            }
            "ping" => Ok(json!({})),
            "logging/setLevel" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let rank = level_index(level).ok_or_else(|| {
                    (
                        -32602,
                        format!(
                            "unknown log level `{level}` (one of {})",
                            LOG_LEVELS.join(", ")
                        ),
                    )
                })?;
                self.client.borrow_mut().log_level = rank;
                Ok(json!({}))
            }
            "tools/list" => {
                if !self.across.listed_once.get() {
                    self.hub.settle(FIRST_LIST_WAIT).await;
                    self.across.listed_once.set(true);
                }
                Ok(json!({"tools": self.hub.list_tools()}))
            }
            "prompts/list" => Ok(json!({"prompts": self.hub.list_prompts()})),
            "resources/list" => Ok(json!({"resources": self.hub.list_resources()})),
            "resources/templates/list" => {
                Ok(json!({"resourceTemplates": self.hub.list_templates()}))
            }
            "tools/call" => {
                let call_id = format!("gw-{}{id}", self.tag);
                if let Some(name) = params.get("name").and_then(Value::as_str)
                    && let Some(server) = self.hub.server_of_tool(name)
                {
                    self.calls
                        .borrow_mut()
                        .insert(id.to_string(), (server, call_id.clone()));
                }
                let token = params
                    .get("_meta")
                    .and_then(|m| m.get("progressToken"))
                    .filter(|t| t.is_string() || t.is_number())
                    .cloned();
                if let Some(token) = token {
                    self.progress_tokens
                        .borrow_mut()
                        .insert(call_id.clone(), token);
                }
                if self.relays_modern_questions() {
                    return self.call_for_modern(params, &id.to_string(), call_id).await;
                }
                let pending: PendingAsk = Rc::default();
                let asker = self.asker(params, &pending);
                let client = self.client.borrow().name.clone();
                let caller = Caller {
                    call_id: &call_id,
                    client: client.as_deref(),
                    ask: asker,
                };
                let routed = self.hub.call_tool(params, caller).await;
                self.calls.borrow_mut().remove(&id.to_string());
                self.progress_tokens.borrow_mut().remove(&call_id);
                finish_call(routed, &pending)
            }
            "prompts/get" | "resources/read" => {
                let call_id = format!("gw-{}{id}", self.tag);
                self.hub.forward_other(method, params, &call_id).await
            }
            other => Err((
                -32601,
                format!("`{other}` is not served by the Plugboard gateway"),
            )),
        }
    }

    /// Whether this is a modern client that can be put its servers' requests (it declared
    /// elicitation, roots or sampling): then each call runs on its own and may be answered
    /// `input_required`.
    fn relays_modern_questions(&self) -> bool {
        let client = self.client.borrow();
        client.modern == Some(true)
            && ["elicitation", "roots", "sampling"]
                .iter()
                .any(|c| client.capabilities.get(c).is_some())
    }

    /// A modern client's `tools/call` (request `request`): the answer to a question its server
    /// asked lets a parked call go on; otherwise the call starts, on its own. Either way the
    /// client gets the call's result, or the next question inside an `input_required` answer.
    async fn call_for_modern(
        self: &Rc<Self>,
        params: &Map<String, Value>,
        request: &str,
        call_id: String,
    ) -> Result<Value, (i64, String)> {
        let fingerprint = call_fingerprint(params);
        let parked = params
            .get("requestState")
            .and_then(Value::as_str)
            .and_then(|state| {
                let mut parked = self.across.parked.borrow_mut();
                let at = parked
                    .iter()
                    .position(|(s, p)| s == state && p.fingerprint == fingerprint)?;
                Some(parked.remove(at).1)
            });
        let flight = match parked {
            Some(parked) => {
                let response = params
                    .get("inputResponses")
                    .and_then(|r| r.get(SERVER_QUESTION_KEY))
                    .cloned();
                let _ = parked.reply.send(response);
                parked.flight
            }
            None => self.start_for_modern(params, call_id.clone()),
        };
        // Cancelling this request cancels the call, whichever request started it, and the
        // call's progress goes out with this request's answer, under its token.
        let server = self
            .calls
            .borrow()
            .get(request)
            .map(|(server, _)| server.clone());
        if let Some(server) = server {
            self.calls
                .borrow_mut()
                .insert(request.to_owned(), (server, flight.call_id.clone()));
        }
        let flight_id = flight.call_id.clone();
        let token = self.progress_tokens.borrow_mut().remove(&call_id);
        if let Some(token) = token {
            self.progress_tokens
                .borrow_mut()
                .insert(flight_id.clone(), token);
        }
        let answer = self.wait_for_modern(flight, fingerprint).await;
        self.calls.borrow_mut().remove(request);
        self.progress_tokens.borrow_mut().remove(&flight_id);
        answer
    }

    /// Start a modern client's call on its own, its server's questions routed to it.
    fn start_for_modern(self: &Rc<Self>, params: &Map<String, Value>, call_id: String) -> InFlight {
        let (ask_tx, questions) = mpsc::unbounded_channel();
        self.across
            .question_routes
            .borrow_mut()
            .insert(call_id.clone(), ask_tx);
        let pending: PendingAsk = Rc::default();
        let asker = self.asker(params, &pending);
        let client = self.client.borrow().name.clone();
        let (done_tx, done) = oneshot::channel();
        let conn = Rc::clone(self);
        let params = params.clone();
        let id = call_id.clone();
        tokio::task::spawn_local(async move {
            let caller = Caller {
                call_id: &id,
                client: client.as_deref(),
                ask: asker,
            };
            let routed = conn.hub.call_tool(&params, caller).await;
            conn.across.question_routes.borrow_mut().remove(&id);
            conn.progress_tokens.borrow_mut().remove(&id);
            let _ = done_tx.send(routed);
        });
        InFlight {
            call_id,
            done,
            questions,
            pending,
        }
    }

    /// Wait for a modern client's call to end, or for its server to ask something: then the
    /// call is parked and the client is put the question.
    async fn wait_for_modern(
        &self,
        mut flight: InFlight,
        fingerprint: String,
    ) -> Result<Value, (i64, String)> {
        tokio::select! {
            routed = &mut flight.done => match routed {
                Ok(routed) => finish_call(routed, &flight.pending),
                Err(_) => Err((-32603, "the call ended without an answer".to_owned())),
            },
            Some(question) = flight.questions.recv() => {
                let state = format!("plugboard-relay-{:032x}", rand::random::<u128>());
                let (method, asked) = (question.method, question.params);
                let mut parked = self.across.parked.borrow_mut();
                if parked.len() >= PENDING_ASKS {
                    // The oldest never came back: its server's question is declined.
                    parked.remove(0);
                }
                parked.push((
                    state.clone(),
                    ParkedCall {
                        fingerprint,
                        reply: question.reply,
                        flight,
                    },
                ));
                Ok(json!({
                    "resultType": "input_required",
                    "inputRequests": {SERVER_QUESTION_KEY: {
                        "method": method,
                        "params": asked,
                    }},
                    "requestState": state,
                }))
            }
        }
    }

    /// Asks through the client's elicitation, when it declared it: a legacy client gets an
    /// `elicitation/create` request and the call waits for its answer; a modern one gets the
    /// question inside the call's answer (`input_required`, noted in `pending`), and the call
    /// goes on when it comes again with the answer to that very question.
    fn asker(
        self: &Rc<Self>,
        params: &Map<String, Value>,
        pending: &PendingAsk,
    ) -> Option<AskUser> {
        let client = self.client.borrow();
        client.capabilities.get("elicitation")?;
        let conn = Rc::clone(self);
        if client.modern == Some(false) {
            return Some(Rc::new(move |question: String| {
                let conn = Rc::clone(&conn);
                Box::pin(async move { conn.elicit(question).await })
                    as std::pin::Pin<Box<dyn Future<Output = Asked>>>
            }));
        }
        let call = call_fingerprint(params);
        let answered = params
            .get("requestState")
            .and_then(Value::as_str)
            .zip(
                params
                    .get("inputResponses")
                    .and_then(|r| r.get(PERMISSION_KEY))
                    .and_then(|r| r.get("action")),
            )
            .map(|(state, action)| (state.to_owned(), action.as_str() == Some("accept")));
        let pending = Rc::clone(pending);
        Some(Rc::new(move |question: String| {
            let answer = match &answered {
                Some((state, accepted)) if conn.take_ask(state, &call) => {
                    if *accepted {
                        Asked::Yes
                    } else {
                        Asked::No
                    }
                }
                _ => {
                    let state = conn.put_ask(&call);
                    *pending.borrow_mut() = Some((question, state));
                    Asked::Pending
                }
            };
            Box::pin(std::future::ready(answer)) as std::pin::Pin<Box<dyn Future<Output = Asked>>>
        }))
    }

    /// Note a question put to a modern client about `call`; its `requestState`.
    fn put_ask(&self, call: &str) -> String {
        let state = format!("plugboard-ask-{:032x}", rand::random::<u128>());
        let mut asks = self.across.asks.borrow_mut();
        if asks.len() >= PENDING_ASKS {
            asks.remove(0);
        }
        asks.push((state.clone(), call.to_owned()));
        state
    }

    /// Whether `state` is a question put about `call` (then it is answered: taken away).
    fn take_ask(&self, state: &str, call: &str) -> bool {
        let mut asks = self.across.asks.borrow_mut();
        match asks.iter().position(|(s, c)| s == state && c == call) {
            Some(at) => {
                asks.remove(at);
                true
            }
            None => false,
        }
    }

    async fn elicit(&self, question: String) -> Asked {
        let reply = self
            .elicit_client(json!({
                "mode": "form",
                "message": question,
                "requestedSchema": {"type": "object", "properties": {}},
            }))
            .await;
        // No answer in time, or the client went away: no.
        if reply.and_then(|r| r.pointer("/result/action").cloned()) == Some(json!("accept")) {
            Asked::Yes
        } else {
            Asked::No
        }
    }

    /// `elicitation/create` to the client with `params`; its whole reply, or `None` when none
    /// came within [`ASK_TIMEOUT`].
    async fn elicit_client(&self, params: Value) -> Option<Value> {
        self.request_client("elicitation/create", params, ASK_TIMEOUT)
            .await
    }

    /// Request `method` of the client; its whole reply, or `None` when none came within
    /// `limit`.
    async fn request_client(
        &self,
        method: &str,
        params: Value,
        limit: std::time::Duration,
    ) -> Option<Value> {
        let id = {
            let mut next = self.next_id.borrow_mut();
            *next += 1;
            format!("plugboard-ask-{next}")
        };
        let (tx, rx) = oneshot::channel();
        self.pending
            .borrow_mut()
            .insert(Value::String(id.clone()).to_string(), tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = tokio::time::timeout(limit, rx).await;
        self.pending
            .borrow_mut()
            .remove(&Value::String(id).to_string());
        answer.ok().and_then(Result::ok)
    }

    /// A completion of the client's model for `server` (`sampling/createMessage` with
    /// `params`) when the client declared `sampling` (within [`ASK_TIMEOUT`]; the client asks
    /// its user as it would for a server of its own): its result, or why not. A legacy client
    /// is sent the request; a modern one gets it inside the answer to its call to `server`.
    async fn client_sample(&self, server: &str, params: Value) -> Result<Value, String> {
        if !self.declares("sampling") {
            return Err(format!(
                "sampling declined: the client calling `{server}` through the gateway takes no \
                 sampling requests (Plugboard holds no language model of its own)"
            ));
        }
        let result = self
            .request_for(server, "sampling/createMessage", params, ASK_TIMEOUT)
            .await?;
        if result.get("content").is_none() {
            return Err("the client's answer to `sampling/createMessage` was not a result".into());
        }
        Ok(result)
    }

    /// `server`'s request `method` (with `params`) of this client: a legacy client is sent it,
    /// a modern one gets it inside the answer to its call to `server`. The client's result
    /// (within `limit`), or why there is none (no answer in time, the client's error).
    async fn request_for(
        &self,
        server: &str,
        method: &'static str,
        params: Value,
        limit: std::time::Duration,
    ) -> Result<Value, String> {
        let no_answer = || {
            format!(
                "the client did not answer `{server}`'s `{method}` within {} s",
                limit.as_secs()
            )
        };
        if self.client.borrow().modern == Some(true) {
            return self
                .relay_to_modern(server, method, params, limit)
                .await
                .ok_or_else(no_answer);
        }
        let reply = self
            .request_client(method, params, limit)
            .await
            .ok_or_else(no_answer)?;
        match (reply.get("result"), reply.pointer("/error/message")) {
            (Some(result), _) => Ok(result.clone()),
            (_, Some(Value::String(why))) => Err(why.clone()),
            _ => Err(format!(
                "the client's answer to `{method}` was not a result"
            )),
        }
    }

    /// The roots a client that declared `roots` gives `server` (`roots/list`, within
    /// [`ROOTS_TIMEOUT`]): each an object with a `file://` URI; none from any other client. A
    /// legacy client is sent the request; a modern one gets it inside the answer to its call
    /// to `server`. Why none can be given now, when the client was not asked (a modern one
    /// outside a call) or did not answer: the server may ask again (during a call), where an
    /// empty list would tell it the client has none.
    async fn client_roots(&self, server: &str) -> Result<Vec<Value>, String> {
        let (known, asks, modern) = {
            let client = self.client.borrow();
            (
                client.modern.is_some(),
                client.capabilities.get("roots").is_some(),
                client.modern == Some(true),
            )
        };
        if !known {
            return Err(
                "the client has not said yet whether it gives roots; ask again once it has".into(),
            );
        }
        if !asks {
            return Ok(Vec::new());
        }
        if modern && !self.is_calling(server) {
            return Err(format!(
                "the client (of the 2026-07-28 era) can be asked for its roots only during a \
                 call to `{server}`; ask again during one"
            ));
        }
        let listed = self
            .request_for(server, "roots/list", json!({}), ROOTS_TIMEOUT)
            .await?;
        Ok(listed
            .get("roots")
            .and_then(Value::as_array)
            .map(|roots| {
                roots
                    .iter()
                    .filter(|root| {
                        root.get("uri")
                            .and_then(Value::as_str)
                            .is_some_and(|uri| uri.starts_with("file://"))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    /// A modern client's call to `server` is in flight: `server`'s request (`method` with
    /// `params`) goes into that call's answer, and the client's response (within `limit`)
    /// comes back here; `None` without a call in flight or a response in time.
    async fn relay_to_modern(
        &self,
        server: &str,
        method: &'static str,
        params: Value,
        limit: std::time::Duration,
    ) -> Option<Value> {
        let route = {
            let calls = self.calls.borrow();
            let routes = self.across.question_routes.borrow();
            calls
                .values()
                .filter(|(s, _)| s == server)
                .find_map(|(_, call_id)| routes.get(call_id).cloned())
        };
        let (reply, response) = oneshot::channel();
        route?
            .send(RelayedQuestion {
                method,
                params,
                reply,
            })
            .ok()?;
        tokio::time::timeout(limit, response).await.ok()?.ok()?
    }

    /// Pass `server`'s question to the client as an elicitation, named as coming from that
    /// server, when the client declared it can answer it (URL questions need its `url`
    /// elicitation); otherwise, and without an answer in time, it is declined.
    async fn relay_question(&self, server: &str, question: &Question) -> Answer {
        let elicitation = self
            .client
            .borrow()
            .capabilities
            .get("elicitation")
            .cloned();
        let Some(elicitation) = elicitation else {
            return Answer::Decline;
        };
        let message = format!("{server} asks: {}", question.message);
        let params = match &question.mode {
            QuestionMode::Form { schema, .. } => {
                json!({"mode": "form", "message": message, "requestedSchema": schema})
            }
            QuestionMode::Url { url, .. } if elicitation.get("url").is_some() => {
                json!({"mode": "url", "message": message, "url": url, "elicitationId": question.id})
            }
            QuestionMode::Url { .. } => return Answer::Decline,
        };
        let response = self
            .request_for(server, "elicitation/create", params, ASK_TIMEOUT)
            .await;
        answer_of(response.ok().as_ref())
    }
}

/// A call's answer: its result, or (nothing forwarded) the gateway's own question about it.
fn finish_call(routed: super::hub::Routed, pending: &PendingAsk) -> Result<Value, (i64, String)> {
    match pending.borrow_mut().take() {
        // Nothing was forwarded: the client answers, and calls again with it.
        Some((question, state)) if routed.decision == "ask_pending" => Ok(json!({
            "resultType": "input_required",
            "inputRequests": {PERMISSION_KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": question,
                    "requestedSchema": {"type": "object", "properties": {}},
                },
            }},
            "requestState": state,
        })),
        _ => routed.result,
    }
}

/// A client's answer to an elicitation (its `ElicitResult`): no answer is a decline.
fn answer_of(response: Option<&Value>) -> Answer {
    match response
        .and_then(|r| r.get("action"))
        .and_then(Value::as_str)
    {
        Some("accept") => Answer::Accept {
            content: response.and_then(|r| r.get("content")).cloned(),
        },
        Some("cancel") => Answer::Cancel,
        _ => Answer::Decline,
    }
}

/// What identifies a call for its question: the tool and its arguments.
fn call_fingerprint(params: &Map<String, Value>) -> String {
    json!([params.get("name"), params.get("arguments")]).to_string()
}

fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": true},
        "prompts": {"listChanged": true},
        "resources": {"listChanged": true, "subscribe": false},
        "logging": {},
    })
}

fn server_info() -> Value {
    json!({"name": "plugboard", "version": env!("CARGO_PKG_VERSION")})
}
