//! The context budget: what the tool definitions of the enabled servers cost a model (tokens,
//! an estimate: [`crate::tokens`]) and how many tools they bring, per server and in total; and
//! per client that launches Plugboard servers, how many tools its Plugboard entries expose
//! against that client's tool cap (VS Code 128 per chat, Cursor 40).
//!
//! Figures come from each server's last test (nothing is started). A server never tested has
//! no figures (`null`); one whose last test failed keeps the figures of its last listing but
//! is not counted (a client gets none of its tools while it fails). The JSON of [`Budget`] is a
//! contract (docs/cli.md).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::clients::{ClientKind, ClientStatus};
use crate::manage::Servers;
use crate::tools::{ServerTools, ToolsError, last_tools, review};

/// The most tools a client uses at once, where it has a limit: VS Code sends at most 128 tools
/// to a chat request, Cursor warns past 40.
pub fn tool_cap(client: ClientKind) -> Option<usize> {
    match client {
        ClientKind::Vscode | ClientKind::Copilot => Some(128),
        ClientKind::Cursor => Some(40),
        _ => None,
    }
}

/// One enabled server's share.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerBudget {
    pub name: String,
    /// What its enabled tools cost; `None` when it was never tested.
    pub tokens: Option<usize>,
    /// How many of its tools are enabled; `None` when it was never tested.
    pub tools: Option<usize>,
    /// Its last test failed: its figures (from its last listing) are not in the totals.
    pub failing: bool,
}

/// One client that launches Plugboard servers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClientBudget {
    /// The client's id (`vscode`, `cursor`, ...).
    pub client: String,
    /// The enabled tools of the enabled servers its Plugboard entries launch.
    pub tools: usize,
    pub cap: Option<usize>,
    /// Whether `tools` exceeds `cap`.
    pub over: bool,
}

/// The whole budget. `tokens` and `tools` count enabled tools of enabled servers only.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Budget {
    pub tokens: usize,
    pub tools: usize,
    pub servers: Vec<ServerBudget>,
    pub clients: Vec<ClientBudget>,
}

/// The tools of every installed server, from their last tests, in config order (entries
/// that do not parse are left out: they cannot be run). Without `with_tokens` the token counts
/// are left at 0 and the tokenizer is not used.
pub fn all_server_tools(
    servers: &Servers,
    with_tokens: bool,
) -> Result<Vec<ServerTools>, ToolsError> {
    let dir = servers.config().dir();
    let config = servers.config().load()?;
    let mut out = vec![];
    for (name, server) in config.servers() {
        let Ok(server) = server else { continue };
        let review = review(dir, &name)?;
        let build = if with_tokens {
            ServerTools::new
        } else {
            ServerTools::states_only
        };
        out.push(build(
            &name,
            server.enabled,
            &server.tools,
            &review,
            last_tools(dir, &name).as_ref(),
        ));
    }
    Ok(out)
}

/// The tools a client's Plugboard entries expose: the enabled tools of the enabled servers
/// among `launched` (but those `failing`).
pub fn exposed_tools(
    all: &[ServerTools],
    launched: &[String],
    failing: &BTreeSet<String>,
) -> usize {
    all.iter()
        .filter(|s| {
            s.server_enabled && launched.contains(&s.server) && !failing.contains(&s.server)
        })
        .map(|s| s.enabled)
        .sum()
}

fn client_budget(
    all: &[ServerTools],
    status: &ClientStatus,
    failing: &BTreeSet<String>,
) -> ClientBudget {
    let tools = exposed_tools(all, &status.servers, failing);
    let cap = tool_cap(status.client);
    ClientBudget {
        client: status.client.id().to_string(),
        tools,
        cap,
        over: cap.is_some_and(|cap| tools > cap),
    }
}

/// The budget from `all` (every server's tools), `clients` (the known clients' files) and
/// `failing` (the servers whose last test failed). With `only`, just that client: the servers
/// its Plugboard entries launch, and its line.
pub fn compute(
    all: &[ServerTools],
    clients: &[ClientStatus],
    only: Option<ClientKind>,
    failing: &BTreeSet<String>,
) -> Budget {
    let launched: Option<&[String]> =
        only.map(|kind| match clients.iter().find(|c| c.client == kind) {
            Some(status) => status.servers.as_slice(),
            None => &[],
        });
    let servers: Vec<ServerBudget> = all
        .iter()
        .filter(|s| s.server_enabled)
        .filter(|s| launched.is_none_or(|l| l.contains(&s.server)))
        .map(|s| {
            let tested = s.observed_at_ms.is_some();
            ServerBudget {
                name: s.server.clone(),
                tokens: tested.then_some(s.tokens),
                tools: tested.then_some(s.enabled),
                failing: failing.contains(&s.server),
            }
        })
        .collect();
    let clients = clients
        .iter()
        .filter(|c| match only {
            Some(kind) => c.client == kind,
            None => !c.servers.is_empty(),
        })
        .map(|c| client_budget(all, c, failing))
        .collect();
    let counted = || servers.iter().filter(|s| !s.failing);
    Budget {
        tokens: counted().filter_map(|s| s.tokens).sum(),
        tools: counted().filter_map(|s| s.tools).sum(),
        servers,
        clients,
    }
}

/// The budget of the installed servers and the clients of this machine.
pub fn budget(servers: &Servers, only: Option<ClientKind>) -> Result<Budget, ToolsError> {
    let all = all_server_tools(servers, true)?;
    let clients = crate::clients::detect(servers.config().dir(), None);
    Ok(compute(
        &all,
        &clients,
        only,
        &failing_servers(servers, &all),
    ))
}

/// The servers among `all` whose last test failed.
pub fn failing_servers(servers: &Servers, all: &[ServerTools]) -> BTreeSet<String> {
    let health = crate::health::HealthStore::in_config_dir(servers.config().dir());
    all.iter()
        .filter(|s| health.get(&s.server).is_some_and(|r| !r.result.ok))
        .map(|s| s.server.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Review, ToolPolicy};
    use crate::probe::ToolInfo;
    use crate::tools::LastTools;

    fn server(name: &str, enabled: bool, tools: usize, disabled: &[&str]) -> ServerTools {
        let last = LastTools {
            tools: (0..tools)
                .map(|i| ToolInfo {
                    name: format!("t{i}"),
                    description: Some(format!("Tool number {i}.")),
                    input_schema: serde_json::json!({"type": "object"}),
                    annotations: None,
                    adapted_name: String::new(),
                    ui: None,
                })
                .collect(),
            observed_at_ms: 1,
        };
        let mut policy = ToolPolicy::default();
        for d in disabled {
            policy.set(d, false);
        }
        ServerTools::new(name, enabled, &policy, &Review::default(), Some(&last))
    }

    fn status(client: ClientKind, servers: &[&str]) -> ClientStatus {
        ClientStatus {
            client,
            label: client.label(),
            workspace: None,
            deprecated: None,
            path: None,
            exists: true,
            servers: servers.iter().map(|s| s.to_string()).collect(),
            gateways: vec![],
            other_entries: 0,
            others: vec![],
            drifted: false,
            drift: vec![],
            error: None,
        }
    }

    #[test]
    fn totals_count_enabled_tools_of_enabled_servers_and_caps_are_checked() {
        let all = vec![
            server("big", true, 45, &["t0"]),
            server("off", false, 10, &[]),
            ServerTools::new(
                "new",
                true,
                &ToolPolicy::default(),
                &Review::default(),
                None,
            ),
        ];
        let clients = vec![
            status(ClientKind::Cursor, &["big", "off"]),
            status(ClientKind::Vscode, &["big"]),
            status(ClientKind::ClaudeCode, &[]),
        ];
        let budget = compute(&all, &clients, None, &BTreeSet::new());
        assert_eq!(budget.tools, 44);
        assert_eq!(budget.tokens, all[0].tokens);
        assert_eq!(
            budget.servers[1],
            ServerBudget {
                name: "new".into(),
                tokens: None,
                tools: None,
                failing: false
            }
        );
        assert_eq!(
            budget.clients.len(),
            2,
            "clients without Plugboard entries are left out"
        );
        assert_eq!(
            budget.clients[0],
            ClientBudget {
                client: "cursor".into(),
                tools: 44,
                cap: Some(40),
                over: true
            }
        );
        assert!(!budget.clients[1].over);
        let cursor = compute(&all, &clients, Some(ClientKind::Cursor), &BTreeSet::new());
        assert_eq!(cursor.servers.len(), 1);
        assert_eq!(cursor.clients.len(), 1);
        let json = serde_json::to_value(&budget).unwrap();
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&json), ["clients", "servers", "tokens", "tools"]);
        assert_eq!(
            keys(&json["servers"][0]),
            ["failing", "name", "tokens", "tools"]
        );
        // A server whose last test failed keeps its figures but is not counted, nor given to
        // the clients that launch it.
        let failing = BTreeSet::from(["big".to_owned()]);
        let broken = compute(&all, &clients, None, &failing);
        assert!(broken.servers[0].failing && broken.servers[0].tools == Some(44));
        assert_eq!((broken.tools, broken.tokens), (0, 0));
        assert_eq!(broken.clients[0].tools, 0);
        assert_eq!(
            keys(&json["clients"][0]),
            ["cap", "client", "over", "tools"]
        );
    }
}
