//! Try it for the app: long-lived sessions held here (by id), run on a runtime of their own
//! so that a session outlives the command that opened it; their events (progress, logs, the
//! server's questions, trace entries) go to the sink the open command was given, as a test's
//! progress does. The server's questions wait here for the user's answer (`session_answer`),
//! which is checked against the requested schema before it is sent.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use super::{Api, ApiError, ErrorCode, FieldError};
use crate::schema::{self, FieldIssue, Form, Validator};
use crate::session::{
    self, Answer, Asker, CallOutcome, CallRequest, Completion, CompletionTarget, Confirmation,
    Offer, PromptOutcome, Question, ReadOutcome, RootView, Session, SessionError, SessionEvent,
    SessionInfo, SessionOptions, ToolRisk, TraceEntry,
};

/// An open session as the app first sees it.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct SessionView {
    pub id: String,
    pub info: SessionInfo,
    pub offer: Offer,
    pub roots: Vec<RootView>,
}

/// A tool's input form.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolForm {
    pub tool: String,
    pub form: Form,
    pub risk: ToolRisk,
    pub disabled: bool,
    /// Why values cannot be checked before they are sent, when they cannot.
    pub schema_problem: Option<String>,
}

/// A tool call as the app asks for it.
#[derive(Clone, Debug, PartialEq, Deserialize, specta::Type)]
pub struct CallInput {
    pub tool: String,
    pub arguments: Value,
    pub confirmation: Confirmation,
    /// The app's id for the call, to cancel it with.
    pub call_id: String,
    pub timeout_secs: Option<u32>,
    /// Asked by a tool's view (MCP Apps), not by the user: allowed only for tools the server
    /// made visible to its views.
    #[serde(default)]
    pub from_view: bool,
}

/// The questions of the app's sessions that wait for the user.
#[derive(Default)]
struct Pending {
    questions: Mutex<HashMap<String, (Question, oneshot::Sender<Answer>)>>,
}

impl Pending {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (Question, oneshot::Sender<Answer>)>> {
        self.questions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Asks through the app: the question is an event, the answer comes with `session_answer`.
struct AppAsker {
    pending: Arc<Pending>,
}

impl Asker for AppAsker {
    fn ask(&self, question: Question) -> BoxFuture<'static, Answer> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .insert(question.id.clone(), (question, tx));
        Box::pin(async move { rx.await.unwrap_or(Answer::Cancel) })
    }

    fn call_ended(&self, call_id: &str) {
        self.pending
            .lock()
            .retain(|_, (q, _)| q.call_id.as_deref() != Some(call_id));
    }
}

pub(super) struct Open {
    name: String,
    pub(super) session: Session,
    pending: Arc<Pending>,
}

/// The thread every session runs on: a one-thread runtime driven there until the app's state
/// goes (its tasks, and with them the sessions' connections, end with it).
struct SessionThread {
    handle: tokio::runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SessionThread {
    fn start() -> Result<SessionThread, String> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("plugboard-sessions".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => {
                        let _ = ready_tx.send(Ok(runtime.handle().clone()));
                        runtime.block_on(async {
                            let _ = stopped.await;
                        });
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        let handle = ready_rx
            .recv()
            .map_err(|_| "the session thread stopped at once".to_string())??;
        Ok(SessionThread {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for SessionThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // The last handle to the app's state may go on the session thread itself (a task that
        // outlived the window): that thread cannot wait for itself, and ends on its own.
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

/// The app's open sessions and the thread they run on.
#[derive(Default)]
pub(super) struct Sessions {
    thread: OnceLock<Result<SessionThread, String>>,
    open: Mutex<HashMap<String, Arc<Open>>>,
    next: AtomicU64,
}

impl Sessions {
    fn runtime(&self) -> Result<&tokio::runtime::Handle, ApiError> {
        self.thread
            .get_or_init(SessionThread::start)
            .as_ref()
            .map(|t| &t.handle)
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::Internal,
                    format!("could not start the session thread: {e}"),
                )
            })
    }

    pub(super) fn get(&self, id: &str) -> Result<Arc<Open>, ApiError> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotFound,
                    "this session is closed; open Try it again to start a new one",
                )
            })
    }

    /// Run `work` on the session runtime and wait for it from any async context.
    pub(super) fn spawn<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, ApiError>> + Send + 'static,
    ) -> impl Future<Output = Result<T, ApiError>> + Send + 'static {
        let handle = self.runtime().map(|rt| rt.spawn(work));
        async move {
            handle?.await.map_err(|e| {
                ApiError::new(ErrorCode::Internal, format!("the session task failed: {e}"))
            })?
        }
    }
}

impl Drop for Sessions {
    fn drop(&mut self) {
        // Each session's connection goes with it (a stdio server's process group is killed),
        // then the thread and whatever still runs there.
        self.open
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        drop(self.thread.take());
    }
}

impl From<SessionError> for ApiError {
    fn from(err: SessionError) -> Self {
        let code = session_code(&err);
        match err {
            SessionError::InvalidArguments { issues } => ApiError {
                code,
                message: format!(
                    "the arguments do not match the tool's input schema: {}",
                    issues
                        .iter()
                        .map(FieldIssue::describe)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                fields: field_errors(&issues),
            },
            SessionError::Open {
                failure,
                stderr_tail,
                ..
            } => {
                let mut message = format!("{} What to do: {}", failure.error, failure.hint);
                if let Some(tail) = stderr_tail {
                    message.push_str(&format!("\n\nThe server's last output:\n{tail}"));
                }
                ApiError::new(code, message)
            }
            other => ApiError::new(code, other.to_string()),
        }
    }
}

/// The code of a session's error: the test's kind when it could not open.
fn session_code(err: &SessionError) -> ErrorCode {
    match err {
        SessionError::Open { failure, .. } => failure.kind.into(),
        SessionError::Config(_) => ErrorCode::Config,
        SessionError::UnknownTool { .. } => ErrorCode::UnknownTool,
        SessionError::Disabled { .. } => ErrorCode::Disabled,
        SessionError::Held { .. } => ErrorCode::Held,
        SessionError::NeedsConfirmation { .. } => ErrorCode::NeedsConfirmation,
        SessionError::InvalidArguments { .. } => ErrorCode::InvalidArguments,
        SessionError::Cancelled => ErrorCode::Cancelled,
        SessionError::TimedOut(_) => ErrorCode::Timeout,
        SessionError::Rpc { .. } => ErrorCode::Server,
        SessionError::Closed(_) => ErrorCode::Closed,
        SessionError::Unanswerable(_) => ErrorCode::Unanswerable,
        _ => ErrorCode::Failed,
    }
}

fn field_errors(issues: &[FieldIssue]) -> Vec<FieldError> {
    issues
        .iter()
        .map(|i| FieldError {
            field: i.pointer.clone(),
            message: i.message.clone(),
        })
        .collect()
}

fn timeout(secs: Option<u32>) -> Option<Duration> {
    secs.map(|s| Duration::from_secs(u64::from(s.max(1))))
}

impl Api {
    /// Open a session with installed server `name`; `on_event` hears everything that happens
    /// in it until it is closed.
    pub fn open_session_task(
        self: &Arc<Self>,
        name: String,
        on_event: impl Fn(SessionEvent) + Send + Sync + 'static,
    ) -> impl Future<Output = Result<SessionView, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let pending = Arc::new(Pending::default());
            let options = SessionOptions {
                asker: Arc::new(AppAsker {
                    pending: pending.clone(),
                }),
                events: Arc::new(on_event),
                opener: Some(Arc::new(|url: &str| {
                    super::open_in_browser(url).map_err(|e| e.message)
                })),
                timeout: None,
                trace: true,
            };
            let session = session::open_installed(&api.servers, &name, options).await?;
            let id = format!(
                "s-{}",
                api.sessions.next.fetch_add(1, Ordering::Relaxed) + 1
            );
            let view = SessionView {
                id: id.clone(),
                info: session.info().clone(),
                offer: session.offer(),
                roots: session.roots(),
            };
            api.sessions
                .open
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(
                    id,
                    Arc::new(Open {
                        name,
                        session,
                        pending,
                    }),
                );
            Ok(view)
        })
    }

    /// What the server offers now (after a `list_changed` event).
    pub fn session_offer(&self, id: &str) -> Result<Offer, ApiError> {
        Ok(self.sessions.get(id)?.session.offer())
    }

    /// The input form of `tool`.
    pub fn session_tool_form(&self, id: &str, tool: &str) -> Result<ToolForm, ApiError> {
        let open = self.sessions.get(id)?;
        let entry = open
            .session
            .offer()
            .tools
            .into_iter()
            .find(|t| t.name == tool)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotFound,
                    format!("`{tool}` is not a tool of this server"),
                )
            })?;
        Ok(ToolForm {
            tool: entry.name,
            form: schema::compile(&entry.input_schema),
            risk: entry.risk,
            disabled: entry.disabled,
            schema_problem: Validator::new(&entry.input_schema)
                .schema_problem()
                .map(str::to_owned),
        })
    }

    /// Problems of `arguments` for `tool`, field by field (none when they fit).
    pub fn session_validate(
        &self,
        id: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<Vec<FieldIssue>, ApiError> {
        let open = self.sessions.get(id)?;
        match open
            .session
            .check_call(tool, arguments, Confirmation::Destructive)
        {
            Ok(_) => Ok(vec![]),
            Err(SessionError::InvalidArguments { issues }) => Ok(issues),
            Err(other) => Err(other.into()),
        }
    }

    pub fn session_call_task(
        self: &Arc<Self>,
        id: String,
        input: CallInput,
    ) -> impl Future<Output = Result<CallOutcome, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = api.sessions.get(&id)?;
            let request = CallRequest {
                tool: input.tool,
                arguments: input.arguments,
                confirmation: input.confirmation,
                timeout: timeout(input.timeout_secs),
                call_id: Some(input.call_id),
            };
            Ok(if input.from_view {
                open.session.call_tool_for_view(request).await?
            } else {
                open.session.call_tool(request).await?
            })
        })
    }

    pub fn session_read_task(
        self: &Arc<Self>,
        id: String,
        uri: String,
        call_id: String,
    ) -> impl Future<Output = Result<ReadOutcome, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = api.sessions.get(&id)?;
            Ok(open
                .session
                .read_resource(&uri, None, Some(call_id))
                .await?)
        })
    }

    pub fn session_prompt_task(
        self: &Arc<Self>,
        id: String,
        prompt: String,
        arguments: BTreeMap<String, String>,
        call_id: String,
    ) -> impl Future<Output = Result<PromptOutcome, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = api.sessions.get(&id)?;
            Ok(open
                .session
                .get_prompt(&prompt, arguments, None, Some(call_id))
                .await?)
        })
    }

    /// Suggestions for an argument of a prompt or resource template.
    pub fn session_complete_task(
        self: &Arc<Self>,
        id: String,
        target: CompletionTarget,
        argument: String,
        value: String,
        context: BTreeMap<String, String>,
    ) -> impl Future<Output = Result<Completion, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = api.sessions.get(&id)?;
            Ok(open
                .session
                .complete(target, &argument, &value, context)
                .await?)
        })
    }

    /// Cancel a running call. `false` when it is not running.
    pub fn session_cancel(&self, id: &str, call_id: &str) -> bool {
        self.sessions
            .get(id)
            .is_ok_and(|open| open.session.cancel(call_id))
    }

    /// Answer the server's question `question_id`. An accepted form that does not fit the
    /// requested schema is refused field by field, and the question stays open.
    pub fn session_answer(
        &self,
        id: &str,
        question_id: &str,
        answer: Answer,
    ) -> Result<(), ApiError> {
        let open = self.sessions.get(id)?;
        let mut pending = open.pending.lock();
        let Some((question, _)) = pending.get(question_id) else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                "the server no longer waits for this answer (its call ended)",
            ));
        };
        let answer = question.check(answer).map_err(|issues| ApiError {
            code: ErrorCode::Invalid,
            message: issues
                .iter()
                .map(FieldIssue::describe)
                .collect::<Vec<_>>()
                .join("; "),
            fields: field_errors(&issues),
        })?;
        if let Some((_, tx)) = pending.remove(question_id) {
            let _ = tx.send(answer);
        }
        Ok(())
    }

    /// Share these folders with the server as its roots (none by default).
    pub fn session_set_roots_task(
        self: &Arc<Self>,
        id: String,
        folders: Vec<String>,
    ) -> impl Future<Output = Result<Vec<RootView>, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = api.sessions.get(&id)?;
            let mut roots = vec![];
            for folder in &folders {
                roots.push(root_of(folder)?);
            }
            open.session.set_roots(roots).await;
            Ok(open.session.roots())
        })
    }

    /// Every message of the session so far.
    pub fn session_trace(&self, id: &str) -> Result<Vec<TraceEntry>, ApiError> {
        Ok(self.sessions.get(id)?.session.trace())
    }

    /// The URI a resource template makes with these values.
    pub fn expand_template(&self, template: &str, values: &BTreeMap<String, String>) -> String {
        session::template::expand(template, values)
    }

    /// End a session: its connection is closed and a stdio server stopped.
    pub fn close_session_task(
        self: &Arc<Self>,
        id: String,
    ) -> impl Future<Output = Result<(), ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = api
                .sessions
                .open
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            if let Some(open) = open {
                open.pending.lock().clear();
                open.session.close().await;
            }
            Ok(())
        })
    }

    /// Close every session (the app is quitting), waiting at most a few seconds.
    pub fn close_all_sessions(&self) {
        let open: Vec<Arc<Open>> = self
            .sessions
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, o)| o)
            .collect();
        if open.is_empty() {
            return;
        }
        let Ok(runtime) = self.sessions.runtime() else {
            return;
        };
        let (done, closed) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            futures::future::join_all(open.iter().map(|o| o.session.close())).await;
            let _ = done.send(());
        });
        let _ = closed.recv_timeout(Duration::from_secs(3));
    }

    /// The diagnostics bundle of server `name` as pretty JSON: of the open session `session`
    /// when given, else of a session opened for it.
    pub fn diagnostics_task(
        self: &Arc<Self>,
        name: String,
        session: Option<String>,
    ) -> impl Future<Output = Result<String, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        self.sessions.spawn(async move {
            let open = match &session {
                Some(id) => Some(api.sessions.get(id)?),
                None => None,
            };
            let bundle = match open {
                Some(open) if open.name == name => {
                    crate::diagnostics::of_session(&api.servers, &name, &open.session).await
                }
                _ => crate::diagnostics::collect(&api.servers, &name, None).await?,
            };
            serde_json::to_string_pretty(&bundle).map_err(|e| {
                ApiError::new(
                    ErrorCode::Internal,
                    format!("could not encode the bundle: {e}"),
                )
            })
        })
    }
}

/// A root for `folder`: an existing directory, as a `file://` URI.
fn root_of(folder: &str) -> Result<RootView, ApiError> {
    let path = Path::new(folder.trim());
    let canonical = std::fs::canonicalize(path)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| {
            ApiError::field(
                "roots",
                format!("`{folder}` is not a folder on this computer"),
            )
        })?;
    let uri = url::Url::from_directory_path(&canonical)
        .map_err(|_| ApiError::field("roots", format!("`{folder}` cannot be shared as a root")))?;
    Ok(RootView {
        uri: uri.to_string(),
        name: canonical
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
    })
}
