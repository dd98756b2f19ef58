//! `plugboard diff NAME` (how the last seen tools differ from the approved pin) and
//! `plugboard approve NAME` (accept them). `plugboard test` reports changed tools with a loud
//! warning but exits 0 (it answers "does it work"); `plugboard diff` exits 1 while the tools
//! differ, so scripts can gate on it.

use super::CliError;
use super::output::print_json;
use crate::manage::Servers;
use crate::pinning::{DiffReport, PathChange, PathOp, PinError, PinStore};

fn store(servers: &Servers, name: &str) -> Result<PinStore, CliError> {
    // An unknown server is a usage error (exit 2).
    servers.config().load()?.server(name)?;
    Ok(PinStore::in_config_dir(servers.config().dir()))
}

fn pin_error(err: PinError) -> CliError {
    CliError::failed(err.to_string())
}

fn value(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map(|v| v.to_string()).unwrap_or_default()
}

fn print_paths(title: &str, changes: &[PathChange]) {
    if changes.is_empty() {
        return;
    }
    println!("    {title}:");
    for c in changes {
        match c.change {
            PathOp::Added => println!("      + {}: {}", c.path, value(&c.after)),
            PathOp::Removed => println!("      - {}: {}", c.path, value(&c.before)),
            PathOp::Changed => println!(
                "      ~ {}: {} → {}",
                c.path,
                value(&c.before),
                value(&c.after)
            ),
        }
    }
}

/// The human form of a diff report.
pub fn print_report(report: &DiffReport) {
    let name = &report.name;
    match report.state.as_str() {
        "unpinned" => {
            println!("`{name}` has no pin yet: its tools are pinned on its first successful test.")
        }
        "approved" => println!("✓ `{name}`: the tools are the approved ones."),
        "unapproved" => {
            println!("! `{name}`: nothing approved yet (its tools are flagged); review them:")
        }
        _ => println!("! `{name}`: TOOLS CHANGED since you approved them:"),
    }
    let c = &report.changes;
    if !c.added.is_empty() {
        println!("  added:   {}", c.added.join(", "));
    }
    if !c.removed.is_empty() {
        println!("  removed: {}", c.removed.join(", "));
    }
    for change in &c.changed {
        println!("  changed: {} ({})", change.name, change.fields.join(", "));
        if !change.description_diff.is_empty() {
            println!("    description:");
            for line in &change.description_diff {
                println!("      {} {}", line.op.marker(), line.text);
            }
        }
        print_paths("input schema", &change.schema_diff);
        print_paths("annotations", &change.annotations_diff);
    }
    if !c.instructions_diff.is_empty() {
        println!("  server instructions:");
        for line in &c.instructions_diff {
            println!("      {} {}", line.op.marker(), line.text);
        }
    }
    if !report.flags.is_empty() {
        println!("  flagged:");
        for flag in &report.flags {
            println!("    ! {} [{}]: {}", flag.tool, flag.code, flag.detail);
        }
    }
}

pub fn diff(servers: &Servers, name: &str, json: bool) -> Result<(), CliError> {
    let report = store(servers, name)?.report(name).map_err(pin_error)?;
    if json {
        print_json(&report)?;
    } else {
        print_report(&report);
    }
    match report.state.as_str() {
        "approved" => Ok(()),
        "unpinned" => Err(CliError::failed(format!(
            "`{name}` is not pinned yet: run `plugboard test {name}`"
        ))),
        _ => Err(CliError::failed(format!(
            "the tools of `{name}` are not approved; accept them with `plugboard approve {name}`"
        ))),
    }
}

pub fn approve(servers: &Servers, name: &str, json: bool) -> Result<(), CliError> {
    let store = store(servers, name)?;
    let tools = store.approve(name).map_err(pin_error)?;
    let report = store.report(name).map_err(pin_error)?;
    if json {
        print_json(&report)?;
    } else {
        println!("✓ approved the {tools} tools of `{name}` as last seen.");
        for flag in &report.flags {
            println!(
                "  note: still flagged: {} [{}]: {}",
                flag.tool, flag.code, flag.detail
            );
        }
    }
    Ok(())
}
