//! `plugboard test` (an installed server, or an ad hoc command or URL that is not saved) and
//! `plugboard health` (every enabled server at once), with live stage progress on stderr.

use std::io::IsTerminal;
use std::pin::Pin;
use std::time::Duration;

use serde::Serialize;

use super::CliError;
use super::args::{HealthArgs, RemoteTransport, TestArgs};
use super::input::{SecretInput, key_value};
use super::output::{print_json, print_table, progress_line, truncate};
use crate::catalog::Catalog;
use crate::checks;
use crate::config::{
    Auth, ConfigValue, SecretRef, ServerConfig, TransportKind, validate_env_key,
    validate_header_name,
};
use crate::form::PreparedServer;
use crate::health::DEFAULT_PARALLELISM;
use crate::manage::{ManageError, Servers};
use crate::probe::{StageEvent, TestResult, Verification};

/// The runtime for one command: a single thread. A command's work is waiting on servers and
/// sockets, and one test is a handful of messages in sequence: on one thread each of them
/// needs no wake-up of another thread, there are no workers to start and join, and the
/// program carries no multi-thread scheduler (smaller, so quicker to start: BENCHMARKS.md).
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        // A handful of sockets and pipes at a time: room for 1,024 events (tokio's default)
        // is 12 KiB of memory to touch, three page faults for nothing.
        .max_io_events_per_tick(64)
        .build()
        .map_err(|e| CliError::failed(format!("could not start the async runtime: {e}")))
}

/// Prints each stage as it finishes (and, on a terminal, the one running now).
pub fn progress_printer(enabled: bool) -> impl FnMut(StageEvent) {
    let tty = std::io::stderr().is_terminal();
    move |event| {
        if !enabled {
            return;
        }
        match event {
            StageEvent::Started { stage } if tty => progress_line(&format!("  … {stage}")),
            StageEvent::Started { .. } => {}
            StageEvent::Finished { stage, ok, ms } => {
                if tty {
                    progress_line("");
                }
                let mark = if ok { "✓" } else { "✗" };
                // Formatted first: standard error is unbuffered, and each padding space
                // would be a write of its own.
                let line = format!("  {mark} {:<17} {ms:>6} ms\n", stage.as_str());
                eprint!("{line}");
            }
        }
    }
}

/// The human summary of a result on stdout.
pub fn print_result(name: &str, result: &TestResult) {
    if result.ok {
        let server = result
            .server
            .as_ref()
            .map(|s| format!("{} {}", s.name, s.version).trim().to_string())
            .unwrap_or_default();
        let era = result
            .era
            .map(|era| format!(" ({era})"))
            .unwrap_or_default();
        let protocol = format!(
            "{server}, protocol {}{era} over {}",
            result.protocol_version.as_deref().unwrap_or("?"),
            result.transport.label()
        );
        // The first words say what was proven: a key nobody checked is not "works".
        match (result.verification, result.credentials_sent) {
            (Verification::Verified, _) => {
                println!("✓ `{name}` works and its credentials were verified: {protocol}.")
            }
            (Verification::ConnectivityOnly, false) => println!("✓ `{name}` works: {protocol}."),
            (Verification::ConnectivityOnly, true) => {
                println!("✓ `{name}` started and answered: {protocol}.");
                println!(
                    "  Its credentials were not checked (no credential check is known for it): \
                     a wrong one shows on the first real call."
                );
            }
        }
        println!(
            "  {} tools, {} resources, {} prompts.",
            result.tools.len(),
            result.resources.len(),
            result.prompts.len()
        );
        for tool in &result.tools {
            let description = tool
                .description
                .as_deref()
                .and_then(|d| d.lines().next())
                .unwrap_or("");
            println!(
                "    {:<40} {}",
                tool.adapted_name,
                truncate(description, 60)
            );
        }
        for warning in &result.warnings {
            println!("  note: {warning}");
        }
        if let Some(sandbox) = &result.sandbox {
            println!("  sandbox: {sandbox}");
        }
    } else {
        let kind = result.error_kind.map(|k| k.as_str()).unwrap_or("unknown");
        println!(
            "✗ `{name}` failed ({kind}): {}",
            result.error.as_deref().unwrap_or("")
        );
        if let Some(hint) = &result.hint {
            println!("  what to do: {hint}");
        }
        if let Some(sandbox) = &result.sandbox {
            println!("  sandbox: {sandbox}");
        }
        if let Some(tail) = result
            .stderr_tail
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        {
            println!("  last stderr lines:");
            for line in tail.lines() {
                println!("    | {line}");
            }
        }
    }
}

fn finish(name: &str, result: &TestResult, json: bool) -> Result<(), CliError> {
    if json {
        print_json(result)?;
    } else {
        print_result(name, result);
    }
    if result.ok {
        Ok(())
    } else {
        Err(CliError {
            code: 1,
            message: format!("the test of `{name}` failed"),
        })
    }
}

pub fn test(servers: &Servers, args: TestArgs) -> Result<(), CliError> {
    let timeout = args.timeout.map(Duration::from_secs);
    let progress = progress_printer(!args.json.json);
    if let Some(name) = &args.name {
        let catalog = catalog_for(
            servers
                .config()
                .load()
                .ok()
                .and_then(|c| c.server(name).ok()),
        )?;
        let rt = runtime()?;
        if !args.json.json {
            eprintln!("Testing `{name}`");
        }
        let result = rt.block_on(installed_test(servers, &catalog, name, timeout, progress));
        // The server is stopped and reaped by now: nothing left to wait for.
        rt.shutdown_background();
        return finish(name, &result?, args.json.json);
    }
    let prepared = ad_hoc(&args)?;
    let catalog = catalog_for(Some(prepared.config.clone()))?;
    let rt = runtime()?;
    if !args.json.json {
        eprintln!("Testing {} (not saved)", describe(&prepared.config));
    }
    let result = rt.block_on(prepared_test(&prepared, &catalog, timeout, progress));
    rt.shutdown_background();
    finish(&prepared.name, &result, args.json.json)
}

/// The test of an installed server, as a boxed future built in a frame of its own. A future
/// this large built in `test`, then moved into `block_on`, made each of those frames its size
/// in stack pages: each a page fault the first time, so in every run.
#[inline(never)]
pub fn installed_test<'a>(
    servers: &'a Servers,
    catalog: &'a Catalog,
    name: &'a str,
    timeout: Option<Duration>,
    progress: impl FnMut(StageEvent) + 'a,
) -> Pin<Box<dyn Future<Output = Result<TestResult, ManageError>> + 'a>> {
    Box::pin(checks::test_installed(
        servers, catalog, name, timeout, progress,
    ))
}

/// The test of an unsaved server, boxed in a frame of its own (see [`installed_test`]).
#[inline(never)]
pub fn prepared_test<'a>(
    prepared: &'a PreparedServer,
    catalog: &'a Catalog,
    timeout: Option<Duration>,
    progress: impl FnMut(StageEvent) + 'a,
) -> Pin<Box<dyn Future<Output = TestResult> + 'a>> {
    Box::pin(checks::test_prepared(prepared, catalog, timeout, progress))
}

/// The catalog a test of `server` needs: the catalog is read only for the credential probe of
/// a server installed from it, so a server without a catalog source (every ad hoc test, every
/// `plugboard add`) gets an empty one and skips parsing it (about a millisecond of start-up).
/// When the server cannot be read here, the full catalog is loaded and the test reports why.
fn catalog_for(server: Option<ServerConfig>) -> Result<Catalog, CliError> {
    match server {
        Some(server) if server.source.is_none() => Ok(Catalog::default()),
        _ => Ok(Catalog::load_default()?),
    }
}

fn describe(server: &ServerConfig) -> String {
    match (&server.url, &server.command) {
        (Some(url), _) => url.clone(),
        (None, Some(cmd)) => std::iter::once(cmd.clone())
            .chain(server.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The unsaved server of `plugboard test --stdio … -- CMD` or `plugboard test --url URL`.
fn ad_hoc(args: &TestArgs) -> Result<PreparedServer, CliError> {
    let mut config = match (&args.url, args.command.split_first()) {
        (Some(url), _) => ServerConfig::remote(
            match args.transport {
                RemoteTransport::Shttp => TransportKind::Shttp,
                RemoteTransport::Sse => TransportKind::Sse,
                RemoteTransport::Auto => TransportKind::Auto,
            },
            url.clone(),
        ),
        (None, Some((cmd, rest))) if args.stdio => ServerConfig::stdio(cmd.clone(), rest.to_vec()),
        _ => {
            return Err(CliError::usage(
                "say what to test: a server NAME, --stdio -- CMD [ARG...], or --url URL",
            ));
        }
    };
    for raw in &args.env {
        let (k, v) = key_value(raw, "--env")?;
        validate_env_key(k).map_err(CliError::usage)?;
        config.env.insert(k.into(), ConfigValue::Plain(v.into()));
    }
    for raw in &args.header {
        let (k, v) = key_value(raw, "--header")?;
        validate_header_name(k).map_err(CliError::usage)?;
        config
            .headers
            .insert(k.into(), ConfigValue::Plain(v.into()));
    }
    let mut secrets = std::collections::BTreeMap::new();
    if args.bearer_stdin {
        let mut input = SecretInput::new(Some("BEARER_TOKEN".into()));
        let token = input
            .read("BEARER_TOKEN", "Bearer token")?
            .ok_or_else(|| CliError::usage("--bearer-stdin: no token on standard input"))?;
        secrets.insert("BEARER_TOKEN".to_string(), token);
        config.auth = Auth::Bearer {
            token: SecretRef::new("BEARER_TOKEN"),
        };
    }
    config.secret_namespace = Some("ad-hoc".into());
    config.sandbox = config.new_sandbox_unless(args.no_sandbox);
    config
        .validate()
        .map_err(|e| CliError::usage(format!("cannot test this: {e}")))?;
    Ok(PreparedServer {
        name: "ad-hoc".into(),
        config,
        secrets,
    })
}

#[derive(Serialize)]
struct HealthRow<'a> {
    name: &'a str,
    #[serde(flatten)]
    result: &'a TestResult,
}

pub fn health(servers: &Servers, args: HealthArgs) -> Result<(), CliError> {
    let catalog = Catalog::load_default()?;
    let rt = runtime()?;
    let timeout = args.timeout.map(Duration::from_secs);
    let parallelism = args.parallel.unwrap_or(DEFAULT_PARALLELISM);
    if !args.json.json {
        eprintln!("Checking every enabled server ({parallelism} at a time)…");
    }
    let results = rt.block_on(checks::check_enabled(
        servers,
        &catalog,
        parallelism,
        timeout,
    ));
    rt.shutdown_background();
    let results = results?;
    let failed = results.iter().filter(|(_, r)| !r.ok).count();
    if args.json.json {
        let rows: Vec<HealthRow> = results
            .iter()
            .map(|(name, result)| HealthRow { name, result })
            .collect();
        print_json(&rows)?;
    } else if results.is_empty() {
        println!("No enabled servers to check.");
    } else {
        let mut rows = vec![vec![
            "NAME".to_string(),
            "STATUS".to_string(),
            "DETAIL".to_string(),
        ]];
        for (name, result) in &results {
            let (status, detail) = if result.ok {
                let status = match result.verification {
                    Verification::Verified => "verified",
                    Verification::ConnectivityOnly => "reachable",
                };
                (status.to_string(), format!("{} tools", result.tools.len()))
            } else {
                (
                    format!(
                        "failed: {}",
                        result.error_kind.map(|k| k.as_str()).unwrap_or("?")
                    ),
                    truncate(result.hint.as_deref().unwrap_or(""), 80),
                )
            };
            rows.push(vec![name.clone(), status, detail]);
        }
        print_table(&rows);
    }
    if failed > 0 {
        return Err(CliError::failed(format!(
            "{failed} of {} servers failed",
            results.len()
        )));
    }
    Ok(())
}
