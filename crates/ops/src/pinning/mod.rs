//! Tool pinning (trust on first use, then review every change).
//!
//! The first successful test of an installed server records a fingerprint of each tool (name,
//! description, input schema, annotations: canonical JSON hashed with SHA-256, with the JSON
//! kept so a diff can be shown) and of the server's `instructions`, in
//! `<config dir>/pins/<name>.json`. Every later test or health check compares what the server
//! lists now with the approved pin: added, removed and changed tools are reported, and the
//! server stays in the `tools_changed` state until `plugboard approve NAME` (or
//! [`PinStore::approve`]) accepts the last observed tools. A first sight with flagged
//! descriptions (see [`flags`]) is recorded but not approved.
//!
//! [`status`] answers `Approved | Unpinned | Changed(diff)` from the stored pin, and
//! [`compare_live`] compares tools seen right now (for the gateway, which serves no server
//! whose tools changed since their approval) without writing anything.

pub mod diff;
pub mod flags;

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use diff::{DiffLine, LineOp, PathChange, PathOp, json_diff, line_diff};
pub use flags::Flag;

pub use crate::pin_report::{PinState, ToolChange, ToolChanges};

use crate::clock::now_ms;
use crate::config::Review;
use crate::probe::{TestResult, ToolInfo};

/// The version of the pin file format.
pub const PIN_FORMAT: u32 = 1;

/// One pinned tool: its canonical definition and that definition's SHA-256.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinnedTool {
    pub name: String,
    pub sha256: String,
    /// `{annotations, description, inputSchema, name}` with keys sorted at every level.
    pub definition: Value,
}

impl PinnedTool {
    fn description(&self) -> Option<&str> {
        self.definition.get("description").and_then(Value::as_str)
    }
}

/// What a server listed at one moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub observed_at_ms: u64,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default)]
    pub instructions_sha256: Option<String>,
    pub tools: Vec<PinnedTool>,
}

impl Snapshot {
    /// The snapshot of `tools` and `instructions`.
    pub fn of(tools: &[ToolInfo], instructions: Option<&str>) -> Snapshot {
        let mut pinned: Vec<PinnedTool> = tools.iter().map(pin_tool).collect();
        pinned.sort_by(|a, b| a.name.cmp(&b.name));
        Snapshot {
            observed_at_ms: now_ms(),
            instructions: instructions.map(str::to_owned),
            instructions_sha256: instructions.map(|i| sha256_hex(i.as_bytes())),
            tools: pinned,
        }
    }

    fn tool(&self, name: &str) -> Option<&PinnedTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every flag of these tools and instructions.
    pub fn flags(&self) -> Vec<Flag> {
        let mut out = vec![];
        for tool in &self.tools {
            let schema = tool
                .definition
                .get("inputSchema")
                .cloned()
                .unwrap_or(Value::Null);
            flags::scan_tool(&tool.name, tool.description(), &schema, &mut out);
        }
        if let Some(instructions) = &self.instructions {
            flags::scan_text(
                flags::INSTRUCTIONS,
                "the instructions",
                instructions,
                &mut out,
            );
        }
        out
    }
}

/// The pin file of one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinFile {
    pub format: u32,
    pub name: String,
    /// The approved tools; `None` until something was approved.
    pub approved: Option<Snapshot>,
    #[serde(default)]
    pub approved_at_ms: Option<u64>,
    /// What the last successful test saw.
    pub observed: Snapshot,
    /// The findings on what it saw (the scanner's, with the ones that need the other installed
    /// servers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_flags: Vec<Flag>,
    /// Tools a critical finding holds disabled: flagged, and not as approved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<String>,
}

impl PinFile {
    /// The tools of the observed snapshot that a critical finding holds: every flagged one
    /// whose definition is not the approved one.
    fn hold(&mut self) {
        let approved = self.approved.as_ref();
        let mut held: Vec<String> = self
            .observed_flags
            .iter()
            .filter(|f| f.is_critical())
            .filter_map(|f| self.observed.tool(&f.tool))
            .filter(|tool| approved.and_then(|a| a.tool(&tool.name)) != Some(*tool))
            .map(|tool| tool.name.clone())
            .collect();
        held.sort();
        held.dedup();
        self.held = held;
    }

    /// The findings on the observed tools (computed again for a file written before they were
    /// kept).
    fn flags(&self) -> Vec<Flag> {
        if self.observed_flags.is_empty() {
            self.observed.flags()
        } else {
            self.observed_flags.clone()
        }
    }
}

/// The stored verdict on a server's tools.
#[derive(Clone, Debug, PartialEq)]
pub enum PinStatus {
    /// Never tested successfully: nothing pinned.
    Unpinned,
    /// The last observed tools are the approved ones.
    Approved,
    /// The last observed tools differ from the approved ones (or nothing is approved yet).
    Changed(PinDiff),
}

/// What differs from the approval, with the flags of the tools seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinDiff {
    /// Nothing was ever approved (every tool counts as added).
    pub first_seen: bool,
    pub changes: ToolChanges,
    pub flags: Vec<Flag>,
}

impl PinDiff {
    /// The tools that must not be exposed until approved (added or changed).
    pub fn unapproved_tools(&self) -> Vec<&str> {
        self.changes
            .added
            .iter()
            .map(String::as_str)
            .chain(self.changes.changed.iter().map(|c| c.name.as_str()))
            .collect()
    }

    /// Whether the change can wait for a review without holding the server back: something was
    /// approved before, the instructions are as approved, and every added or changed tool is
    /// switched off (`enabled` says whether a tool is on), so no client sees it meanwhile.
    pub fn only_in_switched_off_tools(&self, enabled: impl Fn(&str) -> bool) -> bool {
        !self.first_seen
            && self.changes.instructions_diff.is_empty()
            && self.unapproved_tools().iter().all(|tool| !enabled(tool))
    }
}

/// The `plugboard diff` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffReport {
    pub name: String,
    /// `unpinned`, `approved`, `tools_changed` or `unapproved`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at_ms: Option<u64>,
    pub changes: ToolChanges,
    pub flags: Vec<Flag>,
}

/// Why the pin store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot read or write the pin of `{name}` ({path}): {source}")]
    Io {
        name: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the pin file of `{name}` ({path}) is damaged ({detail}); it was kept as is. Delete it \
         to pin the server's tools again on its next test"
    )]
    Corrupt {
        name: String,
        path: PathBuf,
        detail: String,
    },
    #[error("nothing to approve for `{0}` yet: test it first (`plugboard test {0}`)")]
    NothingObserved(String),
}

/// What a test's tools mean for the pin: attached to the [`TestResult`].
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub state: PinState,
    pub changes: Option<ToolChanges>,
    pub flags: Vec<Flag>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` with the keys of every object sorted (serde_json here keeps insertion order).
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                out.insert(key.clone(), canonical(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The pinned form of one tool.
pub fn pin_tool(tool: &ToolInfo) -> PinnedTool {
    let definition = canonical(&serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": tool.annotations,
    }));
    let text = serde_json::to_string(&definition).unwrap_or_default();
    PinnedTool {
        name: tool.name.clone(),
        sha256: sha256_hex(text.as_bytes()),
        definition,
    }
}

/// The changes from `approved` (nothing, when `None`) to `current`.
pub fn compare(approved: Option<&Snapshot>, current: &Snapshot) -> ToolChanges {
    let mut changes = ToolChanges::default();
    let Some(approved) = approved else {
        changes.added = current.tools.iter().map(|t| t.name.clone()).collect();
        return changes;
    };
    for tool in &current.tools {
        match approved.tool(&tool.name) {
            None => changes.added.push(tool.name.clone()),
            Some(old) if old.sha256 != tool.sha256 => changes.changed.push(tool_change(old, tool)),
            Some(_) => {}
        }
    }
    for tool in &approved.tools {
        if current.tool(&tool.name).is_none() {
            changes.removed.push(tool.name.clone());
        }
    }
    if approved.instructions_sha256 != current.instructions_sha256 {
        changes.instructions_diff = line_diff(
            approved.instructions.as_deref().unwrap_or(""),
            current.instructions.as_deref().unwrap_or(""),
        );
        if changes.instructions_diff.is_empty() {
            // e.g. absent → empty: still a change worth a line.
            changes.instructions_diff.push(DiffLine {
                op: LineOp::Added,
                text: String::new(),
            });
        }
    }
    changes
}

fn tool_change(old: &PinnedTool, new: &PinnedTool) -> ToolChange {
    let field = |t: &PinnedTool, key: &str| t.definition.get(key).cloned().unwrap_or(Value::Null);
    let mut change = ToolChange {
        name: new.name.clone(),
        fields: vec![],
        description_diff: vec![],
        schema_diff: vec![],
        annotations_diff: vec![],
    };
    if old.description() != new.description() {
        change.fields.push("description".into());
        change.description_diff = line_diff(
            old.description().unwrap_or(""),
            new.description().unwrap_or(""),
        );
    }
    let (a, b) = (field(old, "inputSchema"), field(new, "inputSchema"));
    if a != b {
        change.fields.push("input_schema".into());
        change.schema_diff = json_diff(&a, &b);
    }
    let (a, b) = (field(old, "annotations"), field(new, "annotations"));
    if a != b {
        change.fields.push("annotations".into());
        change.annotations_diff = json_diff(&a, &b);
    }
    change
}

/// Pins, one file per server under `<config dir>/pins/`.
#[derive(Clone, Debug)]
pub struct PinStore {
    dir: PathBuf,
}

impl PinStore {
    /// The store inside a Plugboard config directory.
    pub fn in_config_dir(config_dir: &Path) -> Self {
        PinStore {
            dir: config_dir.join("pins"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    fn io(&self, name: &str, source: std::io::Error) -> PinError {
        PinError::Io {
            name: name.to_owned(),
            path: self.path(name),
            source,
        }
    }

    /// The pin file of `name`, if there is one.
    pub fn get(&self, name: &str) -> Result<Option<PinFile>, PinError> {
        let path = self.path(name);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(self.io(name, err)),
        };
        serde_json::from_slice::<PinFile>(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|file| {
                if file.format > PIN_FORMAT {
                    Err(format!(
                        "format {} is newer than this Plugboard",
                        file.format
                    ))
                } else {
                    Ok(file)
                }
            })
            .map(Some)
            .map_err(|detail| PinError::Corrupt {
                name: name.to_owned(),
                path,
                detail,
            })
    }

    fn write(&self, file: &PinFile) -> Result<(), PinError> {
        let name = &file.name;
        let text = serde_json::to_vec_pretty(file).map_err(|e| self.io(name, e.into()))?;
        plugboard_base::fs::write_private(&self.path(name), &text).map_err(|e| self.io(name, e))
    }

    fn lock(&self, name: &str) -> Result<File, PinError> {
        plugboard_base::fs::create_dir(&self.dir, true).map_err(|e| self.io(name, e))?;
        let file = plugboard_base::fs::open_lock_file(&self.dir.join(".lock"))
            .map_err(|e| self.io(name, e))?;
        file.lock().map_err(|e| self.io(name, e))?;
        Ok(file)
    }

    /// Record what a successful test of `name` listed and compare it with the approval. The
    /// first sight is approved at once unless something in it is flagged.
    pub fn observe(
        &self,
        name: &str,
        tools: &[ToolInfo],
        instructions: Option<&str>,
        more_flags: Vec<Flag>,
    ) -> Result<Observation, PinError> {
        let _lock = self.lock(name)?;
        let snapshot = Snapshot::of(tools, instructions);
        let mut flags = snapshot.flags();
        flags.extend(more_flags);
        let existing = self.get(name)?;
        let (file, state) = match existing {
            None if flags.is_empty() => (
                PinFile {
                    format: PIN_FORMAT,
                    name: name.to_owned(),
                    approved: Some(snapshot.clone()),
                    approved_at_ms: Some(snapshot.observed_at_ms),
                    observed: snapshot,
                    observed_flags: vec![],
                    held: vec![],
                },
                PinState::Pinned,
            ),
            None => (
                PinFile {
                    format: PIN_FORMAT,
                    name: name.to_owned(),
                    approved: None,
                    approved_at_ms: None,
                    observed: snapshot,
                    observed_flags: vec![],
                    held: vec![],
                },
                PinState::Unapproved,
            ),
            Some(mut file) => {
                file.observed = snapshot;
                let state = match &file.approved {
                    None => PinState::Unapproved,
                    Some(approved) if compare(Some(approved), &file.observed).is_empty() => {
                        PinState::Approved
                    }
                    Some(_) => PinState::ToolsChanged,
                };
                (file, state)
            }
        };
        let mut file = file;
        file.observed_flags = flags.clone();
        file.hold();
        self.write(&file)?;
        let changes = match state {
            PinState::ToolsChanged | PinState::Unapproved => {
                Some(compare(file.approved.as_ref(), &file.observed))
            }
            _ => None,
        };
        Ok(Observation {
            state,
            changes,
            flags,
        })
    }

    /// The stored verdict: the last observed tools against the approval.
    pub fn status(&self, name: &str) -> Result<PinStatus, PinError> {
        let Some(file) = self.get(name)? else {
            return Ok(PinStatus::Unpinned);
        };
        let changes = compare(file.approved.as_ref(), &file.observed);
        if file.approved.is_some() && changes.is_empty() {
            return Ok(PinStatus::Approved);
        }
        Ok(PinStatus::Changed(PinDiff {
            first_seen: file.approved.is_none(),
            changes,
            flags: file.flags(),
        }))
    }

    /// Compare tools seen right now with the approval, writing nothing (for `plugboard run`).
    pub fn compare_live(
        &self,
        name: &str,
        tools: &[ToolInfo],
        instructions: Option<&str>,
    ) -> Result<PinStatus, PinError> {
        let Some(file) = self.get(name)? else {
            return Ok(PinStatus::Unpinned);
        };
        let current = Snapshot::of(tools, instructions);
        let changes = compare(file.approved.as_ref(), &current);
        if file.approved.is_some() && changes.is_empty() {
            return Ok(PinStatus::Approved);
        }
        Ok(PinStatus::Changed(PinDiff {
            first_seen: file.approved.is_none(),
            changes,
            flags: current.flags(),
        }))
    }

    /// The `plugboard diff` document of `name`.
    pub fn report(&self, name: &str) -> Result<DiffReport, PinError> {
        let file = self.get(name)?;
        let (state, changes, flags) = match self.status(name)? {
            PinStatus::Unpinned => ("unpinned", ToolChanges::default(), vec![]),
            PinStatus::Approved => (
                "approved",
                ToolChanges::default(),
                file.as_ref().map(PinFile::flags).unwrap_or_default(),
            ),
            PinStatus::Changed(diff) if diff.first_seen => ("unapproved", diff.changes, diff.flags),
            PinStatus::Changed(diff) => ("tools_changed", diff.changes, diff.flags),
        };
        Ok(DiffReport {
            name: name.to_owned(),
            state: state.to_owned(),
            approved_at_ms: file.as_ref().and_then(|f| f.approved_at_ms),
            observed_at_ms: file.as_ref().map(|f| f.observed.observed_at_ms),
            changes,
            flags,
        })
    }

    /// Accept the last observed tools of `name` as its pin (what `plugboard diff` showed, not a
    /// fresh listing, so nothing can change between review and approval). Returns the number
    /// of tools approved.
    pub fn approve(&self, name: &str) -> Result<usize, PinError> {
        let _lock = self.lock(name)?;
        let mut file = self
            .get(name)?
            .ok_or_else(|| PinError::NothingObserved(name.to_owned()))?;
        file.approved = Some(file.observed.clone());
        file.approved_at_ms = Some(now_ms());
        file.hold();
        self.write(&file)?;
        Ok(file.observed.tools.len())
    }

    /// What the pin of `name` says about its tools: the approved names (`None` when nothing
    /// is approved) and the tools a critical finding holds, read without building the tools'
    /// definitions: `plugboard run` needs only the names.
    pub fn review(&self, name: &str) -> Result<Review, PinError> {
        #[derive(Deserialize)]
        struct Named {
            name: String,
        }
        #[derive(Deserialize)]
        struct Approved {
            tools: Vec<Named>,
        }
        #[derive(Deserialize)]
        struct Names {
            format: u32,
            approved: Option<Approved>,
            #[serde(default)]
            held: Vec<String>,
        }
        let path = self.path(name);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Review::default()),
            Err(err) => return Err(self.io(name, err)),
        };
        let corrupt = |detail: String| PinError::Corrupt {
            name: name.to_owned(),
            path: path.clone(),
            detail,
        };
        let names: Names = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        if names.format > PIN_FORMAT {
            return Err(corrupt(format!(
                "format {} is newer than this Plugboard",
                names.format
            )));
        }
        Ok(Review {
            approved: names
                .approved
                .map(|a| a.tools.into_iter().map(|t| t.name).collect()),
            held: names.held.into_iter().collect(),
        })
    }

    /// The tool names each other pinned server last listed (for the shadowing check).
    pub fn other_servers_tools(&self, except: &str) -> Vec<(String, Vec<String>)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return vec![];
        };
        let mut out: Vec<(String, Vec<String>)> = entries
            .flatten()
            .filter_map(|entry| {
                let file = entry
                    .file_name()
                    .to_str()?
                    .strip_suffix(".json")?
                    .to_owned();
                (file != except).then_some(file)
            })
            .filter_map(|name| {
                let pin = self.get(&name).ok()??;
                let tools = pin.observed.tools.iter().map(|t| t.name.clone()).collect();
                Some((name, tools))
            })
            .collect();
        out.sort();
        out
    }

    /// Move a pin when its server is renamed.
    pub fn rename(&self, old: &str, new: &str) {
        let Ok(Some(mut file)) = self.get(old) else {
            return;
        };
        file.name = new.to_owned();
        if self.write(&file).is_ok() {
            self.forget(old);
        }
    }

    /// Forget the pin of a removed server.
    pub fn forget(&self, name: &str) {
        let _ = fs::remove_file(self.path(name));
    }
}

/// The stored verdict on the tools of `name` in the config directory `config_dir`.
pub fn status(config_dir: &Path, name: &str) -> Result<PinStatus, PinError> {
    PinStore::in_config_dir(config_dir).status(name)
}

/// Tools seen now against the approval of `name` (nothing written).
pub fn compare_live(
    config_dir: &Path,
    name: &str,
    tools: &[ToolInfo],
    instructions: Option<&str>,
) -> Result<PinStatus, PinError> {
    PinStore::in_config_dir(config_dir).compare_live(name, tools, instructions)
}

/// The findings that the tools' own snapshot cannot give: on the prompts and resources the
/// server lists, and descriptions that talk about another installed server's tools.
fn more_flags(store: &PinStore, name: &str, result: &TestResult) -> Vec<Flag> {
    let mut out = vec![];
    for prompt in &result.prompts {
        if let Some(description) = &prompt.description {
            flags::scan_text(
                &format!("(prompt {})", prompt.name),
                "the description",
                description,
                &mut out,
            );
        }
    }
    for resource in &result.resources {
        if let Some(description) = &resource.description {
            flags::scan_text(
                &format!("(resource {})", resource.uri),
                "the description",
                description,
                &mut out,
            );
        }
    }
    let others = store.other_servers_tools(name);
    if !others.is_empty() {
        let own: std::collections::BTreeSet<String> =
            result.tools.iter().map(|t| t.name.clone()).collect();
        let others = flags::OtherServers {
            servers: &others,
            own: &own,
        };
        for tool in &result.tools {
            if let Some(description) = &tool.description {
                flags::scan_shadowing(
                    &tool.name,
                    "the description",
                    description,
                    &others,
                    &mut out,
                );
            }
        }
    }
    out
}

/// Compare a successful test of installed server `name` with its pin and attach the outcome
/// to `result` (state, changes, flags, warnings). A failed test is left alone.
pub fn attach(config_dir: &Path, name: &str, result: &mut TestResult) {
    if !result.ok {
        return;
    }
    let store = PinStore::in_config_dir(config_dir);
    let more = more_flags(&store, name, result);
    match store.observe(name, &result.tools, result.instructions.as_deref(), more) {
        Ok(obs) => {
            match obs.state {
                PinState::ToolsChanged => result.warnings.push(format!(
                    "TOOLS CHANGED since you approved them: {}. Review with `plugboard diff {name}` \
                     and accept with `plugboard approve {name}`",
                    obs.changes.as_ref().map(ToolChanges::summary).unwrap_or_default()
                )),
                PinState::Unapproved => result.warnings.push(format!(
                    "the tools of `{name}` are not approved: some are flagged. Review with \
                     `plugboard diff {name}` and accept with `plugboard approve {name}`"
                )),
                PinState::Pinned | PinState::Approved => {}
            }
            result.warnings.extend(obs.flags.iter().map(Flag::warning));
            result.pin_state = Some(obs.state);
            result.tool_changes = obs.changes;
            result.tool_flags = obs.flags;
        }
        Err(err) => result.warnings.push(format!("tool pinning: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> ToolInfo {
        ToolInfo {
            name: name.into(),
            description: Some(description.into()),
            input_schema: schema,
            annotations: None,
            adapted_name: format!("mcp__s__{name}"),
            ui: None,
        }
    }

    #[test]
    fn hashes_ignore_key_order() {
        let a = tool("t", "d", json!({"type":"object","properties":{}}));
        let mut b = a.clone();
        b.input_schema = serde_json::from_str(r#"{"properties":{},"type":"object"}"#).unwrap();
        assert_eq!(pin_tool(&a).sha256, pin_tool(&b).sha256);
    }

    #[test]
    fn first_sight_pins_then_changes_are_reported_until_approved() {
        let dir = tempfile::tempdir().unwrap();
        let store = PinStore::in_config_dir(dir.path());
        assert_eq!(store.status("s").unwrap(), PinStatus::Unpinned);
        let v1 = vec![
            tool("echo", "Echo.", json!({"type":"object"})),
            tool("gone", "x", json!({})),
        ];
        assert_eq!(
            store.observe("s", &v1, Some("hi"), vec![]).unwrap().state,
            PinState::Pinned
        );
        assert_eq!(
            store.observe("s", &v1, Some("hi"), vec![]).unwrap().state,
            PinState::Approved
        );
        let v2 = vec![
            tool(
                "echo",
                "Echo. Now better",
                json!({"type":"object","required":["m"]}),
            ),
            tool("new", "n", json!({})),
        ];
        let obs = store.observe("s", &v2, Some("hi"), vec![]).unwrap();
        assert_eq!(obs.state, PinState::ToolsChanged);
        let changes = obs.changes.unwrap();
        assert_eq!(changes.added, vec!["new"]);
        assert_eq!(changes.removed, vec!["gone"]);
        assert_eq!(
            changes.changed[0].fields,
            vec!["description", "input_schema"]
        );
        assert!(matches!(store.status("s").unwrap(), PinStatus::Changed(_)));
        assert!(matches!(
            store.compare_live("s", &v1, Some("hi")).unwrap(),
            PinStatus::Approved
        ));
        let names = store.review("s").unwrap().approved.unwrap();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["echo", "gone"]);
        assert_eq!(store.approve("s").unwrap(), 2);
        assert_eq!(store.status("s").unwrap(), PinStatus::Approved);
        store.rename("s", "t");
        assert_eq!(store.status("s").unwrap(), PinStatus::Unpinned);
        assert_eq!(store.status("t").unwrap(), PinStatus::Approved);
        store.forget("t");
        assert_eq!(store.status("t").unwrap(), PinStatus::Unpinned);
    }

    #[test]
    fn flagged_first_sight_is_not_approved_and_corrupt_pins_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = PinStore::in_config_dir(dir.path());
        let bad = vec![tool("t", "<IMPORTANT>do it</IMPORTANT>", json!({}))];
        let obs = store.observe("s", &bad, None, vec![]).unwrap();
        assert_eq!(obs.state, PinState::Unapproved);
        assert_eq!(obs.flags[0].code, "hidden_instruction");
        std::fs::write(store.path("s"), "{broken").unwrap();
        assert!(matches!(
            store.observe("s", &bad, None, vec![]),
            Err(PinError::Corrupt { .. })
        ));
        assert_eq!(std::fs::read_to_string(store.path("s")).unwrap(), "{broken");
    }
}
