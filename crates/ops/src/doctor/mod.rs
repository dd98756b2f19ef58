//! The environment doctor: why a server does not work here, and what to do about it.
//!
//! For each server it checks what a test alone cannot explain and then runs the server once
//! through the probe (the same [`checks::test_installed`] every test goes through), turning the
//! first failure into findings with stable codes, a severity, a message and a fix:
//!
//! - [`command`]: the command on this process's PATH and on the login shell's PATH (a command
//!   only the login shell finds is missed by apps started from the desktop), the runtime
//!   (`node`/`npx`, `python`/`uv`/`uvx`, `docker` and its daemon, `#!` interpreters);
//! - [`stdio`]: what a local server's failure means (logs on stdout, a missing environment
//!   variable named in its stderr);
//! - [`remote`]: DNS, TLS (the certificate problem named), the endpoint shape (an SSE URL
//!   configured as streamable HTTP), authorization (OAuth or a token);
//! - [`environment`]: the machine before any server: runtimes and the secret store;
//! - [`deps`]: a package launch broken by its dependencies (an `ImportError` after a major
//!   release, `requires-python`, `EBADENGINE`), fixed by pinning them to the version's date.

pub mod command;
pub mod deps;
pub mod environment;
pub mod remote;
pub mod stdio;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::checks;
use crate::config::{ServerConfig, TransportKind};
use crate::connect::Era;
use crate::manage::{ManageError, Servers};
use crate::pinning::PinState;
use crate::probe::{ErrorKind, Stage, TestResult, Verification};

/// How many of a failed server's last stderr lines a finding quotes.
const STDERR_LINES_SHOWN: usize = 3;

/// How bad a finding is. Any `error` makes `plugboard doctor` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One thing the doctor found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable code, e.g. `command.not_found`, `remote.sse_only`.
    pub code: String,
    pub severity: Severity,
    pub message: String,
    /// What to do; empty for purely informative findings.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fix: String,
    /// The probe stage that failed, for findings that come from the test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
}

impl Finding {
    pub fn new(
        code: &str,
        severity: Severity,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Finding {
            code: code.to_owned(),
            severity,
            message: message.into(),
            fix: fix.into(),
            stage: None,
        }
    }

    pub fn error(code: &str, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding::new(code, Severity::Error, message, fix)
    }

    pub fn warning(code: &str, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding::new(code, Severity::Warning, message, fix)
    }

    pub fn info(code: &str, message: impl Into<String>) -> Self {
        Finding::new(code, Severity::Info, message, "")
    }

    fn at(mut self, stage: Option<Stage>) -> Self {
        self.stage = stage;
        self
    }
}

/// What the test run by the doctor said, in short.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestSummary {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// The first stage that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_stage: Option<Stage>,
    pub tools: usize,
    /// The protocol era and version the test found (either era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<Era>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

/// The diagnosis of one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub name: String,
    pub transport: TransportKind,
    /// No error-level finding.
    pub ok: bool,
    pub findings: Vec<Finding>,
    /// `null` when the doctor did not run the server (a check before it already failed).
    pub test: Option<TestSummary>,
}

/// The whole `plugboard doctor` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub ok: bool,
    pub servers: Vec<Diagnosis>,
}

/// The first stage of a result that failed.
pub fn failed_stage(result: &TestResult) -> Option<Stage> {
    result.stages.iter().find(|s| !s.ok).map(|s| s.name)
}

/// Diagnose installed server `name`: checks, then one run through the probe.
pub async fn diagnose(
    servers: &Servers,
    catalog: &Catalog,
    name: &str,
    timeout: Option<Duration>,
) -> Result<Diagnosis, ManageError> {
    let server = servers.config().load()?.server(name)?;
    let mut findings = vec![];
    let proceed = match (&server.launch, server.transport) {
        (Some(launch), _) => {
            // A package Plugboard starts itself: its command is what can be missing.
            let mut local = ServerConfig::stdio(launch.command.clone(), launch.args.clone());
            local.env = launch.env.clone();
            local.cwd = launch.cwd.clone();
            command::check(&local, &mut findings).await
        }
        (None, TransportKind::Stdio) => command::check(&server, &mut findings).await,
        (None, _) => remote::preflight(&server, &mut findings).await,
    };
    let mut test = None;
    if proceed {
        let result = checks::test_installed(servers, catalog, name, timeout, |_| {}).await?;
        explain(name, &server, &result, &mut findings).await;
        if let Some(denial) = crate::sandbox::denial_in(name, &result) {
            // What the sandbox refused explains the failure better than the probe's kind.
            findings.retain(|f| !f.code.starts_with("probe."));
            let mut finding = Finding::error("sandbox.denied", denial.what, denial.fix);
            finding.stage = failed_stage(&result);
            findings.push(finding);
        } else if let Some(sandbox) = &result.sandbox {
            let finding = if sandbox.starts_with("Not sandboxed") {
                Finding::warning(
                    "sandbox.not_enforced",
                    sandbox.clone(),
                    "the server runs with all of your rights; a kernel with Landlock (Linux \
                     5.13 or later, enabled at boot) enforces its sandbox",
                )
            } else {
                Finding::info("sandbox.state", format!("sandbox: {sandbox}"))
            };
            findings.push(finding);
        }
        if let Some(rot) = deps::explain(name, &server, &result, servers.config().dir()) {
            // The dependencies' story explains the failure better than the probe's kind.
            findings.retain(|f| !f.code.starts_with("probe."));
            findings.push(rot.at(failed_stage(&result)));
        }
        test = Some(TestSummary {
            ok: result.ok,
            error_kind: result.error_kind,
            failed_stage: failed_stage(&result),
            tools: result.tools.len(),
            era: result.era,
            protocol_version: result.protocol_version.clone(),
        });
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    Ok(Diagnosis {
        name: name.to_owned(),
        transport: server.transport,
        ok: !findings.iter().any(|f| f.severity == Severity::Error),
        findings,
        test,
    })
}

/// Diagnose `name`, or every installed server (in config order) when `None`.
pub async fn diagnose_all(
    servers: &Servers,
    catalog: &Catalog,
    name: Option<&str>,
    timeout: Option<Duration>,
) -> Result<Report, ManageError> {
    let names: Vec<String> = match name {
        Some(name) => vec![name.to_owned()],
        None => servers
            .config()
            .load()?
            .servers()
            .into_iter()
            .map(|(n, _)| n)
            .collect(),
    };
    let results =
        futures::future::join_all(names.iter().map(|n| diagnose(servers, catalog, n, timeout)))
            .await;
    let mut out = vec![];
    for (name, result) in names.iter().zip(results) {
        match result {
            Ok(diagnosis) => out.push(diagnosis),
            Err(err) if name.as_str() == names[0] && names.len() == 1 => return Err(err),
            Err(err) => out.push(Diagnosis {
                name: name.clone(),
                transport: TransportKind::Stdio,
                ok: false,
                findings: vec![Finding::error(
                    "config.invalid",
                    err.to_string(),
                    "fix or remove this entry in the config file",
                )],
                test: None,
            }),
        }
    }
    Ok(Report {
        ok: out.iter().all(|d| d.ok),
        servers: out,
    })
}

/// Findings from a test result: the specific explanations first, the probe's own
/// classification and hint otherwise.
async fn explain(name: &str, server: &ServerConfig, result: &TestResult, out: &mut Vec<Finding>) {
    let stage = failed_stage(result);
    let specific = if result.transport == TransportKind::Stdio || server.launch.is_some() {
        stdio::explain(name, server, result)
    } else {
        remote::explain(name, server, result).await
    };
    if result.ok {
        out.extend(specific);
        match result.pin_state {
            Some(PinState::ToolsChanged) => out.push(Finding::warning(
                "tools.changed",
                format!(
                    "the server's tools changed since you approved them: {}",
                    result
                        .tool_changes
                        .as_ref()
                        .map(|c| c.summary())
                        .unwrap_or_default()
                ),
                format!("review with `plugboard diff {name}`, then `plugboard approve {name}`"),
            )),
            Some(PinState::Unapproved) => out.push(Finding::warning(
                "tools.unapproved",
                "the server's tools are not approved (some are flagged)",
                format!("review with `plugboard diff {name}`, then `plugboard approve {name}`"),
            )),
            _ => {}
        }
        for flag in &result.tool_flags {
            out.push(Finding::warning(
                &format!("tools.flag.{}", flag.code),
                flag.warning(),
                "read the tool's description before approving it; a description that talks \
                 to the model can make it act against you",
            ));
        }
        let what = if result.credentials_sent && result.verification != Verification::Verified {
            "the server started and answered (its credentials were not checked)"
        } else {
            "the server works"
        };
        out.push(Finding::info(
            "probe.ok",
            format!(
                "{what}: {} over {}",
                match result.tools.len() {
                    1 => "1 tool".to_owned(),
                    n => format!("{n} tools"),
                },
                result.transport.label()
            ),
        ));
        return;
    }
    if specific.iter().any(|f| f.severity == Severity::Error) {
        out.extend(specific.into_iter().map(|f| {
            let stage = f.stage.or(stage);
            f.at(stage)
        }));
        return;
    }
    out.extend(specific);
    let kind = result.error_kind.map(|k| k.as_str()).unwrap_or("unknown");
    // The doctor shows no stderr below its findings: the last lines go into the message.
    let mut message = result.error.clone().unwrap_or_default();
    let tail: Vec<&str> = result
        .stderr_tail
        .as_deref()
        .unwrap_or("")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if !tail.is_empty() {
        let last = &tail[tail.len().saturating_sub(STDERR_LINES_SHOWN)..];
        message.push_str(&format!("; its last stderr lines: {}", last.join(" | ")));
    }
    let fix = crate::launch_failure::without_stderr_pointer(result.hint.as_deref().unwrap_or(""));
    out.push(Finding::error(&format!("probe.{kind}"), message, fix).at(stage));
}
