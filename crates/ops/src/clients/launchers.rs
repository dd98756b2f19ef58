//! Keeping other apps' launchers true to the servers they launch: after a rename, every entry
//! Plugboard wrote for the old name (`plugboard run OLD`) is renamed and launches the new name;
//! after a remove, the entries that launched it are taken out. Only entries Plugboard wrote and
//! nobody changed since are touched; the others are reported, as are files that cannot be read.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::state::{ExportState, WrittenEntry};
use super::{ClientKind, jsonc, launcher_target};

/// What happened to one client file's launcher.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LauncherChange {
    pub client: String,
    pub path: PathBuf,
    /// The entry's key in that file.
    pub entry: String,
    /// `renamed`, `removed`, or `left` (changed by someone else, or the file could not be
    /// written: `detail` says which).
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// After server `old` was renamed `new`: rename its launchers in every client file.
pub fn follow_rename(config_dir: &std::path::Path, old: &str, new: &str) -> Vec<LauncherChange> {
    follow(config_dir, old, Some(new))
}

/// After server `name` was removed: take its launchers out of every client file.
pub fn follow_remove(config_dir: &std::path::Path, name: &str) -> Vec<LauncherChange> {
    follow(config_dir, name, None)
}

fn follow(config_dir: &std::path::Path, name: &str, new: Option<&str>) -> Vec<LauncherChange> {
    let outcome = ExportState::update(config_dir, |state| {
        let mut changes = vec![];
        for (file, record) in state.files.iter_mut() {
            let keys: Vec<String> = record
                .entries
                .iter()
                .filter(|(_, w)| w.server == name)
                .map(|(key, _)| key.clone())
                .collect();
            if keys.is_empty() {
                continue;
            }
            let path = PathBuf::from(file);
            let Some(kind) = ClientKind::from_id(&record.client) else {
                continue;
            };
            let change = |entry: &str, action, detail: Option<String>| LauncherChange {
                client: kind.label().to_owned(),
                path: path.clone(),
                entry: entry.to_owned(),
                action,
                detail,
            };
            let mut doc = match jsonc::read_object_or_empty(&path) {
                Ok(doc) => doc,
                Err(e) => {
                    changes.extend(keys.iter().map(|k| change(k, "left", Some(e.to_string()))));
                    continue;
                }
            };
            let servers_key = kind.format().servers_key;
            let Some(Value::Object(entries)) = doc.get_mut(servers_key) else {
                continue;
            };
            // Decided first, applied to the record only once the file is written.
            let mut dropped = vec![];
            let mut written = vec![];
            let mut here = vec![];
            for key in &keys {
                let Some(existing) = entries.get(key) else {
                    dropped.push(key.clone());
                    continue;
                };
                if launcher_target(existing) != Some(name) {
                    here.push(change(
                        key,
                        "left",
                        Some("the entry was changed since Plugboard wrote it".into()),
                    ));
                    continue;
                }
                match new {
                    Some(new) if entries.contains_key(new) => here.push(change(
                        key,
                        "left",
                        Some(format!("the file already has an entry `{new}`")),
                    )),
                    Some(new) => {
                        let mut entry = entries.shift_remove(key).unwrap_or_default();
                        if let Some(Value::Array(args)) = entry.get_mut("args")
                            && let Some(last) = args.last_mut()
                        {
                            *last = Value::String(new.to_owned());
                        }
                        entries.insert(new.to_owned(), entry.clone());
                        dropped.push(key.clone());
                        let server = new.to_owned();
                        written.push((server.clone(), WrittenEntry { server, entry }));
                        here.push(change(key, "renamed", Some(format!("now `{new}`"))));
                    }
                    None => {
                        entries.shift_remove(key);
                        dropped.push(key.clone());
                        here.push(change(key, "removed", None));
                    }
                }
            }
            if here.iter().any(|c| c.action != "left")
                && let Err(e) = jsonc::write_with_backup(&path, &doc, false)
            {
                // Nothing was written: the record keeps what the file still holds.
                changes.extend(keys.iter().map(|k| change(k, "left", Some(e.to_string()))));
                continue;
            }
            for key in &dropped {
                record.entries.remove(key);
            }
            record.entries.extend(written);
            record.updated_at_ms = crate::clock::now_ms();
            changes.extend(here);
        }
        Ok(changes)
    });
    outcome.unwrap_or_else(|e| {
        vec![LauncherChange {
            client: String::new(),
            path: PathBuf::new(),
            entry: name.to_owned(),
            action: "left",
            detail: Some(e.to_string()),
        }]
    })
}
