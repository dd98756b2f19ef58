//! `plugboard serve --http`: the gateway as a streamable HTTP endpoint (`/mcp`) on loopback,
//! for clients that connect to a URL instead of launching a command. Every request passes
//! [`Access`] (host, origin, bearer token) before its body is read. A legacy client's
//! `initialize` opens a session (`Mcp-Session-Id`) with a [`Connection`] of its own; each
//! request of a modern client, which says in each who sent it and what that client can answer,
//! gets a connection of its own (what one request leaves for the next, a question put or a
//! call waiting for its answer, is found by its random `requestState`, as in
//! [`AcrossRequests`]). A request is answered on its POST:
//! as JSON, or, when the client accepts it, as an event stream that also carries what the
//! gateway tells that client meanwhile (a question, progress), unless the session opened a
//! stream of its own with GET. DELETE ends a session. All of it runs on the gateway's one
//! thread, beside the hub.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::convert::Infallible;
use std::rc::{Rc, Weak};

use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue, ORIGIN};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

use super::access::{Access, Refused};
use super::hub::Hub;
use super::serve::{AcrossRequests, Clients, Connection, META_SUBSCRIPTION_ID};
use crate::connect::era::META_PROTOCOL_VERSION;

/// The path the gateway answers on.
pub const MCP_PATH: &str = "/mcp";
/// The largest request body read.
const MAX_BODY: usize = 4 * 1024 * 1024;
/// Sessions kept at once, at most: a new one beyond it ends the one unused the longest, among
/// those without an open GET stream first (clients that go away without DELETE leave theirs).
const MAX_SESSIONS: usize = 64;
const SESSION_HEADER: &str = "mcp-session-id";
/// How long a connection may take to send a request's headers before it is closed (a local
/// process holding connections open without a request).
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
// The hub's timer that is always due first must be due before a request's header timer.
const _: () = assert!(HEADER_TIMEOUT.as_millis() > super::hub::ALWAYS_DUE_EVERY.as_millis());

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// One client of the endpoint and where what the gateway says to it goes.
struct Session {
    conn: Rc<Connection>,
    /// When the client last sent something on it.
    used: Cell<std::time::Instant>,
    /// Requests in flight: the client's id (as JSON text) → where its answer goes.
    waiting: RefCell<HashMap<String, oneshot::Sender<Value>>>,
    /// The stream the client opened with GET, while open.
    listening: RefCell<Option<mpsc::UnboundedSender<Value>>>,
    /// The event streams of requests in flight, by request id, newest last.
    streams: RefCell<Vec<(String, mpsc::UnboundedSender<Value>)>>,
}

impl Session {
    fn start(hub: &Rc<Hub>, clients: &Clients, tag: String) -> Rc<Session> {
        let (out, outgoing) = mpsc::unbounded_channel();
        let conn = Connection::new(Rc::clone(hub), out, tag);
        clients.add(&conn);
        let session = Rc::new(Session {
            conn,
            used: Cell::new(std::time::Instant::now()),
            waiting: RefCell::default(),
            listening: RefCell::default(),
            streams: RefCell::default(),
        });
        tokio::task::spawn_local(route(Rc::downgrade(&session), outgoing));
        session
    }

    /// Whether its client keeps a GET stream open (it is still there).
    fn is_listened_to(&self) -> bool {
        self.listening
            .borrow()
            .as_ref()
            .is_some_and(|stream| !stream.is_closed())
    }

    /// Where one message for the client goes: an answer to the request that waits for it; a
    /// notification of a modern client's subscription on that request's stream; anything
    /// else on the client's own stream, else on the newest stream of a request in flight.
    fn deliver(&self, message: Value) {
        if message.get("method").is_none()
            && let Some(id) = message.get("id")
            && let Some(waiting) = self.waiting.borrow_mut().remove(&id.to_string())
        {
            let _ = waiting.send(message);
            return;
        }
        let mut streams = self.streams.borrow_mut();
        streams.retain(|(_, stream)| !stream.is_closed());
        if let Some(subscription) = message
            .pointer("/params/_meta")
            .and_then(|meta| meta.get(META_SUBSCRIPTION_ID))
            .map(Value::to_string)
            && let Some((_, stream)) = streams.iter().find(|(id, _)| *id == subscription)
        {
            let _ = stream.send(message);
            return;
        }
        if let Some(listening) = self.listening.borrow().as_ref()
            && listening.send(message.clone()).is_ok()
        {
            return;
        }
        if let Some((_, stream)) = streams.last() {
            let _ = stream.send(message);
        }
    }
}

/// Hand what the connection says to its client to the session, until either is gone.
async fn route(session: Weak<Session>, mut outgoing: mpsc::UnboundedReceiver<Value>) {
    while let Some(message) = outgoing.recv().await {
        let Some(session) = session.upgrade() else {
            break;
        };
        session.deliver(message);
    }
}

/// The endpoint: its checks, its sessions and the clients of the hub.
struct Endpoint {
    hub: Rc<Hub>,
    clients: Rc<Clients>,
    access: Access,
    sessions: RefCell<HashMap<String, Rc<Session>>>,
    opened: Cell<u64>,
    /// What the modern clients' requests leave for their next ones.
    modern: Rc<AcrossRequests>,
    /// The modern clients' requests so far (each tags its calls with its number).
    modern_requests: Cell<u64>,
}

/// Serve `hub` on `listener` (bound to a loopback address) until the process is told to stop
/// (Ctrl-C or SIGTERM); then every server is closed. Must run inside a `LocalSet`.
pub async fn serve_http(hub: Rc<Hub>, listener: TcpListener, access: Access) {
    let clients = Clients::start(&hub);
    let endpoint = Rc::new(Endpoint {
        hub: Rc::clone(&hub),
        clients,
        access,
        sessions: RefCell::default(),
        opened: Cell::new(0),
        modern: Rc::default(),
        modern_requests: Cell::new(0),
    });
    hub.start_all();
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            _ = tokio::signal::ctrl_c() => break,
            _ = async {
                match terminate.as_mut() {
                    Some(signal) => { signal.recv().await; }
                    None => std::future::pending::<()>().await,
                }
            } => break,
        };
        let endpoint = Rc::clone(&endpoint);
        tokio::task::spawn_local(async move {
            let service = hyper::service::service_fn(move |request| {
                let endpoint = Rc::clone(&endpoint);
                async move { Ok::<_, Infallible>(endpoint.handle(request).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(io, service)
                .await;
        });
    }
    endpoint.sessions.borrow_mut().clear();
    hub.close().await;
}

impl Endpoint {
    async fn handle(self: Rc<Self>, request: Request<Incoming>) -> Response<Body> {
        let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
        if let Err(refused) = self.access.check(
            header(HOST.as_str()),
            header(ORIGIN.as_str()),
            header(AUTHORIZATION.as_str()),
        ) {
            return match refused {
                Refused::Forbidden(why) => plain(StatusCode::FORBIDDEN, &why),
                Refused::Unauthorized => {
                    let mut response = plain(
                        StatusCode::UNAUTHORIZED,
                        "this gateway needs its bearer token: `plugboard serve --profile \
                         PROFILE --print-headers` prints it for a client's headers helper",
                    );
                    response
                        .headers_mut()
                        .insert("www-authenticate", HeaderValue::from_static("Bearer"));
                    response
                }
            };
        }
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "the gateway answers on /mcp");
        }
        let session_id = header(SESSION_HEADER).map(str::to_owned);
        let streams = header(ACCEPT.as_str()).is_some_and(|a| a.contains("text/event-stream"));
        match *request.method() {
            Method::POST => self.post(request, session_id, streams).await,
            Method::GET => self.listen(session_id, streams),
            Method::DELETE => self.end(session_id),
            _ => plain(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE"),
        }
    }

    async fn post(
        &self,
        request: Request<Incoming>,
        session_id: Option<String>,
        streams: bool,
    ) -> Response<Body> {
        let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "a message is at most 4 MiB, read in full",
                );
            }
        };
        let message: Value = match serde_json::from_slice(&body) {
            Ok(message) => message,
            Err(e) => return json_response(StatusCode::BAD_REQUEST, &super::serve::not_json(&e)),
        };
        if !message.is_object() {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
                    "message": "one JSON-RPC message per request (no batches)"}}),
            );
        }
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null()).cloned();
        let opens = method == Some("initialize") && id.is_some();
        let (session, new_id) = if opens {
            let (id, session) = self.open_session();
            (session, Some(id))
        } else if let Some(sid) = &session_id {
            match self.sessions.borrow().get(sid) {
                Some(session) => (Rc::clone(session), None),
                None => return plain(StatusCode::NOT_FOUND, "no such session; initialize again"),
            }
        } else if is_modern(&message) || method.is_none() {
            let is_request = method.is_some();
            return self.post_modern(message, id, is_request, streams).await;
        } else {
            return plain(
                StatusCode::BAD_REQUEST,
                "send `initialize` first, then its Mcp-Session-Id with every request",
            );
        };
        session.used.set(std::time::Instant::now());
        let (Some(_), Some(id)) = (method, id) else {
            // A notification, or the answer to one of the gateway's questions.
            tokio::task::spawn_local(Rc::clone(&session.conn).on_message(message));
            return empty(StatusCode::ACCEPTED);
        };
        let key = id.to_string();
        let (answer_to, answer) = oneshot::channel();
        session.waiting.borrow_mut().insert(key.clone(), answer_to);
        tokio::task::spawn_local(Rc::clone(&session.conn).on_message(message));
        let mut response = if streams {
            answer_or_stream(stream_of_request(&session, key, id.clone(), answer), &id).await
        } else {
            match answer.await {
                Ok(answer) => json_response(StatusCode::OK, &answer),
                Err(_) => plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the request got no answer",
                ),
            }
        };
        if let Some(new_id) = new_id
            && let Ok(value) = HeaderValue::from_str(&new_id)
        {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
        response
    }

    /// A modern client's message, served by a connection of its own (the request says who
    /// sent it and what it can answer): a request's answer as JSON, or as an event stream of
    /// what comes before it. Such a client is sent no requests, so an answer from it answers
    /// nothing.
    async fn post_modern(
        &self,
        message: Value,
        id: Option<Value>,
        is_request: bool,
        streams: bool,
    ) -> Response<Body> {
        let number = self.modern_requests.get() + 1;
        self.modern_requests.set(number);
        let (out, outgoing) = mpsc::unbounded_channel();
        let conn = Connection::for_request(
            Rc::clone(&self.hub),
            out,
            format!("m{number}-"),
            Rc::clone(&self.modern),
        );
        self.clients.add(&conn);
        let (true, Some(id)) = (is_request, id) else {
            Rc::clone(&conn).on_message(message).await;
            return empty(StatusCode::ACCEPTED);
        };
        tokio::task::spawn_local(Rc::clone(&conn).on_message(message));
        let messages = until_answered(conn, outgoing, id.clone());
        if streams {
            answer_or_stream(messages, &id).await
        } else {
            only_the_answer(messages, &id).await
        }
    }

    /// A new session; with [`MAX_SESSIONS`] open, the one unused the longest ends first.
    fn open_session(&self) -> (String, Rc<Session>) {
        {
            let mut sessions = self.sessions.borrow_mut();
            if sessions.len() >= MAX_SESSIONS
                && let Some(oldest) = sessions
                    .iter()
                    .min_by_key(|(_, session)| (session.is_listened_to(), session.used.get()))
                    .map(|(id, _)| id.clone())
            {
                sessions.remove(&oldest);
            }
        }
        let seq = self.opened.get() + 1;
        self.opened.set(seq);
        let id = format!("{:032x}", rand::random::<u128>());
        let session = Session::start(&self.hub, &self.clients, format!("s{seq}-"));
        self.sessions
            .borrow_mut()
            .insert(id.clone(), Rc::clone(&session));
        (id, session)
    }

    /// GET: the session's own stream of what the gateway tells its client.
    fn listen(&self, session_id: Option<String>, streams: bool) -> Response<Body> {
        let Some(session) = session_id.and_then(|sid| self.sessions.borrow().get(&sid).cloned())
        else {
            return plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "a stream of its own needs a session (initialize first)",
            );
        };
        if !streams {
            return plain(StatusCode::NOT_ACCEPTABLE, "accept text/event-stream");
        }
        let (tx, rx) = mpsc::unbounded_channel();
        session.used.set(std::time::Instant::now());
        *session.listening.borrow_mut() = Some(tx);
        event_stream(None, rx)
    }

    /// DELETE: end a session.
    fn end(&self, session_id: Option<String>) -> Response<Body> {
        match session_id.and_then(|sid| self.sessions.borrow_mut().remove(&sid)) {
            Some(_) => empty(StatusCode::NO_CONTENT),
            None => plain(StatusCode::NOT_FOUND, "no such session"),
        }
    }
}

/// The stream of one request: what the gateway tells the client meanwhile, then its answer.
/// When the client closes it first, the request is cancelled (a modern client's subscription
/// ends that way).
fn stream_of_request(
    session: &Rc<Session>,
    key: String,
    id: Value,
    answer: oneshot::Receiver<Value>,
) -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    session.streams.borrow_mut().push((key.clone(), tx.clone()));
    let session = Rc::clone(session);
    tokio::task::spawn_local(async move {
        tokio::select! {
            answered = answer => {
                if let Ok(answer) = answered {
                    let _ = tx.send(answer);
                }
            }
            _ = tx.closed() => {
                session.waiting.borrow_mut().remove(&key);
                let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id}});
                Rc::clone(&session.conn).on_message(cancelled).await;
            }
        }
        session.streams.borrow_mut().retain(|(k, _)| *k != key);
    });
    rx
}

/// What `conn` tells its client until the answer to its request `id`, which ends it. When the
/// client closes the stream first, the request is cancelled (a modern client's subscription
/// ends that way).
fn until_answered(
    conn: Rc<Connection>,
    mut outgoing: mpsc::UnboundedReceiver<Value>,
    id: Value,
) -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::task::spawn_local(async move {
        loop {
            let message = tokio::select! {
                message = outgoing.recv() => message,
                _ = tx.closed() => None,
            };
            let Some(message) = message else { break };
            let last = answers(&message, &id);
            if tx.send(message).is_err() {
                break;
            }
            if last {
                return;
            }
        }
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}});
        conn.on_message(cancelled).await;
    });
    rx
}

/// The answer to request `id` as JSON, for a client that takes no event stream (what came
/// before it is left out).
async fn only_the_answer(
    mut messages: mpsc::UnboundedReceiver<Value>,
    id: &Value,
) -> Response<Body> {
    while let Some(message) = messages.recv().await {
        if answers(&message, id) {
            return json_response(StatusCode::OK, &message);
        }
    }
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the request got no answer",
    )
}

/// Whether `message` is the answer to request `id`.
fn answers(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message.get("id") == Some(id)
}

/// Whether a message comes from a client of the 2026-07-28 era (it says so in each request).
fn is_modern(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str) == Some("server/discover")
        || message
            .pointer("/params/_meta")
            .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
            .is_some()
}

/// The answer to request `id` as plain JSON when it comes before anything else for that
/// request (most calls: one response, no stream to keep open); else an event stream that starts
/// with what came first (progress, a question of its server) and ends with the answer.
async fn answer_or_stream(
    mut messages: mpsc::UnboundedReceiver<Value>,
    id: &Value,
) -> Response<Body> {
    let Some(first) = messages.recv().await else {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the request got no answer",
        );
    };
    if answers(&first, id) {
        return json_response(StatusCode::OK, &first);
    }
    event_stream(Some(first), messages)
}

fn event_stream(first: Option<Value>, messages: mpsc::UnboundedReceiver<Value>) -> Response<Body> {
    let events = futures::stream::unfold((first, messages), |(first, mut messages)| async move {
        let message = match first {
            Some(message) => message,
            None => messages.recv().await?,
        };
        let event = format!("event: message\ndata: {message}\n\n");
        Some((
            Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
            (None, messages),
        ))
    });
    let mut response = Response::new(StreamBody::new(events).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", HeaderValue::from_static("no-store"));
    response
}

fn json_response(status: StatusCode, message: &Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_string())).boxed_unsync());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *response.status_mut() = status;
    response
}
