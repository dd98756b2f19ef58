//! Per-tool control of installed servers: each tool of a server with its state (the
//! [`ToolPolicy`] in its config entry), its annotations read as untrusted hints ([`hints`]) and
//! what its definition costs a model ([`crate::tokens`]); and the one-server changes that switch
//! tools on and off by name, all at once, by annotation, or all but some.
//!
//! The tool list is the last test's (the stored health result, or the pin's last observation
//! when the last test failed): nothing here starts a server. Names given to a change are checked
//! against that list first; an unknown name changes nothing.
//!
//! `plugboard run` enforces the state for every client ([`crate::run::tool_filter`]).

pub mod hints;

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

pub use hints::{Annotated, Hints};

use crate::config::{ConfigError, NewTools, Review, ServerConfig, StateReason, ToolPolicy};
use crate::health::HealthStore;
use crate::manage::Servers;
use crate::pinning::{PinError, PinStore};
use crate::probe::ToolInfo;

/// Why a tool change or listing could not be done. Messages say what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Pins(#[from] PinError),
    #[error(
        "the tools of `{name}` are not known yet: test it first (`plugboard test {name}`), then \
         choose its tools"
    )]
    NotTested { name: String },
    #[error("`{name}` has no tool {}{}; nothing was changed. Its tools: {}", list(.unknown), suggestion(.close), .known.join(", "))]
    UnknownTools {
        name: String,
        unknown: Vec<String>,
        close: Vec<String>,
        known: Vec<String>,
    },
    #[error("{0}; nothing was changed")]
    Conflict(String),
}

fn list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn suggestion(close: &[String]) -> String {
    if close.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", list(close))
    }
}

/// The tools a server listed on its last successful test, and when.
#[derive(Clone, Debug)]
pub struct LastTools {
    pub tools: Vec<ToolInfo>,
    pub observed_at_ms: u64,
}

/// The last successful listing of `name`'s tools: the stored health result when that test
/// succeeded, else what the pin last observed. `None` when it was never tested successfully.
pub fn last_tools(config_dir: &Path, name: &str) -> Option<LastTools> {
    if let Some(record) = HealthStore::in_config_dir(config_dir).get(name)
        && record.result.ok
    {
        return Some(LastTools {
            tools: record.result.tools,
            observed_at_ms: record.finished_at_ms,
        });
    }
    let pin = PinStore::in_config_dir(config_dir).get(name).ok()??;
    let field = |d: &Value, key: &str| d.get(key).cloned().filter(|v| !v.is_null());
    Some(LastTools {
        tools: pin
            .observed
            .tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name.clone(),
                description: field(&t.definition, "description")
                    .and_then(|v| v.as_str().map(str::to_owned)),
                input_schema: field(&t.definition, "inputSchema").unwrap_or(Value::Null),
                annotations: field(&t.definition, "annotations"),
                ui: crate::probe::ui_resource_of(&t.definition),
                adapted_name: crate::probe::naming::adapted_name(name, &t.name),
            })
            .collect(),
        observed_at_ms: pin.observed.observed_at_ms,
    })
}

/// The names of the tools in `name`'s approved pin: the reviewed tools. `None` when nothing is
/// approved (then new tools are enabled unless the user chose otherwise).
pub fn review(config_dir: &Path, name: &str) -> Result<Review, PinError> {
    PinStore::in_config_dir(config_dir).review(name)
}

/// One tool as the CLI and the app show it.
#[derive(Clone, Debug, Serialize)]
pub struct ToolView {
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub reason: StateReason,
    /// The server's annotations, as it sent them (untrusted).
    pub annotations: Option<Value>,
    pub hints: Hints,
    /// What its definition costs a model (an estimate), whether it is enabled or not.
    pub tokens: usize,
    /// Its interactive UI (MCP Apps): the `ui://` resource that holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui: Option<String>,
}

/// The tools of one server.
#[derive(Clone, Debug, Serialize)]
pub struct ServerTools {
    pub server: String,
    /// Whether the server itself is enabled.
    pub server_enabled: bool,
    /// When its tools were last listed; `None` when it was never tested.
    pub observed_at_ms: Option<u64>,
    pub tools: Vec<ToolView>,
    /// What the enabled tools cost together.
    pub tokens: usize,
    /// How many tools are enabled.
    pub enabled: usize,
    /// The default for tools that appear later, and whether it was chosen or is automatic.
    pub new_tools: NewTools,
    pub new_tools_chosen: bool,
}

impl ServerTools {
    /// Build the view from a policy, the reviewed names and the last listing.
    pub fn new(
        name: &str,
        server_enabled: bool,
        policy: &ToolPolicy,
        review: &Review,
        last: Option<&LastTools>,
    ) -> ServerTools {
        Self::build(name, server_enabled, policy, review, last, true)
    }

    /// The same without the token counts (all 0), for callers that need only which tools are
    /// enabled: the tokenizer is not touched.
    pub fn states_only(
        name: &str,
        server_enabled: bool,
        policy: &ToolPolicy,
        review: &Review,
        last: Option<&LastTools>,
    ) -> ServerTools {
        Self::build(name, server_enabled, policy, review, last, false)
    }

    fn build(
        name: &str,
        server_enabled: bool,
        policy: &ToolPolicy,
        review: &Review,
        last: Option<&LastTools>,
        count: bool,
    ) -> ServerTools {
        let tools: Vec<ToolView> = last
            .map(|l| l.tools.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|tool| {
                let state = policy.state(&tool.name, review);
                ToolView {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                    enabled: state.enabled,
                    reason: state.reason,
                    annotations: tool.annotations.clone(),
                    hints: Hints::of(tool.annotations.as_ref()),
                    tokens: if count {
                        crate::tokens::tool_tokens(name, tool)
                    } else {
                        0
                    },
                    ui: tool.ui.clone(),
                }
            })
            .collect();
        let enabled = tools.iter().filter(|t| t.enabled).count();
        ServerTools {
            server: name.to_string(),
            server_enabled,
            observed_at_ms: last.map(|l| l.observed_at_ms),
            tokens: tools.iter().filter(|t| t.enabled).map(|t| t.tokens).sum(),
            enabled,
            tools,
            new_tools: policy.new_tools_default(review.approved.as_ref()),
            new_tools_chosen: policy.new_tools.is_some(),
        }
    }
}

/// The tools of installed server `name` (its config entry `server`), from `last`.
fn view_of(
    servers: &Servers,
    name: &str,
    server: &ServerConfig,
    last: Option<&LastTools>,
) -> Result<ServerTools, ToolsError> {
    let review = review(servers.config().dir(), name)?;
    Ok(ServerTools::new(
        name,
        server.enabled,
        &server.tools,
        &review,
        last,
    ))
}

/// The tools of installed server `name`, from its last test.
pub fn server_tools(servers: &Servers, name: &str) -> Result<ServerTools, ToolsError> {
    let server = servers.config().load()?.server(name)?;
    let last = last_tools(servers.config().dir(), name);
    view_of(servers, name, &server, last.as_ref())
}

/// A change to the tool state of one server. Bulk changes apply first (`only`, then `all`,
/// then `disable_annotated`), then `disable`, then `enable`.
#[derive(Clone, Debug, Default)]
pub struct ToolsChange {
    pub disable: Vec<String>,
    pub enable: Vec<String>,
    /// `Some(true)`: enable every tool, `Some(false)`: disable every tool.
    pub all: Option<bool>,
    /// Enable these, disable every other tool.
    pub only: Option<Vec<String>>,
    /// Disable every tool the hints (or their absence) put in this class.
    pub disable_annotated: Option<Annotated>,
    /// `Some(None)`: back to automatic.
    pub new_tools: Option<Option<NewTools>>,
}

impl ToolsChange {
    pub fn is_empty(&self) -> bool {
        self.disable.is_empty()
            && self.enable.is_empty()
            && self.all.is_none()
            && self.only.is_none()
            && self.disable_annotated.is_none()
            && self.new_tools.is_none()
    }

    /// Every tool name the change mentions.
    fn names(&self) -> impl Iterator<Item = &String> {
        self.disable
            .iter()
            .chain(&self.enable)
            .chain(self.only.iter().flatten())
    }
}

/// Names in `wanted` that are not tools of the listing, with close matches.
fn unknown_names(
    name: &str,
    wanted: impl Iterator<Item = impl AsRef<str>>,
    known: &[String],
) -> Option<ToolsError> {
    let mut unknown: Vec<String> = wanted
        .map(|w| w.as_ref().to_string())
        .filter(|w| !known.contains(w))
        .collect();
    unknown.dedup();
    if unknown.is_empty() {
        return None;
    }
    let close = unknown
        .iter()
        .flat_map(|u| {
            known.iter().filter(move |k| {
                let (k, u) = (k.to_ascii_lowercase(), u.to_ascii_lowercase());
                k.contains(&u) || u.contains(&k) || k.replace('_', "-") == u.replace('_', "-")
            })
        })
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    Some(ToolsError::UnknownTools {
        name: name.to_string(),
        unknown,
        close,
        known: known.to_vec(),
    })
}

/// Apply `change` to `policy` for a server whose last listing is `tools`.
pub fn apply_change(
    policy: &mut ToolPolicy,
    tools: &[ToolInfo],
    change: &ToolsChange,
) -> Result<(), String> {
    if let Some(both) = change.disable.iter().find(|n| change.enable.contains(n)) {
        return Err(format!("`{both}` is both enabled and disabled"));
    }
    if let Some(only) = &change.only {
        for tool in tools {
            policy.set(&tool.name, only.contains(&tool.name));
        }
    }
    if let Some(all) = change.all {
        for tool in tools {
            policy.set(&tool.name, all);
        }
    }
    if let Some(class) = change.disable_annotated {
        for tool in tools {
            if Hints::of(tool.annotations.as_ref()).is(class) {
                policy.set(&tool.name, false);
            }
        }
    }
    for name in &change.disable {
        policy.set(name, false);
    }
    for name in &change.enable {
        policy.set(name, true);
    }
    if let Some(new_tools) = change.new_tools {
        policy.new_tools = new_tools;
    }
    Ok(())
}

/// Change the tool state of installed server `name` (one-server mutation) and return its tools
/// as they are now. Every tool name must be one the last test listed, else nothing changes.
pub fn change_tools(
    servers: &Servers,
    name: &str,
    change: &ToolsChange,
) -> Result<ServerTools, ToolsError> {
    let dir = servers.config().dir();
    // The server must exist before anything else is said about it.
    let current = servers.config().load()?.server(name)?;
    let last = last_tools(dir, name);
    let needs_list = change.names().next().is_some()
        || change.all.is_some()
        || change.disable_annotated.is_some();
    let tools = match &last {
        Some(last) => last.tools.clone(),
        None if needs_list => return Err(ToolsError::NotTested { name: name.into() }),
        None => vec![],
    };
    let known: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    if let Some(err) = unknown_names(name, change.names(), &known) {
        return Err(err);
    }
    // Checked on a copy first, so a contradiction is reported without touching the file.
    apply_change(&mut current.tools.clone(), &tools, change).map_err(ToolsError::Conflict)?;
    let (server, ()) = servers.config().update(name, |server| {
        apply_change(&mut server.tools, &tools, change).map_err(|detail| ConfigError::Invalid {
            name: name.into(),
            detail,
        })
    })?;
    view_of(servers, name, &server, last.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, annotations: Option<Value>) -> ToolInfo {
        ToolInfo {
            name: name.into(),
            description: Some(format!("The {name} tool.")),
            input_schema: serde_json::json!({"type": "object"}),
            annotations,
            adapted_name: String::new(),
            ui: None,
        }
    }

    #[test]
    fn changes_apply_in_order_and_count_only_enabled_tools() {
        let tools = vec![
            tool("read", Some(serde_json::json!({"readOnlyHint": true}))),
            tool(
                "write",
                Some(serde_json::json!({"readOnlyHint": false, "destructiveHint": false})),
            ),
            tool("bare", None),
        ];
        let mut policy = ToolPolicy::default();
        let change = ToolsChange {
            disable_annotated: Some(Annotated::NotReadOnly),
            enable: vec!["bare".into()],
            ..ToolsChange::default()
        };
        apply_change(&mut policy, &tools, &change).unwrap();
        let last = LastTools {
            tools: tools.clone(),
            observed_at_ms: 1,
        };
        let view = ServerTools::new("s", true, &policy, &Review::default(), Some(&last));
        let enabled: Vec<&str> = view
            .tools
            .iter()
            .filter(|t| t.enabled)
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(enabled, vec!["read", "bare"]);
        assert_eq!(view.enabled, 2);
        assert_eq!(
            view.tokens,
            view.tools[0].tokens + view.tools[2].tokens,
            "only enabled tools count"
        );
        let mut only = ToolPolicy::default();
        let change = ToolsChange {
            only: Some(vec!["write".into()]),
            ..ToolsChange::default()
        };
        apply_change(&mut only, &tools, &change).unwrap();
        assert_eq!(only.enabled, ["write".to_string()].into());
        assert_eq!(only.disabled.len(), 2);
        let clash = ToolsChange {
            disable: vec!["read".into()],
            enable: vec!["read".into()],
            ..ToolsChange::default()
        };
        assert!(apply_change(&mut only, &tools, &clash).is_err());
    }

    #[test]
    fn unknown_names_come_with_close_matches() {
        let known = vec!["get-env".to_string(), "echo".to_string()];
        let err = unknown_names("ev", ["get_env", "echo"].iter(), &known).unwrap();
        let text = err.to_string();
        assert!(text.contains("no tool `get_env`"), "{text}");
        assert!(text.contains("did you mean `get-env`"), "{text}");
        assert!(unknown_names("ev", ["echo"].iter(), &known).is_none());
    }
}
