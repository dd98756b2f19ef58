//! Test connection for the app: an installed server, or a filled install form before it is
//! saved. Tests run on the async runtime, report each stage as it starts and ends, and can be
//! cancelled by id (cancelling drops the test, which closes the connection and kills the
//! server's process group). Results are already redacted by the probe.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::hints::{self, Place};
use super::{Api, ApiError, ErrorCode, InstallRequest};
use crate::checks;
use crate::clock::now_ms;
use crate::probe::{StageEvent, TestResult};

/// Live progress of a test: a stage started or finished.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StageProgress {
    Started { stage: String },
    Finished { stage: String, ok: bool, ms: u32 },
}

/// One finished stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct StageTiming {
    pub name: String,
    pub ok: bool,
    pub ms: u32,
}

/// `serverInfo` from the handshake.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
}

/// A tool, with the name an agent sees (`mcp__<server>__<tool>`).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolView {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Value,
    pub annotations: Option<Value>,
    pub adapted_name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ResourceView {
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct PromptView {
    pub name: String,
    pub description: Option<String>,
    pub arguments: Vec<Value>,
}

/// The caching hints of one result a modern server gave (`ttlMs`, `cacheScope`).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct CacheHintView {
    /// The method whose result carried them (`tools/list`, `server/discover`, ...).
    pub method: String,
    /// How long the result may be treated as fresh, in milliseconds.
    pub ttl_ms: Option<f64>,
    /// `public` or `private`.
    pub cache_scope: Option<String>,
}

/// The result of a test connection (the keys docs/cli.md documents), already redacted by the probe.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct TestReport {
    pub ok: bool,
    /// `verified` or `connectivity-only`.
    pub verification: String,
    pub server: Option<ServerIdentity>,
    pub protocol_version: Option<String>,
    /// `modern` (2026-07-28) or `legacy` (`initialize`); absent when the test did not get that
    /// far.
    pub era: Option<String>,
    /// The protocol versions the server listed.
    pub supported_versions: Vec<String>,
    /// The caching hints of the server's results (shown; a test always lists afresh).
    pub cache_hints: Vec<CacheHintView>,
    /// The transport actually used: `stdio`, `sse` or `shttp`.
    pub transport: String,
    pub tools: Vec<ToolView>,
    pub resources: Vec<ResourceView>,
    pub prompts: Vec<PromptView>,
    pub stages: Vec<StageTiming>,
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub hint: Option<String>,
    pub stderr_tail: Option<String>,
    pub warnings: Vec<String>,
    /// When the test finished (Unix milliseconds).
    pub checked_at: f64,
    /// Whether the server sends credentials (secrets, secret-looking values or an auth mode):
    /// a working server without any is simply working, one with them whose credentials no
    /// probe checked is "working, key not checked".
    pub uses_credentials: bool,
    /// Whether signing in with OAuth would fix this failure (a 401 that advertises OAuth, or an
    /// OAuth server whose tokens are missing or refused).
    pub sign_in: bool,
    /// A form's test of a server not set up for OAuth whose 401 advertises it: switching the
    /// form to OAuth and signing in after saving fixes it.
    pub oauth_offered: bool,
}

/// The JSON name of a serializable unit enum value (`"connectivity-only"`, `"tools/list"`).
fn json_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

impl TestReport {
    /// The app's view of a probe result.
    pub fn from_result(r: &TestResult, checked_at_ms: u64) -> TestReport {
        TestReport {
            ok: r.ok,
            verification: json_name(&r.verification),
            server: r.server.as_ref().map(|s| ServerIdentity {
                name: s.name.clone(),
                version: s.version.clone(),
            }),
            protocol_version: r.protocol_version.clone(),
            era: r.era.map(|era| era.as_str().to_string()),
            supported_versions: r.supported_versions.clone(),
            cache_hints: r
                .cache_hints
                .iter()
                .map(|h| CacheHintView {
                    method: h.method.clone(),
                    ttl_ms: h.ttl_ms.map(|ms| ms as f64),
                    cache_scope: h.cache_scope.clone(),
                })
                .collect(),
            transport: json_name(&r.transport),
            tools: r
                .tools
                .iter()
                .map(|t| ToolView {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                    annotations: t.annotations.clone(),
                    adapted_name: t.adapted_name.clone(),
                })
                .collect(),
            resources: r
                .resources
                .iter()
                .map(|x| ResourceView {
                    uri: x.uri.clone(),
                    name: x.name.clone(),
                    description: x.description.clone(),
                    mime_type: x.mime_type.clone(),
                })
                .collect(),
            prompts: r
                .prompts
                .iter()
                .map(|p| PromptView {
                    name: p.name.clone(),
                    description: p.description.clone(),
                    arguments: p.arguments.clone(),
                })
                .collect(),
            stages: r
                .stages
                .iter()
                .map(|s| StageTiming {
                    name: json_name(&s.name),
                    ok: s.ok,
                    ms: s.ms.min(u32::MAX as u64) as u32,
                })
                .collect(),
            error_kind: r.error_kind.map(|k| k.as_str().to_string()),
            error: r.error.clone(),
            hint: r.hint.clone(),
            stderr_tail: r.stderr_tail.clone(),
            warnings: r.warnings.clone(),
            checked_at: checked_at_ms as f64,
            uses_credentials: false,
            sign_in: false,
            oauth_offered: false,
        }
    }
}

/// The last test of an installed server, in short, for its card.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct HealthView {
    pub ok: bool,
    pub verification: String,
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub hint: Option<String>,
    pub tools: u32,
    pub checked_at: f64,
    pub uses_credentials: bool,
    pub sign_in: bool,
}

impl HealthView {
    pub fn from_report(r: &TestReport) -> HealthView {
        HealthView {
            ok: r.ok,
            verification: r.verification.clone(),
            error_kind: r.error_kind.clone(),
            error: r.error.clone(),
            hint: r.hint.clone(),
            tools: r.tools.len() as u32,
            checked_at: r.checked_at,
            uses_credentials: r.uses_credentials,
            sign_in: r.sign_in,
        }
    }
}

pub(super) fn progress_of(event: StageEvent) -> Option<StageProgress> {
    Some(match event {
        StageEvent::Started { stage } => StageProgress::Started {
            stage: stage.as_str().to_string(),
        },
        StageEvent::Finished { stage, ok, ms } => StageProgress::Finished {
            stage: stage.as_str().to_string(),
            ok,
            ms: ms.min(u32::MAX as u64) as u32,
        },
    })
}

/// Running tests by id, so that they can be cancelled; and the results of pre-save tests, so
/// that the install that follows can keep one as the new server's health.
#[derive(Default)]
pub(super) struct Tests {
    running: Mutex<HashMap<String, oneshot::Sender<()>>>,
    presave: Mutex<HashMap<String, (u64, TestResult)>>,
}

impl Tests {
    pub(super) fn start(&self, id: &str) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_string(), tx);
        rx
    }

    pub(super) fn end(&self, id: &str) {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    pub(super) fn take_presave(&self, id: &str) -> Option<(u64, TestResult)> {
        self.presave
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
    }
}

fn cancelled() -> ApiError {
    ApiError::new(ErrorCode::Cancelled, "the test was cancelled")
}

/// Run `work` on a scoped thread of its own with its own small runtime and wait for it: for a
/// synchronous API function (which may borrow) that tests servers.
pub(super) fn block_on_own_thread<T, F>(work: impl FnOnce() -> F + Send) -> Result<T, ApiError>
where
    T: Send,
    F: Future<Output = T>,
{
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map(|runtime| runtime.block_on(work()))
                    .map_err(|e| {
                        ApiError::new(
                            ErrorCode::Internal,
                            format!("could not start the test runtime: {e}"),
                        )
                    })
            })
            .join()
            .unwrap_or_else(|_| {
                Err(ApiError::new(
                    ErrorCode::Internal,
                    "the test stopped unexpectedly",
                ))
            })
    })
}

/// Run `work` (a test) on a thread of its own with its own small runtime, and wait for it from
/// any async context. The probe's futures need not be `Send`, a slow server never occupies the
/// app's async workers, and the caller's future is `Send`.
pub(super) fn on_own_thread<T, F>(
    work: impl FnOnce() -> F + Send + 'static,
) -> impl Future<Output = Result<T, ApiError>> + Send
where
    T: Send + 'static,
    F: Future<Output = Result<T, ApiError>>,
{
    let (tx, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("plugboard-test".into())
        .spawn(move || {
            let outcome = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime.block_on(work()),
                Err(e) => Err(ApiError::new(
                    ErrorCode::Internal,
                    format!("could not start the test runtime: {e}"),
                )),
            };
            let _ = tx.send(outcome);
        });
    async move {
        spawned.map_err(|e| {
            ApiError::new(
                ErrorCode::Internal,
                format!("could not start a test thread: {e}"),
            )
        })?;
        rx.await
            .map_err(|_| ApiError::new(ErrorCode::Internal, "the test stopped unexpectedly"))?
    }
}

impl Api {
    /// [`Api::test_server`] on a thread of its own: what the app's command awaits.
    pub fn test_server_task(
        self: &Arc<Self>,
        test_id: String,
        name: String,
        progress: impl FnMut(StageProgress) + Send + 'static,
    ) -> impl Future<Output = Result<TestReport, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        on_own_thread(move || async move { api.test_server(&test_id, &name, progress).await })
    }

    /// [`Api::test_form`] on a thread of its own: what the app's command awaits.
    pub fn test_form_task(
        self: &Arc<Self>,
        test_id: String,
        request: InstallRequest,
        progress: impl FnMut(StageProgress) + Send + 'static,
    ) -> impl Future<Output = Result<TestReport, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        on_own_thread(move || async move { api.test_form(&test_id, &request, progress).await })
    }

    /// [`Api::test_custom`] on a thread of its own: what the app's command awaits.
    pub fn test_custom_task(
        self: &Arc<Self>,
        test_id: String,
        original: Option<String>,
        server: super::CustomServer,
        progress: impl FnMut(StageProgress) + Send + 'static,
    ) -> impl Future<Output = Result<TestReport, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        on_own_thread(move || async move {
            api.test_custom(&test_id, original.as_deref(), &server, progress)
                .await
        })
    }

    /// Test the custom editor's server before it is saved (typed secrets in memory, kept ones
    /// read from the keyring). Pass the same `test_id` to `save_custom_server` to keep this
    /// result as the server's health.
    pub async fn test_custom(
        &self,
        test_id: &str,
        original: Option<&str>,
        server: &super::CustomServer,
        mut progress: impl FnMut(StageProgress) + Send,
    ) -> Result<TestReport, ApiError> {
        let prepared = super::custom::prepare(&self.servers, original, server)?;
        let empty = crate::catalog::Catalog::default();
        let catalog = self.catalog.as_ref().unwrap_or(&empty);
        let cancel = self.tests.start(test_id);
        let started = now_ms();
        let test = checks::test_unsaved(
            &self.servers,
            catalog,
            &prepared.name,
            &prepared.config,
            &prepared.secrets,
            |e| {
                if let Some(p) = progress_of(e) {
                    progress(p)
                }
            },
        );
        let outcome = tokio::select! {
            result = test => Ok(result),
            _ = cancel => Err(cancelled()),
        };
        self.tests.end(test_id);
        let result = outcome?;
        let mut report = TestReport::from_result(&result, now_ms());
        let labels: Vec<&str> = match &server.auth {
            super::CustomAuth::Bearer { .. } => vec!["Token"],
            super::CustomAuth::ApiKey { .. } => vec!["API key"],
            super::CustomAuth::Basic { .. } => vec!["Password"],
            _ => vec![],
        };
        hints::for_app(
            &mut report,
            &prepared.config,
            &Place::Form {
                credential_labels: labels,
            },
        );
        self.tests
            .presave
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(test_id.to_string(), (started, result));
        Ok(report)
    }

    /// Test installed server `name`; its result becomes the server's health.
    pub async fn test_server(
        &self,
        test_id: &str,
        name: &str,
        mut progress: impl FnMut(StageProgress) + Send,
    ) -> Result<TestReport, ApiError> {
        let empty = crate::catalog::Catalog::default();
        let catalog = self.catalog.as_ref().unwrap_or(&empty);
        let cancel = self.tests.start(test_id);
        let test = checks::test_installed(&self.servers, catalog, name, None, |e| {
            if let Some(p) = progress_of(e) {
                progress(p)
            }
        });
        let outcome = tokio::select! {
            result = test => result.map_err(ApiError::from),
            _ = cancel => Err(cancelled()),
        };
        self.tests.end(test_id);
        let mut report = TestReport::from_result(&outcome?, now_ms());
        if let Ok(server) = self.servers.config().load().and_then(|c| c.server(name)) {
            hints::for_app(&mut report, &server, &Place::Installed);
        }
        Ok(report)
    }

    /// Test a filled install form before anything is saved (secrets stay in memory). Pass the
    /// same `test_id` to `install` afterwards to keep this result as the server's health.
    pub async fn test_form(
        &self,
        test_id: &str,
        request: &InstallRequest,
        mut progress: impl FnMut(StageProgress) + Send,
    ) -> Result<TestReport, ApiError> {
        let prepared = self.prepare(request)?;
        let catalog = self.catalog()?;
        let cancel = self.tests.start(test_id);
        let started = now_ms();
        let test = checks::test_prepared(&prepared, catalog, None, |e| {
            if let Some(p) = progress_of(e) {
                progress(p)
            }
        });
        let outcome = tokio::select! {
            result = test => Ok(result),
            _ = cancel => Err(cancelled()),
        };
        self.tests.end(test_id);
        let result = outcome?;
        let mut report = TestReport::from_result(&result, now_ms());
        let spec = self
            .entry(&request.entry_id)
            .ok()
            .and_then(|e| crate::form::form_for(e, Some(&request.option_id)).ok());
        let credential_labels: Vec<&str> = spec
            .iter()
            .flat_map(|s| &s.fields)
            .filter(|f| f.input == crate::form::InputKind::Password || f.secret)
            .map(|f| f.label.as_str())
            .collect();
        hints::for_app(
            &mut report,
            &prepared.config,
            &Place::Form { credential_labels },
        );
        self.tests
            .presave
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(test_id.to_string(), (started, result));
        Ok(report)
    }

    /// Cancel a running test. `false` when no test with that id is running.
    pub fn cancel_test(&self, test_id: &str) -> bool {
        let sender = self
            .tests
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(test_id);
        sender.is_some_and(|s| s.send(()).is_ok())
    }

    /// The last stored test of an installed server (`server`: its config, when the caller has
    /// it at hand).
    pub fn last_test(&self, name: &str) -> Option<TestReport> {
        let server = self.servers.config().load().ok()?.server(name).ok();
        self.last_test_of(name, server.as_ref())
    }

    pub(super) fn last_test_of(
        &self,
        name: &str,
        server: Option<&crate::config::ServerConfig>,
    ) -> Option<TestReport> {
        let record = self.servers.health().get(name)?;
        let mut report = TestReport::from_result(&record.result, record.finished_at_ms);
        if let Some(server) = server {
            hints::for_app(&mut report, server, &Place::Installed);
        }
        Some(report)
    }
}
