//! Entries of other clients' files that Plugboard did not put there: imported in quarantine
//! (disabled, sandboxed without network, nothing started; a test lists and scans its tools
//! inside that sandbox), or taken out of the client's file (a backup beside it keeps it).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::import::ImportPlan;
use super::{ClientError, ClientKind, jsonc};

/// Keep only the planned servers of `entries` (every one when empty). An entry named that the
/// plan does not import is an error.
pub fn keep_only(plan: &mut ImportPlan, entries: &[String]) -> Result<(), ClientError> {
    if let Some(unknown) = entries.iter().find(|e| {
        !plan.servers.iter().any(|s| s.entry == **e)
            && !plan.recognised.iter().any(|r| r.entry == **e)
    }) {
        let why = plan
            .skipped
            .iter()
            .find(|s| s.entry == *unknown)
            .map(|s| format!(" ({})", s.reason))
            .unwrap_or_default();
        return Err(ClientError::Usage(format!(
            "`{unknown}` is not an entry that can be imported from {}{why}",
            plan.path.display()
        )));
    }
    if !entries.is_empty() {
        plan.servers.retain(|s| entries.contains(&s.entry));
        plan.recognised.retain(|r| entries.contains(&r.entry));
        plan.skipped.retain(|r| entries.contains(&r.entry));
    }
    Ok(())
}

/// Make every planned server a quarantined import.
pub fn quarantine(plan: &mut ImportPlan) {
    for server in &mut plan.servers {
        server.enabled = false;
        server.config.enabled = false;
        if server.config.new_sandbox().is_some() {
            server.config.sandbox = Some(plugboard_sandbox::Settings {
                network: plugboard_sandbox::Network::None,
                ..plugboard_sandbox::Settings::on()
            });
        }
        server.notes.push(
            "quarantined: disabled, sandboxed without network and not started; `plugboard test` \
             lists and scans its tools in that sandbox, `plugboard enable` uses it"
                .to_owned(),
        );
    }
}

/// Take entry `entry` out of `kind`'s file at `path`; returns the backup written.
pub fn remove_entry(
    kind: ClientKind,
    path: &Path,
    entry: &str,
    force: bool,
) -> Result<Option<PathBuf>, ClientError> {
    let mut doc = jsonc::read_object(path)?;
    let servers_key = kind.format().servers_key;
    let removed = match doc.get_mut(servers_key) {
        Some(Value::Object(entries)) => entries.shift_remove(entry).is_some(),
        _ => false,
    };
    if !removed {
        return Err(ClientError::Usage(format!(
            "{} has no entry `{entry}` under `{servers_key}`",
            path.display()
        )));
    }
    jsonc::write_with_backup(path, &doc, force)
}
