//! Try it: a live session with one server, used interactively. It is built on
//! [`Connection`] and its rmcp `Peer`, so every transport and both protocol eras work the way
//! a test connects; secrets and OAuth tokens are resolved as a test resolves them
//! ([`open_installed`]).
//!
//! - calls: [`Session::call_tool`], [`Session::read_resource`], [`Session::get_prompt`] and
//!   [`Session::complete`], each cancellable ([`Session::cancel`]) and bounded by a timeout,
//!   with progress and log messages reported as they arrive ([`events`]);
//! - the server's questions ([`questions`]): legacy requests and modern `input_required`
//!   results (answered by retrying with `inputResponses`, [`Session::call_tool`]'s rounds);
//! - calls a server runs as tasks ([`tasks`]), followed to their result;
//! - a tool's interactive UI (MCP Apps, [`apps`]): its page and what it may do;
//! - results by kind ([`outcome`]), `structuredContent` checked against `outputSchema`;
//! - safety ([`safety`]): confirmations by the tool's annotations, disabled tools refused,
//!   arguments validated against the input schema before anything is sent;
//! - the protocol trace ([`trace`]).
//!
//! Every string that leaves a session has been through the server's redactor.

pub mod apps;
pub mod events;
mod handler;
pub mod lists;
mod open;
pub mod outcome;
pub mod questions;
pub mod safety;
mod shared;
mod tasks;
pub mod template;
pub mod trace;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CancelledNotificationParam,
    ClientRequest, CompleteRequestParams, CompletionContext, GetMeta, GetPromptRequest,
    GetPromptRequestParams, ProgressToken, ProtocolVersion, ReadResourceRequest,
    ReadResourceRequestParams, Reference, RequestId,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::connect::stdio::{DirectAnswer, DirectCalls};
use crate::connect::{self, Connection, MessageTap};
use crate::probe::Failure;
use crate::probe::naming;
use crate::redact::Redactor;
use crate::schema::{FieldIssue, Validator};

pub use events::{EventSink, SessionEvent, no_events};
pub use open::{open_installed, open_resolved};
pub use outcome::{ContentItem, Media, ResourceContent, Structured};
pub use questions::{Answer, Asker, DeclineAll, Question, QuestionMode, RootView, UrlOpener};
pub use safety::{Confirmation, ToolRisk, ToolStates};
pub use shared::Lists;
pub use trace::TraceEntry;

use handler::SessionHandler;
use shared::Shared;

/// How long a call may take unless told otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// `input_required` rounds one call may take.
pub const MAX_ROUNDS: u32 = 10;
/// How long the lists may take when a session opens.
pub const LISTS_TIMEOUT: Duration = Duration::from_secs(30);
/// Lines of stderr a session keeps for diagnostics.
pub const STDERR_TAIL_LINES: usize = 40;

/// Why a session could not open, or a call did not give a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The server could not be resolved, reached, or did not complete the handshake.
    #[error("{}", .failure.error)]
    Open {
        failure: Failure,
        stderr_tail: Option<String>,
        /// The messages exchanged before it failed.
        trace: Vec<TraceEntry>,
    },
    #[error("{0}")]
    Config(String),
    #[error("`{tool}` is not a tool of this server{}", known_tools(.known))]
    UnknownTool { tool: String, known: Vec<String> },
    #[error("`{tool}` is disabled for this server, so it cannot be called (enable it first)")]
    Disabled { tool: String },
    #[error(
        "`{tool}` is held: its definition has a critical finding (text aimed at the model, or \
         hidden); review it with `plugboard diff {server}` and approve it with `plugboard \
         approve {server}`"
    )]
    Held { tool: String, server: String },
    #[error("`{tool}` {}; confirm the call first", risk_words(*.risk))]
    NeedsConfirmation { tool: String, risk: ToolRisk },
    #[error("the arguments do not match the tool's input schema: {}", describe(.issues))]
    InvalidArguments { issues: Vec<FieldIssue> },
    #[error("the call was cancelled")]
    Cancelled,
    #[error("no answer within {} s; the request was cancelled", .0.as_secs())]
    TimedOut(Duration),
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with error {code}: {message}")]
    Rpc { code: i32, message: String },
    #[error("the connection to the server ended: {0}")]
    Closed(String),
    /// A question the server needed answered could not be (sampling, for instance).
    #[error("{0}")]
    Unanswerable(String),
    #[error("{0}")]
    Failed(String),
}

fn known_tools(known: &[String]) -> String {
    if known.is_empty() {
        "; it lists no tools".into()
    } else {
        format!("; it has {}", known.join(", "))
    }
}

fn risk_words(risk: ToolRisk) -> &'static str {
    match risk {
        ToolRisk::ReadOnly => "is read-only",
        ToolRisk::Writes => "is not marked read-only, so it may change things",
        ToolRisk::Destructive => "is marked destructive",
    }
}

fn describe(issues: &[FieldIssue]) -> String {
    issues
        .iter()
        .map(FieldIssue::describe)
        .collect::<Vec<_>>()
        .join("; ")
}

impl SessionError {
    /// Exit code for the CLI: 2 when nothing was sent (usage, configuration, refusals), 1
    /// when the server was asked and it failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            SessionError::Config(_)
            | SessionError::UnknownTool { .. }
            | SessionError::Disabled { .. }
            | SessionError::Held { .. }
            | SessionError::NeedsConfirmation { .. }
            | SessionError::InvalidArguments { .. } => 2,
            SessionError::Open { failure, .. }
                if failure.kind == crate::probe::ErrorKind::Config =>
            {
                2
            }
            _ => 1,
        }
    }
}

/// How a session talks to its user.
#[derive(Clone)]
pub struct SessionOptions {
    pub asker: Arc<dyn Asker>,
    pub events: EventSink,
    /// Opens a URL the user agreed to open (none: the URL is only shown).
    pub opener: Option<UrlOpener>,
    /// How long connecting may take (default: the server's own timeout).
    pub timeout: Option<Duration>,
    /// Keep the protocol trace (every message, redacted, for Try it, `call --trace` and
    /// diagnostics). The gateway, which shows no trace, does without: keeping one costs each
    /// call two conversions and two redactions of its messages.
    pub trace: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            asker: Arc::new(DeclineAll),
            events: no_events(),
            opener: None,
            timeout: None,
            trace: true,
        }
    }
}

/// Who the server is and how the session speaks with it.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct SessionInfo {
    pub name: String,
    /// The server's `serverInfo`.
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub protocol_version: String,
    /// `modern` (2026-07-28 and later) or `legacy`.
    pub era: String,
    /// `stdio`, `shttp` or `sse`.
    pub transport: String,
    pub instructions: Option<String>,
    pub capabilities: Value,
}

/// A tool as a session shows it.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolEntry {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    /// The server's hints (unverified).
    pub annotations: Option<Value>,
    pub risk: ToolRisk,
    pub disabled: bool,
    pub adapted_name: String,
    /// Its interactive UI (MCP Apps), when it has one.
    pub ui: Option<apps::ToolUi>,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ResourceEntry {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct TemplateEntry {
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub variables: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct PromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct PromptEntry {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
}

/// What the server offers, redacted.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct Offer {
    pub tools: Vec<ToolEntry>,
    pub resources: Vec<ResourceEntry>,
    pub templates: Vec<TemplateEntry>,
    pub prompts: Vec<PromptEntry>,
}

/// A tool call to make.
#[derive(Clone, Debug)]
pub struct CallRequest {
    pub tool: String,
    /// A JSON object.
    pub arguments: Value,
    pub confirmation: Confirmation,
    pub timeout: Option<Duration>,
    /// An id for [`Session::cancel`] (one is made when `None`).
    pub call_id: Option<String>,
}

/// The result of a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct CallOutcome {
    pub call_id: String,
    pub tool: String,
    /// The tool reported an error (`isError`): its content says what.
    pub is_error: bool,
    pub content: Vec<ContentItem>,
    pub structured: Option<Structured>,
    pub ms: f64,
    /// Requests it took (more than one when the server asked for input first).
    pub rounds: u32,
    pub notes: Vec<String>,
    /// The result as the server sent it (redacted), for a tool with an interactive UI: what its
    /// view is given.
    pub result: Option<Value>,
}

/// The contents of a resource.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ReadOutcome {
    pub call_id: String,
    pub uri: String,
    pub contents: Vec<ResourceContent>,
    pub ms: f64,
    pub rounds: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct PromptMessage {
    pub role: String,
    pub content: ContentItem,
}

/// A prompt rendered by the server.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct PromptOutcome {
    pub call_id: String,
    pub name: String,
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
    pub ms: f64,
    pub rounds: u32,
}

/// What `completion/complete` is about.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompletionTarget {
    Prompt { name: String },
    Resource { uri_template: String },
}

/// Suggested values for an argument.
#[derive(Clone, Debug, Default, PartialEq, Serialize, specta::Type)]
pub struct Completion {
    pub values: Vec<String>,
    pub total: Option<u32>,
    pub has_more: bool,
}

/// How long a stdio server whose output ended gets to report its exit status.
const EXIT_SETTLE: Duration = Duration::from_millis(300);

/// A session before its handshake: what the connection needs from it ([`Preparing::handler`]
/// and [`Preparing::tap`]).
pub struct Preparing {
    name: String,
    shared: Arc<Shared>,
    /// Whether the session keeps its protocol trace ([`SessionOptions::trace`]).
    traced: bool,
}

impl Preparing {
    /// The handler of the server's requests and notifications, for the handshake (its
    /// `get_info` is what the session tells the server it can do).
    pub fn handler(&self) -> connect::Handler {
        SessionHandler {
            shared: self.shared.clone(),
        }
        .into_dyn()
    }

    /// The trace, to tap the connection with before the handshake (none when the session
    /// keeps no trace).
    pub fn tap(&self) -> Option<Arc<dyn MessageTap>> {
        self.traced
            .then(|| self.shared.trace.clone() as Arc<dyn MessageTap>)
    }

    /// The messages exchanged so far.
    pub fn trace(&self) -> Vec<TraceEntry> {
        self.shared.trace.entries()
    }

    /// The session over `conn`, whose handshake (with [`Preparing::handler`], tapped by
    /// [`Preparing::tap`]) is done.
    pub async fn over_connection(self, conn: Connection, tools: ToolStates) -> Session {
        let monitor = conn.monitor().clone();
        let stdio = conn.pid().is_some();
        let session = self.start(conn, tools).await;
        // Tell the user at once when the server goes away (exits, closes its stream).
        let shared = session.shared.clone();
        tokio::spawn(async move {
            monitor.fatal().await;
            // A process's stdout usually ends a moment before its exit is seen: wait for it.
            let waited = Instant::now();
            while stdio && monitor.snapshot().exit.is_none() && waited.elapsed() < EXIT_SETTLE {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            if shared.is_closing() {
                return;
            }
            let obs = monitor.snapshot();
            let reason = match obs.exit {
                Some(exit) => format!("the server process {}", exit.describe()),
                None => "the server closed the connection".to_string(),
            };
            shared.emit(SessionEvent::Closed { reason });
        });
        session
    }

    async fn start(self, conn: Connection, tools: ToolStates) -> Session {
        let peer = conn.peer().expect("the handshake is done").clone();
        let negotiated = conn.negotiated().expect("the handshake is done");
        let era = negotiated.era.as_str().to_string();
        let protocol_version = negotiated.protocol_version.to_string();
        let info = &negotiated.peer_info;
        let server = info
            .server_info
            .as_ref()
            .map(|i| (i.name.clone(), i.version.clone()));
        let instructions = info.instructions.clone();
        let capabilities = info.capabilities.clone();
        match tokio::time::timeout(LISTS_TIMEOUT, lists::fetch_declared(&peer, &capabilities)).await
        {
            Ok((lists, failed)) => {
                *self.shared.lists.write().unwrap_or_else(|p| p.into_inner()) = lists;
                if let Some(err) = failed {
                    self.shared.emit(SessionEvent::Notice {
                        call_id: None,
                        text: format!("a list of the server could not be read: {err}"),
                    });
                }
            }
            Err(_) => self.shared.emit(SessionEvent::Notice {
                call_id: None,
                text: format!(
                    "the server did not list its tools, resources and prompts within {} s",
                    LISTS_TIMEOUT.as_secs()
                ),
            }),
        }
        let redactor = self.shared.redactor();
        let transport = match serde_json::to_value(conn.transport()) {
            Ok(Value::String(t)) => t,
            _ => String::new(),
        };
        let mut capabilities = serde_json::to_value(&capabilities).unwrap_or(Value::Null);
        redactor.redact_json(&mut capabilities);
        let info = SessionInfo {
            name: self.name.clone(),
            server_name: server.as_ref().map(|(name, _)| redactor.redact(name)),
            server_version: server.as_ref().map(|(_, version)| redactor.redact(version)),
            era,
            protocol_version,
            transport,
            instructions: instructions.map(|i| redactor.redact(&i)),
            capabilities,
        };
        // Without a trace to show them, calls go straight to a stdio server.
        let direct = match conn.direct_calls() {
            Some(calls) if !self.traced => Some(Direct {
                calls,
                modern: (!negotiated.protocol_version.has_initialize())
                    .then(|| (negotiated.protocol_version.clone(), handler::client_info())),
            }),
            _ => None,
        };
        Session {
            shared: self.shared,
            peer,
            direct,
            conn: tokio::sync::Mutex::new(conn),
            info,
            tools,
            next_call: AtomicU64::new(1),
            cancels: Mutex::new(HashMap::new()),
            validators: Mutex::new(HashMap::new()),
        }
    }
}

/// A live session.
pub struct Session {
    shared: Arc<Shared>,
    peer: Peer<RoleClient>,
    /// Calls sent past rmcp, when they can be.
    direct: Option<Direct>,
    /// Kept after the session is closed, for the stderr tail.
    conn: tokio::sync::Mutex<Connection>,
    info: SessionInfo,
    /// Which tools the user switched off.
    tools: ToolStates,
    next_call: AtomicU64,
    cancels: Mutex<HashMap<String, oneshot::Sender<()>>>,
    /// The tools' input schemas compiled, by tool, with the schema each was compiled from
    /// (compiling one takes longer than a call through the gateway otherwise does).
    validators: Mutex<HashMap<String, (Value, Arc<Validator>)>>,
}

/// Compiled schemas kept per session, at most.
const KEPT_VALIDATORS: usize = 256;

/// A session's calls sent straight to its stdio server, and for a modern server what each
/// is stamped with: the protocol version and the client's identity and capabilities.
struct Direct {
    calls: DirectCalls,
    modern: Option<(ProtocolVersion, rmcp::model::ClientConfig)>,
}

/// A request sent, awaiting its answer: through rmcp, or directly.
enum Sent {
    Rmcp(rmcp::service::RequestHandle<RoleClient>),
    Direct(oneshot::Receiver<DirectAnswer>),
}

impl Sent {
    /// The answer, as JSON.
    async fn answer(self) -> Result<Value, ServiceError> {
        match self {
            Sent::Rmcp(handle) => handle
                .await_response()
                .await
                .map(|result| serde_json::to_value(&result).unwrap_or(Value::Null)),
            Sent::Direct(answer) => match answer.await {
                Ok(DirectAnswer::Result(result)) => Ok(result),
                Ok(DirectAnswer::Error(error)) => Err(match serde_json::from_value(error) {
                    Ok(error) => ServiceError::McpError(error),
                    Err(_) => ServiceError::UnexpectedResponse,
                }),
                Ok(DirectAnswer::NotAnObject) => Err(ServiceError::UnexpectedResponse),
                Err(_) => Err(ServiceError::TransportClosed),
            },
        }
    }
}

/// Sends `notifications/cancelled` for a request when dropped before its answer came (and
/// stops awaiting a direct call's answer).
struct InFlight {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    direct: Option<DirectCalls>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        if let Some(direct) = &self.direct {
            direct.forget(&id);
        }
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let params = CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled in Plugboard".into()),
                );
                let _ = peer.notify_cancelled(params).await;
            });
        }
    }
}

impl Session {
    /// A session for server `name` whose every outward string goes through `redactor`.
    pub fn prepare(name: &str, redactor: Redactor, options: SessionOptions) -> Preparing {
        let questions = questions::Questions::new(options.asker, options.opener);
        Preparing {
            name: name.to_string(),
            shared: Arc::new(Shared::new(redactor, options.events, questions)),
            traced: options.trace,
        }
    }

    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// The redactor of this session's server.
    pub fn redactor(&self) -> &Redactor {
        self.shared.redactor()
    }

    /// The lists as the server sent them (not redacted: for the core's own use).
    pub fn lists(&self) -> Lists {
        self.shared.lists()
    }

    /// What the server offers, redacted, with each tool's risk and disabled state.
    pub fn offer(&self) -> Offer {
        let lists = self.listed();
        let names: Vec<String> = lists
            .tools
            .iter()
            .map(|t| str_of(t, "name").unwrap_or_default())
            .collect();
        let adapted = naming::adapted_names(&self.info.name, &names);
        Offer {
            tools: lists
                .tools
                .iter()
                .zip(adapted)
                .map(|(tool, adapted_name)| self.tool_entry(tool, adapted_name))
                .collect(),
            resources: lists
                .resources
                .iter()
                .map(|r| ResourceEntry {
                    uri: str_of(r, "uri").unwrap_or_default(),
                    name: str_of(r, "name").unwrap_or_default(),
                    title: str_of(r, "title"),
                    description: str_of(r, "description"),
                    mime_type: str_of(r, "mimeType"),
                })
                .collect(),
            templates: lists
                .templates
                .iter()
                .map(|t| {
                    let uri_template = str_of(t, "uriTemplate").unwrap_or_default();
                    TemplateEntry {
                        variables: template::variables(&uri_template),
                        uri_template,
                        name: str_of(t, "name").unwrap_or_default(),
                        title: str_of(t, "title"),
                        description: str_of(t, "description"),
                        mime_type: str_of(t, "mimeType"),
                    }
                })
                .collect(),
            prompts: lists
                .prompts
                .iter()
                .map(|p| PromptEntry {
                    name: str_of(p, "name").unwrap_or_default(),
                    title: str_of(p, "title"),
                    description: str_of(p, "description"),
                    arguments: match p.get("arguments") {
                        Some(Value::Array(args)) => args
                            .iter()
                            .map(|a| PromptArgument {
                                name: str_of(a, "name").unwrap_or_default(),
                                description: str_of(a, "description"),
                                required: a.get("required") == Some(&Value::Bool(true)),
                            })
                            .collect(),
                        _ => vec![],
                    },
                })
                .collect(),
        }
    }

    fn tool_entry(&self, tool: &Value, adapted_name: String) -> ToolEntry {
        let name = str_of(tool, "name").unwrap_or_default();
        let annotations = tool.get("annotations").filter(|a| a.is_object()).cloned();
        ToolEntry {
            ui: apps::ToolUi::of(tool),
            disabled: self.tools.disabled(&name),
            risk: ToolRisk::of(annotations.as_ref()),
            title: str_of(tool, "title")
                .or_else(|| annotations.as_ref().and_then(|a| str_of(a, "title"))),
            description: str_of(tool, "description"),
            input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
            output_schema: tool.get("outputSchema").filter(|s| s.is_object()).cloned(),
            annotations,
            adapted_name,
            name,
        }
    }

    /// The tool `name` as the server listed it (not redacted).
    fn tool(&self, name: &str) -> Result<Value, SessionError> {
        self.shared.with_lists(|lists| {
            lists
                .tool(name)
                .cloned()
                .ok_or_else(|| SessionError::UnknownTool {
                    tool: self.redactor().redact(name),
                    known: lists
                        .tools
                        .iter()
                        .filter_map(|t| str_of(t, "name"))
                        .take(30)
                        .collect(),
                })
        })
    }

    /// The risk `tool`'s annotations declare (a tool not listed counts as one that writes).
    pub fn tool_risk(&self, tool: &str) -> ToolRisk {
        self.shared.with_lists(|lists| {
            lists
                .tool(tool)
                .map_or(ToolRisk::Writes, |t| ToolRisk::of(t.get("annotations")))
        })
    }

    /// Check a call before anything is sent: the tool exists and is enabled, the user
    /// confirmed what its annotations call for, and the arguments fit its input schema.
    /// Returns notes to show with the result.
    pub fn check_call(
        &self,
        tool: &str,
        arguments: &Value,
        confirmation: Confirmation,
    ) -> Result<Vec<String>, SessionError> {
        let definition = self.tool(tool)?;
        if self.tools.held(tool) {
            return Err(SessionError::Held {
                tool: tool.to_string(),
                server: self.info.name.clone(),
            });
        }
        if self.tools.disabled(tool) {
            return Err(SessionError::Disabled {
                tool: tool.to_string(),
            });
        }
        let risk = ToolRisk::of(definition.get("annotations"));
        if confirmation < risk.needs() {
            return Err(SessionError::NeedsConfirmation {
                tool: tool.to_string(),
                risk,
            });
        }
        if !arguments.is_object() {
            return Err(SessionError::InvalidArguments {
                issues: vec![FieldIssue {
                    path: String::new(),
                    pointer: String::new(),
                    message: "the arguments must be a JSON object".into(),
                }],
            });
        }
        let schema = definition.get("inputSchema").unwrap_or(&Value::Null);
        let validator = self.validator(tool, schema);
        if let Some(problem) = validator.schema_problem() {
            return Ok(vec![self.redactor().redact(&format!(
                "the tool's input schema is not usable JSON Schema ({problem}); the arguments \
                 were sent unchecked"
            ))]);
        }
        let issues = validator.issues(arguments);
        if !issues.is_empty() {
            return Err(SessionError::InvalidArguments { issues });
        }
        Ok(vec![])
    }

    /// `tool`'s input `schema` compiled, once per session (again when the tool's schema
    /// changes).
    fn validator(&self, tool: &str, schema: &Value) -> Arc<Validator> {
        let mut kept = self.validators.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((compiled_from, validator)) = kept.get(tool)
            && compiled_from == schema
        {
            return Arc::clone(validator);
        }
        if kept.len() >= KEPT_VALIDATORS {
            kept.clear();
        }
        let validator = Arc::new(Validator::new(schema));
        kept.insert(tool.to_owned(), (schema.clone(), Arc::clone(&validator)));
        validator
    }

    /// A new call id.
    pub fn new_call_id(&self) -> String {
        format!("c-{}", self.next_call.fetch_add(1, Ordering::Relaxed))
    }

    /// Call a tool: checked ([`Session::check_call`]), then sent, its input requests answered
    /// round after round, until the result, a cancel or the timeout.
    pub async fn call_tool(&self, request: CallRequest) -> Result<CallOutcome, SessionError> {
        self.call_tool_keeping(request, false).await
    }

    /// [`Session::call_tool`] for a tool's view (MCP Apps), which is given the result as the
    /// server sent it (redacted): only for a tool the server made visible to its views.
    pub async fn call_tool_for_view(
        &self,
        request: CallRequest,
    ) -> Result<CallOutcome, SessionError> {
        if !self.view_may_call(&request.tool) {
            return Err(SessionError::Failed(format!(
                "the view may not call `{}`: the server did not make it visible to its views",
                self.redactor().redact(&request.tool)
            )));
        }
        self.call_tool_keeping(request, true).await
    }

    /// A call; the raw result is kept for a tool with a UI, or when `keep` says so.
    async fn call_tool_keeping(
        &self,
        request: CallRequest,
        keep: bool,
    ) -> Result<CallOutcome, SessionError> {
        let notes = self.check_call(&request.tool, &request.arguments, request.confirmation)?;
        let definition = self.tool(&request.tool)?;
        let call_id = request.call_id.unwrap_or_else(|| self.new_call_id());
        let started = Instant::now();
        let arguments = request.arguments.as_object().cloned().unwrap_or_default();
        let name = request.tool.clone();
        let (mut result, rounds) = self
            .exchange(
                &call_id,
                request.timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
                |responses, state| {
                    let mut params =
                        CallToolRequestParams::new(name.clone()).with_arguments(arguments.clone());
                    params.input_responses = responses;
                    params.request_state = state;
                    ClientRequest::CallToolRequest(CallToolRequest::new(params))
                },
            )
            .await?;
        let is_error = result.get("isError") == Some(&Value::Bool(true));
        // Checked before redaction, which could change a value; issues never quote values.
        let mut structured = outcome::structured(&result, definition.get("outputSchema"), is_error);
        self.redactor().redact_json(&mut result);
        if let Some(structured) = structured.as_mut() {
            structured.value = result.get("structuredContent").cloned();
        }
        let for_view = (keep || apps::ToolUi::of(&definition).is_some()).then(|| result.clone());
        Ok(CallOutcome {
            call_id,
            tool: self.redactor().redact(&request.tool),
            is_error,
            content: outcome::content_items(result.get("content")),
            structured,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            rounds,
            notes,
            result: for_view,
        })
    }

    /// The server's lists as it sent them, redacted: what the gateway passes on.
    pub fn listed(&self) -> Lists {
        let mut lists = self.shared.lists();
        for item in lists
            .tools
            .iter_mut()
            .chain(&mut lists.resources)
            .chain(&mut lists.templates)
            .chain(&mut lists.prompts)
        {
            self.redactor().redact_json(item);
        }
        lists
    }

    /// Whether `tool` is disabled for this server (never listed or called through it).
    pub fn tool_disabled(&self, tool: &str) -> bool {
        self.tools.disabled(tool)
    }

    /// Pass a request on for another client (the gateway): `method` (`tools/call`,
    /// `resources/read` or `prompts/get`) with `params`, its input rounds answered by the
    /// session's asker, bounded by `timeout`; the result as the server sent it, redacted. A
    /// `tools/call` is checked first ([`Session::check_call`]: the tool exists, is enabled, and
    /// its arguments fit its schema); the gateway has decided its permission.
    pub async fn forward(
        &self,
        method: &str,
        params: &Map<String, Value>,
        timeout: Duration,
        call_id: &str,
    ) -> Result<Value, SessionError> {
        let text = |key: &str| {
            params
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let object = |key: &str| {
            params
                .get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let (mut result, _) = match method {
            "tools/call" => {
                let (tool, arguments) = (text("name"), object("arguments"));
                self.check_call(
                    &tool,
                    &Value::Object(arguments.clone()),
                    Confirmation::Destructive,
                )?;
                self.exchange(call_id, timeout, |responses, state| {
                    let mut params =
                        CallToolRequestParams::new(tool.clone()).with_arguments(arguments.clone());
                    params.input_responses = responses;
                    params.request_state = state;
                    ClientRequest::CallToolRequest(CallToolRequest::new(params))
                })
                .await?
            }
            "resources/read" => {
                let uri = text("uri");
                self.exchange(call_id, timeout, |responses, state| {
                    let mut params = ReadResourceRequestParams::new(uri.clone());
                    params.input_responses = responses;
                    params.request_state = state;
                    ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
                })
                .await?
            }
            "prompts/get" => {
                let (name, arguments) = (text("name"), object("arguments"));
                self.exchange(call_id, timeout, |responses, state| {
                    let mut params = GetPromptRequestParams::new(name.clone());
                    if !arguments.is_empty() {
                        params = params.with_arguments(arguments.clone());
                    }
                    params.input_responses = responses;
                    params.request_state = state;
                    ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
                })
                .await?
            }
            other => {
                return Err(SessionError::Failed(format!(
                    "{other} is not passed on to servers"
                )));
            }
        };
        self.redactor().redact_json(&mut result);
        Ok(result)
    }

    /// Read a resource by URI.
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Option<Duration>,
        call_id: Option<String>,
    ) -> Result<ReadOutcome, SessionError> {
        let call_id = call_id.unwrap_or_else(|| self.new_call_id());
        let started = Instant::now();
        let (mut result, rounds) = self
            .exchange(
                &call_id,
                timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
                |responses, state| {
                    let mut params = ReadResourceRequestParams::new(uri);
                    params.input_responses = responses;
                    params.request_state = state;
                    ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
                },
            )
            .await?;
        self.redactor().redact_json(&mut result);
        let contents = match result.get("contents") {
            Some(Value::Array(items)) => items.iter().map(outcome::resource_content).collect(),
            _ => vec![],
        };
        Ok(ReadOutcome {
            call_id,
            uri: self.redactor().redact(uri),
            contents,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            rounds,
        })
    }

    /// Render a prompt with `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        timeout: Option<Duration>,
        call_id: Option<String>,
    ) -> Result<PromptOutcome, SessionError> {
        let call_id = call_id.unwrap_or_else(|| self.new_call_id());
        let started = Instant::now();
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let (mut result, rounds) = self
            .exchange(
                &call_id,
                timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
                |responses, state| {
                    let mut params = GetPromptRequestParams::new(name);
                    if !arguments.is_empty() {
                        params = params.with_arguments(arguments.clone());
                    }
                    params.input_responses = responses;
                    params.request_state = state;
                    ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
                },
            )
            .await?;
        self.redactor().redact_json(&mut result);
        let messages = match result.get("messages") {
            Some(Value::Array(messages)) => messages
                .iter()
                .map(|m| PromptMessage {
                    role: str_of(m, "role").unwrap_or_default(),
                    content: outcome::content_items(Some(&Value::Array(vec![
                        m.get("content").cloned().unwrap_or(Value::Null),
                    ])))
                    .pop()
                    .unwrap_or(ContentItem::Other { json: Value::Null }),
                })
                .collect(),
            _ => vec![],
        };
        Ok(PromptOutcome {
            call_id,
            name: self.redactor().redact(name),
            description: str_of(&result, "description"),
            messages,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            rounds,
        })
    }

    /// Values the server suggests for `argument` of a prompt or resource template, given what
    /// was typed so far and the other arguments. A server without completions suggests none.
    pub async fn complete(
        &self,
        target: CompletionTarget,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<Completion, SessionError> {
        let reference = match &target {
            CompletionTarget::Prompt { name } => Reference::for_prompt(name.clone()),
            CompletionTarget::Resource { uri_template } => {
                Reference::for_resource(uri_template.clone())
            }
        };
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            params.context = Some(CompletionContext::with_arguments(
                context.into_iter().collect(),
            ));
        }
        let asked = self.peer.complete(params);
        let result = match tokio::time::timeout(Duration::from_secs(30), asked).await {
            Err(_) => return Err(SessionError::TimedOut(Duration::from_secs(30))),
            Ok(Err(ServiceError::McpError(e))) if e.code.0 == -32601 => {
                return Ok(Completion::default());
            }
            Ok(Err(e)) => return Err(self.service_error(e)),
            Ok(Ok(result)) => result,
        };
        Ok(Completion {
            values: result
                .completion
                .values
                .iter()
                .take(100)
                .map(|v| self.redactor().redact(v))
                .collect(),
            total: result.completion.total,
            has_more: result.completion.has_more.unwrap_or(false),
        })
    }

    /// Cancel a running call. `false` when no call with that id runs.
    pub fn cancel(&self, call_id: &str) -> bool {
        let sender = self
            .cancels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(call_id);
        sender.is_some_and(|s| s.send(()).is_ok())
    }

    /// Share these roots with the server (and tell it they changed).
    pub async fn set_roots(&self, roots: Vec<RootView>) {
        self.shared.questions.set_roots(roots);
        let _ = self.peer.notify_roots_list_changed().await;
    }

    /// Tell the server the roots changed (it asks for them again).
    pub async fn tell_roots_changed(&self) {
        let _ = self.peer.notify_roots_list_changed().await;
    }

    pub fn roots(&self) -> Vec<RootView> {
        self.shared.questions.roots()
    }

    /// Every message of the session so far (redacted).
    pub fn trace(&self) -> Vec<TraceEntry> {
        self.shared.trace.entries()
    }

    /// The last lines of the server's stderr (stdio), redacted.
    pub async fn stderr_tail(&self) -> Option<String> {
        self.conn
            .lock()
            .await
            .stderr_tail(STDERR_TAIL_LINES)
            .await
            .map(|t| self.redactor().redact(&t))
    }

    /// End the session: the connection is closed and a stdio server's process group is gone.
    pub async fn close(&self) {
        self.shared.set_closing();
        self.conn.lock().await.close().await;
    }

    /// One request and its `input_required` rounds, until a final result (as JSON), a
    /// cancel or `timeout`. `make` builds the request from the answers and state so far.
    async fn exchange<F>(
        &self,
        call_id: &str,
        timeout: Duration,
        make: F,
    ) -> Result<(Value, u32), SessionError>
    where
        F: Fn(Option<BTreeMap<String, Value>>, Option<String>) -> ClientRequest,
    {
        let (cancel_tx, cancel_rx) = oneshot::channel();
        self.cancels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(call_id.to_string(), cancel_tx);
        self.shared.started(call_id);
        let work = self.rounds(call_id, &make);
        let outcome = tokio::select! {
            outcome = work => outcome,
            _ = tokio::time::sleep(timeout) => Err(SessionError::TimedOut(timeout)),
            _ = cancel_rx => Err(SessionError::Cancelled),
        };
        self.cancels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(call_id);
        self.shared.ended(call_id);
        self.shared.questions.call_ended(call_id);
        outcome
    }

    async fn rounds<F>(&self, call_id: &str, make: &F) -> Result<(Value, u32), SessionError>
    where
        F: Fn(Option<BTreeMap<String, Value>>, Option<String>) -> ClientRequest,
    {
        let mut responses = None;
        let mut state = None;
        let mut url_retried = false;
        let mut task_augmented = false;
        for round in 1..=MAX_ROUNDS {
            let mut request = make(responses.take(), state.take());
            let is_tool_call = matches!(request, ClientRequest::CallToolRequest(_));
            if task_augmented && is_tool_call {
                request = tasks::as_task(request);
            }
            let (id, token, sent) = self
                .send(request)
                .await
                .map_err(|e| self.service_error(e))?;
            self.shared.set_progress_token(call_id, token);
            let mut in_flight = InFlight {
                peer: self.peer.clone(),
                id: Some(id),
                direct: self.direct.as_ref().map(|d| d.calls.clone()),
            };
            let answer = sent.answer().await;
            in_flight.id = None;
            let json = match answer {
                Ok(result) => result,
                // -32042: the server needs the user to visit a URL first, then a retry.
                Err(ServiceError::McpError(e)) if e.code.0 == -32042 && !url_retried => {
                    url_retried = true;
                    self.visit_required_urls(call_id, e.data.as_ref()).await?;
                    continue;
                }
                Err(e) => return Err(self.service_error(e)),
            };
            if let Some((task_id, poll)) = tasks::created_task(&json) {
                return Ok((self.follow_task(call_id, &task_id, poll).await?, round));
            }
            if is_tool_call && !task_augmented && tasks::asks_for_task(&json) {
                task_augmented = true;
                continue;
            }
            if tasks::is_extension_task(&json) {
                return Ok((self.follow_extension_task(call_id, &json).await?, round));
            }
            if json.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok((json, round));
            }
            let requests = json
                .get("inputRequests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            state = json
                .get("requestState")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if requests.is_empty() && state.is_none() {
                return Err(SessionError::Failed(
                    "the server said it needs input but asked for nothing".into(),
                ));
            }
            let answered = self
                .shared
                .questions
                .fulfil(&self.shared, &requests, call_id)
                .await
                .map_err(SessionError::Unanswerable)?;
            if requests.is_empty() {
                // Only state: the server is working; ask again shortly.
                tokio::time::sleep(Duration::from_millis(100 * u64::from(round.min(5)))).await;
            }
            responses = (!answered.is_empty()).then(|| answered.into_iter().collect());
        }
        Err(SessionError::Failed(format!(
            "the server asked for more input {MAX_ROUNDS} times without giving a result"
        )))
    }

    /// Send `request`: straight to a stdio server when the session can (stamped as rmcp stamps
    /// its requests: a progress token, and for a modern server the client's context), else
    /// through rmcp. Its id, its progress token as text, and its answer to come.
    async fn send(
        &self,
        mut request: ClientRequest,
    ) -> Result<(RequestId, String, Sent), ServiceError> {
        let Some(direct) = &self.direct else {
            let handle = self
                .peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await?;
            let token = token_text(&handle.progress_token);
            return Ok((handle.id.clone(), token, Sent::Rmcp(handle)));
        };
        let (id, answer) = direct
            .calls
            .open()
            .map_err(|_| ServiceError::TransportClosed)?;
        let token = id.to_string();
        let meta = request.get_meta_mut();
        if let Some((version, info)) = &direct.modern {
            meta.set_protocol_version(version.clone());
            meta.set_client_info(info.client_info.clone());
            meta.set_client_capabilities(info.capabilities.clone());
        }
        meta.set_progress_token(ProgressToken(id.clone()));
        direct
            .calls
            .send(id.clone(), request)
            .await
            .map_err(|_| ServiceError::TransportClosed)?;
        Ok((id, token, Sent::Direct(answer)))
    }

    /// The URL elicitations of a `-32042` error, asked one by one; all must be accepted.
    async fn visit_required_urls(
        &self,
        call_id: &str,
        data: Option<&Value>,
    ) -> Result<(), SessionError> {
        let elicitations = data
            .and_then(|d| d.get("elicitations"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if elicitations.is_empty() {
            return Err(SessionError::Rpc {
                code: -32042,
                message: "the server needs a step in the browser first, but gave no address".into(),
            });
        }
        for params in &elicitations {
            let answer = self
                .shared
                .questions
                .elicit(&self.shared, params, Some(call_id.to_string()))
                .await;
            if answer.get("action").and_then(Value::as_str) != Some("accept") {
                return Err(SessionError::Rpc {
                    code: -32042,
                    message: "the server needs a step in the browser first, which was declined"
                        .into(),
                });
            }
        }
        Ok(())
    }

    fn service_error(&self, err: ServiceError) -> SessionError {
        let redact = |text: &str| self.redactor().redact(text);
        match err {
            ServiceError::McpError(e) => SessionError::Rpc {
                code: e.code.0,
                message: redact(&e.message),
            },
            ServiceError::TransportClosed => SessionError::Closed(
                "the server closed the connection (it may have exited; see its output)".into(),
            ),
            ServiceError::Timeout { timeout } => SessionError::TimedOut(timeout),
            ServiceError::UnexpectedResponse => SessionError::Failed(
                "the server's answer does not fit the request (it does not follow MCP here)".into(),
            ),
            other => SessionError::Failed(redact(&other.to_string())),
        }
    }
}

fn token_text(token: &rmcp::model::ProgressToken) -> String {
    match serde_json::to_value(token) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn str_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}
