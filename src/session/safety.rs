//! What it takes to call a tool: nothing for a tool the server marks read-only, a
//! confirmation for any other, a stronger one (its name typed, or a second explicit click)
//! for one marked destructive; a tool the user disabled cannot be called at all. Annotations
//! are the server's unverified hints, and shown as such.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ServerConfig;

/// How much a tool may change, by its annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ToolRisk {
    /// `readOnlyHint: true`.
    ReadOnly,
    /// Not marked read-only: it may change things.
    Writes,
    /// `destructiveHint: true` (and not read-only).
    Destructive,
}

impl ToolRisk {
    /// The risk a tool's `annotations` claim.
    pub fn of(annotations: Option<&Value>) -> ToolRisk {
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        if hint("readOnlyHint") == Some(true) {
            ToolRisk::ReadOnly
        } else if hint("destructiveHint") == Some(true) {
            ToolRisk::Destructive
        } else {
            ToolRisk::Writes
        }
    }

    /// The confirmation a call needs.
    pub fn needs(self) -> Confirmation {
        match self {
            ToolRisk::ReadOnly => Confirmation::None,
            ToolRisk::Writes => Confirmation::Confirmed,
            ToolRisk::Destructive => Confirmation::Destructive,
        }
    }
}

/// What the user agreed to before a call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Confirmation {
    /// Nothing asked.
    #[default]
    None,
    /// "Run it" (a tool that may change things).
    Confirmed,
    /// The strong confirmation of a destructive tool (its name typed, or a second click).
    Destructive,
}

/// Whether the user turned `tool` of `server` off.
///
/// Per-tool state is issue 18's model (DESIGN.md §13); until it lands this reads the shape
/// it is expected to have, `"tools": {"disabled": ["name", …]}` among the server's fields.
/// At merge time this is the one function to point at that model.
pub fn tool_disabled(server: &ServerConfig, tool: &str) -> bool {
    server
        .extra
        .get("tools")
        .and_then(|t| t.get("disabled"))
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(tool)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn risk_follows_the_annotations() {
        assert_eq!(ToolRisk::of(None), ToolRisk::Writes);
        assert_eq!(
            ToolRisk::of(Some(
                &json!({"readOnlyHint": true, "destructiveHint": true})
            )),
            ToolRisk::ReadOnly
        );
        assert_eq!(
            ToolRisk::of(Some(&json!({"destructiveHint": true}))),
            ToolRisk::Destructive
        );
        assert_eq!(
            ToolRisk::of(Some(
                &json!({"readOnlyHint": false, "destructiveHint": false})
            )),
            ToolRisk::Writes
        );
        assert!(Confirmation::Destructive >= ToolRisk::Writes.needs());
        assert!(Confirmation::Confirmed < ToolRisk::Destructive.needs());
    }

    #[test]
    fn disabled_tools_are_read_from_the_server_config() {
        let mut server = ServerConfig::stdio("x", vec![]);
        assert!(!tool_disabled(&server, "rm"));
        server
            .extra
            .insert("tools".into(), json!({"disabled": ["rm"]}));
        assert!(tool_disabled(&server, "rm"));
        assert!(!tool_disabled(&server, "ls"));
    }
}
