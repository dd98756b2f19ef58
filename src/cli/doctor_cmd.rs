//! `plugboard doctor [NAME] [--json]`: findings with codes, severities and fixes; exit 1 when
//! any finding is an error.

use std::time::Duration;

use super::CliError;
use super::args::DoctorArgs;
use super::output::print_json;
use super::test_cmd::runtime;
use crate::catalog::Catalog;
use crate::doctor::{self, Severity};
use crate::manage::Servers;

pub fn doctor(servers: &Servers, args: DoctorArgs) -> Result<(), CliError> {
    let catalog = Catalog::load_default()?;
    let rt = runtime()?;
    let timeout = args.timeout.map(Duration::from_secs);
    if !args.json.json {
        eprintln!(
            "Examining {}…",
            args.name
                .as_deref()
                .map_or("every server".to_owned(), |n| format!("`{n}`"))
        );
    }
    let report = rt.block_on(doctor::diagnose_all(
        servers,
        &catalog,
        args.name.as_deref(),
        timeout,
    ))?;
    if args.json.json {
        print_json(&report)?;
    } else if report.servers.is_empty() {
        println!("No servers installed.");
    } else {
        for d in &report.servers {
            let mark = if d.ok { "✓" } else { "✗" };
            println!("{mark} {} ({})", d.name, d.transport.label());
            for f in &d.findings {
                let sign = match f.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "info",
                };
                let stage = f.stage.map(|s| format!(" [{s}]")).unwrap_or_default();
                println!("  {sign}: {}{stage}: {}", f.code, f.message);
                if !f.fix.is_empty() {
                    println!("    fix: {}", f.fix);
                }
            }
        }
    }
    if report.ok {
        Ok(())
    } else {
        let failing = report.servers.iter().filter(|d| !d.ok).count();
        Err(CliError::failed(format!(
            "{failing} server(s) have error findings"
        )))
    }
}
