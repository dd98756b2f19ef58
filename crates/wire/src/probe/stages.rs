//! The staged test: resolve (done by the caller, timed) → connect → the handshake of either
//! era (`discover` for a modern server; for a legacy one `initialize`, after the `discover`
//! probe unless its era was known) → tools/list (all pages) → resources/list and prompts/list
//! (when declared) → credential probe (when the catalog declares one and the server lists the
//! tool) → close. One overall deadline covers every stage; each stage reports its start and end
//! for live progress and its duration in the result. Lists are always fetched afresh (their
//! caching hints are only reported). Whatever happens, the connection is closed and the process
//! group is gone before the result is returned, and the result has been through the redactor.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientRequest, ListPromptsRequest,
    ListResourcesRequest, ListToolsRequest, PaginatedRequestParams, ServerCapabilities,
    ServerResult,
};
use rmcp::service::Peer;
use serde_json::Value;
use tokio::time::Instant;

use super::classify::{self, Context};
use super::credential;
use super::enforcement::{self, Enforcement};
use super::naming;
use super::result::{
    CacheHint, ErrorKind, Failure, PromptInfo, ResourceInfo, ServerIdentity, Stage, StageEvent,
    StageReport, TestResult, ToolInfo, Verification,
};
use crate::config::TransportKind;
use crate::connect::{Connection, Era, Monitor, Observations, Step};
use crate::probe::CredentialProbe;
use crate::resolve::{ResolvedServer, Target};

/// At most this many pages of any list are fetched.
pub const MAX_PAGES: usize = 100;
/// At most this many items of any list are kept, whatever the pages hold (a server answering
/// 100,000 tools a page would otherwise cost hundreds of MiB).
pub const MAX_ITEMS: usize = 5_000;
/// At most this many bytes of items (as JSON) are kept from any list, across its pages.
pub const MAX_LIST_BYTES: usize = 32 * 1024 * 1024;
/// How long a server that writes non-JSON to stdout gets to answer the handshake anyway.
pub const NOISE_GRACE: Duration = Duration::from_secs(2);
/// Lines of stderr kept in the result.
pub const STDERR_TAIL_LINES: usize = 40;

enum Raced<T> {
    Done(T),
    TimedOut,
    Fatal,
}

struct Run<'a, P: FnMut(StageEvent)> {
    resolved: &'a ResolvedServer,
    progress: P,
    result: TestResult,
    deadline: Instant,
    monitor: std::sync::Arc<Monitor>,
    transport: TransportKind,
}

impl<P: FnMut(StageEvent)> Run<'_, P> {
    fn context(&self, stage: Stage) -> Context<'_> {
        let (command, target) = match self.resolved.target() {
            Target::Stdio(t) => (Some(t.command.as_str()), None),
            Target::Remote(t) => (None, Some(crate::connect::http::target_of(&t.url))),
        };
        Context {
            server: self.resolved.name(),
            transport: self.transport,
            stage,
            timeout: self.resolved.timeout(),
            command,
            target,
            sends_credentials: self.resolved.sends_credentials(),
        }
    }

    fn start(&mut self, stage: Stage) -> Instant {
        (self.progress)(StageEvent::Started { stage });
        Instant::now()
    }

    fn finish(&mut self, stage: Stage, started: Instant, ok: bool) {
        self.finish_at(stage, started, Instant::now(), ok);
    }

    /// Record a stage that ended at `ended` (a stage run alongside others ends before it is
    /// recorded).
    fn finish_at(&mut self, stage: Stage, started: Instant, ended: Instant, ok: bool) {
        let ms = ended.duration_since(started).as_millis() as u64;
        self.result.stages.push(StageReport {
            name: stage,
            ok,
            ms,
        });
        (self.progress)(StageEvent::Finished { stage, ok, ms });
    }

    /// Run `fut` until it finishes, the deadline passes, or the transport reports something
    /// fatal (then the future gets a short grace: its answer may already be on the way).
    async fn race<F: Future>(&self, stage: Stage, fut: F) -> Raced<F::Output> {
        race_until(self.deadline, &self.monitor, stage, fut).await
    }

    /// The connection the `connect` stage (started at `connect_started`) waited for was made
    /// at `at`: the stage ends, and the handshake's `first` stage starts, then.
    fn connected(&mut self, connect_started: Instant, at: Instant, first: Stage) -> Instant {
        self.finish_at(Stage::Connect, connect_started, at, true);
        (self.progress)(StageEvent::Started { stage: first });
        at
    }

    /// The era and versions a failed handshake still told.
    fn note_versions(&mut self, err: &crate::connect::HandshakeError) {
        use crate::connect::HandshakeError;
        match err {
            HandshakeError::NoCommonVersion { era, theirs } => {
                self.result.era = Some(*era);
                self.result.supported_versions = theirs.clone();
            }
            HandshakeError::Rejected {
                era: Some(era),
                error,
                ..
            } => {
                self.result.era = Some(*era);
                if let Some(listed) = crate::connect::era::supported_of(error) {
                    self.result.supported_versions = listed;
                }
            }
            _ => {}
        }
    }

    /// Observations after giving a process that closed its stdout a moment to be reaped.
    async fn observations(&self, conn: Option<&mut Connection>) -> Observations {
        let obs = self.monitor.snapshot();
        if let Some(conn) = conn
            && obs.exit.is_none()
            && (obs.stream_closed || conn.pid().is_some() && obs.messages == 0)
        {
            conn.settle(Duration::from_millis(300)).await;
            return self.monitor.snapshot();
        }
        obs
    }

    async fn fail_raced<T>(
        &mut self,
        stage: Stage,
        conn: Option<&mut Connection>,
        raced: Raced<T>,
    ) -> Failure {
        // A timeout is explained by what was seen until the deadline; a process that is still
        // running gains nothing from another 300 ms of waiting for it to exit (a health check
        // of hanging servers paid that for each of them).
        let obs = match raced {
            Raced::TimedOut => self.monitor.snapshot(),
            _ => self.observations(conn).await,
        };
        let ctx = self.context(stage);
        match raced {
            Raced::TimedOut => classify::timeout(&ctx, &obs),
            _ => classify::from_observations(&ctx, &obs).unwrap_or_else(|| {
                Failure::new(
                    ErrorKind::Protocol,
                    format!("the connection ended {}", stage.describe()),
                    "the server stopped talking; check its logs or stderr",
                )
            }),
        }
    }
}

/// [`Run::race`], for a future raced while the run reports progress.
async fn race_until<F: Future>(
    deadline: Instant,
    monitor: &Monitor,
    stage: Stage,
    fut: F,
) -> Raced<F::Output> {
    tokio::pin!(fut);
    let handshake = stage <= Stage::Initialize;
    loop {
        tokio::select! {
            biased;
            out = &mut fut => return Raced::Done(out),
            _ = tokio::time::sleep_until(deadline) => return Raced::TimedOut,
            _ = monitor.fatal() => {}
            _ = monitor.noise_grace(NOISE_GRACE), if handshake => {}
        }
        let grace = tokio::time::sleep(Duration::from_millis(200));
        tokio::select! {
            biased;
            out = &mut fut => return Raced::Done(out),
            _ = grace => {}
        }
        // A server that ended on the era probe is started again by the handshake, which
        // clears what its first process's end raised.
        if !handshake || monitor.is_fatal() || monitor.snapshot().noise_count > 0 {
            return Raced::Fatal;
        }
    }
}

/// Test a resolved server. `progress` hears every stage start and end.
pub async fn test_server(
    resolved: &ResolvedServer,
    progress: impl FnMut(StageEvent),
) -> TestResult {
    let initial = match resolved.transport() {
        TransportKind::Auto => TransportKind::Shttp,
        other => other,
    };
    let mut run = Run {
        resolved,
        progress,
        result: TestResult::new(initial),
        deadline: Instant::now() + resolved.timeout(),
        monitor: Monitor::new(),
        transport: initial,
    };
    let resolve_ms = resolved.resolve_time().as_millis() as u64;
    (run.progress)(StageEvent::Started {
        stage: Stage::Resolve,
    });
    run.result.stages.push(StageReport {
        name: Stage::Resolve,
        ok: true,
        ms: resolve_ms,
    });
    (run.progress)(StageEvent::Finished {
        stage: Stage::Resolve,
        ok: true,
        ms: resolve_ms,
    });

    // connect
    let started = run.start(Stage::Connect);
    let opened = run
        .race(
            Stage::Connect,
            Connection::open(resolved.target(), resolved.transport(), run.monitor.clone()),
        )
        .await;
    // Streamable HTTP connects with the handshake's first request: its `connect` stage ends
    // when that connection is made (in `stages`).
    let mut connecting = None;
    let mut conn = match opened {
        Raced::Done(Ok(conn)) => {
            if conn.transport() == TransportKind::Shttp {
                connecting = Some(started);
            } else {
                run.finish(Stage::Connect, started, true);
            }
            conn
        }
        Raced::Done(Err(err)) => {
            run.finish(Stage::Connect, started, false);
            let obs = run.monitor.snapshot();
            let failure = classify::connect_error(&run.context(Stage::Connect), &err, &obs);
            run.result.set_failure(failure);
            return finish(run, None).await;
        }
        other => {
            run.finish(Stage::Connect, started, false);
            let failure = run.fail_raced(Stage::Connect, None, other).await;
            run.result.set_failure(failure);
            return finish(run, None).await;
        }
    };

    conn.without_standalone_stream();
    let outcome = stages(&mut run, &mut conn, connecting).await;
    if let Err(failure) = outcome {
        run.result.set_failure(failure);
    }
    finish(run, Some(conn)).await
}

/// initialize → lists → probe. `Err` is the first failure (its stage already recorded).
/// `connecting`: when the `connect` stage started, if it ends with the handshake's first
/// connection (streamable HTTP).
async fn stages<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    conn: &mut Connection,
    connecting: Option<Instant>,
) -> Result<(), Failure> {
    let capabilities = handshake(run, conn, connecting).await?;
    list_stages(run, conn, &capabilities).await?;
    if let Some(probe) = run.resolved.probe().cloned() {
        credential_stage(run, conn, probe).await?;
    }
    if run.result.verification != Verification::Verified {
        enforcement_check(run).await;
    }
    run.result.ok = true;
    Ok(())
}

/// The handshake: `discover` (the era probe, and a modern server's handshake), then
/// `initialize` for a legacy server; the connection's stage when the handshake waited for it.
/// Records what was negotiated and who the server is; returns its capabilities.
async fn handshake<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    conn: &mut Connection,
    connecting: Option<Instant>,
) -> Result<ServerCapabilities, Failure> {
    let known = run.resolved.known_era();
    let first = if known == Some(Era::Legacy) {
        Stage::Initialize
    } else {
        Stage::Discover
    };
    // When the first handshake stage started: at once, or once the connection is made.
    let mut started = connecting.is_none().then(|| run.start(first));
    let mut steps: Vec<(Step, Instant)> = vec![];
    let raced = {
        let monitor = run.monitor.clone();
        let mut record = |step| steps.push((step, Instant::now()));
        let handshake = race_until(
            run.deadline,
            &monitor,
            Stage::Discover,
            conn.handshake(known, &mut record),
        );
        tokio::pin!(handshake);
        let mut early = None;
        if let Some(connect_started) = connecting {
            tokio::select! {
                biased;
                at = monitor.connected() => {
                    started = Some(run.connected(connect_started, at, first));
                }
                raced = &mut handshake => early = Some(raced),
            }
        }
        match early {
            Some(raced) => raced,
            None => handshake.await,
        }
    };
    run.transport = conn.transport();
    run.result.transport = conn.transport();
    let started = match started {
        Some(started) => started,
        None => {
            let connect_started =
                connecting.expect("the handshake starts at once unless it waits to connect");
            // The handshake ended before the connection was seen: made in its last moments,
            // or never (refused, no such host, no answer).
            let connected_at = run.monitor.snapshot().connected_at.or_else(|| {
                // Answered, so connected (through a connector that does not report).
                matches!(raced, Raced::Done(Ok(()))).then(Instant::now)
            });
            match connected_at {
                Some(at) => run.connected(connect_started, at, first),
                None => {
                    run.finish(Stage::Connect, connect_started, false);
                    return Err(match raced {
                        Raced::Done(Err(err)) => {
                            let obs = run.observations(Some(conn)).await;
                            classify::connect_error(&run.context(Stage::Connect), &err, &obs)
                        }
                        other => run.fail_raced(Stage::Connect, Some(conn), other).await,
                    });
                }
            }
        }
    };
    let ok = matches!(raced, Raced::Done(Ok(())));
    let failed_stage = report_handshake(run, first, started, &steps, ok, conn.era());
    note_negotiation(run, conn, known);
    match raced {
        Raced::Done(Ok(())) => {}
        Raced::Done(Err(err)) => {
            let obs = run.observations(Some(conn)).await;
            let failure = classify::connect_error(&run.context(failed_stage), &err, &obs);
            if let crate::connect::ConnectError::Handshake(handshake) = &err {
                run.note_versions(handshake);
            }
            return Err(failure);
        }
        other => return Err(run.fail_raced(failed_stage, Some(conn), other).await),
    }
    let info = conn.server_info().expect("handshaken");
    run.result.instructions = info.instructions.clone();
    if let Some(implementation) = &info.server_info {
        run.result.server = Some(ServerIdentity {
            name: implementation.name.clone(),
            version: implementation.version.clone(),
        });
    }
    let capabilities = info.capabilities.clone();
    let observations = run.monitor.snapshot();
    if observations.noise_count > 0 && run.transport == TransportKind::Stdio {
        run.result.warnings.push(format!(
            "the server wrote {} line(s) that are not JSON-RPC to stdout (first: `{}`); MCP stdio \
             servers must log to stderr, and some clients fail on this",
            observations.noise_count,
            observations.noise.first().cloned().unwrap_or_default()
        ));
    }

    Ok(capabilities)
}

/// What the handshake negotiated: the era, the protocol versions, `server/discover`'s cache
/// hints, and warnings when the era changed or the probe went unanswered.
fn note_negotiation<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    conn: &Connection,
    known: Option<Era>,
) {
    if let Some(negotiated) = conn.negotiated() {
        run.result.era = Some(negotiated.era);
        run.result.protocol_version = Some(negotiated.protocol_version.to_string());
        run.result.supported_versions = negotiated.supported_versions.clone();
        if negotiated.ttl_ms.is_some() || negotiated.cache_scope.is_some() {
            run.result.cache_hints.push(CacheHint {
                method: "server/discover".to_owned(),
                ttl_ms: negotiated.ttl_ms,
                cache_scope: negotiated.cache_scope.clone(),
            });
        }
        if negotiated.found == crate::connect::Found::Reprobe {
            run.result.warnings.push(format!(
                "the server's era changed since its last test ({} then); a new probe found it \
                 {}",
                known.map_or("unknown", Era::as_str),
                negotiated.era
            ));
        }
        if negotiated.found == crate::connect::Found::Restarted {
            run.result.warnings.push(
                "the server ended when it read the `server/discover` probe (older SDKs exit on a \
                 request they do not know); it was started again and answered `initialize`, the \
                 legacy handshake, which its next starts use at once"
                    .to_owned(),
            );
        }
        if let crate::connect::Found::Silence(waited) = negotiated.found {
            run.result.warnings.push(format!(
                "the server read the `server/discover` probe and never answered it; after {} ms \
                 it was taken for a legacy server (most answer such a probe with an error at once)",
                waited.as_millis()
            ));
        }
    }
}

/// `tools/list`, and `resources/list` and `prompts/list` when declared: each stage reports its
/// own outcome and duration, in stage order; the first failure is returned.
async fn list_stages<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    conn: &mut Connection,
    capabilities: &ServerCapabilities,
) -> Result<(), Failure> {
    // tools/list, resources/list and prompts/list (the last two only when declared). Over a
    // pipe (stdio, and SSE's event stream) they are requested together: a server answers them
    // in one go instead of waiting for the client between them. Over streamable HTTP each
    // request is a request of its own, and asked together they would each need a connection:
    // one after the other on the connection the handshake opened costs no more round trips
    // than a new TLS connection would (TCP, TLS, request), one more than a new plain-HTTP
    // connection to a distant host (TCP, request) when all three lists are asked, and a
    // connection less to open and close for the client and the server. Each stage reports
    // its own outcome and duration, in stage order.
    let mut lists = vec![List::Tools];
    if capabilities.resources.is_some() {
        lists.push(List::Resources);
    }
    if capabilities.prompts.is_some() {
        lists.push(List::Prompts);
    }
    for list in &lists {
        run.start(list.stage());
    }
    let peer = conn.peer().expect("handshaken").clone();
    let fetched = {
        let run = &*run;
        // Boxed, so that joining them moves pointers rather than the futures themselves.
        let fetches = lists
            .iter()
            .map(|&list| Box::pin(fetch_list(run, &peer, list)));
        if conn.transport() == TransportKind::Shttp {
            let mut fetched = Vec::with_capacity(lists.len());
            for fetch in fetches {
                fetched.push(fetch.await);
            }
            fetched
        } else {
            futures::future::join_all(fetches).await
        }
    };
    let mut first_failure = None;
    for (list, fetched) in lists.into_iter().zip(fetched) {
        run.result.warnings.extend(fetched.warnings);
        run.result.cache_hints.extend(fetched.cache_hint);
        let ok = match settle_list(run, conn, list, fetched.outcome).await {
            Ok(items) => {
                apply_list(run, list, items);
                true
            }
            // A server without the capability that lacks the method is no failure.
            Err(ListError::NotFound(_)) if list == List::Tools && capabilities.tools.is_none() => {
                run.result.warnings.push(
                    "the server declares no tools capability and does not implement tools/list"
                        .to_owned(),
                );
                true
            }
            Err(ListError::NotFound(_)) if list != List::Tools => true,
            Err(ListError::NotFound(failure) | ListError::Failed(failure)) => {
                first_failure.get_or_insert(failure);
                false
            }
        };
        run.finish_at(list.stage(), fetched.started, fetched.ended, ok);
    }
    match first_failure {
        Some(failure) => Err(failure),
        None => Ok(()),
    }
}

/// A remote server that was sent headers and passed: does it refuse the same request without
/// them? Then the credentials it accepted are verified; if it answers, it does not check them.
async fn enforcement_check<P: FnMut(StageEvent)>(run: &mut Run<'_, P>) {
    let Target::Remote(target) = run.resolved.target() else {
        return;
    };
    if target.headers.is_empty() {
        return;
    }
    let left = run.deadline.saturating_duration_since(Instant::now());
    let checked = tokio::time::timeout(left, enforcement::check(&target.url)).await;
    match checked {
        Ok(Some(Enforcement::Refused)) => run.result.verification = Verification::Verified,
        Ok(Some(Enforcement::Answered)) => run.result.warnings.push(
            "the server also answered a request sent without the configured headers: it does \
             not check the credentials for this, so they were not verified"
                .to_owned(),
        ),
        _ => {}
    }
}

/// The catalog's credential probe: a read-only call that proves the credentials work.
async fn credential_stage<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    conn: &mut Connection,
    probe: CredentialProbe,
) -> Result<(), Failure> {
    if !run.result.tools.iter().any(|t| t.name == probe.tool) {
        run.result.warnings.push(format!(
            "the catalog's credential probe `{}` is not among the server's tools, so the \
             credentials were not verified",
            probe.tool
        ));
    } else {
        let started = run.start(Stage::CredentialProbe);
        let mut params = CallToolRequestParams::new(probe.tool.clone());
        if let Some(arguments) = probe.arguments.as_object() {
            params = params.with_arguments(arguments.clone());
        }
        let peer = conn.peer().expect("handshaken").clone();
        let raced = run
            .race(Stage::CredentialProbe, async move {
                peer.call_tool_once(params).await
            })
            .await;
        let failure = match raced {
            Raced::Done(Ok(CallToolResponse::Complete(result))) => {
                let verdict = credential::evaluate(&probe, &result);
                match credential::failure(run.resolved.name(), &probe, &verdict) {
                    None => {
                        run.result.verification = Verification::Verified;
                        None
                    }
                    failure => failure,
                }
            }
            // A modern server asking for input (`input_required`: elicitation, sampling,
            // roots) or starting a task: nobody is there to answer during a test.
            Raced::Done(Ok(other)) => {
                let asked = match &other {
                    CallToolResponse::InputRequired(input) => {
                        let methods: Vec<String> = input
                            .input_requests
                            .iter()
                            .flat_map(|requests| requests.values())
                            .filter_map(|request| {
                                serde_json::to_value(request)
                                    .ok()?
                                    .get("method")?
                                    .as_str()
                                    .map(str::to_owned)
                            })
                            .collect();
                        if methods.is_empty() {
                            "further input (input_required)".to_owned()
                        } else {
                            format!("input (input_required: {})", methods.join(", "))
                        }
                    }
                    _ => "to run it as a task".to_owned(),
                };
                run.result.warnings.push(format!(
                    "the credential probe `{}` could not run unattended: the server asked for \
                     {asked}, which a test does not answer, so the credentials were not \
                     verified",
                    probe.tool
                ));
                None
            }
            Raced::Done(Err(err)) => {
                let obs = run.observations(Some(conn)).await;
                let mut failure = classify::service_error(
                    &run.context(Stage::CredentialProbe),
                    "tools/call",
                    &err,
                    &obs,
                );
                if failure.kind == ErrorKind::Server
                    && credential::is_network_failure(&failure.error)
                {
                    failure = Failure::new(
                        ErrorKind::Connection,
                        format!(
                            "the server started, but its credential check `{}` could not \
                             reach the service (network): {}",
                            probe.tool, failure.error
                        ),
                        "the credentials were not checked: the server cannot reach its \
                         service from this machine; check the network, a proxy or VPN, \
                         then test again",
                    );
                } else if failure.kind == ErrorKind::Server {
                    failure = Failure::new(
                        ErrorKind::Credentials,
                        format!(
                            "the credential probe `{}` failed: {}",
                            probe.tool, failure.error
                        ),
                        format!(
                            "the server refused the call that proves the credentials work; \
                             check the credentials and update them with `plugboard edit {} \
                             --credential`",
                            run.resolved.name()
                        ),
                    );
                }
                Some(failure)
            }
            other => Some(
                run.fail_raced(Stage::CredentialProbe, Some(conn), other)
                    .await,
            ),
        };
        run.finish(Stage::CredentialProbe, started, failure.is_none());
        if let Some(failure) = failure {
            return Err(failure);
        }
    }
    Ok(())
}

/// Report the handshake's stages (started at `started` with `first`; `steps` as they were
/// sent) for a server found to speak `era`, and return the stage a failure belongs to:
/// - a modern server: `discover`;
/// - a legacy server: `initialize`, after `discover` when it was probed;
/// - a failure: the stage of the last request sent.
fn report_handshake<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    first: Stage,
    started: Instant,
    steps: &[(Step, Instant)],
    ok: bool,
    era: Option<Era>,
) -> Stage {
    let at = |wanted: Step| {
        steps
            .iter()
            .find(|(step, _)| *step == wanted)
            .map(|(_, at)| *at)
    };
    let last = steps.last().map(|(step, _)| *step);
    match first {
        // Probed: the probe's stage ends when `initialize` follows it.
        Stage::Discover => match at(Step::Initialize) {
            Some(initialize) if era == Some(Era::Legacy) || !ok => {
                run.finish_at(Stage::Discover, started, initialize, true);
                (run.progress)(StageEvent::Started {
                    stage: Stage::Initialize,
                });
                run.finish(Stage::Initialize, initialize, ok);
                Stage::Initialize
            }
            _ => {
                run.finish(Stage::Discover, started, ok);
                Stage::Discover
            }
        },
        // Remembered legacy: `initialize` at once; when it was refused and a probe followed,
        // the handshake is reported as the era it found.
        _ => {
            let reprobed = era == Some(Era::Modern) || (!ok && last == Some(Step::Discover));
            if !reprobed {
                run.finish(Stage::Initialize, started, ok);
                return Stage::Initialize;
            }
            let ended = Instant::now();
            (run.progress)(StageEvent::Finished {
                stage: Stage::Initialize,
                ok: true,
                ms: at(Step::Discover)
                    .unwrap_or(ended)
                    .duration_since(started)
                    .as_millis() as u64,
            });
            (run.progress)(StageEvent::Started {
                stage: Stage::Discover,
            });
            run.finish_at(Stage::Discover, started, ended, ok);
            Stage::Discover
        }
    }
}

fn str_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// One of the lists a test fetches.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    Tools,
    Resources,
    Prompts,
}

impl List {
    fn stage(self) -> Stage {
        match self {
            List::Tools => Stage::ToolsList,
            List::Resources => Stage::ResourcesList,
            List::Prompts => Stage::PromptsList,
        }
    }

    fn method(self) -> &'static str {
        self.stage().as_str()
    }

    /// The key of the items in the result (`tools`, `resources`, `prompts`).
    fn key(self) -> &'static str {
        match self {
            List::Tools => "tools",
            List::Resources => "resources",
            List::Prompts => "prompts",
        }
    }

    fn request(self, cursor: Option<String>) -> ClientRequest {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        match self {
            List::Tools => ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params)),
            List::Resources => {
                ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params))
            }
            List::Prompts => {
                ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params))
            }
        }
    }
}

/// Put the items of `list` into the result.
fn apply_list<P: FnMut(StageEvent)>(run: &mut Run<'_, P>, list: List, items: Vec<Value>) {
    match list {
        List::Tools => {
            let names: Vec<String> = items
                .iter()
                .map(|t| str_field(t, "name").unwrap_or_default())
                .collect();
            let adapted = naming::adapted_names(run.resolved.name(), &names);
            run.result.tools = items
                .into_iter()
                .zip(names)
                .zip(adapted)
                .map(|((tool, name), adapted_name)| ToolInfo {
                    name,
                    description: str_field(&tool, "description"),
                    input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
                    annotations: tool.get("annotations").cloned().filter(|a| !a.is_null()),
                    ui: super::result::ui_resource_of(&tool),
                    adapted_name,
                })
                .collect();
        }
        List::Resources => {
            run.result.resources = items
                .iter()
                .map(|r| ResourceInfo {
                    uri: str_field(r, "uri").unwrap_or_default(),
                    name: str_field(r, "name").unwrap_or_default(),
                    description: str_field(r, "description"),
                    mime_type: str_field(r, "mimeType"),
                })
                .collect();
        }
        List::Prompts => {
            run.result.prompts = items
                .iter()
                .map(|p| PromptInfo {
                    name: str_field(p, "name").unwrap_or_default(),
                    description: str_field(p, "description"),
                    arguments: p
                        .get("arguments")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                })
                .collect();
        }
    }
}

/// A list as fetched: every item, or what stopped the fetch; warnings; the caching hints of
/// its first page; when it ended.
struct Fetched {
    outcome: Result<Vec<Value>, FetchError>,
    warnings: Vec<String>,
    cache_hint: Option<CacheHint>,
    /// When its first request went out (lists fetched in turn start after the one before).
    started: Instant,
    ended: Instant,
}

/// What stopped a fetch, classified later (classifying may wait for the process to exit,
/// which needs the connection to itself).
enum FetchError {
    Service(rmcp::ServiceError),
    Raced(Raced<()>),
    Failed(Failure),
}

enum ListError {
    /// JSON-RPC -32601: the method does not exist.
    NotFound(Failure),
    Failed(Failure),
}

/// The JSON of a list result, whatever variant rmcp decoded it as.
fn list_json(result: ServerResult) -> Option<Value> {
    match result {
        ServerResult::ListToolsResult(r) => serde_json::to_value(r).ok(),
        ServerResult::ListResourcesResult(r) => serde_json::to_value(r).ok(),
        ServerResult::ListPromptsResult(r) => serde_json::to_value(r).ok(),
        ServerResult::CustomResult(r) => Some(r.0),
        _ => None,
    }
}

/// Every item of a paginated list, page after page. Only reads `run` (its deadline and
/// monitor), so the lists can be fetched at the same time.
async fn fetch_list<P: FnMut(StageEvent)>(
    run: &Run<'_, P>,
    peer: &Peer<RoleClient>,
    list: List,
) -> Fetched {
    let mut warnings = vec![];
    let mut cache_hint = None;
    let started = Instant::now();
    let outcome = fetch_pages(run, peer, list, &mut warnings, &mut cache_hint).await;
    Fetched {
        outcome,
        warnings,
        cache_hint,
        started,
        ended: Instant::now(),
    }
}

async fn fetch_pages<P: FnMut(StageEvent)>(
    run: &Run<'_, P>,
    peer: &Peer<RoleClient>,
    list: List,
    warnings: &mut Vec<String>,
    cache_hint: &mut Option<CacheHint>,
) -> Result<Vec<Value>, FetchError> {
    let (method, key) = (list.method(), list.key());
    let mut items = vec![];
    let mut bytes = 0;
    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    for page in 0.. {
        if page == MAX_PAGES {
            warnings.push(format!(
                "{method} was cut off after {MAX_PAGES} pages ({} items)",
                items.len()
            ));
            break;
        }
        let result = match run
            .race(
                list.stage(),
                peer.send_request(list.request(cursor.clone())),
            )
            .await
        {
            Raced::Done(Ok(result)) => result,
            Raced::Done(Err(err)) => return Err(FetchError::Service(err)),
            Raced::TimedOut => return Err(FetchError::Raced(Raced::TimedOut)),
            Raced::Fatal => return Err(FetchError::Raced(Raced::Fatal)),
        };
        let json = list_json(result);
        let Some(Value::Array(page_items)) = json.as_ref().and_then(|j| j.get(key)).cloned() else {
            return Err(FetchError::Failed(Failure::new(
                ErrorKind::Protocol,
                format!("the server's answer to {method} has no `{key}` list"),
                "the server does not follow the MCP schema; it may speak another protocol version",
            )));
        };
        let mut cut = false;
        for item in page_items {
            let size = plugboard_base::json_size::json_size(&item);
            if items.len() == MAX_ITEMS || bytes + size > MAX_LIST_BYTES {
                cut = true;
                break;
            }
            bytes += size;
            items.push(item);
        }
        if cut {
            warnings.push(format!(
                "{method} was cut off at {} items ({} KiB): Plugboard keeps at most {MAX_ITEMS} \
                 items and {} MiB of any list",
                items.len(),
                bytes / 1024,
                MAX_LIST_BYTES / (1024 * 1024)
            ));
            break;
        }
        if page == 0
            && let Some(json) = &json
        {
            let ttl_ms = json.get("ttlMs").and_then(Value::as_u64);
            let cache_scope = json.get("cacheScope").and_then(Value::as_str);
            if ttl_ms.is_some() || cache_scope.is_some() {
                *cache_hint = Some(CacheHint {
                    method: method.to_owned(),
                    ttl_ms,
                    cache_scope: cache_scope.map(str::to_owned),
                });
            }
        }
        let next = json
            .as_ref()
            .and_then(|j| j.get("nextCursor"))
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        match next {
            None => break,
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    warnings.push(format!(
                        "{method} repeated the cursor `{}`; listing stopped there",
                        crate::connect::truncate_chars(&next, 40)
                    ));
                    break;
                }
                cursor = Some(next);
            }
        }
    }
    Ok(items)
}

/// The items of a fetched list, or its classified failure.
async fn settle_list<P: FnMut(StageEvent)>(
    run: &mut Run<'_, P>,
    conn: &mut Connection,
    list: List,
    outcome: Result<Vec<Value>, FetchError>,
) -> Result<Vec<Value>, ListError> {
    let (stage, method) = (list.stage(), list.method());
    match outcome {
        Ok(items) => Ok(items),
        Err(FetchError::Service(rmcp::ServiceError::McpError(data))) if data.code.0 == -32601 => {
            Err(ListError::NotFound(classify::rpc_error(
                &run.context(stage),
                method,
                &data,
            )))
        }
        Err(FetchError::Service(err)) => {
            let obs = run.observations(Some(conn)).await;
            Err(ListError::Failed(classify::service_error(
                &run.context(stage),
                method,
                &err,
                &obs,
            )))
        }
        Err(FetchError::Raced(raced)) => Err(ListError::Failed(
            run.fail_raced(stage, Some(conn), raced).await,
        )),
        Err(FetchError::Failed(failure)) => Err(ListError::Failed(failure)),
    }
}

/// Close, collect stderr, redact. A stdio server takes a while to exit after its stdin
/// closes; the result is redacted meanwhile, and only the stderr tail, complete once the
/// server is gone, after.
async fn finish<P: FnMut(StageEvent)>(mut run: Run<'_, P>, conn: Option<Connection>) -> TestResult {
    if !run.result.ok && run.result.error_kind.is_none() {
        run.result.set_failure(Failure::new(
            ErrorKind::Protocol,
            "the test ended without a result",
            "this is a bug in Plugboard; please report it",
        ));
    }
    let redactor = run.resolved.redactor();
    let Some(mut conn) = conn else {
        return redact(redactor, run.result);
    };
    let started = run.start(Stage::Close);
    let result = std::mem::replace(&mut run.result, TestResult::new(run.transport));
    let ((), redacted) = tokio::join!(conn.close(), async { redact(redactor, result) });
    run.result = redacted;
    run.finish(Stage::Close, started, true);
    if let Some(tail) = conn.stderr_tail(STDERR_TAIL_LINES).await
        && !tail.trim().is_empty()
    {
        run.result.stderr_tail = Some(redactor.redact(&tail));
    }
    run.result
}

/// Run the redactor over every string of the result.
pub fn redact(redactor: &crate::redact::Redactor, mut result: TestResult) -> TestResult {
    for field in [&mut result.error, &mut result.hint, &mut result.stderr_tail] {
        if let Some(text) = field.as_mut() {
            *text = redactor.redact(text);
        }
    }
    let Ok(mut value) = serde_json::to_value(&result) else {
        return result;
    };
    redactor.redact_json(&mut value);
    match serde_json::from_value(value) {
        Ok(redacted) => redacted,
        // A "secret" equal to a fixed JSON word (a kind, a transport) broke the shape: keep
        // the typed result, whose free-text fields are already redacted, minus the lists.
        Err(_) => {
            for warning in &mut result.warnings {
                *warning = redactor.redact(warning);
            }
            for tool in &mut result.tools {
                tool.description = tool.description.as_deref().map(|d| redactor.redact(d));
                redactor.redact_json(&mut tool.input_schema);
            }
            result
        }
    }
}
