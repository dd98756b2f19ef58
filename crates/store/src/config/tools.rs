//! Per-tool state of one server, kept in its config entry as `"tools"`: the tools the user
//! switched off or on by name, and what a tool gets that appears later.
//!
//! ```json
//! "tools": {"disabled": ["get-env"], "enabled": ["echo"], "new_tools": "disabled"}
//! ```
//!
//! A tool named in neither list gets the default for new tools. Left automatic (no
//! `new_tools`), that default is "disabled until reviewed" for a server whose tools are pinned
//! and approved (a tool outside the approved pin has not been reviewed, so it stays hidden
//! until `plugboard approve` or an explicit enable), and "enabled" for a server with nothing
//! approved. Living in the server's entry, the state moves with a rename and is kept by every
//! edit that keeps the entry.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a tool gets that is not named in `enabled` or `disabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewTools {
    Enabled,
    Disabled,
}

impl NewTools {
    pub fn as_str(self) -> &'static str {
        match self {
            NewTools::Enabled => "enabled",
            NewTools::Disabled => "disabled",
        }
    }
}

/// Why a tool is in the state it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateReason {
    /// The user switched it on or off by name.
    Chosen,
    /// Not named: the default for new tools, and the tool was reviewed (or nothing needs review).
    Default,
    /// Not named, not in the approved pin, and new tools are disabled until reviewed.
    Unreviewed,
    /// The scanner found something critical in its definition, which is not the approved one:
    /// disabled until the user approves it, whatever else says.
    Flagged,
}

/// What a server's pin says about its tools: the approved names (`None`: nothing approved) and
/// the tools a critical finding holds until they are approved.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Review {
    pub approved: Option<BTreeSet<String>>,
    pub held: BTreeSet<String>,
}

impl Review {
    /// Only approved names, nothing held.
    pub fn approved(names: Option<BTreeSet<String>>) -> Review {
        Review {
            approved: names,
            held: BTreeSet::new(),
        }
    }
}

/// The effective state of one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolState {
    pub enabled: bool,
    pub reason: StateReason,
}

/// The per-tool state of a server. Unknown keys are kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolPolicy {
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub disabled: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub enabled: BTreeSet<String>,
    /// `None`: automatic (see the module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_tools: Option<NewTools>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolPolicy {
    /// Nothing chosen: every tool gets the automatic default.
    pub fn is_empty(&self) -> bool {
        self.disabled.is_empty()
            && self.enabled.is_empty()
            && self.new_tools.is_none()
            && self.extra.is_empty()
    }

    /// The default for tools not named, given the names of the approved pin's tools (`None`
    /// when nothing is approved).
    pub fn new_tools_default(&self, reviewed: Option<&BTreeSet<String>>) -> NewTools {
        self.new_tools.unwrap_or(if reviewed.is_some() {
            NewTools::Disabled
        } else {
            NewTools::Enabled
        })
    }

    /// The state of tool `name`.
    pub fn state(&self, name: &str, review: &Review) -> ToolState {
        if review.held.contains(name) {
            return ToolState {
                enabled: false,
                reason: StateReason::Flagged,
            };
        }
        let reviewed = review.approved.as_ref();
        if self.disabled.contains(name) {
            return ToolState {
                enabled: false,
                reason: StateReason::Chosen,
            };
        }
        if self.enabled.contains(name) {
            return ToolState {
                enabled: true,
                reason: StateReason::Chosen,
            };
        }
        match self.new_tools_default(reviewed) {
            NewTools::Enabled => ToolState {
                enabled: true,
                reason: StateReason::Default,
            },
            // Reviewed tools keep the state they had when they were approved: enabled.
            NewTools::Disabled if reviewed.is_some_and(|r| r.contains(name)) => ToolState {
                enabled: true,
                reason: StateReason::Default,
            },
            NewTools::Disabled => ToolState {
                enabled: false,
                reason: if reviewed.is_some() && self.new_tools.is_none() {
                    StateReason::Unreviewed
                } else {
                    StateReason::Default
                },
            },
        }
    }

    /// Switch `name` on or off by name.
    pub fn set(&mut self, name: &str, enabled: bool) {
        let (into, out_of) = if enabled {
            (&mut self.enabled, &mut self.disabled)
        } else {
            (&mut self.disabled, &mut self.enabled)
        };
        out_of.remove(name);
        into.insert(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_default_depends_on_approval() {
        let mut policy = ToolPolicy::default();
        assert!(policy.is_empty());
        let none = Review::default();
        // Nothing approved: everything is enabled.
        assert!(policy.state("x", &none).enabled);
        // Approved pin: reviewed tools enabled, others hidden until reviewed.
        let reviewed = Review::approved(Some(names(&["echo"])));
        assert!(policy.state("echo", &reviewed).enabled);
        let later = policy.state("later", &reviewed);
        assert_eq!(
            (later.enabled, later.reason),
            (false, StateReason::Unreviewed)
        );
        // An explicit choice wins over both, and an explicit default applies to every tool
        // not named.
        policy.set("later", true);
        policy.set("echo", false);
        assert!(policy.state("later", &reviewed).enabled);
        assert_eq!(policy.state("echo", &reviewed).reason, StateReason::Chosen);
        assert!(!policy.state("echo", &reviewed).enabled);
        policy.new_tools = Some(NewTools::Enabled);
        assert!(policy.state("other", &reviewed).enabled);
        policy.new_tools = Some(NewTools::Disabled);
        assert!(!policy.state("other", &none).enabled);
        assert_eq!(policy.state("other", &none).reason, StateReason::Default);
    }

    #[test]
    fn a_held_tool_stays_disabled_even_when_chosen() {
        let mut policy = ToolPolicy::default();
        policy.set("poisoned", true);
        let review = Review {
            approved: None,
            held: names(&["poisoned"]),
        };
        let state = policy.state("poisoned", &review);
        assert_eq!((state.enabled, state.reason), (false, StateReason::Flagged));
        assert!(policy.state("other", &review).enabled);
    }

    #[test]
    fn it_round_trips_with_unknown_keys() {
        let json = serde_json::json!({
            "disabled": ["a", "b"], "enabled": ["c"], "new_tools": "disabled", "future": 1
        });
        let policy: ToolPolicy = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(policy.disabled, names(&["a", "b"]));
        assert_eq!(serde_json::to_value(&policy).unwrap(), json);
        let mut policy = policy;
        policy.set("a", true);
        assert!(!policy.disabled.contains("a") && policy.enabled.contains("a"));
    }
}
