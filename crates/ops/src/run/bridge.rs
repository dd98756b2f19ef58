//! The remote bridge of `plugboard run`: stdio on one side, streamable HTTP (rmcp's client
//! transport, either protocol era) or legacy SSE (ours) on the other, a client of either era
//! in front of a server of either era.
//!
//! The client's first message says its era (`initialize`: legacy; `server/discover` or a
//! request with the modern `_meta`: modern) and who it is. The bridge then does the handshake
//! with the server itself, as the connection layer does for a test (the era remembered from the
//! server's last test, else the probe; `auto`: streamable HTTP, then SSE), with the client's
//! identity and capabilities, and from there a [`Translator`] carries every message across the
//! eras (`translate`).
//!
//! Each line on stdin is a JSON-RPC message from the client; what it turns into for the server
//! is handed to the transport in order (each send is started before the next line is read, so
//! ordering is kept while requests still run concurrently). What the transport receives —
//! responses, notifications, requests of a legacy server — goes the other way, one message per
//! line on stdout. Both directions pass one place each ([`to_server`], [`to_client`]), where a
//! message filter hooks in. When a request cannot be delivered, the client gets a JSON-RPC
//! error for it instead of waiting forever.
//!
//! Auth: the resolved headers (API keys, bearer tokens, custom headers) are on every request.
//! For OAuth servers on streamable HTTP the access token is added per request, refreshed before
//! it expires, and after a 401 refreshed once and the request retried once. A headers helper's
//! headers are likewise added per request: its kept output while the helper's ttl lasts, then
//! a new run, and after a 401 or 403 a new run and the request retried once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::GetExtensions;
use rmcp::model::{ClientConfig, ClientJsonRpcMessage, JsonRpcMessage, ProtocolVersion, RequestId};
use rmcp::service::InboundStreamOrigin;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{Mutex, mpsc};
use tokio::time::Instant;

use super::client_io::RelaySide;
use super::translate::{Out, ServerSide, Translator};
use super::{OAuthSession, RunError, diag};
use crate::config::TransportKind;
use crate::connect::era::{
    self, Era, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION,
};
use crate::connect::handshake::{Handshake, HandshakeError, Negotiated, Reprobe, Wire};
use crate::connect::http::{
    HttpRequests, Limited, SseStream, build_client, shttp_fault, transport_config,
};
use crate::connect::sse::SseTransport;
use crate::connect::{ConnectError, HttpFault, MAX_MESSAGE, Monitor, NetKind};
use crate::redact::Redactor;
use crate::resolve::RemoteTarget;
use crate::secrets::Sensitive;

/// After the client closed stdin, how long answers to its last requests are still awaited.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// How often the OAuth token is checked for expiry (a refresh happens only near expiry).
const TOKEN_CHECK_EVERY: Duration = Duration::from_secs(30);

/// A server's headers helper, whose headers the bridge adds to each request.
pub struct HelperSource {
    pub name: String,
    pub url: String,
    pub helper: crate::config::HeadersHelper,
}

/// The OAuth part of the bridge: the session and when its token was last checked.
struct TokenState {
    session: OAuthSession,
    checked: Instant,
}

/// The HTTP client handed to rmcp's streamable HTTP transport: our reqwest client (resolved
/// headers, same-origin redirects only), faults recorded to the monitor, and the OAuth token
/// added, refreshed and retried once after a 401.
#[derive(Clone)]
struct BridgeClient {
    inner: reqwest::Client,
    monitor: Arc<Monitor>,
    oauth: Option<Arc<Mutex<TokenState>>>,
    helper: Option<Arc<HelperSource>>,
    redactor: Redactor,
    name: Arc<str>,
}

fn is_401_or_403(err: &StreamableHttpError<reqwest::Error>) -> bool {
    matches!(
        shttp_fault(err),
        HttpFault::Status {
            status: 401 | 403,
            ..
        }
    )
}

fn is_401(err: &StreamableHttpError<reqwest::Error>) -> bool {
    matches!(shttp_fault(err), HttpFault::Status { status: 401, .. })
}

impl BridgeClient {
    /// `custom` with the headers helper's headers (a new run when `again`, or when its ttl has
    /// passed); `None` without a helper, or when it failed (said on stderr).
    async fn with_helper_headers(
        &self,
        custom: &HashMap<HeaderName, HeaderValue>,
        again: bool,
    ) -> Option<HashMap<HeaderName, HeaderValue>> {
        let source = self.helper.clone()?;
        let got = tokio::task::spawn_blocking(move || {
            if again {
                crate::headers_helper::expire(&source.name, &source.url, &source.helper);
            }
            crate::headers_helper::headers(&source.name, &source.url, &source.helper)
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        match got {
            Ok(headers) => {
                let mut all = custom.clone();
                crate::connect::http::add_headers(&mut all, headers);
                Some(all)
            }
            Err(e) => {
                diag(&self.redactor, &self.name, &e);
                None
            }
        }
    }

    /// The token to send now (refreshed first if it is about to expire).
    async fn token(&self) -> Option<String> {
        let oauth = self.oauth.as_ref()?;
        let mut state = oauth.lock().await;
        if state.checked.elapsed() >= TOKEN_CHECK_EVERY {
            state.checked = Instant::now();
            let s = &state.session;
            match s.context.fresh_access_token(&s.name, &s.server).await {
                Ok(Some(token)) => state.session.token = token,
                Ok(None) => {}
                Err(e) => diag(&self.redactor, &self.name, &e.to_string()),
            }
        }
        Some(state.session.token.expose().clone())
    }

    /// After a 401 to `sent`: a fresh token (refreshed unless someone already did), or `None`.
    async fn refreshed_after_401(&self, sent: &str) -> Option<String> {
        let oauth = self.oauth.as_ref()?;
        let mut state = oauth.lock().await;
        if state.session.token.expose() != sent {
            return Some(state.session.token.expose().clone());
        }
        let rejected = Sensitive::new(sent.to_string());
        let s = &state.session;
        match s
            .context
            .refresh_after_401(&s.name, &s.server, &rejected)
            .await
        {
            Ok(token) => {
                state.session.token = token;
                state.checked = Instant::now();
                Some(state.session.token.expose().clone())
            }
            Err(e) => {
                diag(&self.redactor, &self.name, &e.to_string());
                None
            }
        }
    }

    fn observe<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        if let Err(err) = &result {
            self.monitor.record_http(shttp_fault(err));
        }
        result
    }
}

impl HttpRequests for BridgeClient {
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let token = self.token().await.or(auth_header);
        let custom_headers = self
            .with_helper_headers(&custom_headers, false)
            .await
            .unwrap_or(custom_headers);
        let result = self
            .inner
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token.clone(),
                custom_headers.clone(),
                limits,
            )
            .await;
        if let Err(err) = &result
            && is_401_or_403(err)
            && let Some(again) = self.with_helper_headers(&custom_headers, true).await
        {
            let retried = self
                .inner
                .post_message_with_response_limits(uri, message, session_id, token, again, limits)
                .await;
            return self.observe(retried);
        }
        if let (Err(err), Some(sent)) = (&result, &token)
            && is_401(err)
            && let Some(fresh) = self.refreshed_after_401(sent).await
        {
            let retried = self
                .inner
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    Some(fresh),
                    custom_headers,
                    limits,
                )
                .await;
            return self.observe(retried);
        }
        self.observe(result)
    }

    async fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let token = self.token().await.or(auth_header);
        let custom_headers = self
            .with_helper_headers(&custom_headers, false)
            .await
            .unwrap_or(custom_headers);
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<reqwest::Error>> {
        let token = self.token().await.or(auth_header);
        let custom_headers = self
            .with_helper_headers(&custom_headers, false)
            .await
            .unwrap_or(custom_headers);
        let result = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
            .await;
        if let Err(err) = &result
            && is_401_or_403(err)
            && let Some(again) = self.with_helper_headers(&custom_headers, true).await
        {
            return self
                .inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    token,
                    again,
                    max_sse_event_size,
                )
                .await;
        }
        if let (Err(err), Some(sent)) = (&result, &token)
            && is_401(err)
            && let Some(fresh) = self.refreshed_after_401(sent).await
        {
            return self
                .inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    Some(fresh),
                    custom_headers,
                    max_sse_event_size,
                )
                .await;
        }
        result
    }
}

/// A message read from stdin, or a line that is not one.
/// A line read from stdin: a JSON-RPC message, or a line that is not one.
pub(super) enum Incoming {
    Message(serde_json::Value),
    /// Not a JSON-RPC message; answered with an error if it has an id.
    Invalid {
        id: Option<serde_json::Value>,
        detail: String,
    },
}

/// Read stdin line by line into `tx` (a task of its own: reading stdin is not cancel safe).
fn spawn_stdin_reader(tx: mpsc::Sender<Incoming>, input: DuplexStream) {
    spawn_line_reader(BufReader::with_capacity(64 * 1024, input), tx);
}

/// Read `reader` line by line into `tx`, each line a message from the client.
pub(super) fn spawn_line_reader<R>(mut reader: BufReader<R>, tx: mpsc::Sender<Incoming>)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut line = Vec::new();
        loop {
            line.clear();
            match (&mut reader)
                .take(MAX_MESSAGE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line.len() > MAX_MESSAGE {
                let _ = tx
                    .send(Incoming::Invalid {
                        id: None,
                        detail: format!("a message from the client exceeds {MAX_MESSAGE} bytes"),
                    })
                    .await;
                return;
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let incoming = match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(message) if message.is_object() => Incoming::Message(message),
                Ok(other) => Incoming::Invalid {
                    id: None,
                    detail: format!(
                        "not a JSON-RPC message from a client (batches are not supported): {}",
                        crate::connect::truncate_chars(&other.to_string(), 80)
                    ),
                },
                Err(err) => Incoming::Invalid {
                    id: None,
                    detail: format!("not JSON: {err}"),
                },
            };
            if tx.send(incoming).await.is_err() {
                return;
            }
        }
    });
}

/// One line to stdout.
async fn write_line(out: &mut DuplexStream, value: &impl serde::Serialize) -> bool {
    let Ok(mut bytes) = serde_json::to_vec(value) else {
        return true;
    };
    bytes.push(b'\n');
    out.write_all(&bytes).await.is_ok() && out.flush().await.is_ok()
}

fn error_response(id: serde_json::Value, code: i64, message: &str) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
}

/// Set to log a one-line summary of every relayed message to stderr (redacted).
pub const TRACE_ENV: &str = "PLUGBOARD_RUN_TRACE";

/// `method #id` or `response #id` of a JSON-RPC message.
fn summary(message: &serde_json::Value) -> String {
    let id = message
        .get("id")
        .map(|i| format!(" #{i}"))
        .unwrap_or_default();
    match message.get("method").and_then(serde_json::Value::as_str) {
        Some(method) => format!("{method}{id}"),
        None if message.get("error").is_some() => format!("error{id}"),
        None => format!("response{id}"),
    }
}

fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

/// Why the relay loop ended.
enum Ended {
    /// The client closed stdin (or stdout).
    Client,
    /// The server side ended.
    Server,
    Signal(i32),
}

type SendResult = (Option<RequestId>, Result<(), String>);

/// Both sides of a bridged session and the state between them: the one place messages pass.
struct Session<'a, T> {
    name: &'a str,
    transport: T,
    translator: Translator,
    out: DuplexStream,
    sends: FuturesUnordered<BoxFuture<'static, SendResult>>,
    /// Requests sent to the server and not answered yet (their ids on the server side): after
    /// the client closes stdin, their answers are still delivered (for up to DRAIN_LIMIT).
    outstanding: HashSet<String>,
    monitor: Arc<Monitor>,
    redactor: &'a Redactor,
    trace: bool,
}

impl<T> Session<'_, T>
where
    T: Transport<RoleClient> + 'static,
{
    /// Write to the client; `false` when stdout is gone.
    async fn write(&mut self, message: &serde_json::Value) -> bool {
        if self.trace {
            diag(self.redactor, self.name, &format!("← {}", summary(message)));
        }
        write_line(&mut self.out, message).await
    }

    /// Carry out what the translator decided; `false` when stdout is gone.
    async fn apply(&mut self, outs: Vec<Out>) -> bool {
        for out in outs {
            let ok = match out {
                Out::ToClient(message) => self.write(&message).await,
                Out::ToServer(message) => self.send(message).await,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Hand one message to the transport (its first poll queues it, in order).
    async fn send(&mut self, message: serde_json::Value) -> bool {
        if self.trace {
            diag(
                self.redactor,
                self.name,
                &format!("→ {}", summary(&message)),
            );
        }
        let typed = match serde_json::from_value::<ClientJsonRpcMessage>(message.clone()) {
            Ok(typed) => typed,
            Err(err) => {
                let detail = format!("not a JSON-RPC message from a client: {err}");
                diag(self.redactor, self.name, &detail);
                return match message
                    .get("id")
                    .filter(|_| message.get("method").is_some())
                {
                    Some(id) => {
                        let answer = error_response(id.clone(), -32600, &detail);
                        let outs = self.translator.on_server_message(answer, None);
                        Box::pin(self.apply(outs)).await
                    }
                    None => true,
                };
            }
        };
        let id = request_id(&typed);
        if let Some(id) = &id {
            self.outstanding.insert(id_key(id));
        }
        let mut send = Box::pin(self.transport.send(typed));
        match futures::poll!(&mut send) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => {
                let e = e.to_string();
                self.sends.push(Box::pin(async move { (id, Err(e)) }));
            }
            Poll::Pending => self.sends.push(Box::pin(async move {
                (id, send.await.map_err(|e| e.to_string()))
            })),
        }
        true
    }

    /// A message from the client, on its way to the server.
    async fn forward_to_server(&mut self, message: serde_json::Value) -> bool {
        let outs = self.translator.on_client_message(message);
        self.apply(outs).await
    }

    /// A message from the server, on its way to the client.
    async fn forward_to_client(&mut self, message: rmcp::model::ServerJsonRpcMessage) -> bool {
        let origin = match &message {
            JsonRpcMessage::Request(request) => {
                match request.request.extensions().get::<InboundStreamOrigin>() {
                    Some(InboundStreamOrigin::OutboundRequest(id)) => serde_json::to_value(id).ok(),
                    _ => None,
                }
            }
            _ => None,
        };
        match &message {
            JsonRpcMessage::Response(r) => {
                self.outstanding.remove(&id_key(&r.id));
            }
            JsonRpcMessage::Error(e) => {
                if let Some(id) = &e.id {
                    self.outstanding.remove(&id_key(id));
                }
            }
            _ => {}
        }
        let value = serde_json::to_value(&message).unwrap_or_default();
        let outs = self.translator.on_server_message(value, origin);
        self.apply(outs).await
    }

    /// The client gets an error for server-side request `id` (through the translator, which
    /// knows the client's id for it).
    async fn fail(&mut self, id: RequestId, detail: &str) -> bool {
        if !self.outstanding.remove(&id_key(&id)) {
            return true;
        }
        let text = self.redactor.redact(&format!(
            "plugboard could not deliver the request: {detail}"
        ));
        let id = serde_json::to_value(&id).unwrap_or(serde_json::Value::Null);
        let outs = self
            .translator
            .on_server_message(error_response(id, -32603, &text), None);
        self.apply(outs).await
    }
}

/// Relay between stdio and `transport` until one side ends. `first` is the client's first
/// message (the handshake has been done with what it said). `own_signals`: SIGINT/SIGTERM/SIGHUP
/// end the relay (a stdio server's relay forwards them to the server instead).
pub(super) async fn relay<T>(
    name: &str,
    transport: T,
    translator: Translator,
    first: serde_json::Value,
    mut incoming: mpsc::Receiver<Incoming>,
    monitor: Arc<Monitor>,
    redactor: &Redactor,
    own_signals: bool,
    out: DuplexStream,
) -> i32
where
    T: Transport<RoleClient> + 'static,
{
    let mut session = Session {
        name,
        transport,
        translator,
        out,
        sends: FuturesUnordered::new(),
        outstanding: HashSet::new(),
        monitor,
        redactor,
        trace: std::env::var_os(TRACE_ENV).is_some(),
    };
    // Without signals of its own, a channel that never yields (its sender kept alive).
    let (_no_signals, quiet) = mpsc::channel(1);
    let mut signals = if own_signals { signal_events() } else { quiet };
    let mut stdin_open = true;
    let mut drain_deadline = Instant::now() + Duration::from_secs(3600 * 24);
    let ended = if !session.forward_to_server(first).await {
        Ended::Client
    } else {
        loop {
            if !stdin_open && session.outstanding.is_empty() && session.sends.is_empty() {
                break Ended::Client;
            }
            tokio::select! {
                next = incoming.recv(), if stdin_open => match next {
                    None => {
                        stdin_open = false;
                        drain_deadline = Instant::now() + DRAIN_LIMIT;
                    }
                    Some(Incoming::Invalid { id, detail }) => {
                        diag(redactor, name, &detail);
                        if let Some(id) = id
                            && !session.write(&error_response(id, -32600, &detail)).await
                        {
                            break Ended::Client;
                        }
                    }
                    Some(Incoming::Message(message)) => {
                        if !session.forward_to_server(message).await {
                            break Ended::Client;
                        }
                    }
                },
                received = session.transport.receive() => match received {
                    Some(message) => {
                        if !session.forward_to_client(message).await {
                            break Ended::Client;
                        }
                    }
                    None => break Ended::Server,
                },
                Some((id, result)) = session.sends.next(), if !session.sends.is_empty() => {
                    if let Err(detail) = result {
                        let detail = describe_failure(&session.monitor, &detail);
                        diag(redactor, name, &detail);
                        if let Some(id) = id
                            && !session.fail(id, &detail).await
                        {
                            break Ended::Client;
                        }
                    }
                },
                Some(sig) = signals.recv() => break Ended::Signal(sig),
                _ = tokio::time::sleep_until(drain_deadline), if !stdin_open => break Ended::Client,
            }
        }
    };
    let code = match ended {
        Ended::Client => 0,
        Ended::Signal(sig) => 128 + sig,
        Ended::Server => {
            // Answer every request still waiting, so the client is not left hanging: first
            // with the failures of sends that were under way, then with the end itself.
            let deadline = Instant::now() + Duration::from_secs(1);
            while !session.sends.is_empty() {
                let Ok(Some((id, result))) =
                    tokio::time::timeout_at(deadline, session.sends.next()).await
                else {
                    break;
                };
                if let (Err(detail), Some(id)) = (result, id) {
                    let detail = describe_failure(&session.monitor, &detail);
                    session.fail(id, &detail).await;
                }
            }
            let detail = describe_failure(&session.monitor, "the connection to the server ended");
            diag(redactor, name, &detail);
            let waiting: Vec<String> = session.outstanding.iter().cloned().collect();
            for key in waiting {
                if let Ok(id) = serde_json::from_str::<RequestId>(&key) {
                    session.fail(id, &detail).await;
                }
            }
            1
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), session.transport.close()).await;
    let _ = session.out.flush().await;
    code
}

/// A failure with what the monitor saw at the HTTP level.
fn describe_failure(monitor: &Monitor, detail: &str) -> String {
    match monitor.snapshot().http {
        Some(HttpFault::Status {
            status: 401 | 403, ..
        }) => format!(
            "{detail}: the server refused the credentials (HTTP 401/403); update them with \
             `plugboard edit` (or sign in again with `plugboard auth`)"
        ),
        Some(HttpFault::Status { status, body, .. }) => {
            format!("{detail}: HTTP {status} {}", body.trim())
        }
        // No answer at all: where and why, without the request that could not be sent.
        Some(HttpFault::Network {
            kind: NetKind::Refused,
            target,
            ..
        }) => format!("connection refused at {target}: is the server running?"),
        Some(HttpFault::Network {
            detail: net,
            target,
            ..
        }) => format!("cannot reach {target}: {net}"),
        Some(other) => format!("{detail}: {other:?}"),
        None => detail.to_string(),
    }
}

/// SIGINT, SIGTERM and SIGHUP as events.
fn signal_events() -> mpsc::Receiver<i32> {
    let (tx, rx) = mpsc::channel(4);
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        for kind in [
            SignalKind::interrupt(),
            SignalKind::terminate(),
            SignalKind::hangup(),
        ] {
            if let Ok(mut stream) = signal(kind) {
                let tx = tx.clone();
                let raw = kind.as_raw_value();
                tokio::spawn(async move {
                    while stream.recv().await.is_some() {
                        let _ = tx.send(raw).await;
                    }
                });
            }
        }
    }
    #[cfg(not(unix))]
    drop(tx);
    rx
}

fn shttp_transport(
    target: &RemoteTarget,
    headers: &[(String, Sensitive<String>)],
    oauth: Option<Arc<Mutex<TokenState>>>,
    helper: Option<Arc<HelperSource>>,
    monitor: Arc<Monitor>,
    redactor: &Redactor,
    name: &str,
) -> Result<StreamableHttpClientTransport<Limited<BridgeClient>>, RunError> {
    let client = build_client(headers, monitor.clone()).map_err(connect_error)?;
    Ok(StreamableHttpClientTransport::with_client(
        Limited(BridgeClient {
            inner: client,
            monitor,
            oauth,
            helper,
            redactor: redactor.clone(),
            name: name.into(),
        }),
        transport_config(&target.url),
    ))
}

fn connect_error(err: ConnectError) -> RunError {
    RunError::Failed(err.to_string())
}

/// Connect to the legacy SSE endpoint; with OAuth, refresh once after a 401.
async fn sse_transport(
    target: &RemoteTarget,
    headers: &[(String, Sensitive<String>)],
    oauth: Option<&Arc<Mutex<TokenState>>>,
    monitor: Arc<Monitor>,
) -> Result<SseTransport, ConnectError> {
    let with_token = |token: Option<&Sensitive<String>>| {
        let mut all: Vec<(String, Sensitive<String>)> = headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(token) = token {
            all.push((
                "Authorization".into(),
                Sensitive::new(format!("Bearer {}", token.expose())),
            ));
        }
        all
    };
    let token = match oauth {
        Some(o) => Some(o.lock().await.session.token.clone()),
        None => None,
    };
    let client = build_client(&with_token(token.as_ref()), monitor.clone())?;
    match SseTransport::connect(client, target.url.clone(), monitor.clone()).await {
        Err(ConnectError::Http(HttpFault::Status { status: 401, .. }))
            if oauth.is_some() && token.is_some() =>
        {
            let state = oauth.expect("checked");
            let fresh = {
                let mut state = state.lock().await;
                let s = &state.session;
                let fresh = s
                    .context
                    .refresh_after_401(&s.name, &s.server, token.as_ref().expect("checked"))
                    .await
                    .map_err(|e| ConnectError::Sse(e.to_string()))?;
                state.session.token = fresh.clone();
                fresh
            };
            let client = build_client(&with_token(Some(&fresh)), monitor.clone())?;
            SseTransport::connect(client, target.url.clone(), monitor).await
        }
        other => other,
    }
}

/// What the client's first message says: its era, and who it is (as the handshake with the
/// server presents it: its `initialize` params, or its request `_meta`).
pub(super) struct ClientHello {
    pub(super) era: Era,
    /// `clientInfo` and `capabilities` (JSON, for the translator).
    pub(super) json: serde_json::Value,
    pub(super) config: ClientConfig,
    /// The version a legacy client asked for, when Plugboard speaks it.
    pub(super) legacy_version: Option<ProtocolVersion>,
}

pub(super) fn client_hello(first: &serde_json::Value) -> ClientHello {
    let params = first.get("params").cloned().unwrap_or_default();
    let meta = params.get("_meta");
    let modern_meta = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).is_some();
    let method = first.get("method").and_then(serde_json::Value::as_str);
    if method == Some("initialize") {
        let config = serde_json::from_value::<ClientConfig>(params.clone())
            .unwrap_or_else(|_| crate::connect::client_config());
        let legacy_version = params
            .get("protocolVersion")
            .and_then(serde_json::Value::as_str)
            .and_then(|v| era::legacy_versions().into_iter().find(|l| l.as_str() == v));
        return ClientHello {
            era: Era::Legacy,
            json: serde_json::json!({
                "clientInfo": params.get("clientInfo").cloned().unwrap_or_default(),
                "capabilities": params.get("capabilities").cloned().unwrap_or_default(),
            }),
            config,
            legacy_version,
        };
    }
    if method == Some("server/discover") || modern_meta {
        let info = meta
            .and_then(|m| m.get(META_CLIENT_INFO))
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"name": "unknown", "version": ""}));
        let capabilities = meta
            .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}));
        let config = serde_json::from_value::<ClientConfig>(serde_json::json!({
            "protocolVersion": era::legacy_request_version().as_str(),
            "capabilities": capabilities,
            "clientInfo": info,
        }))
        .unwrap_or_else(|_| crate::connect::client_config());
        return ClientHello {
            era: Era::Modern,
            json: serde_json::json!({"clientInfo": info, "capabilities": capabilities}),
            config,
            legacy_version: None,
        };
    }
    // Anything else first: a legacy client that skipped `initialize`.
    ClientHello {
        era: Era::Legacy,
        json: serde_json::json!({}),
        config: crate::connect::client_config(),
        legacy_version: None,
    }
}

/// The handshake with the server on `transport`, for a client that said `hello`.
async fn shake<T>(
    transport: &mut T,
    hello: &ClientHello,
    known: Option<Era>,
    legacy_only: bool,
) -> Result<Negotiated, Result<Reprobe, HandshakeError>>
where
    T: Transport<RoleClient> + 'static,
{
    let mut steps = |_| {};
    let shake = Handshake {
        transport,
        hello: &hello.config,
        wire: Wire::Http,
        steps: &mut steps,
        legacy_version: hello.legacy_version.clone(),
    };
    if legacy_only {
        return shake.legacy(false).await;
    }
    match known {
        Some(Era::Legacy) => shake.legacy(true).await,
        _ => shake.probe(known).await.map_err(Err),
    }
}

/// The server side of a bridged session after the handshake.
enum Connected {
    Shttp(StreamableHttpClientTransport<Limited<BridgeClient>>),
    Sse(SseTransport),
}

/// Why the bridge could not get going with the server.
enum Unreachable {
    Connect(ConnectError),
    Handshake(HandshakeError),
    Other(RunError),
}

/// Bridge stdio to the remote server until the client or the server ends; returns the exit code.
/// `known` is the server's era from its last test.
pub async fn bridge(
    name: &str,
    transport: TransportKind,
    target: &RemoteTarget,
    oauth: Option<OAuthSession>,
    helper: Option<HelperSource>,
    redactor: Redactor,
    known: Option<Era>,
    client: RelaySide,
) -> Result<i32, RunError> {
    let helper = helper.map(Arc::new);
    let RelaySide { input, output } = client;
    let monitor = Monitor::new();
    let oauth = oauth.map(|session| {
        Arc::new(Mutex::new(TokenState {
            session,
            checked: Instant::now(),
        }))
    });
    // With OAuth the token travels per request (it may be refreshed); the other headers are
    // fixed for the session.
    let headers: Vec<(String, Sensitive<String>)> = target
        .headers
        .iter()
        .filter(|(k, _)| oauth.is_none() || !k.eq_ignore_ascii_case("authorization"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let (tx, mut incoming) = mpsc::channel::<Incoming>(64);
    spawn_stdin_reader(tx, input);

    // The client's first message decides its era.
    let mut out = output;
    let first = loop {
        match incoming.recv().await {
            None => return Ok(0),
            Some(Incoming::Message(message)) => break message,
            Some(Incoming::Invalid { id, detail }) => {
                diag(&redactor, name, &detail);
                if let Some(id) = id {
                    write_line(&mut out, &error_response(id, -32600, &detail)).await;
                }
            }
        }
    };
    let hello = client_hello(&first);
    let connected = connect(
        name, transport, target, &headers, oauth, helper, &monitor, &redactor, &hello, known,
    )
    .await;
    let (negotiated, connected) = match connected {
        Ok(done) => done,
        Err(unreachable) => {
            let detail = match unreachable {
                Unreachable::Connect(e) => connect_failure(&e),
                Unreachable::Handshake(e) => describe_failure(&monitor, &e.to_string()),
                Unreachable::Other(e) => return Err(e),
            };
            let detail = redactor.redact(&detail);
            diag(&redactor, name, &detail);
            if let Some(id) = first.get("id").filter(|_| first.get("method").is_some()) {
                let text = format!("plugboard could not reach the server: {detail}");
                write_line(&mut out, &error_response(id.clone(), -32603, &text)).await;
            }
            return Ok(1);
        }
    };
    let server = ServerSide {
        era: negotiated.era,
        version: negotiated.protocol_version.to_string(),
        info: serde_json::to_value(&negotiated.peer_info).unwrap_or_default(),
    };
    let translator = Translator::new(hello.era, server, &hello.json);
    Ok(match connected {
        Connected::Shttp(t) => {
            let t = crate::connect::handshake::Handshaken(t);
            relay(
                name, t, translator, first, incoming, monitor, &redactor, true, out,
            )
            .await
        }
        Connected::Sse(t) => {
            let t = crate::connect::handshake::Handshaken(t);
            relay(
                name, t, translator, first, incoming, monitor, &redactor, true, out,
            )
            .await
        }
    })
}

/// Reach the server and do the handshake: streamable HTTP (a remembered legacy era that fails
/// is probed again on a fresh transport), SSE (legacy only), or `auto` (streamable HTTP, then
/// SSE when it was refused with 400/404/405).
#[allow(clippy::too_many_arguments)]
async fn connect(
    name: &str,
    kind: TransportKind,
    target: &RemoteTarget,
    headers: &[(String, Sensitive<String>)],
    oauth: Option<Arc<Mutex<TokenState>>>,
    helper: Option<Arc<HelperSource>>,
    monitor: &Arc<Monitor>,
    redactor: &Redactor,
    hello: &ClientHello,
    known: Option<Era>,
) -> Result<(Negotiated, Connected), Unreachable> {
    if kind == TransportKind::Sse {
        let mut sse = sse_transport(target, headers, oauth.as_ref(), monitor.clone())
            .await
            .map_err(Unreachable::Connect)?;
        let negotiated = shake(&mut sse, hello, None, true).await.map_err(|e| {
            Unreachable::Handshake(e.err().unwrap_or(HandshakeError::Closed {
                during: "initialize",
            }))
        })?;
        return Ok((negotiated, Connected::Sse(sse)));
    }
    let new_shttp = || {
        shttp_transport(
            target,
            headers,
            oauth.clone(),
            helper.clone(),
            monitor.clone(),
            redactor,
            name,
        )
        .map_err(Unreachable::Other)
    };
    let mut shttp = new_shttp()?;
    let failure = match shake(&mut shttp, hello, known, false).await {
        Ok(negotiated) => return Ok((negotiated, Connected::Shttp(shttp))),
        Err(Ok(Reprobe)) => {
            let _ = tokio::time::timeout(Duration::from_secs(1), shttp.close()).await;
            monitor.clear_http();
            let mut fresh = new_shttp()?;
            match shake(&mut fresh, hello, None, false).await {
                Ok(negotiated) => return Ok((negotiated, Connected::Shttp(fresh))),
                Err(e) => e.err().unwrap_or(HandshakeError::Closed {
                    during: "server/discover",
                }),
            }
        }
        Err(Err(e)) => e,
    };
    let refused = matches!(
        monitor.snapshot().http,
        Some(HttpFault::Status {
            status: 400 | 404 | 405,
            ..
        })
    );
    if kind != TransportKind::Auto || !refused {
        return Err(Unreachable::Handshake(failure));
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), shttp.close()).await;
    monitor.clear_http();
    let mut sse = sse_transport(target, headers, oauth.as_ref(), monitor.clone())
        .await
        .map_err(Unreachable::Connect)?;
    let negotiated = shake(&mut sse, hello, None, true).await.map_err(|e| {
        Unreachable::Handshake(e.err().unwrap_or(HandshakeError::Closed {
            during: "initialize",
        }))
    })?;
    Ok((negotiated, Connected::Sse(sse)))
}

fn connect_failure(err: &ConnectError) -> String {
    match err {
        ConnectError::Http(HttpFault::Status { status, body, .. }) => {
            format!("the server answered HTTP {status} {}", body.trim())
        }
        ConnectError::Http(HttpFault::Network { detail, target, .. }) => {
            format!("cannot reach {target}: {detail}")
        }
        other => other.to_string(),
    }
}
