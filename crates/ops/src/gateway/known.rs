//! What a server that has not been started is known to offer, for a profile that starts its
//! servers on first use: the tools, prompts and resources its last successful test listed, with
//! its tool switches, listed to clients until a call starts it. And the one judgement of
//! whether a server's tools are the ones the user approved, for known and live lists alike.

use serde_json::{Value, json};

use crate::health::HealthStore;
use crate::manage::Servers;
use crate::pinning::{self, PinStatus};
use crate::probe::ToolInfo;
use crate::session::{Lists, ToolStates};

/// A server's lists as its last successful test saw them.
pub struct Known {
    pub lists: Lists,
    pub tools: ToolStates,
}

/// `name`'s lists from its last successful test; `None` when it has none, or when those tools
/// are not the approved ones (such a server is started at once, to be judged on what it
/// offers then).
pub fn known(servers: &Servers, name: &str) -> Option<Known> {
    let dir = servers.config().dir();
    let result = HealthStore::in_config_dir(dir)
        .get(name)
        .filter(|r| r.result.ok)?
        .result;
    let config = servers.config().load().ok()?.server(name).ok()?;
    let tools = ToolStates::of(&config, crate::tools::review(dir, name).ok()?);
    let disabled = |tool: &str| tools.disabled(tool);
    if unapproved(
        servers,
        name,
        &result.tools,
        result.instructions.as_deref(),
        disabled,
    )
    .is_some()
    {
        return None;
    }
    let lists = Lists {
        tools: result.tools.iter().map(tool_definition).collect(),
        prompts: result
            .prompts
            .iter()
            .map(|p| serde_json::to_value(p).unwrap_or(Value::Null))
            .collect(),
        resources: result
            .resources
            .iter()
            .map(|r| {
                let mut resource = json!({"uri": r.uri, "name": r.name});
                if let Some(d) = &r.description {
                    resource["description"] = json!(d);
                }
                if let Some(m) = &r.mime_type {
                    resource["mimeType"] = json!(m);
                }
                resource
            })
            .collect(),
        templates: vec![],
    };
    Some(Known { lists, tools })
}

/// A tool's definition as a server lists it, from what a test kept of it.
fn tool_definition(tool: &ToolInfo) -> Value {
    let mut definition = json!({"name": tool.name, "inputSchema": tool.input_schema});
    if let Some(d) = &tool.description {
        definition["description"] = json!(d);
    }
    if let Some(a) = &tool.annotations {
        definition["annotations"] = a.clone();
    }
    if let Some(ui) = &tool.ui {
        definition["_meta"] = json!({"ui": {"resourceUri": ui}});
    }
    definition
}

/// Why `name`'s `tools` may not be served: they changed since the user approved them (unless
/// every changed tool is switched off, as `disabled` says), were never approved while flagged,
/// or the approval cannot be read. `None`: they may.
pub fn unapproved(
    servers: &Servers,
    name: &str,
    tools: &[ToolInfo],
    instructions: Option<&str>,
    disabled: impl Fn(&str) -> bool,
) -> Option<String> {
    match pinning::compare_live(servers.config().dir(), name, tools, instructions) {
        Ok(PinStatus::Changed(diff)) if diff.only_in_switched_off_tools(|tool| !disabled(tool)) => {
            None
        }
        Ok(PinStatus::Changed(diff)) if diff.first_seen => {
            Some("its tools were never approved (some were flagged)".to_owned())
        }
        Ok(PinStatus::Changed(diff)) => Some(format!(
            "its tools changed since you approved them: {}",
            diff.changes.summary()
        )),
        Ok(_) => None,
        Err(e) => Some(format!("its approved tools cannot be read: {e}")),
    }
}
