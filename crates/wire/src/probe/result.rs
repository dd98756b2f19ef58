//! The result of a test connection: the JSON shape that the CLI prints with `--json`, the app
//! receives over IPC and the health store keeps. Its keys are a contract.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::TransportKind;
use crate::connect::Era;
pub use crate::failure::{ErrorKind, Failure};

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
    #[serde(rename = "discover")]
    Discover,
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
            Stage::Discover => "discover",
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
            Stage::Discover => "during the MCP handshake (server/discover)",
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

/// The caching hints of one result a modern server gave (`server/discover`, `tools/list`, ...:
/// for a paginated list, those of its first page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheHint {
    /// The method whose result carried them.
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
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
    /// The tool's interactive UI (MCP Apps): the `ui://` resource its `_meta` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<String>,
}

/// The `ui://` resource a tool definition names as its interactive UI (MCP Apps:
/// `_meta.ui.resourceUri`, or the earlier flat `_meta["ui/resourceUri"]`).
pub fn ui_resource_of(tool: &Value) -> Option<String> {
    let meta = tool.get("_meta")?;
    meta.pointer("/ui/resourceUri")
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
        .filter(|uri| uri.starts_with("ui://"))
        .map(str::to_owned)
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
    /// The server was given credentials that only a credential check proves right: a secret
    /// in its environment or headers, or a key, token or password auth. Set by the use case
    /// that ran the test (OAuth tokens do not count: the provider's sign-in checked the user).
    #[serde(default)]
    pub credentials_sent: bool,
    /// `serverInfo` from the handshake; `null` when the test did not get that far.
    #[serde(default)]
    pub server: Option<ServerIdentity>,
    /// The negotiated protocol version, of either era.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// `modern` (2026-07-28: `server/discover`, per-request `_meta`) or `legacy`
    /// (`initialize`); `null` when the test did not get that far.
    #[serde(default)]
    pub era: Option<Era>,
    /// The protocol versions the server listed (a modern server's `supportedVersions`, or the
    /// `supported` list of an unsupported-version error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_versions: Vec<String>,
    /// The caching hints (`ttlMs`, `cacheScope`) of the server's results. Kept for display:
    /// a test itself always lists afresh.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_hints: Vec<CacheHint>,
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
    pub pin_state: Option<crate::pin_report::PinState>,
    /// What changed since the approved pin, when `pin_state` is `tools_changed` or `unapproved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_changes: Option<crate::pin_report::ToolChanges>,
    /// Tool descriptions that look like instructions aimed at the model (also in `warnings`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_flags: Vec<crate::pin_report::Flag>,
    /// What the server's sandbox let it touch, in one sentence (installed stdio servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The authorization server (its issuer) whose OAuth token the test used, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_server: Option<String>,
}

impl TestResult {
    /// An empty result for `transport`, to be filled in by the stages.
    pub fn new(transport: TransportKind) -> Self {
        TestResult {
            ok: false,
            verification: Verification::ConnectivityOnly,
            credentials_sent: false,
            server: None,
            protocol_version: None,
            era: None,
            supported_versions: vec![],
            cache_hints: vec![],
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
            sandbox: None,
            authorization_server: None,
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
