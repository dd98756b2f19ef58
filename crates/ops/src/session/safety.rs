//! What it takes to call a tool: nothing for a tool the server marks read-only, a
//! confirmation for any other, a stronger one (its name typed, or a second explicit click)
//! for one marked destructive; a tool the user disabled cannot be called at all. Annotations
//! are the server's unverified hints, and shown as such.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ServerConfig, ToolPolicy};

/// How much a tool may change, by its annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, specta::Type)]
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
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    specta::Type,
)]
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

/// The per-tool state a session keeps to: the server's tool policy and the tools its approved
/// pin reviewed (`crate::tools`, docs/cli.md), read the way `plugboard run` reads them for
/// every other client. A tool disabled there cannot be called from Try it either.
#[derive(Clone, Debug, Default)]
pub struct ToolStates {
    policy: ToolPolicy,
    review: crate::config::Review,
}

impl ToolStates {
    /// `server`'s policy, with the tool names of its approved pin (`None`: nothing approved).
    pub fn of(server: &ServerConfig, review: crate::config::Review) -> ToolStates {
        ToolStates {
            policy: server.tools.clone(),
            review,
        }
    }

    /// Whether a critical scanner finding holds `tool` until the tools are approved.
    pub fn held(&self, tool: &str) -> bool {
        self.review.held.contains(tool)
    }

    /// Whether `tool` is switched off (by name, or as a new tool waiting for review).
    pub fn disabled(&self, tool: &str) -> bool {
        !self.policy.state(tool, &self.review).enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

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
    fn disabled_tools_follow_the_servers_tool_policy() {
        let mut server = ServerConfig::stdio("x", vec![]);
        assert!(!ToolStates::of(&server, Default::default()).disabled("rm"));
        assert!(!ToolStates::default().disabled("rm"));
        server.tools.set("rm", false);
        let states = ToolStates::of(&server, Default::default());
        assert!(states.disabled("rm"));
        assert!(!states.disabled("ls"));
        // Pinned and approved: a tool outside the approved pin waits for review.
        let reviewed: BTreeSet<String> = ["ls".to_string()].into();
        let states = ToolStates::of(&server, crate::config::Review::approved(Some(reviewed)));
        assert!(states.disabled("rm") && states.disabled("new_tool"));
        assert!(!states.disabled("ls"));
    }
}
