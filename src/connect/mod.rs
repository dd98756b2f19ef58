//! Transports: how Plugboard reaches an MCP server and runs the MCP handshake with it.
//!
//! - stdio: our own child process (own process group, small environment, stderr captured,
//!   bounded messages, non-JSON stdout noticed) speaking through rmcp ([`stdio`], [`process`]);
//! - streamable HTTP: rmcp's reqwest client transport over our own `reqwest::Client` (headers
//!   of the resolved server, same-origin redirects only) ([`http`]);
//! - legacy HTTP+SSE: written here on rmcp's `Transport` trait ([`sse`]);
//! - auto: streamable HTTP, falling back to SSE on 400/404/405 from the `initialize` POST.
//!
//! Everything a transport sees that helps explain a failure (the exit status, stdout noise,
//! an HTTP status, an oversized message) goes to a shared [`Monitor`]; `probe::classify` turns
//! those observations into an error kind and a hint.

pub mod env;
pub mod http;
pub mod process;
pub mod sse;
pub mod stdio;
pub mod tap;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, ServerPeerInfo,
};
use rmcp::service::{ClientInitializeError, DynService, Peer, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{RoleClient, serve_client};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::config::TransportKind;
use crate::resolve::{ResolvedServer, Target};

pub use process::ChildProcess;
pub use tap::{Hooks, MessageTap};

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
}

/// Collects [`Observations`] from transports and wakes the probe when something fatal happens.
pub struct Monitor {
    state: Mutex<Observations>,
    fatal: watch::Sender<bool>,
    noise_since: watch::Sender<Option<Instant>>,
}

impl Monitor {
    pub fn new() -> Arc<Self> {
        Arc::new(Monitor {
            state: Mutex::new(Observations::default()),
            fatal: watch::channel(false).0,
            noise_since: watch::channel(None).0,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Observations> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of everything observed so far.
    pub fn snapshot(&self) -> Observations {
        self.lock().clone()
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

    /// Forget the HTTP fault (before a fallback to another transport).
    pub fn clear_http(&self) {
        self.lock().http = None;
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

pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
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
    #[error("the server sent no usable answer to `initialize`: {0}")]
    Initialize(#[source] Box<ClientInitializeError>),
}

/// The client side of one MCP session: rmcp's service over the connection's handler (see
/// [`Hooks`]).
pub type Service = RunningService<RoleClient, Box<dyn DynService<RoleClient>>>;

/// The client information sent in `initialize`.
pub fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("plugboard", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// rmcp's handshake over `transport`, as a boxed future built in a frame of its own. Built
/// in place, each transport's handshake future (about 9 KiB) got its own stack slot in the
/// frame of [`Connection::initialize`] (44 KiB, every page of it a page fault on the first
/// test of a process).
/// The transport goes through the hooks' tap, and the hooks give the handler.
#[inline(never)]
fn handshake<T, E, A>(
    transport: T,
    hooks: &Hooks,
) -> Pin<Box<dyn Future<Output = Result<Service, ClientInitializeError>> + Send>>
where
    T: IntoTransport<RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    A: 'static,
{
    Box::pin(serve_client(
        hooks.service(),
        hooks.tapped(transport.into_transport()),
    ))
}

/// A transport that is connected but has not done the handshake yet.
enum Pending {
    Stdio(stdio::StdioTransport),
    Shttp(http::Shttp),
    Sse(sse::SseTransport),
    Auto(http::Shttp),
}

/// One connection to a server under test, from connect to close.
pub struct Connection {
    transport: TransportKind,
    pending: Option<Pending>,
    service: Option<Service>,
    process: Option<ChildProcess>,
    stdin: Option<stdio::StdinHandle>,
    client: Option<reqwest::Client>,
    url: Option<url::Url>,
    monitor: Arc<Monitor>,
    hooks: Hooks,
}

impl Connection {
    /// Spawn the process (stdio), open the event stream (SSE) or check that the host answers
    /// (streamable HTTP). Nothing MCP has been said yet.
    pub async fn open(
        resolved: &ResolvedServer,
        monitor: Arc<Monitor>,
    ) -> Result<Connection, ConnectError> {
        let mut conn = Connection {
            transport: resolved.transport(),
            pending: None,
            service: None,
            process: None,
            stdin: None,
            client: None,
            url: None,
            monitor: monitor.clone(),
            hooks: Hooks::default(),
        };
        match resolved.target() {
            Target::Stdio(target) => {
                let env = target.child_env();
                let spawned = process::spawn(
                    &target.program,
                    &target.args,
                    &env,
                    target.cwd.as_deref(),
                    monitor.clone(),
                )
                .map_err(|source| ConnectError::Spawn {
                    command: target.command.clone(),
                    source,
                })?;
                let transport =
                    stdio::StdioTransport::new(spawned.stdin, spawned.stdout, MAX_MESSAGE, monitor);
                conn.stdin = Some(transport.stdin_handle());
                conn.process = Some(spawned.process);
                conn.pending = Some(Pending::Stdio(transport));
                conn.transport = TransportKind::Stdio;
            }
            Target::Remote(target) => {
                let client = http::build_client_for(&target.url, &target.headers, monitor.clone())?;
                conn.client = Some(client.clone());
                conn.url = Some(target.url.clone());
                match resolved.transport() {
                    TransportKind::Sse => {
                        let transport =
                            sse::SseTransport::connect(client, target.url.clone(), monitor).await?;
                        conn.pending = Some(Pending::Sse(transport));
                        conn.transport = TransportKind::Sse;
                    }
                    kind => {
                        http::reachable(&target.url).await?;
                        let shttp = http::Shttp::new(client, &target.url, monitor);
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

    /// Start the session with these hooks (a handler for the server's requests and a tap on
    /// every message) instead of the defaults. Call before [`Connection::initialize`].
    pub fn set_hooks(&mut self, hooks: Hooks) {
        self.hooks = hooks;
    }

    /// The MCP handshake. For `auto`, a 400/404/405 to the `initialize` POST switches to the
    /// legacy SSE transport on the same URL.
    pub async fn initialize(&mut self) -> Result<(), ConnectError> {
        let pending = self
            .pending
            .take()
            .expect("initialize is called once, after open");
        let service = match pending {
            Pending::Stdio(t) => handshake(t, &self.hooks).await,
            Pending::Sse(t) => handshake(t, &self.hooks).await,
            Pending::Shttp(t) => handshake(t.into_transport(), &self.hooks).await,
            Pending::Auto(t) => match handshake(t.into_transport(), &self.hooks).await {
                Ok(service) => Ok(service),
                Err(err) => {
                    let status = match self.monitor.snapshot().http {
                        Some(HttpFault::Status {
                            status: status @ (400 | 404 | 405),
                            ..
                        }) => status,
                        _ => return Err(ConnectError::Initialize(Box::new(err))),
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
                        })?;
                    handshake(sse, &self.hooks).await
                }
            },
        };
        self.service = Some(service.map_err(|e| ConnectError::Initialize(Box::new(e)))?);
        Ok(())
    }

    /// The transport in use (for `auto`, the one that worked, or the last one tried).
    pub fn transport(&self) -> TransportKind {
        self.transport
    }

    /// The server after a successful handshake.
    pub fn peer(&self) -> Option<&Peer<RoleClient>> {
        self.service.as_ref().map(|s| s.peer())
    }

    /// What the server said in the handshake.
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
