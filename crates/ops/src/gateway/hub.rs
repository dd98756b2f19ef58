//! The servers of one gateway: each opened as a session of its own (the connection layer, with
//! its secrets, OAuth, era and tool states), all at once; one that fails to start, hangs or
//! dies is marked down with why, restarted with backoff, and never holds the others back; one
//! whose live tools changed since the user approved them is not served (as `plugboard run`
//! refuses it). The
//! merged lists carry namespaced names (`<server>__<name>`); every call is routed back by them
//! and runs through the permission pipeline: route → enabled → no known secret in the
//! arguments → permission (allow / ask / deny) → the call → the activity record.
//!
//! Everything here runs on one thread (a `LocalSet`): sessions' futures need not be `Send`.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use super::activity::{ActivityLog, ActivityRecord, shape_of};
use super::app_asks::{CallToAsk, ask_app};
use super::hooks::{HookCall, HookEvent, Verdict, run_hooks};
use super::known::{Known, known, unapproved};
use super::permissions::{Permission, decide};
use super::profiles::Profile;
use super::status::{GatewayStatus, ServerStatus, StatusFile};
use crate::manage::Servers;
use crate::probe::{ToolInfo, naming};
use crate::session::{self, Session, SessionError, SessionOptions, ToolRisk};

/// How long a server may take to start before it counts as down (unless its own timeout is
/// shorter).
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// How often the timer that is always due first is due: sooner than any timer set on a call
/// (its [`CALL_TIMEOUT`]; over HTTP, the time its client has to send a request's headers).
pub(crate) const ALWAYS_DUE_EVERY: Duration = Duration::from_secs(4);
/// The least a first list waits, once a server is ready, for others never tested (servers
/// that come up about together are listed together).
pub const QUIET_AFTER_READY: Duration = Duration::from_millis(50);
/// How much longer than twice its last test a server that worked before is waited for.
pub const USUAL_START_MARGIN: Duration = Duration::from_millis(100);
/// The longest wait between two restarts of a server that keeps failing.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Where one server stands.
#[derive(Clone)]
pub enum State {
    Starting,
    /// Not started yet (the profile starts servers on first use): what its last test listed.
    Idle(Rc<Known>),
    Ready(Rc<Session>),
    Down {
        why: String,
        hint: String,
        stderr_tail: Option<String>,
        /// Restarts tried so far.
        attempts: u32,
    },
}

/// How long the last successful test of each of `names` took, for those that have one.
fn usual_starts(config_dir: &std::path::Path, names: &[String]) -> HashMap<String, Duration> {
    let health = crate::health::HealthStore::in_config_dir(config_dir);
    names
        .iter()
        .filter_map(|name| {
            let last = health.get(name).filter(|r| r.result.ok)?;
            let took = last.finished_at_ms.saturating_sub(last.started_at_ms);
            Some((name.clone(), Duration::from_millis(took)))
        })
        .collect()
}

/// A server left out because its tools are not the ones the user approved.
fn unapproved_state(name: &str, why: String, attempts: u32) -> State {
    State::Down {
        why,
        hint: format!(
            "see what changed with `plugboard test {name}`, then approve it with \
             `plugboard approve {name}` (or the app's Review changes); the gateway serves it \
             again at its next restart"
        ),
        stderr_tail: None,
        attempts,
    }
}

/// How many times each merged list has changed, so that each client's side can tell which
/// `list_changed` notifications it owes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListGenerations {
    pub tools: u64,
    pub prompts: u64,
    pub resources: u64,
}

/// A server whose lists are served: connected, or idle with its known lists.
enum Listable {
    Live(Rc<Session>),
    Known(Rc<Known>),
}

impl Listable {
    fn lists(&self) -> session::Lists {
        match self {
            Listable::Live(session) => session.listed(),
            Listable::Known(known) => known.lists.clone(),
        }
    }

    fn tool_disabled(&self, tool: &str) -> bool {
        match self {
            Listable::Live(session) => session.tool_disabled(tool),
            Listable::Known(known) => known.tools.disabled(tool),
        }
    }
}

impl State {
    pub fn label(&self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Idle(_) => "idle",
            State::Ready(_) => "connected",
            State::Down { .. } => "down",
        }
    }
}

/// What a call through the hub became, for the client and the record.
pub struct Routed {
    /// The JSON-RPC result (or a tool result with `isError` for a refusal the model should see).
    pub result: Result<Value, (i64, String)>,
    pub decision: &'static str,
}

/// Who makes a call: the hub's id for it, the client's name (for the record and the hooks) and
/// how to ask its user.
pub struct Caller<'a> {
    pub call_id: &'a str,
    pub client: Option<&'a str>,
    pub ask: Option<AskUser>,
}

/// Asks the user whether a call may go on (the client's elicitation).
pub type AskUser = Rc<dyn Fn(String) -> std::pin::Pin<Box<dyn Future<Output = Asked>>>>;

/// How long the user's answer to "may this call run?" may take (through the client or the
/// app); no answer is a no.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(120);

/// What asking the user came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    Yes,
    No,
    /// The client cannot ask.
    Cannot,
    /// The question went to the client inside the call's answer (a modern client's
    /// `input_required`); the call comes again with the answer. Nothing was forwarded.
    Pending,
    /// Asked (in the app), and no answer came in time: a no.
    Unanswered,
}

/// A server's `notifications/progress` for a call the hub forwarded (by the hub's call id).
#[derive(Clone, Debug, PartialEq)]
pub struct CallProgress {
    pub call_id: String,
    pub progress: f64,
    pub total: Option<f64>,
    /// Redacted by the session.
    pub message: Option<String>,
}

/// A server's log message (`notifications/message`), for its clients.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerLog {
    pub server: String,
    pub level: String,
    /// Redacted by the session, as `text` is.
    pub logger: Option<String>,
    pub text: String,
}

/// A question a server asked during a call (an elicitation, or a modern server's input
/// request), for the client that made the call; the answer goes back on `reply`.
pub struct ServerQuestion {
    pub server: String,
    pub question: session::Question,
    pub reply: tokio::sync::oneshot::Sender<session::Answer>,
}

/// A request of a server for the client calling it, with where its answer goes.
pub enum ForClient {
    /// Which roots (folders) it may use, or why none can be given now.
    Roots {
        server: String,
        reply: tokio::sync::oneshot::Sender<Result<Vec<Value>, String>>,
    },
    /// A completion of the client's model (`sampling/createMessage`'s params, redacted): the
    /// `CreateMessageResult`, or why not.
    Sampling {
        server: String,
        params: Value,
        reply: tokio::sync::oneshot::Sender<Result<Value, String>>,
    },
}

impl ForClient {
    pub fn server(&self) -> &str {
        match self {
            ForClient::Roots { server, .. } | ForClient::Sampling { server, .. } => server,
        }
    }
}

/// Hands a server's questions and its requests for the client to the hub's client side (a
/// session's asker is `Send`, the client side lives on the gateway's one thread).
struct RelayAsker {
    server: String,
    questions: tokio::sync::mpsc::UnboundedSender<ServerQuestion>,
    for_client: tokio::sync::mpsc::UnboundedSender<ForClient>,
}

impl session::Asker for RelayAsker {
    fn ask(
        &self,
        question: session::Question,
    ) -> futures::future::BoxFuture<'static, session::Answer> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let sent = self.questions.send(ServerQuestion {
            server: self.server.clone(),
            question,
            reply,
        });
        Box::pin(async move {
            match sent {
                Ok(()) => answer.await.unwrap_or(session::Answer::Decline),
                Err(_) => session::Answer::Decline,
            }
        })
    }

    fn roots(&self) -> Option<futures::future::BoxFuture<'static, Result<Vec<Value>, String>>> {
        let (reply, roots) = tokio::sync::oneshot::channel();
        let sent = self.for_client.send(ForClient::Roots {
            server: self.server.clone(),
            reply,
        });
        let gone = || "the gateway closed before its client answered".to_string();
        Some(Box::pin(async move {
            match sent {
                Ok(()) => roots.await.unwrap_or_else(|_| Err(gone())),
                Err(_) => Err(gone()),
            }
        }))
    }

    fn sample(
        &self,
        params: Value,
    ) -> Option<futures::future::BoxFuture<'static, Result<Value, String>>> {
        let (reply, result) = tokio::sync::oneshot::channel();
        let sent = self.for_client.send(ForClient::Sampling {
            server: self.server.clone(),
            params,
            reply,
        });
        let gone = || "the gateway closed before its client answered".to_string();
        Some(Box::pin(async move {
            match sent {
                Ok(()) => result.await.unwrap_or_else(|_| Err(gone())),
                Err(_) => Err(gone()),
            }
        }))
    }
}

/// A route: the server and its own name for the thing.
#[derive(Clone, Debug, PartialEq)]
struct Route {
    server: String,
    name: String,
}

/// The servers of one profile.
pub struct Hub {
    servers: Arc<Servers>,
    profile_name: String,
    profile: Profile,
    members: BTreeMap<String, RefCell<State>>,
    /// Namespaced tool and prompt names seen so far → where they go (kept when a server goes
    /// down, so a call to it is answered "down", not "unknown").
    tools: RefCell<HashMap<String, Route>>,
    prompts: RefCell<HashMap<String, Route>>,
    /// Resource URIs → the server that listed them.
    resources: RefCell<HashMap<String, String>>,
    /// Collisions resolved in the last listing (reported on stderr once).
    reported_collisions: RefCell<HashSet<String>>,
    activity: Rc<ActivityLog>,
    floor: Permission,
    /// Woken when a server's state changes (for `list_changed`).
    pub changed: Rc<Notify>,
    /// The servers that keep control characters in their results, as their config said when
    /// they started (read once, not on every call).
    keep_controls: RefCell<std::collections::BTreeSet<String>>,
    /// When the hub was made, and when a server last left `Starting` (for [`Hub::settle`]).
    made: Instant,
    last_settled: Cell<Instant>,
    /// How long the last successful test of each member took, for those that have one: what
    /// its start is expected to take (for [`Hub::settle`]).
    usual_start: HashMap<String, Duration>,
    client: RefCell<Option<String>>,
    /// Where every session sends the progress of the calls it runs.
    progress_tx: tokio::sync::mpsc::UnboundedSender<CallProgress>,
    progress_rx: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<CallProgress>>>,
    /// Where every session sends its server's log messages.
    logs_tx: tokio::sync::mpsc::UnboundedSender<ServerLog>,
    logs_rx: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<ServerLog>>>,
    /// Where every session says which of its server's lists changed (the server's own
    /// `list_changed`, the list fetched again).
    lists_tx: tokio::sync::mpsc::UnboundedSender<(String, String)>,
    lists_rx: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<(String, String)>>>,
    generations: Cell<ListGenerations>,
    /// Idle servers a call is starting now.
    waking: RefCell<HashSet<String>>,
    /// Where every session sends the questions its server asks.
    questions_tx: tokio::sync::mpsc::UnboundedSender<ServerQuestion>,
    questions_rx: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<ServerQuestion>>>,
    /// Where every session sends its server's requests for the client.
    for_client_tx: tokio::sync::mpsc::UnboundedSender<ForClient>,
    for_client_rx: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<ForClient>>>,
    started_at_ms: u64,
    /// Where this gateway's status is kept for `serve --status`, once published.
    status: RefCell<Option<StatusFile>>,
}

impl Hub {
    /// Whether `server`, as its config was when it started, keeps terminal, bidi and tag
    /// characters in its results.
    fn keeps_controls(&self, server: &str) -> bool {
        self.keep_controls.borrow().contains(server)
    }

    /// Note from its config whether `server` keeps control characters (when it starts).
    fn note_keeps_controls(&self, server: &str) {
        let keeps = self
            .servers
            .config()
            .load()
            .ok()
            .and_then(|c| c.server(server).ok())
            .is_some_and(|s| s.keep_control_characters);
        let mut kept = self.keep_controls.borrow_mut();
        if keeps {
            kept.insert(server.to_owned());
        } else {
            kept.remove(server);
        }
    }

    /// A hub for `servers_in_profile` of profile `profile_name`; nothing is started yet.
    pub fn new(
        servers: Arc<Servers>,
        profile_name: &str,
        profile: Profile,
        servers_in_profile: Vec<String>,
        floor: Permission,
    ) -> Rc<Hub> {
        let activity = Rc::new(ActivityLog::in_config_dir(servers.config().dir()));
        let usual_start = usual_starts(servers.config().dir(), &servers_in_profile);
        let (progress_tx, progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let (questions_tx, questions_rx) = tokio::sync::mpsc::unbounded_channel();
        let (logs_tx, logs_rx) = tokio::sync::mpsc::unbounded_channel();
        let (for_client_tx, for_client_rx) = tokio::sync::mpsc::unbounded_channel();
        let (lists_tx, lists_rx) = tokio::sync::mpsc::unbounded_channel();
        Rc::new(Hub {
            lists_tx,
            lists_rx: RefCell::new(Some(lists_rx)),
            generations: Cell::default(),
            waking: RefCell::default(),
            progress_tx,
            progress_rx: RefCell::new(Some(progress_rx)),
            logs_tx,
            logs_rx: RefCell::new(Some(logs_rx)),
            questions_tx,
            questions_rx: RefCell::new(Some(questions_rx)),
            for_client_tx,
            for_client_rx: RefCell::new(Some(for_client_rx)),
            members: servers_in_profile
                .into_iter()
                .map(|n| (n, RefCell::new(State::Starting)))
                .collect(),
            servers,
            profile_name: profile_name.to_owned(),
            profile,
            tools: RefCell::default(),
            prompts: RefCell::default(),
            resources: RefCell::default(),
            reported_collisions: RefCell::default(),
            activity,
            floor,
            changed: Rc::new(Notify::new()),
            keep_controls: RefCell::default(),
            made: Instant::now(),
            last_settled: Cell::new(Instant::now()),
            usual_start,
            client: RefCell::new(None),
            started_at_ms: crate::clock::now_ms(),
            status: RefCell::new(None),
        })
    }

    /// Keep this gateway's status in `file` from now on, rewritten on every change.
    pub fn publish_status(&self, file: StatusFile) {
        *self.status.borrow_mut() = Some(file);
        self.write_status();
    }

    fn write_status(&self) {
        if let Some(file) = self.status.borrow().as_ref()
            && let Err(e) = file.write(&self.status_now())
        {
            eprintln!("plugboard serve: could not record this gateway's status: {e}");
        }
    }

    /// The profile, the client and each server's state, as `serve --status` shows them.
    pub fn status_now(&self) -> GatewayStatus {
        GatewayStatus {
            pid: std::process::id(),
            profile: self.profile_name.clone(),
            client: self.client.borrow().clone(),
            started_at_ms: self.started_at_ms,
            servers: self
                .states()
                .into_iter()
                .map(|(name, state)| {
                    let (why, restarts) = match &state {
                        State::Down { why, attempts, .. } => (Some(why.clone()), *attempts),
                        _ => (None, 0),
                    };
                    let label = match &state {
                        State::Idle(_) if self.waking.borrow().contains(&name) => "starting",
                        other => other.label(),
                    };
                    ServerStatus {
                        name,
                        state: label.to_owned(),
                        why,
                        restarts,
                    }
                })
                .collect(),
        }
    }

    /// The name of the client heard from last, for `serve --status`.
    pub fn set_client(&self, name: Option<String>) {
        *self.client.borrow_mut() = name;
        self.write_status();
    }

    /// Start every server at once (on the current `LocalSet`), and follow the changes of
    /// their lists.
    pub fn start_all(self: &Rc<Self>) {
        for (name, state) in &self.members {
            if self.profile.lazy
                && let Some(known) = known(&self.servers, name)
            {
                *state.borrow_mut() = State::Idle(Rc::new(known));
                continue;
            }
            let hub = Rc::clone(self);
            let name = name.clone();
            tokio::task::spawn_local(async move { hub.start_one(&name, 0).await });
        }
        self.bump(None);
        self.write_status();
        if let Some(mut lists) = self.lists_rx.borrow_mut().take() {
            let hub = Rc::downgrade(self);
            tokio::task::spawn_local(async move {
                while let Some((server, list)) = lists.recv().await {
                    let Some(hub) = hub.upgrade() else { break };
                    hub.server_list_changed(&server, &list).await;
                }
            });
        }
        // A timer always due before the timers set on every call (its time limit; over HTTP,
        // the time its client has to send the request's headers): a timer due sooner than all
        // the others wakes the runtime's driver when it is set (a write to the driver's eventfd
        // and one more turn of its loop), which those then never are.
        let hub = Rc::downgrade(self);
        tokio::task::spawn_local(async move {
            while hub.strong_count() > 0 {
                tokio::time::sleep(ALWAYS_DUE_EVERY).await;
            }
        });
    }

    /// How many times each merged list has changed so far.
    pub fn generations(&self) -> ListGenerations {
        self.generations.get()
    }

    /// Note that `list` (`tools`, `prompts`, `resources`, or every one) changed, and wake the
    /// clients' sides.
    fn bump(&self, list: Option<&str>) {
        let mut g = self.generations.get();
        match list {
            Some("tools") => g.tools += 1,
            Some("prompts") => g.prompts += 1,
            Some("resources") => g.resources += 1,
            Some(_) => return,
            None => {
                g.tools += 1;
                g.prompts += 1;
                g.resources += 1;
            }
        }
        self.generations.set(g);
        self.changed.notify_waiters();
    }

    /// Server `name`'s `list` changed while it runs. Tools it changed away from what the user
    /// approved (a description turned into instructions, a new tool) take it out, as at start:
    /// its tools leave the list and it is restarted with backoff, served again once approved.
    async fn server_list_changed(self: &Rc<Self>, name: &str, list: &str) {
        let Some(State::Ready(session)) = self.members.get(name).map(|s| s.borrow().clone()) else {
            return;
        };
        if list == "tools"
            && let Some(why) = self.unapproved(name, &session)
        {
            eprintln!("plugboard serve: `{name}` is left out: {why}");
            self.set_state(name, unapproved_state(name, why, 0));
            session.close().await;
            self.schedule_restart(name, 0);
            return;
        }
        self.bump(Some(list));
    }

    /// The progress of forwarded calls, as the servers report it (taken once, by the side
    /// that talks to the client).
    pub fn take_progress(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<CallProgress>> {
        self.progress_rx.borrow_mut().take()
    }

    /// The servers' requests for the client (taken once, by the side that talks to it).
    pub fn take_for_client(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<ForClient>> {
        self.for_client_rx.borrow_mut().take()
    }

    /// Tell every connected server that the client's roots changed.
    pub async fn roots_changed(&self) {
        for (_, session) in self.ready() {
            session.tell_roots_changed().await;
        }
    }

    /// The servers' log messages (taken once, by the side that talks to the client).
    pub fn take_logs(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<ServerLog>> {
        self.logs_rx.borrow_mut().take()
    }

    /// The questions servers ask during calls (taken once, by the side that talks to the
    /// client).
    pub fn take_questions(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<ServerQuestion>> {
        self.questions_rx.borrow_mut().take()
    }

    async fn start_one(self: Rc<Self>, name: &str, attempts: u32) {
        self.note_keeps_controls(name);
        let keeps_controls = self.keeps_controls(name);
        let progress = self.progress_tx.clone();
        let logs = self.logs_tx.clone();
        let lists = self.lists_tx.clone();
        let server = name.to_owned();
        let options = SessionOptions {
            timeout: Some(START_TIMEOUT),
            asker: Arc::new(RelayAsker {
                server: name.to_owned(),
                questions: self.questions_tx.clone(),
                for_client: self.for_client_tx.clone(),
            }),
            events: Arc::new(move |event| match event {
                session::SessionEvent::Progress {
                    call_id,
                    progress: done,
                    total,
                    message,
                } => {
                    let _ = progress.send(CallProgress {
                        call_id,
                        progress: done,
                        total,
                        message,
                    });
                }
                session::SessionEvent::ListChanged { list } => {
                    let _ = lists.send((server.clone(), list));
                }
                session::SessionEvent::Log {
                    level,
                    mut logger,
                    mut text,
                } => {
                    // Cleaned as a result's text is: no terminal or bidi controls.
                    if !keeps_controls {
                        if let Some(clean) = crate::traffic::strip_text(&text) {
                            text = clean;
                        }
                        if let Some(clean) = logger.as_deref().and_then(crate::traffic::strip_text)
                        {
                            logger = Some(clean);
                        }
                    }
                    let _ = logs.send(ServerLog {
                        server: server.clone(),
                        level,
                        logger,
                        text,
                    });
                }
                _ => {}
            }),
            trace: false,
            ..SessionOptions::default()
        };
        let opened = tokio::time::timeout(
            START_TIMEOUT,
            session::open_installed(&self.servers, name, options),
        )
        .await;
        let state = match opened {
            Ok(Ok(session)) => match self
                .pin_first_sight(name, &session)
                .or_else(|| self.unapproved(name, &session))
            {
                None => State::Ready(Rc::new(session)),
                Some(why) => {
                    session.close().await;
                    unapproved_state(name, why, attempts)
                }
            },
            Ok(Err(SessionError::Open {
                failure,
                stderr_tail,
                ..
            })) => State::Down {
                why: failure.error,
                hint: failure.hint,
                stderr_tail,
                attempts,
            },
            Ok(Err(other)) => State::Down {
                why: other.to_string(),
                hint: format!("`plugboard doctor {name}` says what to do"),
                stderr_tail: None,
                attempts,
            },
            Err(_) => State::Down {
                why: format!("it did not start within {} s", START_TIMEOUT.as_secs()),
                hint: format!("`plugboard test {name}` shows where it hangs"),
                stderr_tail: None,
                attempts,
            },
        };
        if let State::Down { why, .. } = &state {
            eprintln!("plugboard serve: `{name}` is down: {why}");
        }
        let down = matches!(state, State::Down { .. });
        self.set_state(name, state);
        if down {
            self.schedule_restart(name, attempts);
        }
    }

    /// A server never tested has no approved tools to hold it to: its first start here pins
    /// what it offers, as a first test does (approved unless something in it is flagged), so
    /// that a change while it is served is caught like any other. `Some(why)` when the pin
    /// could not be written (the server is then not served: nothing would catch a change).
    fn pin_first_sight(&self, name: &str, session: &Session) -> Option<String> {
        let pins = crate::pinning::PinStore::in_config_dir(self.servers.config().dir());
        match pins.get(name) {
            Ok(Some(_)) => None,
            Ok(None) => {
                let (tools, instructions) = live_tools(session);
                pins.observe(name, &tools, instructions.as_deref(), vec![])
                    .err()
                    .map(|e| format!("its tools could not be recorded for review: {e}"))
            }
            Err(e) => Some(format!("its approved tools cannot be read: {e}")),
        }
    }

    /// Why `name`'s tools may not be served, seen on the live session: they changed since the
    /// user approved them, as `plugboard run` refuses too (unless every changed tool is off).
    fn unapproved(&self, name: &str, session: &Session) -> Option<String> {
        let (tools, instructions) = live_tools(session);
        unapproved(
            &self.servers,
            name,
            &tools,
            instructions.as_deref(),
            |tool| session.tool_disabled(tool),
        )
    }

    fn set_state(&self, name: &str, state: State) {
        if let Some(slot) = self.members.get(name) {
            if matches!(*slot.borrow(), State::Starting) && !matches!(state, State::Starting) {
                self.last_settled.set(Instant::now());
            }
            *slot.borrow_mut() = state;
        }
        self.waking.borrow_mut().remove(name);
        // A server came, went or came back: each of its lists with it.
        self.bump(None);
        self.write_status();
    }

    fn starting(&self) -> usize {
        self.members
            .values()
            .filter(|s| matches!(*s.borrow(), State::Starting))
            .count()
    }

    /// Restart `name` after a pause that doubles with each failure (1 s, 2 s, … up to a minute).
    fn schedule_restart(self: &Rc<Self>, name: &str, attempts: u32) {
        let hub = Rc::clone(self);
        let name = name.to_owned();
        let pause = Duration::from_secs(1 << attempts.min(6)).min(MAX_BACKOFF);
        tokio::task::spawn_local(async move {
            tokio::time::sleep(pause).await;
            hub.start_one(&name, attempts + 1).await;
        });
    }

    /// Wait until every server has started or failed, at most `limit`; but once one is ready,
    /// only as long as [`Hub::first_list_due`] says. So a server that hangs holds the first list
    /// back by little, not by `limit`; one that comes later is announced with `list_changed`.
    pub async fn settle(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let changed = self.changed.notified();
            if self.starting() == 0 {
                return;
            }
            let now = Instant::now();
            let mut wake = deadline;
            if self.ready_count() > 0 {
                wake = wake.min(self.first_list_due(now));
            }
            if now >= wake {
                return;
            }
            let _ = tokio::time::timeout_at(wake.into(), changed).await;
        }
    }

    /// When a first list may leave out the servers still starting: not before each of them
    /// that worked before has had twice its last test's time (and [`USUAL_START_MARGIN`]) to
    /// come up, and not before none has come up for a twentieth of the time waited (at least
    /// [`QUIET_AFTER_READY`]), for those never tested, which may be slow or may hang.
    fn first_list_due(&self, now: Instant) -> Instant {
        let quiet = ((now - self.made) / 20).max(QUIET_AFTER_READY);
        self.members
            .iter()
            .filter(|(_, s)| matches!(*s.borrow(), State::Starting))
            .filter_map(|(name, _)| self.usual_start.get(name))
            .map(|usual| self.made + *usual * 2 + USUAL_START_MARGIN)
            .fold(self.last_settled.get() + quiet, Instant::max)
    }

    fn ready_count(&self) -> usize {
        self.members
            .values()
            .filter(|s| matches!(*s.borrow(), State::Ready(_)))
            .count()
    }

    /// Each server and its state, in name order.
    pub fn states(&self) -> Vec<(String, State)> {
        self.members
            .iter()
            .map(|(n, s)| (n.clone(), s.borrow().clone()))
            .collect()
    }

    /// The servers whose lists are served: those connected, and those idle with what they are
    /// known to offer.
    fn listable(&self) -> Vec<(String, Listable)> {
        self.members
            .iter()
            .filter_map(|(n, s)| match &*s.borrow() {
                State::Ready(session) => Some((n.clone(), Listable::Live(Rc::clone(session)))),
                State::Idle(known) => Some((n.clone(), Listable::Known(Rc::clone(known)))),
                _ => None,
            })
            .collect()
    }

    /// The connected server, if any, one of whose secrets `text` holds.
    fn secret_owner(&self, text: &str) -> Option<String> {
        self.members
            .iter()
            .find_map(|(name, state)| match &*state.borrow() {
                State::Ready(session) if session.redactor().holds_secret(text) => {
                    Some(name.clone())
                }
                _ => None,
            })
    }

    fn ready(&self) -> Vec<(String, Rc<Session>)> {
        self.members
            .iter()
            .filter_map(|(n, s)| match &*s.borrow() {
                State::Ready(session) => Some((n.clone(), Rc::clone(session))),
                _ => None,
            })
            .collect()
    }

    /// The instructions of the servers, each under its name.
    pub fn instructions(&self) -> Option<String> {
        let parts: Vec<String> = self
            .ready()
            .iter()
            .filter_map(|(name, s)| {
                s.info()
                    .instructions
                    .as_ref()
                    .filter(|i| !i.trim().is_empty())
                    .map(|i| format!("## {name}\n{}", s.redactor().redact(i)))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// The merged tools: every enabled tool of every connected server, namespaced, but those
    /// the profile hides.
    pub fn list_tools(&self) -> Vec<Value> {
        self.merged(
            |lists| lists.tools,
            |server, tool| server.tool_disabled(tool),
            |server, namespaced, tool| self.hidden(server, namespaced, tool),
            &self.tools,
        )
    }

    /// Whether the profile hides `server`'s tool `tool` (listed as `namespaced`).
    fn hidden(&self, server: &str, namespaced: &str, tool: &Value) -> bool {
        let risk = ToolRisk::of(tool.get("annotations"));
        decide(
            &self.profile.permissions,
            server,
            namespaced,
            risk,
            self.floor,
        ) == Permission::Hide
    }

    /// The merged prompts, namespaced.
    pub fn list_prompts(&self) -> Vec<Value> {
        self.merged(
            |lists| lists.prompts,
            |_, _| false,
            |_, _, _| false,
            &self.prompts,
        )
    }

    /// The merged resources (URIs as the servers gave them; each routed back to its server).
    pub fn list_resources(&self) -> Vec<Value> {
        let mut out = vec![];
        let mut routes = self.resources.borrow_mut();
        for (server, listed) in self.listable() {
            for resource in listed.lists().resources {
                if let Some(uri) = resource.get("uri").and_then(Value::as_str) {
                    routes
                        .entry(uri.to_owned())
                        .or_insert_with(|| server.clone());
                }
                out.push(resource);
            }
        }
        out
    }

    /// The merged resource templates, their names namespaced.
    pub fn list_templates(&self) -> Vec<Value> {
        let mut out = vec![];
        for (server, listed) in self.listable() {
            let templates = listed.lists().templates;
            let names: Vec<String> = templates.iter().map(|t| name_of(t).to_owned()).collect();
            for (mut template, namespaced) in templates
                .into_iter()
                .zip(naming::namespaced_names(&server, &names))
            {
                template["name"] = Value::String(namespaced);
                out.push(template);
            }
        }
        out
    }

    /// One merged list: `pick`'s items of every listable server but those switched `off` on
    /// the server and those the profile `hides` (by the server, its namespaced name and the
    /// item), namespaced and unique, each routed back to its server in `routes` (the hidden
    /// ones too, so that the pipeline refuses them by name).
    fn merged(
        &self,
        pick: impl Fn(session::Lists) -> Vec<Value>,
        off: impl Fn(&Listable, &str) -> bool,
        hides: impl Fn(&str, &str, &Value) -> bool,
        routes: &RefCell<HashMap<String, Route>>,
    ) -> Vec<Value> {
        let mut out = vec![];
        let mut taken: HashSet<String> = HashSet::new();
        let mut routes = routes.borrow_mut();
        for (server, listed) in self.listable() {
            let items: Vec<Value> = pick(listed.lists())
                .into_iter()
                .filter(|item| !off(&listed, name_of(item)))
                .collect();
            let names: Vec<&str> = items.iter().map(name_of).collect();
            for (mut item, namespaced) in items
                .iter()
                .cloned()
                .zip(naming::namespaced_names(&server, &names))
            {
                let own = name_of(&item).to_owned();
                if hides(&server, &namespaced, &item) {
                    // Not listed, but routed: a call by its name is refused as hidden.
                    routes.entry(namespaced).or_insert(Route {
                        server: server.clone(),
                        name: own,
                    });
                    continue;
                }
                let namespaced = self.unique(namespaced, &mut taken, &server, &own);
                routes.insert(
                    namespaced.clone(),
                    Route {
                        server: server.clone(),
                        name: own,
                    },
                );
                item["name"] = Value::String(namespaced);
                out.push(item);
            }
        }
        out
    }

    /// `name`, or (when another server's item took it: `a__b` + `c` and `a` + `b__c`) the same
    /// with `_2`, `_3`, … within the 64-character cap, reported once.
    fn unique(&self, name: String, taken: &mut HashSet<String>, server: &str, own: &str) -> String {
        let mut candidate = name.clone();
        let mut n = 2;
        while taken.contains(&candidate) {
            let suffix = format!("_{n}");
            let keep = name.len().min(naming::MAX_LEN - suffix.len());
            candidate = format!("{}{suffix}", &name[..keep]);
            n += 1;
        }
        if candidate != name
            && self
                .reported_collisions
                .borrow_mut()
                .insert(candidate.clone())
        {
            eprintln!(
                "plugboard serve: `{own}` of `{server}` is listed as `{candidate}`: `{name}` was taken"
            );
        }
        taken.insert(candidate.clone());
        candidate
    }

    /// Route a `prompts/get` or `resources/read` to its server.
    pub async fn forward_other(
        self: &Rc<Self>,
        method: &str,
        params: &Map<String, Value>,
        call_id: &str,
    ) -> Result<Value, (i64, String)> {
        let (server, mut params) = match method {
            "prompts/get" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if self.prompts.borrow().is_empty() {
                    self.list_prompts();
                }
                let route = self.prompts.borrow().get(name).cloned();
                let Some(route) = route else {
                    return Err((-32602, format!("no prompt `{name}` in this profile")));
                };
                let mut params = params.clone();
                params.insert("name".into(), Value::String(route.name));
                (route.server, params)
            }
            _ => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if self.resources.borrow().is_empty() {
                    self.list_resources();
                }
                let server = self
                    .resources
                    .borrow()
                    .get(uri)
                    .cloned()
                    .or_else(|| self.template_owner(uri));
                let Some(server) = server else {
                    return Err((
                        -32602,
                        format!("no server of this profile lists the resource `{uri}`"),
                    ));
                };
                (server, params.clone())
            }
        };
        let session = match self.session_for(&server).await {
            Ok(session) => session,
            Err(_) => return Err((-32603, format!("server `{server}` is not running"))),
        };
        params.remove("_meta");
        session
            .forward(method, &params, CALL_TIMEOUT, call_id)
            .await
            .map_err(|e| (error_code(&e), e.to_string()))
    }

    /// The server whose resource template's fixed beginning `uri` starts with.
    fn template_owner(&self, uri: &str) -> Option<String> {
        self.listable().into_iter().find_map(|(server, listed)| {
            listed
                .lists()
                .templates
                .iter()
                .filter_map(|t| t.get("uriTemplate").and_then(Value::as_str))
                .map(|t| t.split('{').next().unwrap_or_default())
                .any(|prefix| !prefix.is_empty() && uri.starts_with(prefix))
                .then_some(server)
        })
    }

    /// Cancel a call in flight.
    pub fn cancel(&self, server: &str, call_id: &str) {
        if let Some(State::Ready(session)) = self.members.get(server).map(|s| s.borrow().clone()) {
            session.cancel(call_id);
        }
    }

    /// Which server a namespaced tool goes to.
    pub fn server_of_tool(&self, namespaced: &str) -> Option<String> {
        self.tools
            .borrow()
            .get(namespaced)
            .map(|r| r.server.clone())
    }

    /// The session of `server` for a request, starting it when it is idle and waiting while it
    /// starts (a client that kept the tools it listed before may call one at once); or why
    /// there is none.
    async fn session_for(self: &Rc<Self>, server: &str) -> Result<Rc<Session>, String> {
        let Some(slot) = self.members.get(server) else {
            return Err(format!("`{server}` is not a server of this profile"));
        };
        let deadline = tokio::time::Instant::now() + START_TIMEOUT + Duration::from_secs(1);
        loop {
            let changed = self.changed.notified();
            let state = slot.borrow().clone();
            match state {
                State::Ready(session) => return Ok(session),
                State::Down { why, hint, .. } => {
                    return Err(format!("server `{server}` is down: {why}. {hint}"));
                }
                State::Idle(_) => self.wake(server),
                State::Starting => {}
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(format!(
                    "server `{server}` did not start within {} s; `plugboard test {server}` \
                     shows where it hangs",
                    START_TIMEOUT.as_secs()
                ));
            }
        }
    }

    /// Start idle server `name` (once, however many calls want it).
    fn wake(self: &Rc<Self>, name: &str) {
        if !self.waking.borrow_mut().insert(name.to_owned()) {
            return;
        }
        eprintln!("plugboard serve: starting `{name}` for its first call");
        self.write_status();
        let hub = Rc::clone(self);
        let name = name.to_owned();
        tokio::task::spawn_local(async move { hub.start_one(&name, 0).await });
    }

    /// The route of a tool of a server that is not connected (down, or starting), whose tools
    /// were never listed: by its `<server>__` prefix, so that the call is told why.
    fn route_to_absent(&self, namespaced: &str) -> Option<Route> {
        self.members.iter().find_map(|(server, state)| {
            let own = namespaced
                .strip_prefix(server.as_str())?
                .strip_prefix("__")?;
            (!matches!(*state.borrow(), State::Ready(_))).then(|| Route {
                server: server.clone(),
                name: own.to_owned(),
            })
        })
    }

    /// A `tools/call`: through the pipeline, to its server, recorded.
    pub async fn call_tool(
        self: &Rc<Self>,
        params: &Map<String, Value>,
        caller: Caller<'_>,
    ) -> Routed {
        let client = caller.client;
        let started = Instant::now();
        let at_ms = crate::clock::now_ms();
        let namespaced = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let arguments = params
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if self.tools.borrow().is_empty() {
            self.list_tools();
        }
        let route = self
            .tools
            .borrow()
            .get(&namespaced)
            .cloned()
            .or_else(|| self.route_to_absent(&namespaced));
        let (routed, server, tool) = match route {
            None => (
                Routed {
                    result: Err((
                        -32602,
                        format!("no tool `{namespaced}` in profile `{}`", self.profile_name),
                    )),
                    decision: "unknown",
                },
                String::new(),
                namespaced.clone(),
            ),
            Some(route) => {
                let routed = self
                    .pipeline(&route, &namespaced, &arguments, params, caller)
                    .await;
                (routed, route.server, route.name)
            }
        };
        let result_bytes = match &routed.result {
            Ok(v) => plugboard_base::json_size::json_size(v),
            Err(_) => 0,
        };
        let outcome = match &routed.result {
            Ok(v) if v.get("isError") == Some(&Value::Bool(true)) => {
                if matches!(routed.decision, "allow" | "ask_accepted") {
                    "tool_error"
                } else {
                    "refused"
                }
            }
            Ok(_) => "ok",
            Err(_) => "error",
        };
        self.activity.append_soon(ActivityRecord {
            at_ms,
            client: client.map(str::to_owned),
            profile: self.profile_name.clone(),
            server,
            tool,
            decision: routed.decision.to_owned(),
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            outcome: outcome.to_owned(),
            argument_shape: shape_of(&arguments),
            result_bytes,
        });
        routed
    }

    async fn pipeline(
        self: &Rc<Self>,
        route: &Route,
        namespaced: &str,
        arguments: &Map<String, Value>,
        params: &Map<String, Value>,
        caller: Caller<'_>,
    ) -> Routed {
        let Caller {
            call_id,
            client,
            ask,
        } = caller;
        let refused = |decision: &'static str, text: String| Routed {
            result: Ok(tool_error(&text)),
            decision,
        };
        let rules = &self.profile.permissions;
        let hidden = || {
            refused(
                "hidden",
                format!(
                    "`{namespaced}` is hidden in profile `{}` (`plugboard profile edit {} --allow {namespaced}` shows it)",
                    self.profile_name, self.profile_name
                ),
            )
        };
        // Hidden by its name or its server's, whatever it may do: not started for it.
        if decide(
            rules,
            &route.server,
            namespaced,
            ToolRisk::ReadOnly,
            Permission::Allow,
        ) == Permission::Hide
        {
            return hidden();
        }
        let session = match self.session_for(&route.server).await {
            Ok(session) => session,
            Err(why) => return refused("server_down", why),
        };
        // A server that came up meanwhile has listed its tools: the name this one has there.
        let listed = self.tools.borrow().get(namespaced).cloned();
        let route = listed.as_ref().unwrap_or(route);
        if session.tool_disabled(&route.name) {
            return refused(
                "disabled",
                format!(
                    "`{namespaced}` is switched off (`plugboard tools {} --enable {}` switches it on)",
                    route.server, route.name
                ),
            );
        }
        // A secret of any server of this profile in the arguments: a model being steered to
        // carry a credential somewhere. Nothing is sent.
        let text = serde_json::to_string(arguments).unwrap_or_default();
        if let Some(owner) = self.secret_owner(&text) {
            return refused(
                "secret_in_arguments",
                format!("the arguments hold a secret of server `{owner}`; the call was not sent"),
            );
        }
        let risk = session.tool_risk(&route.name);
        let mut decision = "allow";
        let profile_says = decide(rules, &route.server, namespaced, risk, Permission::Allow);
        match decide(rules, &route.server, namespaced, risk, self.floor) {
            Permission::Allow => {}
            Permission::Deny if profile_says != Permission::Deny => {
                return refused(
                    "deny",
                    format!(
                        "`{namespaced}` may change things, and the organisation's policy does not \
                         let a gateway run such tools; it cannot be allowed here"
                    ),
                );
            }
            Permission::Deny => {
                return refused(
                    "deny",
                    format!(
                        "`{namespaced}` is denied in profile `{}` (`plugboard profile edit {} --allow {namespaced}` allows it)",
                        self.profile_name, self.profile_name
                    ),
                );
            }
            // Never listed to this client; called by a name it guessed or kept.
            Permission::Hide => return hidden(),
            Permission::Ask => {
                let question = format!(
                    "Allow `{}` of server `{}` to run{}?",
                    route.name,
                    route.server,
                    if risk == ToolRisk::ReadOnly {
                        ""
                    } else {
                        " (it may change things)"
                    }
                );
                let mut answer = match ask {
                    Some(ask) => ask(question).await,
                    None => Asked::Cannot,
                };
                if answer == Asked::Cannot {
                    // The client cannot ask: the app, when it runs.
                    let call = CallToAsk {
                        profile: &self.profile_name,
                        client,
                        server: &route.server,
                        tool: &route.name,
                        namespaced,
                        side_effects: risk != ToolRisk::ReadOnly,
                        arguments: session.redactor().redact(&text),
                    };
                    answer = ask_app(self.servers.config().dir(), call, ASK_TIMEOUT).await;
                }
                match answer {
                    Asked::Yes => decision = "ask_accepted",
                    Asked::No => {
                        return refused(
                            "ask_declined",
                            format!("the user declined `{namespaced}`"),
                        );
                    }
                    Asked::Pending => {
                        return refused(
                            "ask_pending",
                            format!("`{namespaced}` waits for the user's answer"),
                        );
                    }
                    Asked::Unanswered => {
                        return refused(
                            "ask_unanswered",
                            format!(
                                "`{namespaced}` needs the user's permission and no answer came in \
                                 the Plugboard app within {} s; it did not run",
                                ASK_TIMEOUT.as_secs()
                            ),
                        );
                    }
                    Asked::Cannot if profile_says == Permission::Allow => {
                        return refused(
                            "ask_unanswerable",
                            format!(
                                "`{namespaced}` may change things, the organisation's policy wants \
                                 the user asked first, this client cannot ask (it declares no \
                                 elicitation) and the Plugboard app, which could, is not running"
                            ),
                        );
                    }
                    Asked::Cannot => {
                        return refused(
                            "ask_unanswerable",
                            format!(
                                "`{namespaced}` needs the user's permission, this client cannot ask \
                                 (it declares no elicitation) and the Plugboard app, which could, is not \
                                 running; open the app, or allow it with `plugboard profile edit {} --allow {namespaced}`",
                                self.profile_name
                            ),
                        );
                    }
                }
            }
        }
        let client = client.unwrap_or_default();
        let hook_call = |arguments, result| HookCall {
            profile: &self.profile_name,
            client,
            server: &route.server,
            tool: &route.name,
            namespaced,
            arguments,
            result,
        };
        let mut forwarded = params.clone();
        match self
            .hooks(HookEvent::PreToolUse, &hook_call(arguments, None))
            .await
        {
            Verdict::Block(reason) => return refused("hook_blocked", reason),
            Verdict::Continue(Some(rewritten)) => {
                // Arguments a hook wrote pass the same check as the model's.
                let text = serde_json::to_string(&rewritten).unwrap_or_default();
                if self.secret_owner(&text).is_some() {
                    return refused(
                        "secret_in_arguments",
                        format!(
                            "the arguments a hook wrote for `{namespaced}` hold a secret of a \
                             server; the call was not sent"
                        ),
                    );
                }
                forwarded.insert("arguments".into(), Value::Object(rewritten));
            }
            Verdict::Continue(None) => {}
        }
        forwarded.insert("name".into(), Value::String(route.name.clone()));
        forwarded.remove("_meta");
        match session
            .forward("tools/call", &forwarded, CALL_TIMEOUT, call_id)
            .await
        {
            Ok(mut result) => {
                if !self.keeps_controls(&route.server) {
                    crate::traffic::strip_result(&mut result);
                }
                let sent = forwarded
                    .get("arguments")
                    .and_then(Value::as_object)
                    .unwrap_or(arguments);
                if let Verdict::Block(reason) = self
                    .hooks(HookEvent::PostToolUse, &hook_call(sent, Some(&result)))
                    .await
                {
                    return refused("hook_blocked", reason);
                }
                Routed {
                    result: Ok(result),
                    decision,
                }
            }
            Err(SessionError::InvalidArguments { issues }) => refused(
                "invalid_arguments",
                format!(
                    "the arguments do not fit `{namespaced}`'s input schema: {}",
                    issues
                        .iter()
                        .map(|i| i.describe())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ),
            Err(SessionError::Closed(why)) => {
                // It died: down, restarted with backoff; the list changes.
                let tail = session.stderr_tail().await;
                self.set_state(
                    &route.server,
                    State::Down {
                        why: format!("its connection ended ({why})"),
                        hint: format!(
                            "it is restarted; `plugboard doctor {}` says why it stopped",
                            route.server
                        ),
                        stderr_tail: tail,
                        attempts: 0,
                    },
                );
                self.schedule_restart(&route.server, 0);
                refused(
                    "server_down",
                    format!(
                        "server `{}` stopped during the call; it is being restarted",
                        route.server
                    ),
                )
            }
            Err(e) => Routed {
                result: Err((error_code(&e), e.to_string())),
                decision,
            },
        }
    }

    /// Run the profile's hooks of `event` for a call, showing them nothing any of the
    /// profile's servers holds secret.
    async fn hooks(&self, event: HookEvent, call: &HookCall<'_>) -> Verdict {
        if !self
            .profile
            .hooks
            .iter()
            .any(|h| h.applies(event, call.namespaced))
        {
            return Verdict::Continue(None);
        }
        let ready = self.ready();
        let redact = |text: &str| {
            ready
                .iter()
                .fold(text.to_owned(), |text, (_, s)| s.redactor().redact(&text))
        };
        run_hooks(
            &self.profile.hooks,
            event,
            call,
            self.profile.hooks_fail_closed,
            &redact,
        )
        .await
    }

    /// Close every session (their processes end with them).
    pub async fn close(&self) {
        self.activity.flush();
        for (_, session) in self.ready() {
            session.close().await;
        }
    }
}

fn name_of(item: &Value) -> &str {
    item.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// A tool result that tells the model why nothing ran.
fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn error_code(e: &SessionError) -> i64 {
    match e {
        SessionError::Rpc { code, .. } => i64::from(*code),
        SessionError::UnknownTool { .. } | SessionError::InvalidArguments { .. } => -32602,
        SessionError::Cancelled => -32800,
        _ => -32603,
    }
}

/// The tools and instructions a live session offers, as the pin store compares them.
fn live_tools(session: &Session) -> (Vec<ToolInfo>, Option<String>) {
    let tools: Vec<ToolInfo> = session
        .listed()
        .tools
        .iter()
        .map(|tool| ToolInfo {
            name: name_of(tool).to_owned(),
            description: tool
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
            annotations: tool.get("annotations").cloned(),
            ui: crate::probe::ui_resource_of(tool),
            adapted_name: name_of(tool).to_owned(),
        })
        .collect();
    (tools, session.info().instructions.clone())
}
