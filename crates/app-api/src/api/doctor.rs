//! The environment doctor for the app: why a server does not work here and what to do about it.
//! All logic is in [`crate::doctor`] (the same diagnosis as `plugboard doctor`); this module
//! shapes it for IPC and runs every finding's text through a redactor built from the server's
//! own secret, env and header values, as every other test result is.

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;

use super::testing::on_own_thread;
use super::{Api, ApiError, Transport};
use crate::config::ServerConfig;
use crate::doctor::{self, Diagnosis, Finding, Severity};
use crate::redact::Redactor;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FindingSeverity {
    Error,
    Warning,
    Info,
}

impl From<Severity> for FindingSeverity {
    fn from(s: Severity) -> FindingSeverity {
        match s {
            Severity::Error => FindingSeverity::Error,
            Severity::Warning => FindingSeverity::Warning,
            Severity::Info => FindingSeverity::Info,
        }
    }
}

/// One thing the doctor found, with what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct FindingView {
    /// Stable code, e.g. `command.not_found`, `env.missing_var`, `remote.sse_only`.
    pub code: String,
    pub severity: FindingSeverity,
    pub message: String,
    /// What to do; empty for purely informative findings. Commands are in backquotes.
    pub fix: String,
    /// The test stage the finding comes from (`initialize`, …), if any.
    pub stage: Option<String>,
}

/// The diagnosis of one server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ServerDiagnosis {
    pub name: String,
    pub transport: Transport,
    /// No error-level finding.
    pub ok: bool,
    /// Most severe first.
    pub findings: Vec<FindingView>,
    /// Whether the doctor ran the server (it does not when a check before already failed).
    pub tested: bool,
    /// The test's error kind, when it ran and failed.
    pub error_kind: Option<String>,
    /// The first test stage that failed.
    pub failed_stage: Option<String>,
    /// Tools the server listed, when the test ran.
    pub tools: Option<u32>,
    /// `modern` or `legacy`, and the protocol version, when the test got that far.
    pub era: Option<String>,
    pub protocol_version: Option<String>,
}

fn finding_view(f: &Finding, redactor: &Redactor) -> FindingView {
    FindingView {
        code: f.code.clone(),
        severity: f.severity.into(),
        message: redactor.redact(&f.message),
        fix: redactor.redact(&f.fix),
        stage: f.stage.map(|s| s.as_str().to_string()),
    }
}

/// The app's view of one diagnosis, every text redacted.
pub(super) fn diagnosis_view(d: &Diagnosis, redactor: &Redactor) -> ServerDiagnosis {
    let test = d.test.as_ref();
    ServerDiagnosis {
        name: d.name.clone(),
        transport: d.transport.into(),
        ok: d.ok,
        findings: d
            .findings
            .iter()
            .map(|f| finding_view(f, redactor))
            .collect(),
        tested: test.is_some(),
        error_kind: test
            .and_then(|t| t.error_kind)
            .map(|k| k.as_str().to_string()),
        failed_stage: test
            .and_then(|t| t.failed_stage)
            .map(|s| s.as_str().to_string()),
        tools: test.map(|t| t.tools.min(u32::MAX as usize) as u32),
        era: test.and_then(|t| t.era).map(|e| e.as_str().to_string()),
        protocol_version: test.and_then(|t| t.protocol_version.clone()),
    }
}

/// The values of `server` that no finding may show: plain env and header values (users paste
/// tokens there), and, when it has any, its stored secrets and OAuth tokens. When the secret
/// store cannot be read, the plain values and the pattern rules still apply.
pub(super) fn redactor_for(api: &Api, name: &str, server: &ServerConfig) -> Redactor {
    let mut values = server.plain_values();
    let keys = server.secret_keys(name);
    let oauth = matches!(server.auth, crate::config::Auth::Oauth2(_));
    if (!keys.is_empty() || oauth)
        && let Ok(store) = api.servers.secrets()
    {
        for key in &keys {
            if let Ok(Some(value)) = store.get(key) {
                values.push(value.expose().clone());
            }
        }
        if oauth && let Ok(tokens) = crate::oauth::redaction_values(name, server, store.as_ref()) {
            values.extend(tokens.iter().map(|t| t.expose().clone()));
        }
    }
    Redactor::new(values)
}

impl Api {
    /// [`Api::doctor_server`] on a thread of its own: what the app's command awaits.
    pub fn doctor_server_task(
        self: &Arc<Self>,
        run_id: String,
        name: String,
    ) -> impl Future<Output = Result<ServerDiagnosis, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        on_own_thread(move || async move { api.doctor_server(&run_id, &name).await })
    }

    /// [`Api::doctor_machine`] on a thread of its own.
    pub fn doctor_machine_task(
        self: &Arc<Self>,
    ) -> impl Future<Output = Result<Vec<FindingView>, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        on_own_thread(move || async move { Ok(api.doctor_machine().await) })
    }

    /// Diagnose installed server `name`: the command and its runtime, the network and TLS for
    /// remote servers, then one real test whose failure is explained (it becomes the server's
    /// health, as any test does). The app runs one per server at once and shows each as it
    /// comes; `cancel_test(run_id)` stops it, and the server it started.
    pub async fn doctor_server(
        &self,
        run_id: &str,
        name: &str,
    ) -> Result<ServerDiagnosis, ApiError> {
        let empty = crate::catalog::Catalog::default();
        let catalog = self.catalog.as_ref().unwrap_or(&empty);
        let cancel = self.tests.start(run_id);
        let diagnosis = tokio::select! {
            diagnosis = doctor::diagnose(&self.servers, catalog, name, None) => diagnosis,
            _ = cancel => {
                self.tests.end(run_id);
                return Err(ApiError::new(super::ErrorCode::Cancelled, "the diagnosis was cancelled"));
            }
        };
        self.tests.end(run_id);
        let diagnosis = diagnosis?;
        let redactor = self
            .servers
            .config()
            .load()?
            .server(name)
            .map(|s| redactor_for(self, name, &s))
            .unwrap_or_default();
        Ok(diagnosis_view(&diagnosis, &redactor))
    }

    /// The machine itself: runtimes the catalog's servers need, the secret store, the login
    /// shell's PATH.
    pub async fn doctor_machine(&self) -> Vec<FindingView> {
        let empty = crate::catalog::Catalog::default();
        let catalog = self.catalog.as_ref().unwrap_or(&empty);
        let plain = Redactor::new(Vec::<String>::new());
        doctor::environment::check(&self.servers, catalog)
            .await
            .iter()
            .map(|f| finding_view(f, &plain))
            .collect()
    }
}
