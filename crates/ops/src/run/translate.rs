//! Era translation for the bridge of `plugboard run`: a client of either protocol era talks to a
//! remote server of either era. The bridge has already done the handshake with
//! the server in the server's era (with the client's identity); a [`Translator`] turns each
//! message from one side into what the other side understands. Messages are JSON-RPC values;
//! [`Out`] says where each result goes.
//!
//! - **Same era**: everything passes, except a legacy client's `initialize`, answered from the
//!   handshake the bridge did with the client's own parameters (and its `initialized` then
//!   dropped: the bridge sent one already).
//! - **Legacy client, modern server**: `initialize` is answered from the server's
//!   `DiscoverResult`; every request gets the modern `_meta` (the client's identity and
//!   capabilities, the negotiated version, its log level); `ping` and `logging/setLevel` are
//!   answered here. A result `input_required` (MRTR) becomes requests to the client
//!   (elicitation, sampling, roots — where the client declared the capability), and the original
//!   request is retried with the answers and the server's `requestState` until it completes.
//! - **Modern client, legacy server**: `server/discover` is answered from the server's
//!   `initialize` result; the modern `_meta` keys are taken off requests; a request the legacy
//!   server makes of the client while one of the client's requests is running (elicitation,
//!   sampling, roots) is answered to the client as `input_required` for that request, and the
//!   client's retry delivers the answers to the server, whose final result then answers it.
//!
//! What cannot be carried across gets a JSON-RPC error that says why (a client without the
//! capability a server request needs, subscriptions, too many input rounds).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::connect::era::{
    self, Era, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PREFIX,
    META_PROTOCOL_VERSION, META_SERVER_INFO,
};

/// Where a translated message goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    ToServer(Value),
    ToClient(Value),
}

/// At most this many `input_required` rounds are carried for one request.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// The server as the bridge's handshake found it.
#[derive(Clone, Debug)]
pub struct ServerSide {
    pub era: Era,
    /// The negotiated version.
    pub version: String,
    /// `protocolVersion`, `capabilities`, `serverInfo`, `instructions` (the shape of an
    /// `InitializeResult`).
    pub info: Value,
}

/// The era translation of one bridged session.
pub enum Translator {
    Same { era: Era, server: ServerSide },
    LegacyClient(Box<LegacyClient>),
    ModernClient(Box<ModernClient>),
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn method_of(msg: &Value) -> Option<&str> {
    msg.get("method").and_then(Value::as_str)
}

/// The client capability a server request needs (`None`: not a request a client answers).
fn needed_capability(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Whether `capabilities` declare what the server request `method` needs.
fn declares(capabilities: &Value, method: &str) -> bool {
    needed_capability(method)
        .is_some_and(|needed| capabilities.get(needed).is_some_and(|c| !c.is_null()))
}

impl Translator {
    /// The translator for a client of `client` era and the server the handshake found.
    /// `hello` is what the client said about itself (its `initialize` params, or the `_meta` of
    /// its first request): `clientInfo` and `capabilities`.
    pub fn new(client: Era, server: ServerSide, hello: &Value) -> Translator {
        match (client, server.era) {
            (Era::Legacy, Era::Modern) => Translator::LegacyClient(Box::new(LegacyClient {
                client_info: hello.get("clientInfo").cloned().unwrap_or(json!({})),
                capabilities: hello.get("capabilities").cloned().unwrap_or(json!({})),
                server,
                log_level: None,
                calls: HashMap::new(),
                retries: HashMap::new(),
                asked: HashMap::new(),
                next: 0,
            })),
            (Era::Modern, Era::Legacy) => Translator::ModernClient(Box::new(ModernClient {
                server,
                calls: HashMap::new(),
                rounds: HashMap::new(),
                next: 0,
            })),
            (era, _) => Translator::Same { era, server },
        }
    }

    /// What to do with a message from the client.
    pub fn on_client_message(&mut self, msg: Value) -> Vec<Out> {
        match self {
            Translator::Same { era, server } => {
                if *era == Era::Legacy {
                    match method_of(&msg) {
                        Some("initialize") if msg.get("id").is_some() => {
                            let id = msg["id"].clone();
                            return vec![Out::ToClient(response(id, server.info.clone()))];
                        }
                        Some("notifications/initialized") => return vec![],
                        _ => {}
                    }
                }
                vec![Out::ToServer(msg)]
            }
            Translator::LegacyClient(t) => t.on_client_message(msg),
            Translator::ModernClient(t) => t.on_client_message(msg),
        }
    }

    /// What to do with a message from the server. `origin` is the client request on whose
    /// response stream a server request arrived, when the transport knows it.
    pub fn on_server_message(&mut self, msg: Value, origin: Option<Value>) -> Vec<Out> {
        match self {
            Translator::Same { .. } => vec![Out::ToClient(msg)],
            Translator::LegacyClient(t) => t.on_server_message(msg),
            Translator::ModernClient(t) => t.on_server_message(msg, origin),
        }
    }
}

/// A legacy client's request on its way through a modern server's `input_required` rounds.
struct Call {
    /// The client's id, which the final answer carries.
    id: Value,
    /// The request as first sent to the server (with `_meta`).
    request: Value,
    answers: Map<String, Value>,
    waiting: usize,
    request_state: Option<Value>,
    rounds: usize,
}

/// A legacy client in front of a modern server.
pub struct LegacyClient {
    server: ServerSide,
    client_info: Value,
    capabilities: Value,
    log_level: Option<Value>,
    /// Client requests in flight, by their id.
    calls: HashMap<String, Call>,
    /// Retries sent to the server (by their id) → the client request they belong to.
    retries: HashMap<String, String>,
    /// Requests made of the client (by their id) → (client request, input key).
    asked: HashMap<String, (String, String)>,
    next: u64,
}

impl LegacyClient {
    fn next_id(&mut self, what: &str) -> Value {
        self.next += 1;
        json!(format!("plugboard-{what}-{}", self.next))
    }

    /// The answer to the client's `initialize`: the server's discovery, in the legacy shape,
    /// at the version the client asked for when Plugboard speaks it.
    fn initialize_result(&self, params: &Value) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = asked
            .filter(|v| era::legacy_versions().iter().any(|l| l.as_str() == *v))
            .map(str::to_owned)
            .unwrap_or_else(|| era::legacy_request_version().to_string());
        let mut result = self.server.info.clone();
        result["protocolVersion"] = json!(version);
        if result.get("serverInfo").is_none() {
            result["serverInfo"] = json!({"name": "unknown", "version": ""});
        }
        result
    }

    fn with_meta(&self, mut msg: Value) -> Value {
        let params = msg
            .as_object_mut()
            .expect("a request is an object")
            .entry("params")
            .or_insert_with(|| json!({}));
        if !params.is_object() {
            *params = json!({});
        }
        let meta = params
            .as_object_mut()
            .expect("checked")
            .entry("_meta")
            .or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(META_PROTOCOL_VERSION.into(), json!(self.server.version));
            meta.insert(META_CLIENT_INFO.into(), self.client_info.clone());
            meta.insert(META_CLIENT_CAPABILITIES.into(), self.capabilities.clone());
            if let Some(level) = &self.log_level {
                meta.entry(META_LOG_LEVEL).or_insert_with(|| level.clone());
            }
        }
        msg
    }

    fn on_client_message(&mut self, msg: Value) -> Vec<Out> {
        let id = msg.get("id").cloned();
        match (method_of(&msg), id) {
            (Some("initialize"), Some(id)) => {
                let result = self.initialize_result(&msg["params"]);
                vec![Out::ToClient(response(id, result))]
            }
            (Some("notifications/initialized" | "notifications/roots/list_changed"), None) => {
                vec![]
            }
            (Some("ping"), Some(id)) => vec![Out::ToClient(response(id, json!({})))],
            (Some("logging/setLevel"), Some(id)) => {
                self.log_level = msg.pointer("/params/level").cloned();
                vec![Out::ToClient(response(id, json!({})))]
            }
            (Some(method @ ("resources/subscribe" | "resources/unsubscribe")), Some(id)) => {
                vec![Out::ToClient(error(
                    id,
                    -32601,
                    &format!(
                        "{method} is not available: the server speaks MCP {} (subscriptions/listen), \
                         which plugboard run does not bridge to legacy subscriptions",
                        self.server.version
                    ),
                ))]
            }
            (Some("notifications/cancelled"), None) => {
                if let Some(request) = msg.pointer("/params/requestId") {
                    self.calls.remove(&id_key(request));
                }
                vec![Out::ToServer(msg)]
            }
            (Some(_), Some(id)) => {
                let request = self.with_meta(msg);
                self.calls.insert(
                    id_key(&id),
                    Call {
                        id,
                        request: request.clone(),
                        answers: Map::new(),
                        waiting: 0,
                        request_state: None,
                        rounds: 0,
                    },
                );
                vec![Out::ToServer(request)]
            }
            (Some(_), None) => vec![Out::ToServer(msg)],
            // A response: the client's answer to one of our questions.
            (None, Some(id)) => self.answered(&id, &msg),
            (None, None) => vec![],
        }
    }

    /// The client answered question `id` (a result, or an error).
    fn answered(&mut self, id: &Value, msg: &Value) -> Vec<Out> {
        let Some((call_key, input)) = self.asked.remove(&id_key(id)) else {
            return vec![];
        };
        let Some(call) = self.calls.get_mut(&call_key) else {
            return vec![];
        };
        match msg.get("result") {
            Some(result) => {
                call.answers.insert(input, result.clone());
            }
            None => {
                let why = msg
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no answer");
                let id = call.id.clone();
                self.forget(&call_key);
                return vec![Out::ToClient(error(
                    id,
                    -32603,
                    &format!("the server asked for input that the client did not give: {why}"),
                ))];
            }
        }
        call.waiting = call.waiting.saturating_sub(1);
        if call.waiting > 0 {
            return vec![];
        }
        self.retry(&call_key)
    }

    /// Send the request again with the answers gathered and the server's state.
    fn retry(&mut self, call_key: &str) -> Vec<Out> {
        let retry_id = self.next_id("retry");
        let Some(call) = self.calls.get_mut(call_key) else {
            return vec![];
        };
        let mut request = call.request.clone();
        request["id"] = retry_id.clone();
        let params = request
            .get_mut("params")
            .and_then(Value::as_object_mut)
            .expect("a call's request has params");
        if !call.answers.is_empty() {
            params.insert(
                "inputResponses".into(),
                Value::Object(std::mem::take(&mut call.answers)),
            );
        }
        if let Some(state) = call.request_state.take() {
            params.insert("requestState".into(), state);
        }
        self.retries.insert(id_key(&retry_id), call_key.to_owned());
        vec![Out::ToServer(request)]
    }

    fn forget(&mut self, call_key: &str) {
        self.calls.remove(call_key);
        self.asked.retain(|_, (key, _)| key != call_key);
        self.retries.retain(|_, key| key != call_key);
    }

    fn on_server_message(&mut self, mut msg: Value) -> Vec<Out> {
        let Some(id) = msg.get("id").cloned().filter(|_| method_of(&msg).is_none()) else {
            return vec![Out::ToClient(msg)];
        };
        let key = id_key(&id);
        let call_key = self.retries.remove(&key).unwrap_or(key);
        if !self.calls.contains_key(&call_key) {
            return vec![Out::ToClient(msg)];
        }
        let input_required =
            msg.pointer("/result/resultType").and_then(Value::as_str) == Some("input_required");
        if !input_required {
            let call = self.calls.remove(&call_key).expect("checked");
            self.forget(&call_key);
            msg["id"] = call.id;
            return vec![Out::ToClient(msg)];
        }
        let result = msg["result"].take();
        let (client_id, rounds) = {
            let call = self.calls.get_mut(&call_key).expect("checked");
            call.rounds += 1;
            call.request_state = result.get("requestState").cloned();
            call.answers.clear();
            (call.id.clone(), call.rounds)
        };
        if rounds > MAX_INPUT_ROUNDS {
            self.forget(&call_key);
            return vec![Out::ToClient(error(
                client_id,
                -32603,
                &format!("the server asked for input more than {MAX_INPUT_ROUNDS} times; gave up"),
            ))];
        }
        let requests = result
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut out = vec![];
        for (input, request) in &requests {
            let method = method_of(request).unwrap_or_default().to_owned();
            if !declares(&self.capabilities, &method) {
                self.forget(&call_key);
                return vec![Out::ToClient(error(
                    client_id,
                    -32603,
                    &format!(
                        "the server needs input ({method}) that this client cannot give: it did \
                         not declare the {} capability",
                        needed_capability(&method).unwrap_or("needed")
                    ),
                ))];
            }
            let ask = self.next_id("ask");
            self.asked
                .insert(id_key(&ask), (call_key.clone(), input.clone()));
            let mut question = json!({"jsonrpc": "2.0", "id": ask, "method": method});
            if let Some(params) = request.get("params") {
                question["params"] = params.clone();
            }
            out.push(Out::ToClient(question));
        }
        let call = self.calls.get_mut(&call_key).expect("checked");
        call.waiting = out.len();
        if out.is_empty() {
            // Only a request state: retried at once.
            return self.retry(&call_key);
        }
        out
    }
}

/// A modern client's request forwarded to a legacy server.
struct Forwarded {
    /// The client request id the answer goes to (the retry's, after an input round).
    reply_to: Value,
    method: String,
    capabilities: Value,
    /// The client was answered `input_required` and its retry has not come yet.
    awaiting_retry: bool,
    /// Server requests that came while the client had not retried yet.
    queued: Vec<Value>,
    /// The server's final answer, when it came while a retry was awaited.
    finished: Option<Value>,
}

/// An open input round: the server requests the client was asked to answer.
struct Round {
    call: String,
    questions: Vec<(String, Value)>,
}

/// A modern client in front of a legacy server.
pub struct ModernClient {
    server: ServerSide,
    /// Requests forwarded to the server, by the id they were sent with.
    calls: HashMap<String, Forwarded>,
    /// Open input rounds by request state.
    rounds: HashMap<String, Round>,
    next: u64,
}

/// The list results a modern client expects caching hints on.
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

impl ModernClient {
    fn discover_result(&self) -> Value {
        let info = &self.server.info;
        let mut result = json!({
            "resultType": "complete",
            "supportedVersions": era::modern_versions().iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            "capabilities": info.get("capabilities").cloned().unwrap_or(json!({})),
            "ttlMs": 0,
            "cacheScope": "private",
        });
        if let Some(server_info) = info.get("serverInfo") {
            result["_meta"] = json!({ META_SERVER_INFO: server_info });
        }
        if let Some(instructions) = info.get("instructions").filter(|i| i.is_string()) {
            result["instructions"] = instructions.clone();
        }
        result
    }

    /// The request without the modern `_meta` keys and input fields (a legacy server knows
    /// neither).
    fn legacy_form(mut msg: Value) -> Value {
        if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
            params.remove("inputResponses");
            params.remove("requestState");
            let empty = params
                .get_mut("_meta")
                .and_then(Value::as_object_mut)
                .map(|meta| {
                    meta.retain(|key, _| !key.starts_with(META_PREFIX));
                    meta.is_empty()
                })
                .unwrap_or(false);
            if empty {
                params.remove("_meta");
            }
        }
        msg
    }

    fn on_client_message(&mut self, msg: Value) -> Vec<Out> {
        let Some(id) = msg.get("id").cloned() else {
            return match method_of(&msg) {
                Some(_) => vec![Out::ToServer(Self::legacy_form(msg))],
                // A modern client sends no responses.
                None => vec![],
            };
        };
        let Some(method) = method_of(&msg).map(str::to_owned) else {
            return vec![];
        };
        let meta = msg.pointer("/params/_meta");
        if let Some(version) = meta
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str)
            && !era::modern_versions().iter().any(|v| v.as_str() == version)
        {
            return vec![Out::ToClient(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": era::UNSUPPORTED_PROTOCOL_VERSION,
                "message": "Unsupported protocol version",
                "data": {
                    "supported": era::modern_versions().iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                    "requested": version,
                }
            }}))];
        }
        if method == "server/discover" {
            return vec![Out::ToClient(response(id, self.discover_result()))];
        }
        if method == "subscriptions/listen" {
            return vec![Out::ToClient(error(
                id,
                -32601,
                "subscriptions/listen is not available: the server speaks a legacy MCP version, \
                 and plugboard run does not bridge subscriptions to it",
            ))];
        }
        // The retry of a request that was answered `input_required`.
        if let Some(state) = msg.pointer("/params/requestState").and_then(Value::as_str)
            && let Some(round) = self.rounds.remove(state)
        {
            return self.retried(round, id, &msg);
        }
        let capabilities = meta
            .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
            .cloned()
            .unwrap_or(json!({}));
        self.calls.insert(
            id_key(&id),
            Forwarded {
                reply_to: id,
                method,
                capabilities,
                awaiting_retry: false,
                queued: vec![],
                finished: None,
            },
        );
        vec![Out::ToServer(Self::legacy_form(msg))]
    }

    /// The client retried with its answers: they go to the server's pending requests.
    fn retried(&mut self, round: Round, retry_id: Value, msg: &Value) -> Vec<Out> {
        let answers = msg.pointer("/params/inputResponses").cloned();
        let mut out = vec![];
        for (input, server_request) in round.questions {
            let answer = answers.as_ref().and_then(|a| a.get(&input)).cloned();
            out.push(Out::ToServer(match answer {
                Some(answer) => response(server_request, answer),
                None => error(
                    server_request,
                    -32602,
                    "the client gave no answer to this request",
                ),
            }));
        }
        let Some(call) = self.calls.get_mut(&round.call) else {
            return out;
        };
        call.reply_to = retry_id;
        call.awaiting_retry = false;
        if let Some(mut finished) = call.finished.take() {
            let call = self.calls.remove(&round.call).expect("checked");
            finished["id"] = call.reply_to;
            out.push(Out::ToClient(finished));
            return out;
        }
        if !call.queued.is_empty() {
            let queued = std::mem::take(&mut call.queued);
            let key = round.call.clone();
            out.extend(self.ask(&key, queued));
        }
        out
    }

    /// Answer call `key`'s current client request with `input_required` for `requests`.
    fn ask(&mut self, key: &str, requests: Vec<Value>) -> Vec<Out> {
        self.next += 1;
        let state = format!("plugboard-state-{}", self.next);
        let mut input_requests = Map::new();
        let mut questions = vec![];
        for (n, request) in requests.into_iter().enumerate() {
            let input = format!("input-{}", n + 1);
            let mut asked = json!({"method": request["method"].clone()});
            if let Some(params) = request.get("params") {
                asked["params"] = params.clone();
            }
            input_requests.insert(input.clone(), asked);
            questions.push((input, request["id"].clone()));
        }
        let call = self.calls.get_mut(key).expect("an open call");
        call.awaiting_retry = true;
        self.rounds.insert(
            state.clone(),
            Round {
                call: key.to_owned(),
                questions,
            },
        );
        vec![Out::ToClient(response(
            call.reply_to.clone(),
            json!({
                "resultType": "input_required",
                "inputRequests": input_requests,
                "requestState": state,
            }),
        ))]
    }

    fn on_server_message(&mut self, mut msg: Value, origin: Option<Value>) -> Vec<Out> {
        let id = msg.get("id").cloned();
        match (method_of(&msg).map(str::to_owned), id) {
            // A request the legacy server makes of the client.
            (Some(method), Some(id)) => {
                if method == "ping" {
                    return vec![Out::ToServer(response(id, json!({})))];
                }
                let Some(capability) = needed_capability(&method) else {
                    return vec![Out::ToServer(error(
                        id,
                        -32601,
                        &format!(
                            "plugboard run cannot pass {method} on to its client, which speaks \
                             MCP 2026-07-28"
                        ),
                    ))];
                };
                let key = match origin.map(|o| id_key(&o)) {
                    Some(key) if self.calls.contains_key(&key) => Some(key),
                    _ if self.calls.len() == 1 => self.calls.keys().next().cloned(),
                    _ => None,
                };
                let Some(key) = key else {
                    return vec![Out::ToServer(error(
                        id,
                        -32603,
                        &format!(
                            "{method} came while no single request of the client was running, so \
                             it cannot be passed on to the client (MCP 2026-07-28 carries such \
                             requests only inside the answer to one)"
                        ),
                    ))];
                };
                let call = self.calls.get_mut(&key).expect("checked");
                if !declares(&call.capabilities, &method) {
                    return vec![Out::ToServer(error(
                        id,
                        -32601,
                        &format!("the client did not declare the {capability} capability"),
                    ))];
                }
                if call.awaiting_retry {
                    call.queued.push(msg);
                    return vec![];
                }
                self.ask(&key, vec![msg])
            }
            (Some(method), None) => match method.as_str() {
                // Request-scoped notifications reach the client; change notifications need a
                // subscription a legacy server cannot take.
                "notifications/progress" | "notifications/message" | "notifications/cancelled" => {
                    vec![Out::ToClient(msg)]
                }
                _ => vec![],
            },
            (None, Some(id)) => {
                let key = id_key(&id);
                let Some(call) = self.calls.get_mut(&key) else {
                    return vec![Out::ToClient(msg)];
                };
                if let Some(result) = msg.get_mut("result").and_then(Value::as_object_mut) {
                    result
                        .entry("resultType")
                        .or_insert_with(|| json!("complete"));
                    if cacheable(&call.method) {
                        result.entry("ttlMs").or_insert_with(|| json!(0));
                        result
                            .entry("cacheScope")
                            .or_insert_with(|| json!("private"));
                    }
                }
                if call.awaiting_retry {
                    call.finished = Some(msg);
                    return vec![];
                }
                let call = self.calls.remove(&key).expect("checked");
                msg["id"] = call.reply_to;
                vec![Out::ToClient(msg)]
            }
            (None, None) => vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modern_server() -> ServerSide {
        ServerSide {
            era: Era::Modern,
            version: "2026-07-28".into(),
            info: json!({
                "protocolVersion": "2026-07-28",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "m", "version": "1"},
            }),
        }
    }

    fn legacy_server() -> ServerSide {
        ServerSide {
            era: Era::Legacy,
            version: "2025-11-25".into(),
            info: json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "l", "version": "1"},
                "instructions": "be nice",
            }),
        }
    }

    fn to_server(out: &[Out]) -> Vec<&Value> {
        out.iter()
            .filter_map(|o| match o {
                Out::ToServer(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    fn to_client(out: &[Out]) -> Vec<&Value> {
        out.iter()
            .filter_map(|o| match o {
                Out::ToClient(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_legacy_client_of_a_modern_server_gets_initialize_meta_and_input_rounds() {
        let hello = json!({"clientInfo": {"name": "old", "version": "1"}, "capabilities": {"elicitation": {}}});
        let mut t = Translator::new(Era::Legacy, modern_server(), &hello);
        let out = t.on_client_message(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}));
        let init = to_client(&out)[0];
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "m");
        assert!(
            t.on_client_message(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .is_empty()
        );
        assert_eq!(
            to_client(&t.on_client_message(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})))
                [0]["result"],
            json!({})
        );

        let out = t.on_client_message(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}}}));
        let sent = to_server(&out)[0];
        let meta = &sent["params"]["_meta"];
        assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(meta[META_CLIENT_INFO]["name"], "old");
        assert_eq!(meta[META_CLIENT_CAPABILITIES], json!({"elicitation": {}}));

        // The server asks for input: the client is asked, and answers.
        let out = t.on_server_message(json!({"jsonrpc": "2.0", "id": 2, "result": {
            "resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "ok?"}}},
            "requestState": "s1"}}), None);
        let question = to_client(&out)[0].clone();
        assert_eq!(question["method"], "elicitation/create");
        assert_eq!(question["params"]["message"], "ok?");
        let out = t.on_client_message(json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"confirmed": true}}}));
        let retry = to_server(&out)[0].clone();
        assert_ne!(retry["id"], 2, "a retry has an id of its own");
        assert_eq!(retry["params"]["requestState"], "s1");
        assert_eq!(
            retry["params"]["inputResponses"]["confirm"]["action"],
            "accept"
        );
        assert_eq!(retry["params"]["name"], "echo");
        // The final answer goes to the client's own id.
        let out = t.on_server_message(
            json!({"jsonrpc": "2.0", "id": retry["id"], "result": {"resultType": "complete", "content": []}}),
            None,
        );
        assert_eq!(to_client(&out)[0]["id"], 2);
    }

    #[test]
    fn input_a_legacy_client_cannot_give_is_a_clear_error() {
        let hello = json!({"clientInfo": {"name": "old", "version": "1"}, "capabilities": {}});
        let mut t = Translator::new(Era::Legacy, modern_server(), &hello);
        t.on_client_message(
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}}),
        );
        let out = t.on_server_message(
            json!({"jsonrpc": "2.0", "id": 7, "result": {
            "resultType": "input_required",
            "inputRequests": {"s": {"method": "sampling/createMessage", "params": {}}}}}),
            None,
        );
        let answer = to_client(&out)[0];
        assert_eq!(answer["id"], 7);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("did not declare the sampling capability")
        );
    }

    #[test]
    fn a_modern_client_of_a_legacy_server_gets_discover_and_input_required() {
        let mut t = Translator::new(Era::Modern, legacy_server(), &json!({}));
        let meta = json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {"elicitation": {}}, "progressToken": 5});
        let out = t.on_client_message(json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": meta}}));
        let discover = &to_client(&out)[0]["result"];
        assert_eq!(discover["supportedVersions"], json!(["2026-07-28"]));
        assert_eq!(discover["_meta"][META_SERVER_INFO]["name"], "l");
        assert_eq!(discover["instructions"], "be nice");

        let out = t.on_client_message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "_meta": meta}}));
        let sent = to_server(&out)[0];
        assert_eq!(sent["params"]["_meta"], json!({"progressToken": 5}));

        // The legacy server asks the client: the client's call is answered input_required.
        let out = t.on_server_message(
            json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {"message": "ok?"}}),
            Some(json!(1)),
        );
        let answer = to_client(&out)[0];
        assert_eq!(answer["id"], 1);
        assert_eq!(answer["result"]["resultType"], "input_required");
        let state = answer["result"]["requestState"].clone();
        let (input, asked) = answer["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        assert_eq!(asked["method"], "elicitation/create");
        // The retry delivers the answer to the server; the server's final answer goes to it.
        let out = t.on_client_message(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "echo", "_meta": meta, "requestState": state,
            "inputResponses": {input: {"action": "accept", "content": {"confirmed": true}}}}}),
        );
        let delivered = to_server(&out)[0];
        assert_eq!(delivered["id"], "e1");
        assert_eq!(delivered["result"]["action"], "accept");
        let out = t.on_server_message(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
            None,
        );
        let done = to_client(&out)[0];
        assert_eq!(done["id"], 2);
        assert_eq!(done["result"]["resultType"], "complete");
    }

    #[test]
    fn a_legacy_server_request_without_the_capability_is_refused() {
        let mut t = Translator::new(Era::Modern, legacy_server(), &json!({}));
        let meta = json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}});
        t.on_client_message(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}),
        );
        let out = t.on_server_message(
            json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}),
            None,
        );
        let refused = to_server(&out)[0];
        assert_eq!(refused["id"], "r");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("roots")
        );
        let out = t.on_server_message(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
            None,
        );
        let listed = &to_client(&out)[0]["result"];
        assert_eq!(listed["ttlMs"], 0);
        assert_eq!(listed["cacheScope"], "private");
    }

    #[test]
    fn same_era_passes_and_answers_a_legacy_initialize_from_the_handshake() {
        let mut t = Translator::new(Era::Legacy, legacy_server(), &json!({}));
        let out = t.on_client_message(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        );
        assert_eq!(to_client(&out)[0]["result"]["serverInfo"]["name"], "l");
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(t.on_client_message(call.clone()), vec![Out::ToServer(call)]);
        let mut t = Translator::new(Era::Modern, modern_server(), &json!({}));
        let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover"});
        assert_eq!(
            t.on_client_message(discover.clone()),
            vec![Out::ToServer(discover)]
        );
    }
}
