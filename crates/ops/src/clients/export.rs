//! Export: Plugboard's enabled servers into a client's file, as launchers
//! (`{"command": "<plugboard>", "args": ["run", NAME]}`, plus `"type": "stdio"` where the client
//! wants one), or as one gateway entry serving a profile (`["serve", "--profile", P]`, which
//! takes the place of the launchers Plugboard wrote there), or, for a client that gets headers
//! from a command, as one entry for the gateway over HTTP (the token stays in the keyring). The plan is computed first (what would change) and applied only on request: a
//! timestamped backup, then an atomic write that keeps every other entry and key.
//!
//! Ownership: an entry is Plugboard's when it was recorded in `exports.json` as written by
//! Plugboard and still is a launcher, or when it is a launcher of the same server under the same
//! name. Entries of anyone else are never changed or removed; a name clash is reported. Servers
//! that are disabled (or removed, or renamed) lose their launcher on the next export.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use super::state::{ExportState, WrittenEntry};
use super::{
    ClientError, ClientKind, gateway_entry, gateway_key, gateway_target, http_gateway_entry, jsonc,
    launcher_entry, launcher_target,
};
use crate::config::Config;

/// What export does to one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportAction {
    Add,
    Update,
    Unchanged,
    Remove,
    /// The name is taken by an entry Plugboard did not write: left alone.
    Conflict,
    /// An entry Plugboard wrote was changed by someone else into something else: left alone.
    LeftAlone,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExportChange {
    /// The entry's key in the client's file.
    pub entry: String,
    /// The Plugboard server it launches.
    pub server: Option<String>,
    pub action: ExportAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What an export would do.
#[derive(Clone, Debug, Serialize)]
pub struct ExportPlan {
    pub client: ClientKind,
    pub path: PathBuf,
    /// Whether the file exists now.
    pub exists: bool,
    pub changes: Vec<ExportChange>,
    /// Plugboard's entries as they will be in the file.
    pub entries: Map<String, Value>,
    /// Servers not exported because they are disabled.
    pub disabled: Vec<String>,
    /// Whether applying the plan changes the file.
    pub changes_file: bool,
    /// What rewriting the file would lose (its comments, an inexact number): the write is
    /// refused unless forced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// The whole new document (not shown: it holds the client's other settings).
    #[serde(skip)]
    doc: Map<String, Value>,
    /// The file's bytes when the plan was made (`None`: there was no file), so that applying it
    /// never writes over a change made since.
    #[serde(skip)]
    planned_from: Option<Vec<u8>>,
}

/// Which of the enabled servers an export writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ExportChoice {
    /// Every enabled server (what `plugboard export` does).
    #[default]
    All,
    /// Exactly these (the enabled ones among them): the launchers of others Plugboard wrote
    /// there before are removed.
    Only(BTreeSet<String>),
    /// These as well as the ones the file launches already ("Add to Cursor" on one server).
    Add(BTreeSet<String>),
    /// One gateway entry serving this profile, instead of a launcher per server: the launchers
    /// Plugboard wrote there before are removed.
    Gateway(String),
    /// The same, as an entry for the gateway running over HTTP at `address` (`plugboard serve
    /// --profile P --http ADDRESS`), which the client reaches with the token its headers helper
    /// asks Plugboard for: only for clients with headers helpers.
    GatewayOverHttp {
        profile: String,
        address: std::net::SocketAddr,
    },
}

/// Work out what exporting `config`'s servers of `choice` to `path` (a `kind` file) would do.
pub fn plan_export(
    config: &Config,
    config_dir: &Path,
    kind: ClientKind,
    path: &Path,
    plugboard: &Path,
    choice: &ExportChoice,
) -> Result<ExportPlan, ClientError> {
    let format = kind.format();
    // Read before the document: a change in between makes them differ, and applying refuses.
    let planned_from = std::fs::read(path).ok();
    let mut doc = jsonc::read_object_or_empty(path)?;
    let state = ExportState::load(config_dir)?;
    let recorded = state.file(path).cloned().unwrap_or_default();

    let launched: BTreeSet<String> = doc
        .get(format.servers_key)
        .and_then(Value::as_object)
        .map(|entries| {
            entries
                .values()
                .filter_map(launcher_target)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let chosen = |name: &str| match choice {
        ExportChoice::All => true,
        ExportChoice::Only(set) => set.contains(name),
        ExportChoice::Add(set) => set.contains(name) || launched.contains(name),
        ExportChoice::Gateway(_) | ExportChoice::GatewayOverHttp { .. } => false,
    };
    let gateway_wanted = match choice {
        ExportChoice::Gateway(profile) => Some((
            profile,
            gateway_entry(
                format,
                plugboard,
                profile,
                super::launcher_home(config_dir).as_deref(),
            ),
        )),
        ExportChoice::GatewayOverHttp { profile, address } if format.headers_helper => Some((
            profile,
            http_gateway_entry(
                plugboard,
                profile,
                *address,
                super::launcher_home(config_dir).as_deref(),
            ),
        )),
        ExportChoice::GatewayOverHttp { .. } => {
            return Err(ClientError::Usage(format!(
                "{} cannot get a server's headers from a command, so an entry for the gateway \
                 over HTTP would have to hold its token in the file; export without --http (the \
                 client then starts the gateway itself and needs no token)",
                format.label
            )));
        }
        _ => None,
    };
    let mut wanted: Vec<String> = vec![];
    let mut disabled = vec![];
    for (name, server) in config.servers() {
        match server {
            Ok(s) if s.enabled && chosen(&name) => wanted.push(name),
            Ok(s) if s.enabled => {}
            Ok(_) => disabled.push(name),
            Err(_) => {}
        }
    }
    let wanted_set: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    let home = super::launcher_home(config_dir);

    let servers = doc
        .entry(format.servers_key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(ClientError::file(
            path,
            format!(
                "`{}` is not a JSON object; it was left untouched",
                format.servers_key
            ),
        ));
    };
    let mut changes = vec![];
    let mut entries = Map::new();
    let mut changed = false;

    for name in &wanted {
        let desired = launcher_entry(format, plugboard, name, home.as_deref());
        let ours = |existing: &Value| {
            launcher_target(existing) == Some(name.as_str())
                || (recorded.entries.contains_key(name) && launcher_target(existing).is_some())
        };
        let action = match servers.get(name) {
            None => ExportAction::Add,
            Some(existing) if existing == &desired => ExportAction::Unchanged,
            Some(existing) if ours(existing) => ExportAction::Update,
            Some(_) => ExportAction::Conflict,
        };
        match action {
            ExportAction::Conflict => changes.push(ExportChange {
                entry: name.clone(),
                server: Some(name.clone()),
                action,
                detail: Some(format!(
                    "the file already has an entry `{name}` that Plugboard did not write; it was \
                     left alone (rename the Plugboard server or that entry)"
                )),
            }),
            _ => {
                if action != ExportAction::Unchanged {
                    servers.insert(name.clone(), desired.clone());
                    changed = true;
                }
                entries.insert(name.clone(), desired);
                changes.push(ExportChange {
                    entry: name.clone(),
                    server: Some(name.clone()),
                    action,
                    detail: None,
                });
            }
        }
    }
    let gateway = match gateway_wanted {
        Some((profile, desired)) => {
            let key = gateway_key(profile);
            let ours = |existing: &Value| {
                gateway_target(existing)
                    .is_some_and(|target| &target == profile || recorded.entries.contains_key(&key))
            };
            let action = match servers.get(&key) {
                None => ExportAction::Add,
                Some(existing) if existing == &desired => ExportAction::Unchanged,
                Some(existing) if ours(existing) => ExportAction::Update,
                Some(_) => ExportAction::Conflict,
            };
            if action == ExportAction::Conflict {
                changes.push(ExportChange {
                    entry: key.clone(),
                    server: None,
                    action,
                    detail: Some(format!(
                        "the file already has an entry `{key}` that Plugboard did not write; it \
                         was left alone"
                    )),
                });
            } else {
                if action != ExportAction::Unchanged {
                    servers.insert(key.clone(), desired.clone());
                    changed = true;
                }
                entries.insert(key.clone(), desired);
                changes.push(ExportChange {
                    entry: key.clone(),
                    server: None,
                    action,
                    detail: Some(format!("the gateway of profile `{profile}`")),
                });
            }
            Some(key)
        }
        None => None,
    };
    for (key, written) in &recorded.entries {
        if wanted_set.contains(key.as_str()) || gateway.as_deref() == Some(key.as_str()) {
            continue;
        }
        let Some(existing) = servers.get(key) else {
            continue;
        };
        if let Some(profile) = gateway_target(existing) {
            servers.shift_remove(key);
            changed = true;
            changes.push(ExportChange {
                entry: key.clone(),
                server: None,
                action: ExportAction::Remove,
                detail: Some(format!(
                    "the gateway of profile `{profile}`: this export writes {} instead",
                    if gateway.is_some() {
                        "another profile's gateway"
                    } else {
                        "a launcher per server"
                    }
                )),
            });
        } else if launcher_target(existing).is_some() {
            servers.shift_remove(key);
            changed = true;
            let why = if gateway.is_some() {
                "the client reaches it through the gateway now"
            } else if disabled.contains(&written.server) {
                "the server is disabled"
            } else if config.contains(&written.server) {
                "the server was not chosen"
            } else {
                "the server is no longer installed under this name"
            };
            changes.push(ExportChange {
                entry: key.clone(),
                server: Some(written.server.clone()),
                action: ExportAction::Remove,
                detail: Some(why.into()),
            });
        } else {
            changes.push(ExportChange {
                entry: key.clone(),
                server: Some(written.server.clone()),
                action: ExportAction::LeftAlone,
                detail: Some(
                    "Plugboard wrote this entry but it was changed since; it was left alone".into(),
                ),
            });
        }
    }
    Ok(ExportPlan {
        client: kind,
        path: path.to_path_buf(),
        exists: path.exists(),
        changes,
        entries,
        disabled,
        changes_file: changed || !path.exists(),
        loss: planned_from
            .as_deref()
            .and_then(|bytes| jsonc::rewrite_loss(&String::from_utf8_lossy(bytes))),
        doc,
        planned_from,
    })
}

/// Write the plan: backup, atomic write, and the record of what Plugboard now owns in the file.
/// Returns the backup's path (none when the file did not exist or nothing changed).
/// Unless `force`, a file the rewrite would lose something of is left alone
/// ([`ClientError::WouldLose`]).
pub fn apply_export(
    plan: &ExportPlan,
    config_dir: &Path,
    force: bool,
) -> Result<Option<PathBuf>, ClientError> {
    ExportState::update(config_dir, |state| {
        if std::fs::read(&plan.path).ok() != plan.planned_from {
            return Err(ClientError::ChangedSincePlan {
                path: plan.path.clone(),
            });
        }
        let backup = if plan.changes_file {
            jsonc::write_with_backup(&plan.path, &plan.doc, force)?
        } else {
            None
        };
        let record = state.file_mut(&plan.path, plan.client.id());
        record.entries = plan
            .entries
            .iter()
            .map(|(key, entry)| {
                (
                    key.clone(),
                    WrittenEntry {
                        server: key.clone(),
                        entry: entry.clone(),
                    },
                )
            })
            .collect();
        record.updated_at_ms = crate::clock::now_ms();
        Ok(backup)
    })
}

/// Plan the export of `choice` and write it at once (`plugboard export --write`, the app's "Use
/// in other apps"), planning again when the file changed in between (another export running at
/// the same moment): returns the plan written and the backup's path.
pub fn export_now(
    config: &Config,
    config_dir: &Path,
    kind: ClientKind,
    path: &Path,
    plugboard: &Path,
    choice: &ExportChoice,
    force: bool,
) -> Result<(ExportPlan, Option<PathBuf>), ClientError> {
    const ATTEMPTS: usize = 5;
    let mut attempt = 1;
    loop {
        let plan = plan_export(config, config_dir, kind, path, plugboard, choice)?;
        match apply_export(&plan, config_dir, force) {
            Err(ClientError::ChangedSincePlan { .. }) if attempt < ATTEMPTS => attempt += 1,
            result => return result.map(|backup| (plan, backup)),
        }
    }
}

/// Record that Plugboard now owns `entries` (key → server) of `path` (used after an import
/// rewrote its source into launchers).
pub(crate) fn record_entries(
    config_dir: &Path,
    kind: ClientKind,
    path: &Path,
    entries: &[(String, String, Value)],
) -> Result<(), ClientError> {
    ExportState::update(config_dir, |state| {
        let record = state.file_mut(path, kind.id());
        for (key, server, entry) in entries {
            record.entries.insert(
                key.clone(),
                WrittenEntry {
                    server: server.clone(),
                    entry: entry.clone(),
                },
            );
        }
        record.updated_at_ms = crate::clock::now_ms();
        Ok(())
    })
}
