//! `plugboard registry sync|status|add|remove|pinning`: the registries Plugboard reads, their
//! caches, and whether registry launches pin their dependencies.

use std::io::IsTerminal;

use serde::Serialize;

use super::CliError;
use super::args::{RegistryCommand, Toggle};
use super::output::{print_json, print_table, progress_line};
use super::test_cmd::runtime;
use crate::config::config_dir;
use crate::registry::sources::{self, SourcesError};
use crate::registry::sync::{CacheStatus, SyncProgress, SyncReport, cache_status, sync_registry};
use crate::registry::time::{describe_age, now_secs};

impl From<SourcesError> for CliError {
    fn from(err: SourcesError) -> Self {
        CliError::usage(err.to_string())
    }
}

fn home() -> Result<std::path::PathBuf, CliError> {
    config_dir().ok_or_else(|| {
        CliError::usage(
            "no config directory: set PLUGBOARD_HOME or HOME so Plugboard knows where to keep its files",
        )
    })
}

pub fn run(command: RegistryCommand) -> Result<(), CliError> {
    let dir = home()?;
    match command {
        RegistryCommand::Sync(args) => sync(&dir, args.full, args.json.json),
        RegistryCommand::Status(args) => status(&dir, args.json),
        RegistryCommand::Add(args) => {
            let url = sources::add(&dir, &args.url)?;
            println!("Added {url}; `plugboard registry sync` fetches its listing.");
            Ok(())
        }
        RegistryCommand::Remove(args) => {
            let (url, listed) = sources::remove(&dir, &args.url)?;
            if listed {
                println!("Removed {url}: its servers are no longer listed.");
            } else {
                println!("{url} was not in the list; it stays out of it.");
            }
            Ok(())
        }
        RegistryCommand::Pinning(args) => {
            let on = matches!(args.state, Toggle::On);
            sources::set_pinning(&dir, on)?;
            println!(
                "{}",
                if on {
                    "Registry launches now resolve their dependencies as of the version's \
                     publication date (PyPI: uv --exclude-newer; npm: --before where npm allows it)."
                } else {
                    "Registry launches now take their dependencies' newest versions."
                }
            );
            Ok(())
        }
    }
}

#[derive(Serialize)]
struct SyncOutput {
    ok: bool,
    registries: Vec<SyncReport>,
}

fn sync(dir: &std::path::Path, full: bool, json: bool) -> Result<(), CliError> {
    let registries = sources::registries(dir)?;
    let tty = std::io::stderr().is_terminal() && !json;
    let mut reports = vec![];
    let rt = runtime()?;
    for registry in &registries {
        let mut expected = None;
        let mut progress = |event: SyncProgress| match event {
            SyncProgress::Started {
                registry,
                full,
                expected: e,
            } => {
                expected = e;
                if !json {
                    eprintln!(
                        "Syncing {registry} ({})",
                        if full {
                            "everything"
                        } else {
                            "changes since the last sync"
                        }
                    );
                }
            }
            SyncProgress::Page { rows, pages, .. } if tty => {
                let of = expected
                    .map(|e| format!(" of about {e}"))
                    .unwrap_or_default();
                progress_line(&format!("  {rows} rows{of} ({pages} pages)"));
            }
            SyncProgress::Page { .. } => {}
        };
        let report = rt.block_on(sync_registry(dir, registry, full, &mut progress));
        if tty {
            progress_line("");
        }
        if !json {
            print_report(dir, &report);
        }
        reports.push(report);
    }
    let ok = reports.iter().all(|r| r.ok);
    if json {
        print_json(&SyncOutput {
            ok,
            registries: reports,
        })?;
    }
    if ok {
        Ok(())
    } else {
        Err(CliError::failed(
            "some registries could not be synced; their cached listings are still used",
        ))
    }
}

fn print_report(dir: &std::path::Path, report: &SyncReport) {
    if report.ok {
        let what = if report.full {
            format!("{} servers", report.servers)
        } else {
            format!(
                "{} changed, {} removed, {} servers in all",
                report.changed, report.removed, report.servers
            )
        };
        let skipped = if report.skipped > 0 {
            format!(
                "; {} unreadable rows skipped (e.g. {})",
                report.skipped,
                report.skipped_examples.first().cloned().unwrap_or_default()
            )
        } else {
            String::new()
        };
        println!(
            "{}: {what} ({} pages, API {}, {:.1} s){skipped}",
            report.registry,
            report.pages,
            report.api,
            report.ms as f64 / 1000.0
        );
        if report.truncated {
            eprintln!(
                "warning: {} kept naming more pages; one sync reads at most {} pages and {} \
                 rows, so the rest was not read (a registry that never ends its listing is \
                 broken or hostile)",
                report.registry,
                crate::registry::sync::MAX_PAGES,
                crate::registry::sync::MAX_ROWS,
            );
        }
    } else {
        println!(
            "{}: sync failed ({}): {}",
            report.registry,
            report.error_code.as_deref().unwrap_or("error"),
            report.error.as_deref().unwrap_or("")
        );
        if let Some(hint) = &report.hint {
            println!("  {hint}");
        }
        let status = cache_status(
            dir,
            &[sources::RegistrySource {
                url: report.registry.clone(),
                origin: sources::Origin::Settings,
            }],
        );
        match status
            .first()
            .and_then(|s| s.synced_at.map(|t| (s.servers, t)))
        {
            Some((servers, at)) => println!(
                "  Offline: listing the {servers} servers cached {} ago.",
                describe_age(at, now_secs())
            ),
            None => println!("  Nothing is cached for it yet."),
        }
    }
}

#[derive(Serialize)]
struct StatusOutput {
    registries: Vec<CacheStatus>,
    pin_dependencies: bool,
}

fn status(dir: &std::path::Path, json: bool) -> Result<(), CliError> {
    let registries = sources::registries(dir)?;
    let statuses = cache_status(dir, &registries);
    let pinning = sources::pinning_enabled(dir);
    if json {
        return print_json(&StatusOutput {
            registries: statuses,
            pin_dependencies: pinning,
        });
    }
    let now = now_secs();
    let mut rows = vec![vec![
        "REGISTRY".to_string(),
        "FROM".to_string(),
        "SERVERS".to_string(),
        "SYNCED".to_string(),
    ]];
    for s in &statuses {
        rows.push(vec![
            s.registry.clone(),
            match s.origin {
                sources::Origin::Default => "default",
                sources::Origin::Environment => "PLUGBOARD_REGISTRY_URL",
                sources::Origin::Settings => "added",
                sources::Origin::Policy => "policy",
            }
            .to_string(),
            if s.cached {
                s.servers.to_string()
            } else {
                "-".into()
            },
            match s.synced_at {
                Some(at) => format!("{} ago", describe_age(at, now)),
                None => "never".into(),
            },
        ]);
    }
    print_table(&rows);
    for s in statuses.iter().filter_map(|s| s.problem.as_ref()) {
        eprintln!("warning: {s}");
    }
    println!(
        "Dependency pinning of registry launches: {}.",
        if pinning {
            "on"
        } else {
            "off (`plugboard registry pinning on`)"
        }
    );
    Ok(())
}
