//! The dual-era handshake, done on a transport before rmcp's service takes it over.
//!
//! **Probe** (the era is not known): `server/discover` goes out first, with Plugboard's
//! preferred modern version in `_meta`, as the spec's backward-compatibility sections say.
//! - A `DiscoverResult` means modern: the best version both sides speak is chosen.
//! - A recognised modern error means modern: `-32022` with a `supported` list is retried with
//!   a version from it (or, when it lists only a legacy version Plugboard speaks, that version
//!   is used through `initialize`); no common version is an error naming both sides' lists.
//!   `-32020`/`-32021` are a modern server rejecting the request: reported, no fallback.
//! - Any other answer (an error such as `-32601` or `-32602`, or a result that is not a
//!   `DiscoverResult`) means legacy: `initialize` follows on the same connection.
//! - No answer at all: some legacy servers ignore every request before `initialize`. Over stdio
//!   the probe watches the server's stdin pipe: while the probe is still unread the server is
//!   starting (an `npx` download, a slow import) and is waited for; once it has read the probe
//!   and not answered within [`IGNORED_PROBE_GRACE`], `initialize` is sent *while the probe
//!   stays open*: whichever answer comes first decides, so a modern server that was only slow
//!   is still found modern (it answers the discover first), and a legacy one that ignores the
//!   probe costs only that grace.
//!
//! **Remembered legacy**: `initialize` is sent directly. Over stdio, an answer that shows a
//! modern server (a modern error, or `initialize` unknown) leads to a probe on the same
//! process; over HTTP the caller probes on a fresh transport ([`Reprobe`]).
//!
//! Request ids of the handshake are strings (`plugboard-…`), so late answers to them are told
//! apart from rmcp's numeric ids and dropped by [`Handshaken`].

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientNotification, ClientRequest, ClientResult,
    DiscoverRequest, DiscoverRequestParams, ErrorData, InitializeRequest, InitializedNotification,
    JsonRpcMessage, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
    ServerPeerInfo, ServerRequest, ServerResult,
};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::era::{self, Era};

/// After a stdio server has read the probe, how long it gets to answer before `initialize`
/// is sent too (the probe stays open). Real servers answer a probe in milliseconds.
pub const IGNORED_PROBE_GRACE: Duration = Duration::from_millis(100);
/// Where the probe's pipe cannot be watched (not Linux): how long a server that has written
/// something (so it runs) gets before `initialize` is sent too, and how long one that has
/// shown no sign of life gets.
pub const UNWATCHED_GRACE: Duration = Duration::from_millis(300);
pub const UNWATCHED_SILENCE: Duration = Duration::from_secs(3);
/// How often the probe's pipe is looked at while the server has not answered.
const WATCH_EVERY: Duration = Duration::from_millis(5);
/// When the answer to `initialize` was an error and the probe is still open, how long the
/// probe's own answer is awaited (a modern server may answer out of order).
const LATE_PROBE_GRACE: Duration = Duration::from_millis(200);

const ID_PREFIX: &str = "plugboard-handshake-";

/// What the handshake found out.
#[derive(Clone, Debug)]
pub struct Negotiated {
    pub era: Era,
    /// The version every later request is made in.
    pub protocol_version: ProtocolVersion,
    /// The versions the server listed (`supportedVersions` of a modern server).
    pub supported_versions: Vec<String>,
    /// Identity, capabilities and instructions, as rmcp's peer keeps them.
    pub peer_info: ServerPeerInfo,
    /// `ttlMs` and `cacheScope` of the `DiscoverResult`.
    pub ttl_ms: Option<u64>,
    pub cache_scope: Option<String>,
    /// How the era was told.
    pub found: Found,
}

/// How a server's era was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Found {
    /// The probe was answered.
    Probe,
    /// The server read the probe and did not answer it: legacy after this long.
    Silence(Duration),
    /// The remembered era was used directly.
    Remembered,
    /// The remembered era was wrong; a probe found the right one.
    Reprobe,
    /// The server ended on reading the probe; started again, it answered `initialize`.
    Restarted,
}

/// A step of the handshake, as it happens (for live progress).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// `server/discover` was sent.
    Discover,
    /// `initialize` was sent (after the probe, or directly).
    Initialize,
}

/// Why the handshake failed.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    #[error("the connection ended during {during}")]
    Closed { during: &'static str },
    /// A stdio server read the era probe and ended without answering anything: an older
    /// server that exits on a request it does not know. It is started again and spoken to in
    /// the legacy era ([`super::Connection::handshake_with`]).
    #[error("the server ended on reading the era probe, without answering it")]
    ExitedOnProbe,
    #[error("could not send {during}: {detail}")]
    Send {
        during: &'static str,
        detail: String,
    },
    #[error("the server answered {method} with JSON-RPC error {}: {}", error.code.0, error.message)]
    Rejected {
        method: &'static str,
        era: Option<Era>,
        error: ErrorData,
    },
    #[error("no protocol version in common (the server speaks {theirs:?})")]
    NoCommonVersion { era: Era, theirs: Vec<String> },
    #[error("the server's answer to {method} is not {expected}: {detail}")]
    Unexpected {
        method: &'static str,
        expected: &'static str,
        detail: String,
    },
}

/// The remembered era was wrong and the transport cannot be probed again (streamable HTTP):
/// the caller probes on a fresh one.
#[derive(Debug)]
pub struct Reprobe;

/// How the handshake can watch a stdio server's input (to tell "still starting" from
/// "ignores the probe").
pub trait Watch: Send + Sync {
    /// Bytes written to the server's stdin that it has not read yet (`None`: cannot tell).
    fn unread(&self) -> Option<usize>;
    /// Whether the server has written anything at all (stderr or stdout).
    fn spoke(&self) -> bool;
}

/// What the handshake needs to know about where it talks.
pub enum Wire<'a> {
    /// stdio: the server's input can be watched.
    Stdio(&'a dyn Watch),
    /// streamable HTTP: every request gets an HTTP answer.
    Http,
}

/// The client side of the handshake: one transport, what Plugboard says about itself, and a
/// callback for each step.
pub struct Handshake<'a, T> {
    pub transport: &'a mut T,
    pub hello: &'a ClientConfig,
    pub wire: Wire<'a>,
    pub steps: &'a mut (dyn FnMut(Step) + Send),
    /// The version `initialize` asks for (default: the newest legacy one).
    pub legacy_version: Option<ProtocolVersion>,
}

fn probe_id(n: u32) -> RequestId {
    RequestId::String(format!("{ID_PREFIX}discover-{n}").into())
}

fn initialize_id() -> RequestId {
    RequestId::String(format!("{ID_PREFIX}initialize").into())
}

/// Whether `id` is one of the handshake's own.
pub fn is_handshake_id(id: &RequestId) -> bool {
    matches!(id, RequestId::String(s) if s.starts_with(ID_PREFIX))
}

/// An answer to one of our requests, or the end.
enum Answer {
    Result(RequestId, ServerResult),
    Error(Option<RequestId>, ErrorData),
}

/// What the probe's answer says.
enum Verdict {
    Modern(Box<Negotiated>),
    /// Retry the probe with this version.
    Retry(ProtocolVersion),
    /// Legacy: `initialize` with this version.
    Legacy(ProtocolVersion),
    Failed(HandshakeError),
}

impl<T> Handshake<'_, T>
where
    T: Transport<RoleClient>,
{
    async fn send(
        &mut self,
        message: ClientJsonRpcMessage,
        during: &'static str,
    ) -> Result<(), HandshakeError> {
        self.transport
            .send(message)
            .await
            .map_err(|e| HandshakeError::Send {
                during,
                detail: e.to_string(),
            })
    }

    async fn send_discover(
        &mut self,
        n: u32,
        version: &ProtocolVersion,
    ) -> Result<(), HandshakeError> {
        let meta = RequestMetaObject::with_client_context(
            version.clone(),
            self.hello.client_info.clone(),
            self.hello.capabilities.clone(),
        );
        let mut request = DiscoverRequest::new(DiscoverRequestParams {});
        request.extensions.insert(meta);
        (self.steps)(Step::Discover);
        self.send(
            ClientJsonRpcMessage::request(ClientRequest::DiscoverRequest(request), probe_id(n)),
            "server/discover",
        )
        .await
    }

    fn initialize_version(&self) -> ProtocolVersion {
        self.legacy_version
            .clone()
            .unwrap_or_else(era::legacy_request_version)
    }

    async fn send_initialize(&mut self, version: &ProtocolVersion) -> Result<(), HandshakeError> {
        let mut params = self.hello.clone();
        params.protocol_version = version.clone();
        let request = InitializeRequest::new(params);
        (self.steps)(Step::Initialize);
        self.send(
            ClientJsonRpcMessage::request(
                ClientRequest::InitializeRequest(request),
                initialize_id(),
            ),
            "initialize",
        )
        .await
    }

    /// The next answer to one of our requests; pings are answered, other messages skipped.
    /// Whether a stdio server has read everything sent to it (the probe among it).
    fn probe_was_read(&self) -> bool {
        matches!(&self.wire, Wire::Stdio(watch) if watch.unread() == Some(0))
    }

    async fn next_answer(&mut self, during: &'static str) -> Result<Answer, HandshakeError> {
        loop {
            let Some(message) = self.transport.receive().await else {
                return Err(HandshakeError::Closed { during });
            };
            match message {
                JsonRpcMessage::Response(response) => {
                    return Ok(Answer::Result(response.id, response.result));
                }
                JsonRpcMessage::Error(error) => return Ok(Answer::Error(error.id, error.error)),
                JsonRpcMessage::Request(request)
                    if matches!(request.request, ServerRequest::PingRequest(_)) =>
                {
                    // Legacy servers may ping before the handshake ends. The answer is sent
                    // on a task of its own: this wait may be cancelled (the probe's watch),
                    // and a half-written message must never reach the server.
                    let pong = self.transport.send(ClientJsonRpcMessage::response(
                        ClientResult::empty(()),
                        request.id,
                    ));
                    tokio::spawn(async move {
                        let _ = pong.await;
                    });
                }
                // Notifications (logs) and anything else a server should not send yet.
                _ => {}
            }
        }
    }

    /// `notifications/initialized` and the negotiated legacy session.
    async fn finish_legacy(
        &mut self,
        result: ServerResult,
        found: Found,
    ) -> Result<Negotiated, HandshakeError> {
        let ServerResult::InitializeResult(init) = result else {
            return Err(HandshakeError::Unexpected {
                method: "initialize",
                expected: "an initialize result",
                detail: crate::connect::truncate_chars(
                    &serde_json::to_string(&result).unwrap_or_default(),
                    300,
                ),
            });
        };
        let version = init.protocol_version.clone();
        if !era::speaks(version.as_str()) {
            return Err(HandshakeError::NoCommonVersion {
                era: Era::of(&version),
                theirs: vec![version.to_string()],
            });
        }
        self.send(
            ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
                InitializedNotification {
                    method: Default::default(),
                    extensions: Default::default(),
                },
            )),
            "notifications/initialized",
        )
        .await?;
        Ok(Negotiated {
            era: Era::of(&version),
            protocol_version: version,
            supported_versions: vec![],
            peer_info: init.into(),
            ttl_ms: None,
            cache_scope: None,
            found,
        })
    }

    /// `initialize` directly (a remembered legacy server, or the legacy-only SSE transport).
    /// `Err(Ok(Reprobe))` when the answer shows that the server is modern after all and this
    /// transport cannot be probed again.
    pub async fn legacy(
        mut self,
        remembered: bool,
    ) -> Result<Negotiated, Result<Reprobe, HandshakeError>> {
        let found = if remembered {
            Found::Remembered
        } else {
            Found::Probe
        };
        self.send_initialize(&era::legacy_request_version())
            .await
            .map_err(Err)?;
        let answer = loop {
            match self.next_answer("initialize").await.map_err(Err)? {
                Answer::Result(id, _) | Answer::Error(Some(id), _) if id != initialize_id() => {}
                other => break other,
            }
        };
        match answer {
            Answer::Result(_, result) => self.finish_legacy(result, found).await.map_err(Err),
            Answer::Error(_, error) => {
                let looks_modern = era::is_modern_error(error.code) || error.code.0 == -32601;
                if remembered && looks_modern {
                    return match self.wire {
                        Wire::Http => Err(Ok(Reprobe)),
                        Wire::Stdio(_) => self.probe(Some(Era::Legacy)).await.map_err(Err),
                    };
                }
                Err(Err(HandshakeError::Rejected {
                    method: "initialize",
                    era: looks_modern.then_some(Era::Modern),
                    error,
                }))
            }
        }
    }

    /// The era probe, then the handshake of the era it found. `expected` is the era remembered
    /// for the server, if any (it only changes how [`Negotiated::found`] reads).
    pub async fn probe(mut self, expected: Option<Era>) -> Result<Negotiated, HandshakeError> {
        let found = match expected {
            Some(Era::Modern) => Found::Remembered,
            Some(_) => Found::Reprobe,
            None => Found::Probe,
        };
        let preferred = era::modern_versions();
        let mut tried = vec![preferred[0].clone()];
        let mut probe_n = 1;
        self.send_discover(probe_n, &preferred[0]).await?;
        let mut probe_open = true;
        // Set once the server answered anything at all.
        let mut answered = false;
        let mut initialize_sent = false;
        // Set when the initialize answer was an error while the probe was still open.
        let mut initialize_error: Option<(ErrorData, Instant)> = None;
        // Set once the server has read the probe (stdio).
        let mut read_at: Option<Instant> = None;
        let started = Instant::now();
        let mut watch = tokio::time::interval(WATCH_EVERY);
        watch.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let watching = probe_open && !initialize_sent && matches!(self.wire, Wire::Stdio(_));
            let late = initialize_error
                .as_ref()
                .map(|(_, at)| *at + LATE_PROBE_GRACE);
            let answer = tokio::select! {
                biased;
                answer = self.next_answer(if initialize_sent { "initialize" } else { "server/discover" }) => match answer {
                    Ok(answer) => {
                        answered = true;
                        answer
                    }
                    Err(HandshakeError::Closed { .. }) if !answered && self.probe_was_read() => {
                        return Err(HandshakeError::ExitedOnProbe);
                    }
                    Err(e) => return Err(e),
                },
                _ = watch.tick(), if watching => {
                    let Wire::Stdio(watcher) = &self.wire else { continue };
                    let now = Instant::now();
                    let give_up = match watcher.unread() {
                        Some(0) => {
                            let at = *read_at.get_or_insert(now);
                            now >= at + IGNORED_PROBE_GRACE
                        }
                        Some(_) => false,
                        None if watcher.spoke() => {
                            let at = *read_at.get_or_insert(now);
                            now >= at + UNWATCHED_GRACE
                        }
                        None => now >= started + UNWATCHED_SILENCE,
                    };
                    if give_up {
                        initialize_sent = true;
                        let version = self.initialize_version();
                        self.send_initialize(&version).await?;
                    }
                    continue;
                }
                _ = tokio::time::sleep_until(late.unwrap_or_else(Instant::now)), if late.is_some() => {
                    let (error, _) = initialize_error.take().expect("checked");
                    return Err(HandshakeError::Rejected { method: "initialize", era: None, error });
                }
            };
            let (id, outcome) = match answer {
                Answer::Result(id, result) => (Some(id), Ok(result)),
                Answer::Error(id, error) => (id, Err(error)),
            };
            // An error without an id answers the oldest request still open.
            let for_probe = match &id {
                Some(id) => probe_open && *id == probe_id(probe_n),
                None => probe_open,
            };
            let for_initialize = match &id {
                Some(id) => initialize_sent && *id == initialize_id(),
                None => !probe_open && initialize_sent,
            };
            if for_probe {
                probe_open = false;
                match self.verdict(outcome, &preferred, &tried) {
                    Verdict::Modern(mut negotiated) => {
                        negotiated.found = found;
                        return Ok(*negotiated);
                    }
                    Verdict::Retry(version) => {
                        tried.push(version.clone());
                        probe_n += 1;
                        probe_open = true;
                        self.send_discover(probe_n, &version).await?;
                    }
                    Verdict::Legacy(version) => {
                        if let Some((error, _)) = initialize_error.take() {
                            return Err(HandshakeError::Rejected {
                                method: "initialize",
                                era: Some(Era::Legacy),
                                error,
                            });
                        }
                        if !initialize_sent {
                            initialize_sent = true;
                            self.send_initialize(&version).await?;
                        }
                    }
                    Verdict::Failed(error) => return Err(error),
                }
            } else if for_initialize {
                match outcome {
                    Ok(result) => {
                        // Legacy by silence: the probe was read and never answered.
                        let found = match expected {
                            Some(Era::Legacy) => Found::Remembered,
                            Some(_) => Found::Reprobe,
                            None if probe_open => Found::Silence(started.elapsed()),
                            None => Found::Probe,
                        };
                        return self.finish_legacy(result, found).await;
                    }
                    Err(error) if probe_open => initialize_error = Some((error, Instant::now())),
                    Err(error) => {
                        return Err(HandshakeError::Rejected {
                            method: "initialize",
                            era: Some(Era::Legacy),
                            error,
                        });
                    }
                }
            }
            // Anything else answers an earlier probe (a version retried): ignored.
        }
    }

    /// What one answer to the probe means.
    fn verdict(
        &self,
        outcome: Result<ServerResult, ErrorData>,
        preferred: &[ProtocolVersion],
        tried: &[ProtocolVersion],
    ) -> Verdict {
        match outcome {
            Ok(result) => {
                let json = serde_json::to_value(&result).unwrap_or(Value::Null);
                let Some(listed) = json.get("supportedVersions").and_then(Value::as_array) else {
                    // A result that is not a DiscoverResult: a legacy server that answers
                    // unknown methods with something.
                    return Verdict::Legacy(self.initialize_version());
                };
                let theirs: Vec<String> = listed
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                let Some(version) = era::best_common(preferred, &theirs) else {
                    return Verdict::Failed(HandshakeError::NoCommonVersion {
                        era: Era::Modern,
                        theirs,
                    });
                };
                match peer_info_of(&json, &version) {
                    Some(peer_info) => Verdict::Modern(Box::new(Negotiated {
                        era: Era::Modern,
                        protocol_version: version,
                        supported_versions: theirs,
                        peer_info,
                        ttl_ms: json.get("ttlMs").and_then(Value::as_u64),
                        cache_scope: json
                            .get("cacheScope")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        found: Found::Probe,
                    })),
                    None => Verdict::Failed(HandshakeError::Unexpected {
                        method: "server/discover",
                        expected: "a DiscoverResult",
                        detail: crate::connect::truncate_chars(&json.to_string(), 300),
                    }),
                }
            }
            Err(error) => {
                if let Some(theirs) = era::supported_of(&error) {
                    // A version is tried at most twice: a server may refuse a first request
                    // whatever it names, and then list the version it refused.
                    if let Some(next) = era::best_common(preferred, &theirs)
                        .filter(|v| tried.iter().filter(|t| *t == v).count() < 2)
                    {
                        return Verdict::Retry(next);
                    }
                    if let Some(legacy) = era::best_common(&era::legacy_versions(), &theirs) {
                        return Verdict::Legacy(legacy);
                    }
                    return Verdict::Failed(HandshakeError::NoCommonVersion {
                        era: Era::Modern,
                        theirs,
                    });
                }
                if era::is_modern_error(error.code) {
                    return Verdict::Failed(HandshakeError::Rejected {
                        method: "server/discover",
                        era: Some(Era::Modern),
                        error,
                    });
                }
                Verdict::Legacy(self.initialize_version())
            }
        }
    }
}

/// rmcp's peer information from a `DiscoverResult` (read leniently: a missing `ttlMs` or
/// `resultType` does not make a working server fail).
fn peer_info_of(discover: &Value, version: &ProtocolVersion) -> Option<ServerPeerInfo> {
    let meta = discover.get("_meta").cloned();
    let server_info = meta
        .as_ref()
        .and_then(|m| m.get(era::META_SERVER_INFO))
        .or_else(|| discover.get("serverInfo"))
        .cloned();
    let mut info = json!({
        "protocolVersion": version.as_str(),
        "capabilities": discover.get("capabilities").cloned().unwrap_or_else(|| json!({})),
    });
    if let Some(server_info) = server_info {
        info["serverInfo"] = server_info;
    }
    if let Some(instructions) = discover.get("instructions").filter(|i| i.is_string()) {
        info["instructions"] = instructions.clone();
    }
    if let Some(meta) = meta.filter(Value::is_object) {
        info["_meta"] = meta;
    }
    serde_json::from_value(info.clone()).ok().or_else(|| {
        // Unreadable identity: keep the capabilities.
        info.as_object_mut()?.remove("serverInfo");
        serde_json::from_value(info).ok()
    })
}

/// A transport after the handshake: late answers to the handshake's own requests (a probe
/// answered after `initialize` won, an `initialize` answered after the probe did) are dropped.
pub struct Handshaken<T>(pub T);

impl<T: Transport<RoleClient>> Transport<RoleClient> for Handshaken<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.0.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let message = self.0.receive().await?;
            let ours = match &message {
                JsonRpcMessage::Response(r) => is_handshake_id(&r.id),
                JsonRpcMessage::Error(e) => e.id.as_ref().is_some_and(is_handshake_id),
                _ => false,
            };
            if !ours {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}
