//! `plugboard tools NAME` (a server's tools: state, hints, cost; switching them) and
//! `plugboard budget` (what the enabled servers cost, per client against its tool cap).
//! Output only; the work is in `crate::tools` and `crate::budget`.

use serde::Serialize;
use serde_json::Value;

use super::CliError;
use super::args::{AnnotatedArg, BudgetArgs, NewToolsArg, ToolsArgs};
use super::clients_cmd::kind_of;
use super::output::{print_json, print_table, truncate};
use crate::budget::{Budget, budget as compute_budget};
use crate::config::{NewTools, StateReason};
use crate::manage::Servers;
use crate::tokens::{ESTIMATE_NOTE, TOKENIZER};
use crate::tools::{Annotated, ServerTools, ToolsChange, ToolsError, change_tools, server_tools};

impl From<ToolsError> for CliError {
    fn from(err: ToolsError) -> Self {
        match err {
            ToolsError::Config(e) => e.into(),
            other => CliError::usage(other.to_string()),
        }
    }
}

/// `tools --json`: the contract shape (docs/cli.md).
#[derive(Serialize)]
struct ToolsJson<'a> {
    server: &'a str,
    tools: Vec<ToolJson<'a>>,
    tokens: usize,
}

#[derive(Serialize)]
struct ToolJson<'a> {
    name: &'a str,
    enabled: bool,
    annotations: &'a Option<Value>,
    tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    ui: &'a Option<String>,
}

fn change_of(args: &ToolsArgs) -> ToolsChange {
    ToolsChange {
        disable: args.disable.clone(),
        enable: args.enable.clone(),
        all: if args.enable_all {
            Some(true)
        } else if args.disable_all {
            Some(false)
        } else {
            None
        },
        only: args.only.clone(),
        disable_annotated: args.disable_annotated.map(|a| match a {
            AnnotatedArg::Destructive => Annotated::Destructive,
            AnnotatedArg::OpenWorld => Annotated::OpenWorld,
            AnnotatedArg::NotReadOnly => Annotated::NotReadOnly,
        }),
        new_tools: args.new_tools.map(|n| match n {
            NewToolsArg::Enabled => Some(NewTools::Enabled),
            NewToolsArg::Disabled => Some(NewTools::Disabled),
            NewToolsArg::Auto => None,
        }),
    }
}

pub fn tools(servers: &Servers, args: ToolsArgs) -> Result<(), CliError> {
    let change = change_of(&args);
    let before = (!change.is_empty())
        .then(|| server_tools(servers, &args.name))
        .transpose()?;
    let view = if change.is_empty() {
        server_tools(servers, &args.name)?
    } else {
        change_tools(servers, &args.name, &change)?
    };
    if args.json.json {
        return print_json(&ToolsJson {
            server: &view.server,
            tools: view
                .tools
                .iter()
                .map(|t| ToolJson {
                    name: &t.name,
                    enabled: t.enabled,
                    annotations: &t.annotations,
                    tokens: t.tokens,
                    ui: &t.ui,
                })
                .collect(),
            tokens: view.tokens,
        });
    }
    if let Some(before) = &before {
        print_changes(servers.config().dir(), before, &view);
    }
    print_tools(&view);
    Ok(())
}

fn print_changes(config_dir: &std::path::Path, before: &ServerTools, after: &ServerTools) {
    let switched = |on: bool| -> Vec<&str> {
        after
            .tools
            .iter()
            .filter(|t| {
                t.enabled == on
                    && before
                        .tools
                        .iter()
                        .any(|b| b.name == t.name && b.enabled != on)
            })
            .map(|t| t.name.as_str())
            .collect()
    };
    let (off, on) = (switched(false), switched(true));
    if !off.is_empty() {
        println!("Disabled: {}.", off.join(", "));
    }
    if !on.is_empty() {
        println!("Enabled: {}.", on.join(", "));
    }
    if off.is_empty() && on.is_empty() {
        println!("No tool changed state.");
    }
    if before.tokens != after.tokens {
        println!(
            "Tool definitions: {} → {} tokens ({}).",
            before.tokens, after.tokens, ESTIMATE_NOTE
        );
    }
    println!(
        "{}",
        crate::run::sessions::notice(config_dir, &after.server)
    );
    println!();
}

fn print_tools(view: &ServerTools) {
    if view.observed_at_ms.is_none() {
        println!(
            "The tools of `{}` are not known yet: test it (`plugboard test {}`) to list them.",
            view.server, view.server
        );
        return;
    }
    println!(
        "{}: {} of {} tools enabled, {} tokens of tool definitions (an estimate: {}){}",
        view.server,
        view.enabled,
        view.tools.len(),
        view.tokens,
        TOKENIZER,
        if view.server_enabled {
            ""
        } else {
            "; the server itself is disabled"
        }
    );
    let new_tools = match (view.new_tools, view.new_tools_chosen) {
        (NewTools::Enabled, true) => "enabled (chosen)",
        (NewTools::Disabled, true) => "disabled (chosen)",
        (NewTools::Enabled, false) => "enabled (automatic: nothing approved yet)",
        (NewTools::Disabled, false) => {
            "disabled until reviewed (automatic: the tools are pinned and approved)"
        }
    };
    println!("Tools that appear later: {new_tools}.");
    let mut rows = vec![vec![
        "STATE".to_string(),
        "TOOL".to_string(),
        "TOKENS".to_string(),
        "HINTS (from the server, unverified)".to_string(),
    ]];
    for tool in &view.tools {
        let state = match (tool.enabled, tool.reason) {
            (true, _) => "on",
            (false, StateReason::Unreviewed) => "off (new, not reviewed)",
            (false, StateReason::Flagged) => "off (flagged: approve to use)",
            (false, _) => "off",
        };
        rows.push(vec![
            state.to_string(),
            truncate(&tool.name, 48),
            tool.tokens.to_string(),
            tool.hints.label(),
        ]);
    }
    print_table(&rows);
    for tool in view.tools.iter().filter(|t| t.ui.is_some()) {
        let uri = tool.ui.as_deref().unwrap_or_default();
        println!(
            "`{}` has an interactive UI ({uri}): shown in the app's Try it; save its HTML with \
             `plugboard read {} {uri} --save FILE`.",
            tool.name, view.server
        );
    }
    if let Some(off) = view.tools.iter().find(|t| !t.enabled) {
        println!(
            "Enable one with `plugboard tools {} --enable {}`.",
            view.server, off.name
        );
    }
}

pub fn budget(servers: &Servers, args: BudgetArgs) -> Result<(), CliError> {
    let budget = compute_budget(servers, args.client.map(kind_of))?;
    if args.json.json {
        return print_json(&budget);
    }
    print_budget(&budget);
    Ok(())
}

fn print_budget(budget: &Budget) {
    println!(
        "Enabled servers' tools: {} tools, {} tokens of tool definitions ({}).",
        budget.tools, budget.tokens, ESTIMATE_NOTE
    );
    let mut rows = vec![vec![
        "SERVER".to_string(),
        "TOOLS".to_string(),
        "TOKENS".to_string(),
    ]];
    for server in &budget.servers {
        let (tools, tokens) = match (server.tools, server.tokens) {
            (Some(tools), Some(tokens)) => (tools.to_string(), tokens.to_string()),
            _ => ("?".into(), "not tested yet".into()),
        };
        rows.push(vec![server.name.clone(), tools, tokens]);
    }
    if budget.servers.is_empty() {
        println!("  (no enabled servers)");
    } else {
        print_table(&rows);
    }
    if budget.clients.is_empty() {
        println!("No client launches Plugboard servers yet (`plugboard export --client C`).");
        return;
    }
    println!();
    for client in &budget.clients {
        let label = crate::clients::ClientKind::from_id(&client.client)
            .map(|k| k.label())
            .unwrap_or(&client.client);
        match client.cap {
            Some(cap) if client.over => println!(
                "warning: {label} gets {} tools from Plugboard, over its limit of {cap}: switch \
                 some off (`plugboard tools NAME --disable …`) or disable a server",
                client.tools
            ),
            Some(cap) => println!(
                "{label}: {} tools from Plugboard (its limit: {cap}).",
                client.tools
            ),
            None => println!("{label}: {} tools from Plugboard.", client.tools),
        }
    }
}
