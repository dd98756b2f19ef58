//! The connection layer: how Plugboard reaches an MCP server and runs the handshake of either
//! protocol era with it. [`Connection`] is the seam everything that talks MCP builds on:
//! [`Connection::open`] (spawn, or reach the host) → [`Connection::handshake`] (the era probe
//! and the handshake of the era found: [`handshake`], [`era`]) → [`Connection::peer`], rmcp's
//! peer, whose every request carries the era's metadata (`_meta` and, over HTTP, the
//! `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers, added by rmcp), and
//! [`Connection::negotiated`] (era, version, what the server listed). A [`MessageTap`] set
//! with [`Connection::set_tap`] sees every message both ways, the handshake's included.
//!
//! - stdio: our own child process (own process group, small environment, stderr captured,
//!   bounded messages, non-JSON stdout noticed) speaking through rmcp ([`stdio`], [`process`]);
//! - streamable HTTP: rmcp's reqwest client transport over our own `reqwest::Client` (headers
//!   of the resolved server, same-origin redirects only) ([`http`]); modern or legacy;
//! - legacy HTTP+SSE: written here on rmcp's `Transport` trait ([`sse`]); legacy only;
//! - auto: streamable HTTP (either era), falling back to SSE when both the probe and
//!   `initialize` are refused with 400/404/405.
//!
//! Everything a transport sees that helps explain a failure (the exit status, stdout noise,
//! an HTTP status, an oversized message) goes to a shared [`Monitor`]; `probe::classify` turns
//! those observations into an error kind and a hint.

pub mod env;
pub mod era;
pub mod handshake;
pub mod header_source;
pub mod http;
pub mod orphans;
pub mod proc_table;
pub mod process;
pub mod sse;
pub mod stdio;
pub mod tap;
pub mod target;
pub mod test_client;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ServerPeerInfo};
use rmcp::service::{DynService, Peer, RunningService, ServiceExt, serve_directly};
use rmcp::transport::Transport;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::config::TransportKind;

pub use era::Era;
pub use handshake::{Found, HandshakeError, Negotiated, Step};
pub use process::ChildProcess;
pub use tap::{MessageTap, Tapped};
pub use target::{RemoteTarget, StdioTarget, Target};

/// The largest message accepted from a server, on every transport.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// How many non-JSON stdout lines are kept for the error message.
const NOISE_LINES_KEPT: usize = 5;
/// How much of one remembered line is kept.
const NOISE_LINE_CHARS: usize = 300;

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExitInfo {
    Code(i32),
    Signal(i32),
    Unknown,
}

impl ExitInfo {
    pub fn from_status(status: std::process::ExitStatus) -> Self {
        if let Some(code) = status.code() {
            return ExitInfo::Code(code);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = status.signal() {
                return ExitInfo::Signal(signal);
            }
        }
        ExitInfo::Unknown
    }

    /// "exited with code 3", "was killed by signal 9 (SIGKILL)".
    pub fn describe(&self) -> String {
        match self {
            ExitInfo::Code(code) => format!("exited with code {code}"),
            ExitInfo::Signal(signal) => match signal_name(*signal) {
                Some(name) => format!("was killed by signal {signal} ({name})"),
                None => format!("was killed by signal {signal}"),
            },
            ExitInfo::Unknown => "exited".to_owned(),
        }
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// What went wrong at the network level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetKind {
    Refused,
    Dns,
    Tls,
    Timeout,
    Other,
}

/// An HTTP-level fact that explains a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpFault {
    /// An unexpected status. `body` is a short excerpt.
    Status {
        method: &'static str,
        status: u16,
        www_authenticate: Option<String>,
        location: Option<String>,
        body: String,
    },
    /// A redirect to another origin, which is never followed.
    CrossOriginRedirect { from: String, to: String },
    /// The request did not get an HTTP answer.
    Network {
        kind: NetKind,
        target: String,
        detail: String,
    },
    /// The answer was not JSON or an event stream.
    ContentType { content_type: Option<String> },
    /// A message larger than the cap.
    TooLarge { limit: usize },
    /// The answer could not be understood as MCP.
    Protocol { detail: String },
    /// Anything else.
    Other { detail: String },
}

/// Everything seen on a connection that can explain a failure.
#[derive(Clone, Debug, Default)]
pub struct Observations {
    /// The first few non-JSON lines on stdout (or non-JSON SSE messages).
    pub noise: Vec<String>,
    pub noise_count: usize,
    /// JSON that is not a JSON-RPC message (first few, with the parse error).
    pub invalid_messages: Vec<String>,
    /// Valid JSON-RPC messages received.
    pub messages: usize,
    /// Set when a message was larger than this many bytes.
    pub oversized: Option<usize>,
    /// stdout (or the event stream) ended.
    pub stream_closed: bool,
    /// How the process ended (stdio only).
    pub exit: Option<ExitInfo>,
    /// The latest HTTP-level fault.
    pub http: Option<HttpFault>,
    /// An event stream was opened (legacy SSE), so the host is reachable.
    pub stream_opened: bool,
    /// When the first connection to the host was made (HTTP transports): the host is
    /// reachable. Kept by the monitor's `connected` channel, copied in by `snapshot`.
    pub connected_at: Option<Instant>,
}

/// Collects [`Observations`] from transports and wakes the probe when something fatal happens.
pub struct Monitor {
    state: Mutex<Observations>,
    fatal: watch::Sender<bool>,
    noise_since: watch::Sender<Option<Instant>>,
    connected: watch::Sender<Option<Instant>>,
}

impl Monitor {
    pub fn new() -> Arc<Self> {
        Arc::new(Monitor {
            state: Mutex::new(Observations::default()),
            fatal: watch::channel(false).0,
            noise_since: watch::channel(None).0,
            connected: watch::channel(None).0,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Observations> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of everything observed so far.
    pub fn snapshot(&self) -> Observations {
        let mut observations = self.lock().clone();
        observations.connected_at = *self.connected.borrow();
        observations
    }

    pub fn record_exit(&self, info: ExitInfo) {
        self.lock().exit = Some(info);
        self.fatal.send_replace(true);
    }

    pub fn record_oversized(&self, limit: usize) {
        self.lock().oversized = Some(limit);
        self.fatal.send_replace(true);
    }

    pub fn record_stream_closed(&self) {
        self.lock().stream_closed = true;
        self.fatal.send_replace(true);
    }
    pub fn record_stream_opened(&self) {
        self.lock().stream_opened = true;
    }

    /// A connection to the host was made; the first one's moment is kept.
    pub fn record_connected(&self) {
        self.connected.send_if_modified(|at| {
            let first = at.is_none();
            at.get_or_insert_with(Instant::now);
            first
        });
    }

    /// Resolves once a connection to the host was made, with the moment it was first made.
    pub async fn connected(&self) -> Instant {
        let mut rx = self.connected.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(at) => at.expect("waited for"),
            // The sender lives as long as the monitor.
            Err(_) => std::future::pending().await,
        }
    }

    pub fn record_message(&self) {
        self.lock().messages += 1;
    }

    pub fn record_noise(&self, line: &str) {
        {
            let mut state = self.lock();
            state.noise_count += 1;
            if state.noise.len() < NOISE_LINES_KEPT {
                state.noise.push(truncate_chars(line, NOISE_LINE_CHARS));
            }
        }
        self.noise_since.send_if_modified(|since| {
            if since.is_none() {
                *since = Some(Instant::now());
                true
            } else {
                false
            }
        });
    }

    pub fn record_invalid_message(&self, text: &str, error: &serde_json::Error) {
        let mut state = self.lock();
        if state.invalid_messages.len() < 3 {
            state.invalid_messages.push(format!(
                "{} ({error})",
                truncate_chars(text, NOISE_LINE_CHARS)
            ));
        }
    }

    pub fn record_http(&self, fault: HttpFault) {
        self.lock().http = Some(fault);
    }

    /// Forget how a stdio server ended (before it is started again): its exit, the end of
    /// its output, and the fatal signal they raised.
    pub fn forget_process(&self) {
        {
            let mut seen = self.lock();
            seen.exit = None;
            seen.stream_closed = false;
        }
        self.fatal.send_replace(false);
    }

    /// Forget the HTTP fault (before a fallback to another transport).
    pub fn clear_http(&self) {
        self.lock().http = None;
    }

    /// Whether something fatal happened and was not forgotten since.
    pub fn is_fatal(&self) -> bool {
        *self.fatal.borrow()
    }

    /// Resolves once something fatal happened (exit, oversized message, end of stream).
    pub async fn fatal(&self) {
        let mut rx = self.fatal.subscribe();
        let _ = rx.wait_for(|f| *f).await;
    }

    /// Resolves `grace` after the first non-JSON output, if there is any.
    pub async fn noise_grace(&self, grace: Duration) {
        let mut rx = self.noise_since.subscribe();
        let since = match rx.wait_for(Option::is_some).await {
            Ok(since) => since.expect("checked"),
            Err(_) => return std::future::pending().await,
        };
        tokio::time::sleep_until(since + grace).await;
    }
}

pub fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Why connecting or the handshake failed. `probe::classify` explains it to the user.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    #[error("could not start `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0:?}")]
    Http(HttpFault),
    #[error("{0}")]
    Sse(String),
    /// `auto`: streamable HTTP was refused with `status`, and SSE failed with `sse`.
    #[error("streamable HTTP was refused with HTTP {status}; the SSE fallback failed: {sse}")]
    AutoFallback { status: u16, sse: Box<ConnectError> },
    #[error("the MCP handshake failed: {0}")]
    Handshake(#[source] HandshakeError),
}

/// The handler of a session: rmcp's service answering the server (elicitation, sampling, roots
/// in either era: a legacy server's requests, a modern server's `input_required` rounds).
pub type Handler = Box<dyn DynService<RoleClient>>;

/// The client side of one MCP session.
pub type Service = RunningService<RoleClient, Handler>;

/// Plugboard's identity, with no client capabilities: what a test says about itself.
pub fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("plugboard", env!("CARGO_PKG_VERSION")),
    )
}

/// rmcp's service over a handshaken transport, built in a frame of its own (a transport's
/// service future is large; built in place, each got a stack slot of the handshake's frame).
#[inline(never)]
fn serve<T>(handler: Handler, transport: T, info: ServerPeerInfo) -> Service
where
    T: Transport<RoleClient> + 'static,
{
    serve_directly(handler, handshake::Handshaken(transport), Some(info))
}

/// A transport that is connected but has not done the handshake yet.
enum Pending {
    Stdio(stdio::StdioTransport),
    Shttp(http::Shttp),
    Sse(sse::SseTransport),
    Auto(http::Shttp),
}

/// What the probe watches on a stdio server: its stdin pipe, and whether it wrote anything.
struct StdioWatch {
    stdin: stdio::StdinHandle,
    stderr: Arc<process::StderrBuffer>,
    monitor: Arc<Monitor>,
}

impl handshake::Watch for StdioWatch {
    fn unread(&self) -> Option<usize> {
        handshake::Watch::unread(&self.stdin)
    }

    fn spoke(&self) -> bool {
        let seen = self.monitor.snapshot();
        seen.messages > 0 || seen.noise_count > 0 || !self.stderr.is_empty()
    }
}

/// One connection to a server, from connect to close.
pub struct Connection {
    transport: TransportKind,
    pending: Option<Pending>,
    service: Option<Service>,
    negotiated: Option<Negotiated>,
    process: Option<ChildProcess>,
    stdin: Option<stdio::StdinHandle>,
    direct_calls: Option<stdio::DirectCalls>,
    client: Option<reqwest::Client>,
    url: Option<url::Url>,
    /// A remote server's headers helper, asked again for each request.
    helper: Option<std::sync::Arc<dyn header_source::HeaderSource>>,
    monitor: Arc<Monitor>,
    /// Sees every message of every transport tried, from the first of the handshake.
    tap: Option<Arc<dyn MessageTap>>,
    /// How the stdio server was started, to start it again once when it ends on the era
    /// probe.
    relaunch: Option<Relaunch>,
}

/// A stdio server's launch, as spawned (environment with its secrets, in memory only).
struct Relaunch {
    command: String,
    program: std::path::PathBuf,
    args: Vec<String>,
    env: Vec<(String, std::ffi::OsString)>,
    cwd: Option<std::path::PathBuf>,
    sandbox: Option<plugboard_sandbox::Plan>,
}

impl Relaunch {
    fn spawn(&self, monitor: Arc<Monitor>) -> Result<process::Spawned, ConnectError> {
        process::spawn(
            &self.program,
            &self.args,
            &self.env,
            self.cwd.as_deref(),
            self.sandbox.as_ref(),
            monitor,
        )
        .map_err(|source| ConnectError::Spawn {
            command: self.command.clone(),
            source,
        })
    }
}

/// Why a handshake on one transport did not work: the handler comes back with the reason, for
/// another attempt (a fresh transport, the SSE fallback).
type Failed = (Result<handshake::Reprobe, HandshakeError>, Handler);

/// Run the handshake (`known`: the remembered era) on `transport` and hand it to rmcp.
async fn handshake_on<T>(
    mut transport: T,
    handler: Handler,
    known: Option<Era>,
    wire: handshake::Wire<'_>,
    steps: &mut (dyn FnMut(Step) + Send),
) -> Result<(Negotiated, Service), Failed>
where
    T: Transport<RoleClient> + 'static,
{
    let hello = handler.get_info();
    let shake = handshake::Handshake {
        transport: &mut transport,
        hello: &hello,
        wire,
        steps,
        legacy_version: None,
    };
    let negotiated = match known {
        Some(Era::Legacy) => shake.legacy(true).await,
        _ => shake.probe(known).await.map_err(Err),
    };
    match negotiated {
        Ok(negotiated) => {
            let service = serve(handler, transport, negotiated.peer_info.clone());
            Ok((negotiated, service))
        }
        Err(e) => Err((e, handler)),
    }
}

/// A failed stdio handshake as the connection's error (a stdio server is probed again on the
/// same process, so it never asks for a fresh transport).
fn stdio_failure(e: Result<handshake::Reprobe, HandshakeError>) -> ConnectError {
    ConnectError::Handshake(e.err().unwrap_or(HandshakeError::Closed {
        during: "initialize",
    }))
}

/// The legacy handshake on the SSE transport (it has no modern form).
async fn legacy_on_sse(
    mut transport: Tapped<sse::SseTransport>,
    handler: Handler,
    steps: &mut (dyn FnMut(Step) + Send),
) -> Result<(Negotiated, Service), HandshakeError> {
    let hello = handler.get_info();
    let shake = handshake::Handshake {
        transport: &mut transport,
        hello: &hello,
        wire: handshake::Wire::Http,
        steps,
        legacy_version: None,
    };
    // `legacy(false)` never asks for another probe.
    let negotiated = shake.legacy(false).await.map_err(|e| {
        e.err().unwrap_or(HandshakeError::Closed {
            during: "initialize",
        })
    })?;
    let service = serve(handler, transport, negotiated.peer_info.clone());
    Ok((negotiated, service))
}

impl Connection {
    /// Spawn the process (stdio), open the event stream (SSE) or get the client ready
    /// (streamable HTTP: its first request opens the connection, which every later request
    /// reuses). Nothing MCP has been said yet.
    pub async fn open(
        target: &Target,
        kind: TransportKind,
        monitor: Arc<Monitor>,
    ) -> Result<Connection, ConnectError> {
        let mut conn = Connection {
            transport: kind,
            pending: None,
            service: None,
            negotiated: None,
            process: None,
            stdin: None,
            direct_calls: None,
            client: None,
            url: None,
            helper: None,
            monitor: monitor.clone(),
            tap: None,
            relaunch: None,
        };
        match target {
            Target::Stdio(target) => {
                let launch = Relaunch {
                    command: target.command.clone(),
                    program: target.program.clone(),
                    args: target.args.clone(),
                    env: target.child_env(),
                    cwd: target.cwd.clone(),
                    sandbox: target.sandbox.clone(),
                };
                let spawned = launch.spawn(monitor.clone())?;
                conn.adopt(spawned);
                conn.relaunch = Some(launch);
            }
            Target::Remote(target) => {
                let client = http::build_client_for(&target.url, &target.headers, monitor.clone())?;
                conn.client = Some(client.clone());
                conn.url = Some(target.url.clone());
                conn.helper = target.helper.clone();
                match kind {
                    TransportKind::Sse => {
                        let transport =
                            sse::SseTransport::connect(client, target.url.clone(), monitor)
                                .await?
                                .with_helper(conn.helper.clone());
                        conn.pending = Some(Pending::Sse(transport));
                        conn.transport = TransportKind::Sse;
                    }
                    kind => {
                        // No connection yet: the first request opens it (one TCP connection for
                        // the whole exchange), and the monitor is told when it is made.
                        let shttp = http::Shttp::new(client, &target.url, monitor)
                            .with_helper(conn.helper.clone());
                        conn.pending = Some(if kind == TransportKind::Auto {
                            Pending::Auto(shttp)
                        } else {
                            Pending::Shttp(shttp)
                        });
                        conn.transport = TransportKind::Shttp;
                    }
                }
            }
        }
        Ok(conn)
    }

    /// Take over a spawned stdio server: its process, its stdin, the transport on its pipes.
    fn adopt(&mut self, spawned: process::Spawned) {
        let transport = stdio::StdioTransport::new(
            spawned.stdin,
            spawned.stdout,
            MAX_MESSAGE,
            self.monitor.clone(),
        );
        self.stdin = Some(transport.stdin_handle());
        self.direct_calls = Some(transport.direct_calls());
        self.process = Some(spawned.process);
        self.pending = Some(Pending::Stdio(transport));
        self.transport = TransportKind::Stdio;
    }

    /// The stdio handshake. A server that ends on reading the era probe without answering
    /// (older SDKs exit on a request they do not know) is started once more and spoken to in
    /// the legacy era: `initialize` first.
    async fn stdio_handshake(
        &mut self,
        transport: stdio::StdioTransport,
        handler: Handler,
        known: Option<Era>,
        steps: &mut (dyn FnMut(Step) + Send),
    ) -> Result<(Negotiated, Service), ConnectError> {
        let failed = match self
            .stdio_handshake_once(transport, handler, known, steps)
            .await
        {
            Ok(done) => return Ok(done),
            Err(failed) => failed,
        };
        let handler = match failed {
            (Err(HandshakeError::ExitedOnProbe), handler) if self.relaunch.is_some() => handler,
            (e, _) => return Err(stdio_failure(e)),
        };
        if let Some(mut ended) = self.process.take() {
            ended.shutdown().await;
        }
        self.monitor.forget_process();
        let launch = self.relaunch.take().expect("checked");
        let spawned = launch.spawn(self.monitor.clone())?;
        self.adopt(spawned);
        let Some(Pending::Stdio(transport)) = self.pending.take() else {
            unreachable!("adopted a stdio server");
        };
        self.stdio_handshake_once(transport, handler, Some(Era::Legacy), steps)
            .await
            .map(|(mut negotiated, service)| {
                negotiated.found = Found::Restarted;
                (negotiated, service)
            })
            .map_err(|(e, _)| stdio_failure(e))
    }

    async fn stdio_handshake_once(
        &mut self,
        transport: stdio::StdioTransport,
        handler: Handler,
        known: Option<Era>,
        steps: &mut (dyn FnMut(Step) + Send),
    ) -> Result<(Negotiated, Service), Failed> {
        let watch = StdioWatch {
            stdin: self.stdin.clone().expect("stdio connection"),
            stderr: self
                .process
                .as_ref()
                .expect("stdio connection")
                .stderr_buffer(),
            monitor: self.monitor.clone(),
        };
        let wire = handshake::Wire::Stdio(&watch);
        // A stdio server is probed again on the same process: no `Reprobe` here.
        handshake_on(self.tapped(transport), handler, known, wire, steps).await
    }

    /// Do without the standalone event stream a legacy streamable HTTP session opens for
    /// messages the server sends on its own (notifications, requests of no request of ours).
    /// A test or health check asks, gets its answers on each request's own response, and
    /// closes: the stream would be one more request for the server to serve while nothing
    /// listens to it. Call before the handshake; no effect on other transports.
    pub fn without_standalone_stream(&mut self) {
        if let Some(Pending::Shttp(shttp) | Pending::Auto(shttp)) = self.pending.as_mut() {
            shttp.without_standalone_stream();
        }
    }

    /// What sends a stdio connection's calls straight to the server and hands over their
    /// answers as the JSON they came as (see [`stdio::DirectCalls`]); `None` on other
    /// transports, whose calls go through rmcp.
    pub fn direct_calls(&self) -> Option<stdio::DirectCalls> {
        self.direct_calls.clone()
    }

    /// Let `tap` see every message of this connection. Set before the handshake, so that it
    /// sees the era probe, `initialize` and everything after, on every transport tried
    /// (`auto`'s SSE fallback and a fresh transport for a re-probe included).
    pub fn set_tap(&mut self, tap: Arc<dyn MessageTap>) {
        self.tap = Some(tap);
    }

    /// `transport` behind this connection's tap.
    fn tapped<T: Transport<RoleClient>>(&self, transport: T) -> Tapped<T> {
        Tapped::new(transport, self.tap.clone())
    }

    /// The handshake of either era as a test connection: Plugboard's identity and the
    /// capabilities it supports, with nobody there to answer ([`test_client`]). See
    /// [`Connection::handshake_with`].
    pub async fn handshake(
        &mut self,
        known: Option<Era>,
        steps: &mut (dyn FnMut(Step) + Send),
    ) -> Result<(), ConnectError> {
        self.handshake_with(known, test_client::TestClient.into_dyn(), steps)
            .await
    }

    /// The handshake of either era, with `handler` answering the server afterwards (its
    /// `get_info` is what the client says about itself: identity and capabilities, in
    /// `initialize` or in every request's `_meta`).
    ///
    /// `known` is the server's era when it is known (the last test's result): a legacy server
    /// then gets `initialize` at once, and is probed again only if that shows it is modern
    /// now. Unknown: the probe decides ([`handshake`] says how, and how long a legacy server
    /// that ignores the probe is waited for). `steps` hears each request as it goes out.
    ///
    /// `auto`: streamable HTTP (either era), then legacy SSE when streamable HTTP was refused
    /// with 400/404/405.
    pub async fn handshake_with(
        &mut self,
        known: Option<Era>,
        handler: Handler,
        steps: &mut (dyn FnMut(Step) + Send),
    ) -> Result<(), ConnectError> {
        let pending = self
            .pending
            .take()
            .expect("the handshake is done once, after open");
        let (negotiated, service) = match pending {
            Pending::Stdio(transport) => {
                self.stdio_handshake(transport, handler, known, steps)
                    .await?
            }
            Pending::Sse(transport) => legacy_on_sse(self.tapped(transport), handler, steps)
                .await
                .map_err(ConnectError::Handshake)?,
            Pending::Shttp(shttp) => self
                .shttp_handshake(shttp, handler, known, steps)
                .await
                .map_err(|(e, _)| e)?,
            Pending::Auto(shttp) => {
                match self.shttp_handshake(shttp, handler, known, steps).await {
                    Ok(done) => done,
                    Err((err, handler)) => {
                        let status = match self.monitor.snapshot().http {
                            Some(HttpFault::Status {
                                status: status @ (400 | 404 | 405),
                                ..
                            }) => status,
                            _ => return Err(err),
                        };
                        self.monitor.clear_http();
                        self.transport = TransportKind::Sse;
                        let client = self.client.clone().expect("remote connection");
                        let url = self.url.clone().expect("remote connection");
                        let sse = sse::SseTransport::connect(client, url, self.monitor.clone())
                            .await
                            .map_err(|sse| ConnectError::AutoFallback {
                                status,
                                sse: Box::new(sse),
                            })?
                            .with_helper(self.helper.clone());
                        legacy_on_sse(self.tapped(sse), handler, steps)
                            .await
                            .map_err(ConnectError::Handshake)?
                    }
                }
            }
        };
        self.negotiated = Some(negotiated);
        self.service = Some(service);
        Ok(())
    }

    /// The handshake over streamable HTTP; a remembered legacy era that turns out wrong is
    /// probed again on a fresh transport.
    async fn shttp_handshake(
        &mut self,
        shttp: http::Shttp,
        handler: Handler,
        known: Option<Era>,
        steps: &mut (dyn FnMut(Step) + Send),
    ) -> Result<(Negotiated, Service), (ConnectError, Handler)> {
        let again = shttp.clone();
        let failed = match handshake_on(
            self.tapped(shttp.into_transport()),
            handler,
            known,
            handshake::Wire::Http,
            steps,
        )
        .await
        {
            Ok(done) => return Ok(done),
            Err(failed) => failed,
        };
        let handler = match failed {
            (Ok(handshake::Reprobe), handler) => handler,
            (Err(e), handler) => return Err((ConnectError::Handshake(e), handler)),
        };
        self.monitor.clear_http();
        match handshake_on(
            self.tapped(again.into_transport()),
            handler,
            None,
            handshake::Wire::Http,
            steps,
        )
        .await
        {
            Ok((mut negotiated, service)) => {
                negotiated.found = Found::Reprobe;
                Ok((negotiated, service))
            }
            Err((e, handler)) => {
                let e = e.err().unwrap_or(HandshakeError::Closed {
                    during: "server/discover",
                });
                Err((ConnectError::Handshake(e), handler))
            }
        }
    }

    /// The transport in use (for `auto`, the one that worked, or the last one tried).
    pub fn transport(&self) -> TransportKind {
        self.transport
    }

    /// What the handshake found: era, protocol version, the versions the server listed.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    /// The server's era, after the handshake.
    pub fn era(&self) -> Option<Era> {
        self.negotiated.as_ref().map(|n| n.era)
    }

    /// The server after a successful handshake.
    pub fn peer(&self) -> Option<&Peer<RoleClient>> {
        self.service.as_ref().map(|s| s.peer())
    }

    /// The running session (its `call_tool`, `get_prompt` and `read_resource` drive a modern
    /// server's `input_required` rounds through the handler).
    pub fn service(&self) -> Option<&Service> {
        self.service.as_ref()
    }

    /// What the server said in the handshake (identity, capabilities, instructions).
    pub fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.service.as_ref().and_then(|s| s.peer().peer_info())
    }

    /// The pid of the server process (stdio only).
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ChildProcess::pid)
    }

    /// The observations of this connection.
    pub fn monitor(&self) -> &Arc<Monitor> {
        &self.monitor
    }

    /// Give the process a moment to report its exit (used before classifying a failure).
    pub async fn settle(&mut self, limit: Duration) {
        if let Some(process) = self.process.as_mut() {
            process.wait_exit(limit).await;
        }
    }

    /// Close the session and stop the server: for stdio, close stdin, then SIGTERM and
    /// SIGKILL the process group; for HTTP, end the session (bounded to one second).
    pub async fn close(&mut self) {
        self.pending = None;
        if let Some(stdin) = &self.stdin {
            // A write blocked on a full pipe holds stdin; the group kill below unblocks it.
            let _ = tokio::time::timeout(Duration::from_millis(100), stdin.close()).await;
        }
        if let Some(mut service) = self.service.take() {
            let limit = if self.process.is_some() {
                Duration::from_millis(100)
            } else {
                Duration::from_secs(1)
            };
            let _ = service.close_with_timeout(limit).await;
        }
        if let Some(process) = self.process.as_mut() {
            process.shutdown().await;
        }
    }

    /// The last `lines` lines of the server's stderr (stdio only).
    pub async fn stderr_tail(&mut self, lines: usize) -> Option<String> {
        match self.process.as_mut() {
            Some(process) => Some(process.stderr_tail(lines).await),
            None => None,
        }
    }
}
