//! The machine itself, before (or besides) any server: are the runtimes that catalog entries
//! start with there and recent enough (Node.js for `npx`, uv for `uvx`, Docker and its daemon,
//! Python), and does the secret store work. A missing runtime is a warning here, naming the
//! catalog entries that need it: it matters only for those.

use super::{Finding, Severity, command};
use crate::catalog::{Catalog, CatalogTransport};
use crate::config::ServerConfig;
use crate::manage::Servers;

/// The programs checked, in the order shown.
const PROGRAMS: [&str; 4] = ["npx", "uvx", "docker", "python3"];

/// The names of the catalog entries that start a stdio server with a program of `runtime`.
fn entries_needing(catalog: &Catalog, runtime: &str) -> Vec<String> {
    catalog
        .entries()
        .iter()
        .filter(|e| {
            e.options.iter().any(|o| match &o.transport {
                CatalogTransport::Stdio { command, .. } => {
                    crate::runtimes::runtime_of(command).is_some_and(|r| r.label == runtime)
                }
                _ => false,
            })
        })
        .map(|e| e.name.clone())
        .collect()
}

/// Findings about this machine's runtimes and secret store.
pub async fn check(servers: &Servers, catalog: &Catalog) -> Vec<Finding> {
    let mut out = vec![];
    for program in PROGRAMS {
        let Some(runtime) = crate::runtimes::runtime_of(program) else {
            continue;
        };
        let needed = entries_needing(catalog, runtime.label);
        let mut found = vec![];
        let ready = command::check(&ServerConfig::stdio(program, vec![]), &mut found).await;
        let problems = found.iter().any(|f| f.severity != Severity::Info);
        if ready && !problems {
            out.push(Finding::info(
                "environment.runtime_ok",
                format!("the {} runtime is ready: `{program}` works", runtime.label),
            ));
            continue;
        }
        let uses = match needed.as_slice() {
            [] => String::new(),
            [one] => format!("; the catalog entry {one} needs it"),
            [a, b] => format!("; the catalog entries {a} and {b} need it"),
            [a, b, c] => format!("; the catalog entries {a}, {b} and {c} need it"),
            [a, b, c, rest @ ..] => format!(
                "; {} catalog entries need it ({a}, {b}, {c} and {} more)",
                needed.len(),
                rest.len()
            ),
        };
        for mut finding in found.into_iter().filter(|f| f.severity != Severity::Info) {
            finding.severity = Severity::Warning;
            finding.message.push_str(&uses);
            // The check runs again from where it is shown (the app's Doctor, `plugboard doctor`).
            finding.fix = finding
                .fix
                .replace("; then run `plugboard doctor` again", ", then check again");
            out.push(finding);
        }
    }
    let store = servers
        .secrets()
        .map_err(|e| e.to_string())
        .and_then(|s| s.check().map_err(|e| e.to_string()));
    out.push(match store {
        Ok(()) => Finding::info(
            "environment.keyring_ok",
            "the secret store works: credentials are kept in it, never in the config file",
        ),
        Err(err) => Finding::error(
            "environment.keyring",
            format!("the secret store does not work: {err}"),
            "start your desktop's keyring (GNOME Keyring, KWallet, the macOS Keychain), or choose \
             the encrypted file store (`plugboard secrets use file`)",
        ),
    });
    out
}
