//! Which entries of other clients' files the user has looked at (`plugboard clients`, the
//! app's clients panel), so that an entry nobody told Plugboard about — added, or changed, since
//! the last look — stands out: in February 2026 a worm planted servers in such files. Kept in
//! `clients/seen.json` in the config directory: per file, each entry's fingerprint (the SHA-256
//! of its canonical JSON), so a changed entry counts as new too.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ClientStatus;
use super::state::file_key;

/// The entries seen, per client file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Seen {
    #[serde(default)]
    files: BTreeMap<String, BTreeMap<String, String>>,
}

fn path_of(config_dir: &Path) -> std::path::PathBuf {
    config_dir.join("clients").join("seen.json")
}

/// The fingerprint of one entry.
pub fn fingerprint(entry: &Value) -> String {
    let canonical = crate::pinning::canonical(entry);
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Seen {
    /// What was seen so far (nothing, when the record is missing or unreadable).
    pub fn load(config_dir: &Path) -> Seen {
        std::fs::read(path_of(config_dir))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Whether `entry` of the file at `path` was seen as it is now.
    pub fn has(&self, path: &Path, key: &str, entry: &Value) -> bool {
        self.files
            .get(&file_key(path))
            .and_then(|entries| entries.get(key))
            .is_some_and(|print| *print == fingerprint(entry))
    }
}

/// Record every other entry of `statuses` as seen (what the user was just shown).
pub fn record(config_dir: &Path, statuses: &[ClientStatus]) -> std::io::Result<()> {
    let mut seen = Seen::load(config_dir);
    for status in statuses {
        let Some(path) = &status.path else { continue };
        if status.error.is_some() || !status.exists {
            continue;
        }
        let entries = seen.files.entry(file_key(path)).or_default();
        entries.clear();
        for other in &status.others {
            entries.insert(other.entry.clone(), other.fingerprint.clone());
        }
    }
    let path = path_of(config_dir);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec_pretty(&seen).map_err(std::io::Error::other)?;
    plugboard_base::fs::write_atomic(&path, &bytes)
}
