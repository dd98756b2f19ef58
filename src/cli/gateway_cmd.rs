//! `plugboard serve`, `plugboard profile …` and `plugboard activity`: the gateway, its
//! profiles and its record of calls.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::json;

use super::CliError;
use super::args::{ActivityArgs, ProfileCommand, ServeArgs};
use super::output::{print_json, print_table};
use super::test_cmd::runtime;
use crate::gateway::access::{Access, profile_token, rotate_profile_token};
use crate::gateway::activity::{ActivityLog, ActivityRecord};
use crate::gateway::hooks::Hook;
use crate::gateway::http::{MCP_PATH, serve_http};
use crate::gateway::hub::Hub;
use crate::gateway::serve::serve_stdio;
use crate::gateway::status::{StatusFile, running};
use crate::gateway::{Permission, ProfileError, ProfileStore, servers_of};
use crate::manage::Servers;
use plugboard_ops::profile_overview::overview;

impl From<ProfileError> for CliError {
    fn from(err: ProfileError) -> Self {
        match err {
            ProfileError::File { .. } => CliError::failed(err.to_string()),
            other => CliError::usage(other.to_string()),
        }
    }
}

/// Serve the profile on stdio until the client's input ends, or over HTTP on loopback until
/// stopped.
pub fn serve(args: ServeArgs) -> Result<(), CliError> {
    let servers = Arc::new(Servers::open_default()?);
    if args.status {
        return print_running(servers.config().dir(), args.json.json);
    }
    let profile = ProfileStore::in_config_dir(servers.config().dir()).get(&args.profile)?;
    if args.print_headers {
        return print_headers(&servers, &args.profile);
    }
    if args.rotate_token {
        rotate_profile_token(&servers, &args.profile)?;
        eprintln!(
            "Profile `{}` has a new bearer token; clients holding the old one are refused once its \
             gateway restarts.",
            args.profile
        );
        return Ok(());
    }
    let http = args.http.as_deref().map(loopback_address).transpose()?;
    let token = match http {
        Some(_) => Some(profile_token(&servers, &args.profile)?),
        None => None,
    };
    let config = servers.config().load()?;
    let members = servers_of(&profile, &config);
    let policy = crate::policy::current();
    policy.usable()?;
    let side_effects_floor = policy
        .gateway_side_effects()
        .and_then(Permission::parse)
        .unwrap_or(Permission::Allow);
    let adopts = crate::connect::orphans::adopt_orphans();
    eprintln!(
        "plugboard serve: profile `{}`, {} server(s): {}",
        args.profile,
        members.len(),
        members.join(", ")
    );
    let hub = Hub::new(
        Arc::clone(&servers),
        &args.profile,
        profile,
        members,
        side_effects_floor,
    );
    hub.publish_status(StatusFile::for_this_process(servers.config().dir()));
    let local = tokio::task::LocalSet::new();
    let runtime = runtime()?;
    match (http, token) {
        (Some(address), Some(token)) => {
            let listener = runtime
                .block_on(tokio::net::TcpListener::bind(address))
                .map_err(|e| CliError::failed(format!("cannot listen on {address}: {e}")))?;
            let bound = listener
                .local_addr()
                .map_err(|e| CliError::failed(e.to_string()))?;
            eprintln!(
                "plugboard serve: http://{bound}{MCP_PATH} (clients send `Authorization: Bearer` \
                 with the profile's token: `plugboard serve --profile {} --print-headers`)",
                args.profile
            );
            let access = Access::new(bound, token);
            runtime.block_on(local.run_until(serve_http(Rc::clone(&hub), listener, access)));
        }
        _ => runtime.block_on(local.run_until(serve_stdio(Rc::clone(&hub)))),
    }
    if adopts {
        crate::connect::orphans::end_orphans();
    }
    Ok(())
}

/// `--http ADDR`: a loopback socket address, else a usage error (the gateway is never served
/// to the network).
pub(crate) fn loopback_address(text: &str) -> Result<SocketAddr, CliError> {
    let address: SocketAddr = text.parse().map_err(|_| {
        CliError::usage(format!(
            "--http {text}: give a loopback address and port, like 127.0.0.1:8411"
        ))
    })?;
    if !address.ip().is_loopback() {
        return Err(CliError::usage(format!(
            "--http {text}: the gateway is served on loopback only (127.0.0.1 or [::1])"
        )));
    }
    Ok(address)
}

/// `serve --print-headers`: `{"Authorization": "Bearer …"}` for a client's headers helper.
/// Never on a terminal, where the token would be on screen and in scrollback.
fn print_headers(servers: &Servers, profile: &str) -> Result<(), CliError> {
    if std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "--print-headers prints the profile's bearer token for a client's headers helper, \
             which reads it from a pipe; it is not shown on a terminal",
        ));
    }
    let token = profile_token(servers, profile)?;
    println!(
        "{}",
        json!({"Authorization": format!("Bearer {}", token.expose())})
    );
    Ok(())
}

/// `serve --status`: the gateways running now.
fn print_running(config_dir: &std::path::Path, json: bool) -> Result<(), CliError> {
    let gateways = running(config_dir);
    if json {
        return print_json(&gateways);
    }
    if gateways.is_empty() {
        println!("No gateway is running.");
        return Ok(());
    }
    let now = crate::clock::now_ms();
    for gateway in &gateways {
        println!(
            "Gateway {} (profile `{}`, client {}, up {} s)",
            gateway.pid,
            gateway.profile,
            gateway.client.as_deref().unwrap_or("not connected yet"),
            now.saturating_sub(gateway.started_at_ms) / 1000
        );
        let mut rows = vec![vec!["  SERVER".to_owned(), "STATE".into(), String::new()]];
        for server in &gateway.servers {
            let detail = match (&server.why, server.restarts) {
                (Some(why), 0) => why.clone(),
                (Some(why), n) => format!("{why} (restarted {n} time(s), retrying)"),
                (None, _) if server.state == "idle" => "starts on its first use".to_owned(),
                (None, _) => String::new(),
            };
            rows.push(vec![
                format!("  {}", server.name),
                server.state.clone(),
                detail,
            ]);
        }
        print_table(&rows);
    }
    Ok(())
}

pub fn profile(servers: &Servers, command: ProfileCommand) -> Result<(), CliError> {
    let store = ProfileStore::in_config_dir(servers.config().dir());
    let config = servers.config().load()?;
    match command {
        ProfileCommand::Create {
            name,
            servers: list,
        } => {
            store.create(&name, list, &config)?;
            println!(
                "Created profile `{name}`. A client launches it with `plugboard serve --profile {name}`."
            );
        }
        ProfileCommand::List { json } => {
            let profiles = overview(servers)?;
            if json.json {
                let shown: Vec<_> = profiles
                    .iter()
                    .map(|p| {
                        json!({"name": p.name, "servers": p.servers,
                               "all_enabled": p.all_enabled, "permissions": p.permissions,
                               "tools": p.tools, "tokens": p.tokens, "hidden": p.hidden,
                               "untested": p.untested, "clients": p.clients})
                    })
                    .collect();
                return print_json(&shown);
            }
            let mut rows = vec![vec![
                "PROFILE".to_owned(),
                "SERVERS".into(),
                "TOOLS".into(),
                "TOKENS".into(),
                "RULES".into(),
            ]];
            for p in &profiles {
                rows.push(vec![
                    p.name.clone(),
                    if p.all_enabled {
                        format!("every enabled server ({})", p.servers.len())
                    } else {
                        p.servers.join(", ")
                    },
                    match (p.hidden, p.untested.len()) {
                        (0, 0) => p.tools.to_string(),
                        (hidden, 0) => format!("{} ({hidden} hidden)", p.tools),
                        (0, untested) => format!("{}+ ({untested} untested)", p.tools),
                        (hidden, untested) => {
                            format!("{}+ ({hidden} hidden, {untested} untested)", p.tools)
                        }
                    },
                    p.tokens.to_string(),
                    p.permissions.len().to_string(),
                ]);
            }
            print_table(&rows);
        }
        ProfileCommand::Show { name, json } => {
            let p = store.get(&name)?;
            let servers = servers_of(&p, &config);
            if json.json {
                return print_json(&json!({"name": name, "servers": servers,
                    "all_enabled": p.servers.is_none(), "permissions": p.permissions,
                    "hooks": p.hooks, "hooks_fail_closed": p.hooks_fail_closed,
                    "lazy": p.lazy}));
            }
            println!("Profile `{name}`");
            println!(
                "  servers: {}",
                if servers.is_empty() {
                    "(none)".to_owned()
                } else {
                    servers.join(", ")
                }
            );
            println!(
                "  starts its servers {}",
                if p.lazy {
                    "on first use (those never tested at once)"
                } else {
                    "when the gateway starts"
                }
            );
            for (rule, permission) in &p.permissions {
                println!("  {rule}: {}", permission.as_str());
            }
            for hook in &p.hooks {
                println!("  hook {hook}");
            }
            if !p.hooks.is_empty() {
                println!(
                    "  a failed hook {}",
                    if p.hooks_fail_closed {
                        "blocks the call"
                    } else {
                        "lets the call go on"
                    }
                );
            }
        }
        ProfileCommand::Edit {
            name,
            add,
            remove,
            allow,
            ask,
            deny,
            hide,
            clear,
            hook,
            clear_hooks,
            hooks_fail_closed,
            hooks_fail_open,
            lazy,
            eager,
        } => {
            let hooks = hook
                .iter()
                .map(|h| Hook::parse(h))
                .collect::<Result<Vec<_>, _>>()
                .map_err(CliError::usage)?;
            let p = store.edit(&name, &config, |p| {
                if clear_hooks {
                    p.hooks.clear();
                }
                p.hooks.extend(hooks);
                if hooks_fail_closed {
                    p.hooks_fail_closed = true;
                }
                if hooks_fail_open {
                    p.hooks_fail_closed = false;
                }
                if lazy || eager {
                    p.lazy = lazy;
                }
                if !add.is_empty() || !remove.is_empty() {
                    let list = p.servers.get_or_insert_with(Vec::new);
                    list.extend(add.iter().cloned());
                    list.retain(|s| !remove.contains(s));
                }
                for (rules, permission) in [
                    (&allow, Permission::Allow),
                    (&ask, Permission::Ask),
                    (&deny, Permission::Deny),
                    (&hide, Permission::Hide),
                ] {
                    for rule in rules {
                        p.permissions.insert(rule.clone(), permission);
                    }
                }
                for rule in &clear {
                    p.permissions.remove(rule);
                }
            })?;
            println!(
                "Updated profile `{name}`: {} server(s), {} rule(s), {} hook(s). Running gateways \
                 take it up when they restart.",
                servers_of(&p, &config).len(),
                p.permissions.len(),
                p.hooks.len()
            );
        }
        ProfileCommand::Remove { name } => {
            store.remove(&name)?;
            println!("Removed profile `{name}`.");
        }
    }
    Ok(())
}

pub fn activity(servers: &Servers, args: ActivityArgs) -> Result<(), CliError> {
    let log = ActivityLog::in_config_dir(servers.config().dir());
    let mut cursor = log.end();
    let mut records = log.read();
    let wanted = |r: &ActivityRecord| args.server.as_ref().is_none_or(|s| &r.server == s);
    records.retain(wanted);
    let skip = records.len().saturating_sub(args.last);
    let records = &records[skip..];
    if args.follow {
        for record in records {
            print_record(record, args.json.json)?;
        }
        loop {
            std::thread::sleep(std::time::Duration::from_millis(300));
            for record in log.since(&mut cursor).iter().filter(|r| wanted(r)) {
                print_record(record, args.json.json)?;
            }
        }
    }
    if args.json.json {
        return print_json(records);
    }
    if records.is_empty() {
        println!("No calls through the gateway yet.");
        return Ok(());
    }
    let mut rows = vec![vec![
        "WHEN (UTC)".to_owned(),
        "CLIENT".into(),
        "PROFILE".into(),
        "TOOL".into(),
        "DECISION".into(),
        "OUTCOME".into(),
        "MS".into(),
    ]];
    rows.extend(records.iter().map(row_of));
    print_table(&rows);
    Ok(())
}

fn row_of(r: &ActivityRecord) -> Vec<String> {
    vec![
        crate::registry::time::format_rfc3339((r.at_ms / 1000) as i64),
        r.client.clone().unwrap_or_else(|| "-".into()),
        r.profile.clone(),
        format!("{}__{}", r.server, r.tool),
        r.decision.clone(),
        r.outcome.clone(),
        format!("{:.0}", r.duration_ms),
    ]
}

/// One record as `--follow` prints it: a JSON line, or the table's columns.
fn print_record(record: &ActivityRecord, json: bool) -> Result<(), CliError> {
    if json {
        let line = serde_json::to_string(record)
            .map_err(|e| CliError::failed(format!("could not encode a record: {e}")))?;
        std::println!("{}", super::output::json_safe(&line));
    } else {
        println!("{}", row_of(record).join("  "));
    }
    Ok(())
}
