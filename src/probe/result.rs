//! The result of a test connection: the JSON shape that the CLI prints with `--json`, the app
//! receives over IPC and the health store keeps. Its keys are a contract (DESIGN.md §5).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::TransportKind;

/// Why a test failed, in the words of DESIGN.md §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The configuration cannot be used as it is (missing secret, keyring unavailable, bad URL).
    Config,
    /// The command was not found or is not executable.
    Spawn,
    /// The process ended (before the handshake, or in the middle of the test).
    Exited,
    /// The overall deadline passed.
    Timeout,
    /// Connection refused, DNS failure, TLS failure.
    Connection,
    /// An unexpected HTTP status or redirect.
    Http,
    /// 401/403, or the server needs OAuth.
    Unauthorized,
    /// The catalog's credential probe failed.
    Credentials,
    /// Not MCP: logs on stdout, bad JSON-RPC, unsupported protocol version, oversized message.
    Protocol,
    /// A JSON-RPC error on a required method.
    Server,
}

impl ErrorKind {
    /// The name used in JSON (`"config"`, `"spawn"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::Spawn => "spawn",
            ErrorKind::Exited => "exited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Http => "http",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Credentials => "credentials",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Server => "server",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A classified failure: what went wrong and what the user should do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    /// What happened, in one or two sentences.
    pub error: String,
    /// What to do about it.
    pub hint: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, error: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind,
            error: error.into(),
            hint: hint.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.error)
    }
}

/// How far the test proved that the server works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verification {
    /// The catalog's credential probe ran and passed.
    Verified,
    /// The server answered, but no credential probe ran.
    ConnectivityOnly,
}

/// The stages of a test, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Stage {
    #[serde(rename = "resolve")]
    Resolve,
    #[serde(rename = "connect")]
    Connect,
    #[serde(rename = "initialize")]
    Initialize,
    #[serde(rename = "tools/list")]
    ToolsList,
    #[serde(rename = "resources/list")]
    ResourcesList,
    #[serde(rename = "prompts/list")]
    PromptsList,
    #[serde(rename = "credential_probe")]
    CredentialProbe,
    #[serde(rename = "close")]
    Close,
}

impl Stage {
    /// The stage's name in JSON and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Resolve => "resolve",
            Stage::Connect => "connect",
            Stage::Initialize => "initialize",
            Stage::ToolsList => "tools/list",
            Stage::ResourcesList => "resources/list",
            Stage::PromptsList => "prompts/list",
            Stage::CredentialProbe => "credential_probe",
            Stage::Close => "close",
        }
    }

    /// How the stage reads in a sentence ("during the handshake", "during tools/list").
    pub fn describe(self) -> &'static str {
        match self {
            Stage::Resolve => "while resolving the configuration",
            Stage::Connect => "while connecting",
            Stage::Initialize => "during the MCP handshake (initialize)",
            Stage::ToolsList => "during tools/list",
            Stage::ResourcesList => "during resources/list",
            Stage::PromptsList => "during prompts/list",
            Stage::CredentialProbe => "during the credential probe",
            Stage::Close => "while closing",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Live progress: a stage started or finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StageEvent {
    Started { stage: Stage },
    Finished { stage: Stage, ok: bool, ms: u64 },
}

/// One finished stage in the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageReport {
    pub name: Stage,
    pub ok: bool,
    pub ms: u64,
}

/// `serverInfo` from the handshake.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
}

/// One tool as the server listed it, plus the name an agent sees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Value,
    #[serde(default)]
    pub annotations: Option<Value>,
    pub adapted_name: String,
}

/// One resource from `resources/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// One prompt from `prompts/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<Value>,
}

/// The whole answer of a test connection. Every string in it has been through the redactor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    pub ok: bool,
    pub verification: Verification,
    /// `serverInfo` from the handshake; `null` when the test did not get that far.
    #[serde(default)]
    pub server: Option<ServerIdentity>,
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// The transport actually used (for `auto`, the one that worked or was tried last).
    pub transport: TransportKind,
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    #[serde(default)]
    pub resources: Vec<ResourceInfo>,
    #[serde(default)]
    pub prompts: Vec<PromptInfo>,
    #[serde(default)]
    pub stages: Vec<StageReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The last lines the process wrote to stderr (stdio servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// Things worth knowing that did not fail the test (e.g. no credential probe could run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The `instructions` the server gave in its `initialize` answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How the tools compare with the approved pin (installed servers only; see `pinning`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin_state: Option<crate::pinning::PinState>,
    /// What changed since the approved pin, when `pin_state` is `tools_changed` or `unapproved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_changes: Option<crate::pinning::ToolChanges>,
    /// Tool descriptions that look like instructions aimed at the model (also in `warnings`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_flags: Vec<crate::pinning::Flag>,
}

impl TestResult {
    /// An empty result for `transport`, to be filled in by the stages.
    pub fn new(transport: TransportKind) -> Self {
        TestResult {
            ok: false,
            verification: Verification::ConnectivityOnly,
            server: None,
            protocol_version: None,
            transport,
            tools: vec![],
            resources: vec![],
            prompts: vec![],
            stages: vec![],
            error_kind: None,
            error: None,
            hint: None,
            stderr_tail: None,
            warnings: vec![],
            instructions: None,
            pin_state: None,
            tool_changes: None,
            tool_flags: vec![],
        }
    }

    /// A failed result, already classified.
    pub fn failed(transport: TransportKind, failure: Failure, stages: Vec<StageReport>) -> Self {
        let mut result = TestResult::new(transport);
        result.stages = stages;
        result.set_failure(failure);
        result
    }

    /// Mark the result as failed with `failure` (the first failure wins).
    pub fn set_failure(&mut self, failure: Failure) {
        self.ok = false;
        if self.error_kind.is_none() {
            self.error_kind = Some(failure.kind);
            self.error = Some(failure.error);
            self.hint = Some(failure.hint);
        }
    }

    /// The failure, if the test failed.
    pub fn failure(&self) -> Option<Failure> {
        Some(Failure {
            kind: self.error_kind?,
            error: self.error.clone().unwrap_or_default(),
            hint: self.hint.clone().unwrap_or_default(),
        })
    }

    /// The report of `stage`, if it ran.
    pub fn stage(&self, stage: Stage) -> Option<&StageReport> {
        self.stages.iter().find(|s| s.name == stage)
    }
}
