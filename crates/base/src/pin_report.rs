//! What a test result says about a server's tools next to their approved pin: the pin state,
//! the changes (with readable line and JSON-path diffs) and the flags on descriptions. Plain
//! data shared by `probe`, whose results carry it, and `pinning`, which computes it; kept here,
//! below both, so that data flows one way.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a test's tools compare with the pin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinState {
    /// First successful test: the tools were pinned now (nothing was flagged).
    Pinned,
    /// The tools are exactly the approved ones.
    Approved,
    /// Tools were added, removed or changed since the approval: review with `plugboard diff`.
    ToolsChanged,
    /// Nothing approved yet: the first sight had flagged tools, which need a review.
    Unapproved,
}

impl PinState {
    pub fn as_str(self) -> &'static str {
        match self {
            PinState::Pinned => "pinned",
            PinState::Approved => "approved",
            PinState::ToolsChanged => "tools_changed",
            PinState::Unapproved => "unapproved",
        }
    }

    /// Whether the tools may be used as they are.
    pub fn is_trusted(self) -> bool {
        matches!(self, PinState::Pinned | PinState::Approved)
    }
}

/// One changed tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolChange {
    pub name: String,
    /// Which of `description`, `input_schema`, `annotations` changed.
    pub fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub description_diff: Vec<DiffLine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_diff: Vec<PathChange>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations_diff: Vec<PathChange>,
}

/// What changed between the approved pin and the tools seen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<ToolChange>,
    /// The line diff of the server's instructions, when they changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions_diff: Vec<DiffLine>,
}

impl ToolChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.instructions_diff.is_empty()
    }

    /// One line: "1 added (x), 1 changed (echo: description)".
    pub fn summary(&self) -> String {
        let mut parts = vec![];
        if !self.added.is_empty() {
            parts.push(format!(
                "{} added ({})",
                self.added.len(),
                self.added.join(", ")
            ));
        }
        if !self.removed.is_empty() {
            parts.push(format!(
                "{} removed ({})",
                self.removed.len(),
                self.removed.join(", ")
            ));
        }
        if !self.changed.is_empty() {
            let items: Vec<String> = self
                .changed
                .iter()
                .map(|c| format!("{}: {}", c.name, c.fields.join(", ")))
                .collect();
            parts.push(format!(
                "{} changed ({})",
                self.changed.len(),
                items.join("; ")
            ));
        }
        if !self.instructions_diff.is_empty() {
            parts.push("the server instructions changed".to_owned());
        }
        parts.join(", ")
    }
}

/// One line of a line diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub op: LineOp,
    pub text: String,
}

/// Whether a line is unchanged, only in the approved text, or only in the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineOp {
    Context,
    Removed,
    Added,
}

impl LineOp {
    /// The usual one-character marker (` `, `-`, `+`).
    pub fn marker(self) -> char {
        match self {
            LineOp::Context => ' ',
            LineOp::Removed => '-',
            LineOp::Added => '+',
        }
    }
}

/// One difference between two JSON values, at a path like `$.properties.path.type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathChange {
    pub path: String,
    pub change: PathOp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathOp {
    Added,
    Removed,
    Changed,
}

/// How much a finding of the scanner matters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing (a very long description).
    Info,
    /// Look before trusting it (a sensitive path mentioned, a value shaped like a secret).
    #[default]
    Warning,
    /// Aimed at the model or hidden from the user: the tool stays disabled until approved.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// Where in a text a finding is: character offsets, end excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// One thing about a tool, prompt or resource that a person should look at before trusting it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// The tool's name, `(server instructions)` for the server's instructions, `(prompt NAME)`
    /// or `(resource URI)`.
    pub tool: String,
    /// The kind: `hidden_instruction`, `exfiltration`, `shadowing`, `sensitive_path`,
    /// `embedded_secret`, `invisible_unicode`, `control_characters` or `long_description`.
    pub code: String,
    pub detail: String,
    #[serde(default)]
    pub severity: Severity,
    /// Which text: `description`, `name`, `instructions` or `input_schema` with its JSON path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub place: String,
    /// Where in that text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

impl Flag {
    /// The flag as one warning line.
    pub fn warning(&self) -> String {
        format!(
            "tool `{}` is flagged ({}, {}): {}",
            self.tool,
            self.code,
            self.severity.as_str(),
            self.detail
        )
    }

    pub fn is_critical(&self) -> bool {
        self.severity == Severity::Critical
    }
}
