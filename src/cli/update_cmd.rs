//! `plugboard outdated` and `plugboard update`: installed registry servers with a newer
//! version, and moving one to it (tested before it is saved, with the tool diff).

use std::io::IsTerminal;

use super::CliError;
use super::args::{OutdatedArgs, UpdateArgs};
use super::catalog_cmd::load_market;
use super::input::{key_value, prompt_line};
use super::output::{print_json, print_table};
use super::test_cmd::{print_result, progress_printer, runtime};
use crate::manage::Servers;
use crate::pinning::ToolChanges;
use crate::registry::sources::registries;
use crate::registry::sync_registry;
use crate::updates::{self, PendingUpdate, Standing, UpdateError};

impl From<UpdateError> for CliError {
    fn from(err: UpdateError) -> Self {
        match err {
            UpdateError::Secrets(e) => e.into(),
            UpdateError::Manage(e) => e.into(),
            UpdateError::Config(e) => e.into(),
            UpdateError::Policy(r) => r.into(),
            UpdateError::Bundle(e) => CliError::failed(e.to_string()),
            UpdateError::Find(e) => e.into(),
            other => CliError::usage(other.to_string()),
        }
    }
}

pub fn outdated(servers: &Servers, args: OutdatedArgs) -> Result<(), CliError> {
    let dir = servers.config().dir().to_owned();
    let config = servers.config().load()?;
    let wanted: Vec<String> = config
        .servers()
        .into_iter()
        .filter_map(|(_, s)| {
            s.ok()
                .and_then(|s| updates::origin(&s).map(|o| o.url.clone()))
        })
        .collect();
    let mut offline_notes = Vec::new();
    if !args.offline && !wanted.is_empty() {
        let rt = runtime()?;
        for source in registries(&dir)?.iter().filter(|r| wanted.contains(&r.url)) {
            let report = rt.block_on(sync_registry(&dir, source, false, &mut |_| {}));
            if let Some(error) = &report.error {
                offline_notes.push(format!(
                    "{} could not be reached ({error}): its cached listing is used",
                    source.url
                ));
            }
        }
    }
    let (market, _) = load_market()?;
    let rows = updates::outdated(servers, market.listing())?;
    if args.json.json {
        return print_json(&rows);
    }
    for note in &offline_notes {
        eprintln!("warning: {note}");
    }
    if rows.is_empty() {
        println!("No installed server comes from a registry.");
        return Ok(());
    }
    let mut table = vec![vec![
        "NAME".to_owned(),
        "INSTALLED".into(),
        "LATEST".into(),
        "STATE".into(),
        "REGISTRY NAME".into(),
    ]];
    for r in &rows {
        let state = match r.state {
            Standing::Current => "up to date".to_owned(),
            Standing::UpdateAvailable => "update available".to_owned(),
            Standing::NotListed => "no longer listed by its registry".to_owned(),
            Standing::Removed => format!(
                "removed from the registry: {}",
                r.removed.as_deref().unwrap_or("no reason given")
            ),
        };
        let state = match &r.deprecated {
            Some(message) => format!("{state}; deprecated: {message}"),
            None => state,
        };
        table.push(vec![
            r.name.clone(),
            r.installed.clone(),
            r.latest.clone().unwrap_or_else(|| "-".into()),
            state,
            r.registry_name.clone(),
        ]);
    }
    print_table(&table);
    let available = rows
        .iter()
        .filter(|r| r.state == Standing::UpdateAvailable)
        .count();
    if available > 0 {
        println!("Update with `plugboard update NAME` (it is tested before it is saved).");
    }
    Ok(())
}

/// The tool diff, as lines.
fn diff_lines(changes: &ToolChanges) -> Vec<String> {
    let mut out = Vec::new();
    for name in &changes.added {
        out.push(format!("  + {name} (new tool)"));
    }
    for name in &changes.removed {
        out.push(format!("  - {name} (removed)"));
    }
    for change in &changes.changed {
        out.push(format!(
            "  ~ {} ({} changed)",
            change.name,
            change.fields.join(", ")
        ));
        for line in &change.description_diff {
            out.push(format!("      {}{}", line.op.marker(), line.text));
        }
        for path in &change.schema_diff {
            out.push(format!("      schema {}", path.path));
        }
    }
    if !changes.instructions_diff.is_empty() {
        out.push("  ~ the server's instructions changed".into());
    }
    out
}

/// `update --dry-run --json`: the plan, nothing started.
#[derive(serde::Serialize)]
struct PlanReport<'a> {
    name: &'a str,
    from: &'a str,
    to: &'a str,
    applied: bool,
    launch: &'a crate::launch_diff::LaunchDiff,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    dropped_fields: &'a [String],
}

#[derive(serde::Serialize)]
struct UpdateReport<'a> {
    name: &'a str,
    from: &'a str,
    to: &'a str,
    applied: bool,
    launch: &'a crate::launch_diff::LaunchDiff,
    test: &'a crate::probe::TestResult,
    tool_changes: &'a ToolChanges,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    dropped_fields: &'a [String],
}

fn report<'a>(p: &'a PendingUpdate, applied: bool) -> UpdateReport<'a> {
    UpdateReport {
        name: &p.name,
        from: &p.from_version,
        to: &p.to_version,
        applied,
        launch: &p.launch,
        test: &p.test,
        tool_changes: &p.changes,
        dropped_fields: &p.dropped_inputs,
    }
}

pub fn update(servers: &Servers, args: UpdateArgs) -> Result<(), CliError> {
    let json = args.json.json;
    let mut sets = Vec::new();
    for raw in &args.set {
        let (k, v) = key_value(raw, "--set")?;
        sets.push((k.to_owned(), v.to_owned()));
    }
    let (market, _) = load_market()?;
    let policy = crate::policy::current();
    if !json {
        eprintln!(
            "Preparing `{}` at {}",
            args.name,
            args.to.as_deref().unwrap_or("the latest version")
        );
    }
    let rt = runtime()?;
    let planned = rt.block_on(updates::plan(
        servers,
        &market,
        &policy,
        &args.name,
        args.to.as_deref(),
        &sets,
    ))?;
    if !json {
        println!(
            "`{}`: {} → {}",
            planned.name, planned.from_version, planned.to_version
        );
        for warning in &planned.warnings {
            eprintln!("WARNING: {warning}");
        }
        if planned.launch.changes.is_empty() {
            println!("Launch: unchanged.");
        } else {
            println!("Launch:");
            for line in planned.launch.lines() {
                println!("{line}");
            }
        }
    }
    if args.dry_run {
        // The new version is not started: starting it would hand it the server's secrets.
        if json {
            return print_json(&PlanReport {
                name: &planned.name,
                from: &planned.from_version,
                to: &planned.to_version,
                applied: false,
                launch: &planned.launch,
                dropped_fields: &planned.dropped_inputs,
            });
        }
        println!(
            "Dry run: nothing was started or changed. The tool diff needs the new version \
             started with this server's settings and secrets: run without --dry-run to see it \
             before anything is saved."
        );
        return Ok(());
    }
    if planned.launch.needs_consent() && !args.yes {
        let ask = std::io::stdin().is_terminal() && !json;
        let yes = ask
            && prompt_line(&format!(
                "{} {} runs another program or package, or talks to another host, and would \
                 get this server's secrets. Start it with them to test it? [y/N]",
                planned.name, planned.to_version
            ))?
            .is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes"));
        if !yes {
            return Err(CliError::usage(format!(
                "{} of `{}` would send its secrets to a new destination (shown above): nothing \
                 was started or changed; pass --yes to allow it",
                planned.to_version, planned.name
            )));
        }
    }
    let pending = rt.block_on(planned.test(progress_printer(!json)));
    let diff = diff_lines(&pending.changes);
    if !json {
        print_result(&pending.name, &pending.test);
        if pending.changes.is_empty() {
            println!("Tools: unchanged.");
        } else {
            println!("Tools: {}", pending.changes.summary());
            for line in &diff {
                println!("{line}");
            }
        }
        if !pending.dropped_inputs.is_empty() {
            println!(
                "The new version no longer asks for: {}.",
                pending.dropped_inputs.join(", ")
            );
        }
    }
    if !pending.passed() {
        if json {
            print_json(&report(&pending, false))?;
        }
        return Err(CliError::failed(format!(
            "the test of {} failed: nothing was changed; `{}` stays at {}",
            pending.to_version, pending.name, pending.from_version
        )));
    }
    if !pending.changes.is_empty() && !args.yes {
        let ask = std::io::stdin().is_terminal() && !json;
        let yes = ask
            && prompt_line("The tools change as shown. Apply the update? [y/N]")?
                .is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes"));
        if !yes {
            return Err(CliError::usage(format!(
                "the tools of `{}` change with {}: nothing was changed; review the diff and pass \
                 --yes to apply it",
                pending.name, pending.to_version
            )));
        }
    }
    let (name, from, to) = (
        pending.name.clone(),
        pending.from_version.clone(),
        pending.to_version.clone(),
    );
    if json {
        let shown = serde_json::to_value(report(&pending, true)).expect("serializes");
        updates::apply(servers, pending)?;
        return print_json(&shown);
    }
    updates::apply(servers, pending)?;
    println!("Updated `{name}` from {from} to {to}.");
    Ok(())
}
