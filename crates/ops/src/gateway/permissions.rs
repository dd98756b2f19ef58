//! The permission of one call through the gateway: `allow`, `ask` or `deny`, from the
//! profile's rules (the most specific wins: the namespaced tool, then its server, then
//! `*side_effects` for a tool not declared read-only), narrowed by the organisation policy's
//! floor. Tools not declared read-only count as having side effects.

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
}

impl Permission {
    pub fn parse(text: &str) -> Option<Permission> {
        match text {
            "allow" => Some(Permission::Allow),
            "ask" => Some(Permission::Ask),
            "deny" => Some(Permission::Deny),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Ask => "ask",
            Permission::Deny => "deny",
        }
    }
}

/// The permission of `server`'s tool `namespaced` (of `risk`) under `rules`; for a tool not
/// declared read-only, never weaker than `side_effects_floor` (an organisation's policy).
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
}
