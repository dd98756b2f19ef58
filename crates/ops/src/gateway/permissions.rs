//! The permission of one tool through the gateway: `allow`, `ask`, `deny` or `hide`, from the
//! profile's rules (the most specific wins: the namespaced tool, then its server, then
//! `*side_effects` for a tool not declared read-only), narrowed by the organisation policy's
//! floor. Tools not declared read-only count as having side effects. A hidden tool is neither
//! listed to the profile's clients nor called: a profile's own set of tools, and of tokens.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::profiles::SIDE_EFFECTS_RULE;
use crate::session::ToolRisk;

/// What happens to a call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// Passed on.
    #[default]
    Allow,
    /// Passed on only when the user says yes (through the client's elicitation).
    Ask,
    /// Refused.
    Deny,
    /// Not listed to the profile's clients, and refused: as if the server had no such tool.
    Hide,
}

impl Permission {
    pub fn parse(text: &str) -> Option<Permission> {
        match text {
            "allow" => Some(Permission::Allow),
            "ask" => Some(Permission::Ask),
            "deny" => Some(Permission::Deny),
            "hide" => Some(Permission::Hide),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Ask => "ask",
            Permission::Deny => "deny",
            Permission::Hide => "hide",
        }
    }
}

/// The permission of `server`'s tool `namespaced` (of `risk`) under `rules`; for a tool not
/// declared read-only, never weaker than `side_effects_floor` (an organisation's policy). A
/// policy cannot hide a tool, only a profile can.
pub fn decide(
    rules: &BTreeMap<String, Permission>,
    server: &str,
    namespaced: &str,
    risk: ToolRisk,
    side_effects_floor: Permission,
) -> Permission {
    let chosen = rules
        .get(namespaced)
        .or_else(|| rules.get(server))
        .or_else(|| {
            (risk != ToolRisk::ReadOnly)
                .then(|| rules.get(SIDE_EFFECTS_RULE))
                .flatten()
        })
        .copied()
        .unwrap_or_default();
    if risk == ToolRisk::ReadOnly {
        chosen
    } else {
        chosen.max(side_effects_floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_rule_wins_and_the_policy_floor_holds_for_side_effects() {
        let rules = BTreeMap::from([
            ("gh".to_owned(), Permission::Ask),
            ("gh__read".to_owned(), Permission::Allow),
            (SIDE_EFFECTS_RULE.to_owned(), Permission::Deny),
        ]);
        let d = |server, tool, risk, floor| decide(&rules, server, tool, risk, floor);
        assert_eq!(
            d("gh", "gh__read", ToolRisk::Writes, Permission::Allow),
            Permission::Allow
        );
        assert_eq!(
            d("gh", "gh__write", ToolRisk::Writes, Permission::Allow),
            Permission::Ask
        );
        assert_eq!(
            d("fs", "fs__write", ToolRisk::Writes, Permission::Allow),
            Permission::Deny
        );
        assert_eq!(
            d("fs", "fs__read", ToolRisk::ReadOnly, Permission::Allow),
            Permission::Allow
        );
        // The policy's floor holds for tools with side effects, whatever the profile allows;
        // a read-only tool keeps the profile's answer.
        assert_eq!(
            d("gh", "gh__read", ToolRisk::Writes, Permission::Ask),
            Permission::Ask
        );
        assert_eq!(
            d("gh", "gh__write", ToolRisk::Writes, Permission::Deny),
            Permission::Deny
        );
        assert_eq!(
            d("gh", "gh__read", ToolRisk::ReadOnly, Permission::Deny),
            Permission::Allow
        );
    }

    #[test]
    fn a_profile_hides_a_server_but_the_tools_it_names_and_a_hidden_tool_stays_hidden() {
        let rules = BTreeMap::from([
            ("gh".to_owned(), Permission::Hide),
            ("gh__search".to_owned(), Permission::Ask),
            ("fs__write".to_owned(), Permission::Hide),
        ]);
        let d = |server, tool, risk, floor| decide(&rules, server, tool, risk, floor);
        assert_eq!(
            d("gh", "gh__delete", ToolRisk::Destructive, Permission::Allow),
            Permission::Hide
        );
        assert_eq!(
            d("gh", "gh__search", ToolRisk::ReadOnly, Permission::Deny),
            Permission::Ask
        );
        // Whatever the policy's floor, a hidden tool stays hidden (not listed as denied).
        assert_eq!(
            d("fs", "fs__write", ToolRisk::Writes, Permission::Deny),
            Permission::Hide
        );
        assert_eq!(
            d("fs", "fs__read", ToolRisk::Writes, Permission::Ask),
            Permission::Ask
        );
        // `*side_effects = hide`: a profile of read-only tools.
        let read_only = BTreeMap::from([(SIDE_EFFECTS_RULE.to_owned(), Permission::Hide)]);
        assert_eq!(
            decide(
                &read_only,
                "fs",
                "fs__write",
                ToolRisk::Writes,
                Permission::Allow
            ),
            Permission::Hide
        );
        assert_eq!(
            decide(
                &read_only,
                "fs",
                "fs__read",
                ToolRisk::ReadOnly,
                Permission::Allow
            ),
            Permission::Allow
        );
        assert_eq!(Permission::parse("hide"), Some(Permission::Hide));
        assert_eq!(Permission::Hide.as_str(), "hide");
    }
}
