//! Tool pinning for the app: the pin state of an installed server (on its card), the readable
//! diff of its tools against the approval (the review dialog) and approving them. All logic is
//! in [`crate::pinning`]; this module only shapes it for IPC. Tool texts come from redacted test
//! results, so no secret value is in them.

use serde::Serialize;

use super::{Api, ApiError, ErrorCode};
use crate::pinning::{
    self, DiffLine, DiffReport, Flag, LineOp, PathChange, PathOp, PinError, PinStatus, PinStore,
};

/// How the last seen tools of a server compare with the ones the user approved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PinStateView {
    /// Never tested successfully: nothing pinned yet.
    Unpinned,
    /// The tools are the approved ones.
    Approved,
    /// Tools were added, removed or changed since the approval.
    ToolsChanged,
    /// Nothing approved yet: the first sight had flagged tools.
    Unapproved,
}

/// One line of a text diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct DiffLineView {
    /// `context`, `removed` or `added`.
    pub op: String,
    pub text: String,
}

/// One changed path of a JSON value (an input schema, annotations). Values as compact JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct PathChangeView {
    /// `$.properties.query.description`.
    pub path: String,
    /// `added`, `removed` or `changed`.
    pub change: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// One tool whose definition changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ToolChangeView {
    pub name: String,
    /// Which parts changed (`description`, `input_schema`, `annotations`, …).
    pub fields: Vec<String>,
    pub description_diff: Vec<DiffLineView>,
    pub schema_diff: Vec<PathChangeView>,
    pub annotations_diff: Vec<PathChangeView>,
}

/// Something in a tool a person should look at before trusting it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ToolFlagView {
    /// The tool's name, or `(server instructions)`.
    pub tool: String,
    /// `hidden_instruction`, `exfiltration`, `shadowing`, `sensitive_path`, `embedded_secret`,
    /// `invisible_unicode`, `control_characters` or `long_description`.
    pub code: String,
    pub detail: String,
    /// `critical` (the tool stays off until approved), `warning` or `info`.
    pub severity: String,
}

/// How the last seen tools of a server differ from the approved ones (the review dialog).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolDiff {
    pub name: String,
    pub state: PinStateView,
    /// Unix milliseconds.
    pub approved_at: Option<f64>,
    pub observed_at: Option<f64>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<ToolChangeView>,
    pub instructions_diff: Vec<DiffLineView>,
    pub flags: Vec<ToolFlagView>,
}

fn state_of(text: &str) -> PinStateView {
    match text {
        "approved" => PinStateView::Approved,
        "tools_changed" => PinStateView::ToolsChanged,
        "unapproved" => PinStateView::Unapproved,
        _ => PinStateView::Unpinned,
    }
}

fn lines(diff: &[DiffLine]) -> Vec<DiffLineView> {
    diff.iter()
        .map(|l| DiffLineView {
            op: match l.op {
                LineOp::Context => "context",
                LineOp::Removed => "removed",
                LineOp::Added => "added",
            }
            .into(),
            text: l.text.clone(),
        })
        .collect()
}

fn paths(diff: &[PathChange]) -> Vec<PathChangeView> {
    diff.iter()
        .map(|c| PathChangeView {
            path: c.path.clone(),
            change: match c.change {
                PathOp::Added => "added",
                PathOp::Removed => "removed",
                PathOp::Changed => "changed",
            }
            .into(),
            before: c.before.as_ref().map(|v| v.to_string()),
            after: c.after.as_ref().map(|v| v.to_string()),
        })
        .collect()
}

fn flag(f: &Flag) -> ToolFlagView {
    ToolFlagView {
        tool: f.tool.clone(),
        code: f.code.clone(),
        detail: f.detail.clone(),
        severity: f.severity.as_str().to_owned(),
    }
}

impl From<&DiffReport> for ToolDiff {
    fn from(r: &DiffReport) -> ToolDiff {
        ToolDiff {
            name: r.name.clone(),
            state: state_of(&r.state),
            approved_at: r.approved_at_ms.map(|t| t as f64),
            observed_at: r.observed_at_ms.map(|t| t as f64),
            added: r.changes.added.clone(),
            removed: r.changes.removed.clone(),
            changed: r
                .changes
                .changed
                .iter()
                .map(|c| ToolChangeView {
                    name: c.name.clone(),
                    fields: c.fields.clone(),
                    description_diff: lines(&c.description_diff),
                    schema_diff: paths(&c.schema_diff),
                    annotations_diff: paths(&c.annotations_diff),
                })
                .collect(),
            instructions_diff: lines(&r.changes.instructions_diff),
            flags: r.flags.iter().map(flag).collect(),
        }
    }
}

fn pin_error(err: PinError) -> ApiError {
    ApiError::new(ErrorCode::Pin, err.to_string())
}

impl Api {
    fn pins(&self, name: &str) -> Result<PinStore, ApiError> {
        self.servers.config().load()?.server(name)?;
        Ok(PinStore::in_config_dir(self.servers.config().dir()))
    }

    /// The pin state of `name` for its card (`None` when its pin file cannot be read).
    pub(super) fn pin_state(&self, name: &str) -> Option<PinStateView> {
        match pinning::status(self.servers.config().dir(), name).ok()? {
            PinStatus::Unpinned => Some(PinStateView::Unpinned),
            PinStatus::Approved => Some(PinStateView::Approved),
            PinStatus::Changed(d) if d.first_seen => Some(PinStateView::Unapproved),
            PinStatus::Changed(_) => Some(PinStateView::ToolsChanged),
        }
    }

    /// How the last seen tools of `name` differ from the approved ones, with their flags.
    pub fn tool_diff(&self, name: &str) -> Result<ToolDiff, ApiError> {
        let report = self.pins(name)?.report(name).map_err(pin_error)?;
        Ok(ToolDiff::from(&report))
    }

    /// Approve the last seen tools of `name` (what `tool_diff` showed, not a fresh listing).
    /// Returns the diff afterwards (state `approved`, flags kept as notes).
    pub fn approve_tools(&self, name: &str) -> Result<ToolDiff, ApiError> {
        let store = self.pins(name)?;
        store.approve(name).map_err(pin_error)?;
        let report = store.report(name).map_err(pin_error)?;
        Ok(ToolDiff::from(&report))
    }
}
