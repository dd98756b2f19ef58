//! Each gateway profile at a glance, for the app's Gateway page and `plugboard profile list`
//! (beside the gateway, not in it: it reads the clients' files and the budget, which know the
//! gateway's entries): the servers it serves, the tools and tokens a client of it gets (from
//! the servers' last tests, without the tools it hides), its rules and what they may name, its
//! hooks, and the clients whose files launch its gateway.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::clients::ClientStatus;
use crate::gateway::hooks::Hook;
use crate::gateway::profiles::{
    Profile, ProfileError, ProfileStore, SIDE_EFFECTS_RULE, servers_of,
};
use crate::gateway::{Permission, permissions::decide};
use crate::manage::Servers;
use crate::probe::naming;
use crate::session::ToolRisk;
use crate::tools::{ServerTools, ToolView};

/// One profile, summed up.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileOverview {
    pub name: String,
    /// The servers it serves now (the enabled ones for `default`).
    pub servers: Vec<String>,
    /// `default`: every enabled server, whatever is installed later.
    pub all_enabled: bool,
    /// The tools a client of it gets from the servers that were tested (enabled, not hidden by
    /// the profile), and what their definitions cost.
    pub tools: usize,
    pub tokens: usize,
    /// The enabled tools of those servers the profile hides.
    pub hidden: usize,
    /// Servers whose tools are not known yet (never tested).
    pub untested: Vec<String>,
    /// Its permission rules (a rule: a server, a namespaced tool or `*side_effects`).
    pub permissions: BTreeMap<String, Permission>,
    /// What a rule of it may name: `*side_effects`, its servers, and the tools a client of it
    /// may be listed (those of its tested servers, namespaced), in that order.
    pub targets: Vec<String>,
    /// Its hooks, in the order they run.
    pub hooks: Vec<Hook>,
    /// A hook that fails blocks the call.
    pub hooks_fail_closed: bool,
    /// Its servers start on first use.
    pub lazy: bool,
    /// The clients whose files launch this profile's gateway (their labels).
    pub clients: Vec<String>,
}

/// Every profile (`default` first), summed up from the servers' tools and the clients' files.
pub fn overview(servers: &Servers) -> Result<Vec<ProfileOverview>, ProfileError> {
    let config = servers.config().load().map_err(|e| ProfileError::File {
        path: servers.config().path(),
        detail: e.to_string(),
    })?;
    let tools = crate::budget::all_server_tools(servers, true).unwrap_or_default();
    let clients = crate::clients::detect(servers.config().dir(), None);
    let profiles = ProfileStore::in_config_dir(servers.config().dir()).list()?;
    Ok(profiles
        .into_iter()
        .map(|(name, profile)| {
            let served = servers_of(&profile, &config);
            summed(&name, &served, &tools, &clients, &profile)
        })
        .collect())
}

fn summed(
    name: &str,
    served: &[String],
    tools: &[ServerTools],
    clients: &[ClientStatus],
    profile: &Profile,
) -> ProfileOverview {
    let of = |server: &String| tools.iter().find(|t| &t.server == server);
    let tested: Vec<&ServerTools> = served
        .iter()
        .filter_map(of)
        .filter(|t| t.observed_at_ms.is_some())
        .collect();
    let offered: Vec<(&ServerTools, &ToolView, String)> = tested
        .iter()
        .flat_map(|server| {
            namespaced_tools(server).map(move |(tool, namespaced)| (*server, tool, namespaced))
        })
        .collect();
    let (listed, hidden): (Vec<_>, Vec<_>) = offered
        .iter()
        .partition(|(server, tool, namespaced)| !hides(profile, server, tool, namespaced));
    ProfileOverview {
        name: name.to_owned(),
        servers: served.to_vec(),
        all_enabled: profile.servers.is_none(),
        tools: listed.len(),
        tokens: listed.iter().map(|(_, tool, _)| tool.tokens).sum(),
        hidden: hidden.len(),
        untested: served
            .iter()
            .filter(|s| of(s).is_none_or(|t| t.observed_at_ms.is_none()))
            .cloned()
            .collect(),
        permissions: profile.permissions.clone(),
        targets: std::iter::once(SIDE_EFFECTS_RULE.to_owned())
            .chain(served.iter().cloned())
            .chain(offered.iter().map(|(_, _, namespaced)| namespaced.clone()))
            .collect(),
        hooks: profile.hooks.clone(),
        hooks_fail_closed: profile.hooks_fail_closed,
        lazy: profile.lazy,
        clients: clients
            .iter()
            .filter(|c| c.gateways.iter().any(|g| g == name))
            .map(|c| c.label.to_owned())
            .collect(),
    }
}

/// Each enabled tool of `server` with its namespaced name, as the gateway names it.
fn namespaced_tools(server: &ServerTools) -> impl Iterator<Item = (&ToolView, String)> {
    let enabled: Vec<&ToolView> = server.tools.iter().filter(|t| t.enabled).collect();
    let names: Vec<&str> = enabled.iter().map(|t| t.name.as_str()).collect();
    let namespaced = naming::namespaced_names(&server.server, &names);
    enabled.into_iter().zip(namespaced)
}

/// Whether `profile` hides `server`'s tool `tool` (named `namespaced`), as the gateway decides.
fn hides(profile: &Profile, server: &ServerTools, tool: &ToolView, namespaced: &str) -> bool {
    let risk = ToolRisk::of(tool.annotations.as_ref());
    decide(
        &profile.permissions,
        &server.server,
        namespaced,
        risk,
        Permission::Allow,
    ) == Permission::Hide
}
