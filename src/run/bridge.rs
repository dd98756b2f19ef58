//! The remote bridge of `plugboard run`: stdio on one side, streamable HTTP (rmcp's client
//! transport) or legacy SSE (ours) on the other.
//!
//! Each line on stdin is a JSON-RPC message from the client; it is handed to the transport in
//! order (each send is started before the next line is read, so ordering is kept while requests
//! still run concurrently). Everything the transport receives — responses, server
//! notifications, server→client requests — is written to stdout, one message per line. When a
//! request cannot be delivered, the client gets a JSON-RPC error for it instead of waiting
//! forever.
//!
//! Auth: the resolved headers (API keys, bearer tokens, custom headers) are on every request.
//! For OAuth servers on streamable HTTP the access token is added per request, refreshed before
//! it expires, and after a 401 refreshed once and the request retried once.
//! `auto` tries streamable HTTP with the client's `initialize` and falls back to SSE on
//! 400/404/405, as the MCP spec describes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{Mutex, mpsc};
use tokio::time::Instant;

use super::client_io::RelaySide;
use super::{OAuthSession, RunError, diag};
use crate::config::TransportKind;
use crate::connect::http::{
    HttpRequests, Limited, SseStream, build_client, shttp_fault, transport_config,
};
use crate::connect::sse::SseTransport;
use crate::connect::{ConnectError, HttpFault, MAX_MESSAGE, Monitor};
use crate::redact::Redactor;
use crate::resolve::RemoteTarget;
use crate::secrets::Sensitive;

/// After the client closed stdin, how long answers to its last requests are still awaited.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// How often the OAuth token is checked for expiry (a refresh happens only near expiry).
const TOKEN_CHECK_EVERY: Duration = Duration::from_secs(30);

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
    redactor: Redactor,
    name: Arc<str>,
}

fn is_401(err: &StreamableHttpError<reqwest::Error>) -> bool {
    matches!(shttp_fault(err), HttpFault::Status { status: 401, .. })
}

impl BridgeClient {
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
enum Incoming {
    Message(Box<ClientJsonRpcMessage>),
    /// Valid JSON but not a client message we can relay; answered with an error if it has an id.
    Invalid {
        id: Option<serde_json::Value>,
        detail: String,
    },
}

/// Read the client's messages line by line into `tx` (a task of its own: reading is not cancel
/// safe).
fn spawn_stdin_reader(tx: mpsc::Sender<Incoming>, input: DuplexStream) {
    tokio::spawn(async move {
        let mut reader = BufReader::with_capacity(64 * 1024, input);
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
            let incoming = match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
                Ok(message) => Incoming::Message(Box::new(message)),
                Err(err) => {
                    let id = serde_json::from_slice::<serde_json::Value>(text)
                        .ok()
                        .and_then(|v| v.get("id").cloned());
                    Incoming::Invalid {
                        id,
                        detail: format!("not a JSON-RPC message from a client: {err}"),
                    }
                }
            };
            if tx.send(incoming).await.is_err() {
                return;
            }
        }
    });
}

/// One line to the client.
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

/// Relay between stdio and `transport` until one side ends. `first` is a message already read
/// (the `initialize` of `auto`), with its send already done when `first_sent` is set.
async fn relay<T>(
    name: &str,
    mut transport: T,
    mut incoming: mpsc::Receiver<Incoming>,
    monitor: Arc<Monitor>,
    redactor: &Redactor,
    mut out: DuplexStream,
) -> i32
where
    T: Transport<RoleClient> + 'static,
{
    let mut sends: FuturesUnordered<BoxFuture<'static, SendResult>> = FuturesUnordered::new();
    let mut signals = signal_events();
    // Requests sent and not answered yet: after the client closes stdin, their answers are
    // still delivered (for up to DRAIN_LIMIT).
    let mut outstanding: HashSet<String> = HashSet::new();
    let mut stdin_open = true;
    let trace = std::env::var_os(TRACE_ENV).is_some();
    let mut drain_deadline = Instant::now() + Duration::from_secs(3600 * 24);
    let ended = loop {
        if !stdin_open && outstanding.is_empty() && sends.is_empty() {
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
                        && !write_line(&mut out, &error_response(id, -32600, &detail)).await
                    {
                        break Ended::Client;
                    }
                }
                Some(Incoming::Message(message)) => {
                    let id = request_id(&message);
                    if trace {
                        diag(redactor, name, &format!("→ {}", summary(&serde_json::to_value(&message).unwrap_or_default())));
                    }
                    if let Some(id) = &id {
                        outstanding.insert(id_key(id));
                    }
                    let mut send = Box::pin(transport.send(*message));
                    // The first poll queues the message in the transport, in order.
                    match futures::poll!(&mut send) {
                        Poll::Ready(result) => {
                            if let Err(e) = result {
                                sends.push(Box::pin(async move { (id, Err(e.to_string())) }));
                            }
                        }
                        Poll::Pending => sends.push(Box::pin(async move {
                            (id, send.await.map_err(|e| e.to_string()))
                        })),
                    }
                }
            },
            received = transport.receive() => match received {
                Some(message) => {
                    if trace {
                        diag(redactor, name, &format!("← {}", summary(&serde_json::to_value(&message).unwrap_or_default())));
                    }
                    if let JsonRpcMessage::Response(r) = &message {
                        outstanding.remove(&id_key(&r.id));
                    } else if let JsonRpcMessage::Error(e) = &message
                        && let Some(id) = &e.id
                    {
                        outstanding.remove(&id_key(id));
                    }
                    if !write_line(&mut out, &message).await {
                        break Ended::Client;
                    }
                }
                None => break Ended::Server,
            },
            Some((id, result)) = sends.next(), if !sends.is_empty() => {
                if let Err(detail) = result {
                    let detail = describe_failure(&monitor, &detail);
                    diag(redactor, name, &detail);
                    if let Some(id) = id {
                        outstanding.remove(&id_key(&id));
                        let id = serde_json::to_value(&id).unwrap_or(serde_json::Value::Null);
                        let text = redactor.redact(&format!("plugboard could not deliver the request: {detail}"));
                        if !write_line(&mut out, &error_response(id, -32603, &text)).await {
                            break Ended::Client;
                        }
                    }
                }
            },
            Some(sig) = signals.recv() => break Ended::Signal(sig),
            _ = tokio::time::sleep_until(drain_deadline), if !stdin_open => break Ended::Client,
        }
    };
    // Let responses still in flight reach the client for a moment, then end the session.
    let code = match ended {
        Ended::Client => 0,
        Ended::Signal(sig) => 128 + sig,
        Ended::Server => {
            // Answer every request still waiting, so the client is not left hanging: first
            // with the failures of sends that were under way, then with the end itself.
            let deadline = Instant::now() + Duration::from_secs(1);
            while !sends.is_empty() {
                let Ok(Some((id, result))) = tokio::time::timeout_at(deadline, sends.next()).await
                else {
                    break;
                };
                if let (Err(detail), Some(id)) = (result, id)
                    && outstanding.remove(&id_key(&id))
                {
                    let detail = describe_failure(&monitor, &detail);
                    let text = redactor.redact(&format!(
                        "plugboard could not deliver the request: {detail}"
                    ));
                    let id = serde_json::to_value(&id).unwrap_or(serde_json::Value::Null);
                    write_line(&mut out, &error_response(id, -32603, &text)).await;
                }
            }
            let detail = describe_failure(&monitor, "the connection to the server ended");
            diag(redactor, name, &detail);
            let text = redactor.redact(&detail);
            for key in outstanding.drain() {
                let id = serde_json::from_str(&key).unwrap_or(serde_json::Value::Null);
                write_line(&mut out, &error_response(id, -32603, &text)).await;
            }
            1
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), transport.close()).await;
    let _ = out.flush().await;
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
        Some(HttpFault::Network { detail: net, .. }) => format!("{detail}: {net}"),
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

/// Bridge stdio to the remote server until the client or the server ends; returns the exit code.
pub async fn bridge(
    name: &str,
    transport: TransportKind,
    target: &RemoteTarget,
    oauth: Option<OAuthSession>,
    redactor: Redactor,
    client: RelaySide,
) -> Result<i32, RunError> {
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

    match transport {
        TransportKind::Sse => {
            let sse = sse_transport(target, &headers, oauth.as_ref(), monitor.clone())
                .await
                .map_err(|e| RunError::Failed(redactor.redact(&connect_failure(&e))))?;
            Ok(relay(name, sse, incoming, monitor, &redactor, output).await)
        }
        TransportKind::Shttp => {
            let shttp = shttp_transport(target, &headers, oauth, monitor.clone(), &redactor, name)?;
            Ok(relay(name, shttp, incoming, monitor, &redactor, output).await)
        }
        _ => {
            // auto: the client's first message decides. Send it over streamable HTTP; on
            // 400/404/405 switch to SSE and send it there.
            let Some(first) = incoming.recv().await else {
                return Ok(0);
            };
            let Incoming::Message(first) = first else {
                // Not relayable: let the streamable HTTP relay report it.
                let (tx2, rx2) = mpsc::channel::<Incoming>(64);
                let _ = tx2.send(first).await;
                forward(incoming, tx2);
                let shttp =
                    shttp_transport(target, &headers, oauth, monitor.clone(), &redactor, name)?;
                return Ok(relay(name, shttp, rx2, monitor, &redactor, output).await);
            };
            let mut shttp = shttp_transport(
                target,
                &headers,
                oauth.clone(),
                monitor.clone(),
                &redactor,
                name,
            )?;
            let id = request_id(&first);
            let sent = shttp.send((*first).clone()).await;
            let fallback = sent.is_err()
                && matches!(
                    monitor.snapshot().http,
                    Some(HttpFault::Status {
                        status: 400 | 404 | 405,
                        ..
                    })
                );
            if !fallback {
                let (tx2, rx2) = mpsc::channel::<Incoming>(64);
                if let (Err(e), Some(id)) = (&sent, id) {
                    // The initialize could not be delivered: answer it, then end.
                    let detail = describe_failure(&monitor, &e.to_string());
                    diag(&redactor, name, &detail);
                    let mut out = output;
                    let id = serde_json::to_value(&id).unwrap_or(serde_json::Value::Null);
                    write_line(
                        &mut out,
                        &error_response(id, -32603, &redactor.redact(&detail)),
                    )
                    .await;
                    let _ = tokio::time::timeout(Duration::from_secs(1), shttp.close()).await;
                    return Ok(1);
                }
                forward(incoming, tx2);
                return Ok(relay(name, shttp, rx2, monitor, &redactor, output).await);
            }
            let _ = tokio::time::timeout(Duration::from_secs(1), shttp.close()).await;
            monitor.clear_http();
            let mut sse = sse_transport(target, &headers, oauth.as_ref(), monitor.clone())
                .await
                .map_err(|e| RunError::Failed(redactor.redact(&connect_failure(&e))))?;
            if let Err(e) = sse.send(*first).await {
                return Err(RunError::Failed(redactor.redact(&e.to_string())));
            }
            Ok(relay(name, sse, incoming, monitor, &redactor, output).await)
        }
    }
}

/// Pass everything from `from` on to `to` (after a first message was put into `to`).
fn forward(mut from: mpsc::Receiver<Incoming>, to: mpsc::Sender<Incoming>) {
    tokio::spawn(async move {
        while let Some(item) = from.recv().await {
            if to.send(item).await.is_err() {
                return;
            }
        }
    });
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
