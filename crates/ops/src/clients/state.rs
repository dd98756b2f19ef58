//! What Plugboard wrote into other clients' files: `<config dir>/exports.json`, per file the
//! entries Plugboard owns there and exactly what it wrote. Export only ever changes or removes
//! entries recorded here (or entries that are Plugboard launchers); `detect` compares the file
//! with this record to find drift.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ClientError;

/// The record's file name in the config directory.
pub const EXPORTS_FILE: &str = "exports.json";

/// One entry Plugboard wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WrittenEntry {
    /// The Plugboard server it launches.
    pub server: String,
    /// The entry exactly as written.
    pub entry: Value,
}

/// What Plugboard wrote into one file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    pub client: String,
    #[serde(default)]
    pub entries: BTreeMap<String, WrittenEntry>,
    #[serde(default)]
    pub updated_at_ms: u64,
}

/// Every file Plugboard wrote into.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExportState {
    #[serde(default)]
    pub version: u64,
    #[serde(default)]
    pub files: BTreeMap<String, FileRecord>,
}

/// The key of a file in the record: its absolute, canonical path where it can be found.
pub fn file_key(path: &Path) -> String {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let canonical = match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map(|d| d.join(name))
            .unwrap_or_else(|_| absolute.clone()),
        _ => absolute.clone(),
    };
    canonical.to_string_lossy().into_owned()
}

impl ExportState {
    fn path(config_dir: &Path) -> PathBuf {
        config_dir.join(EXPORTS_FILE)
    }

    /// The record (empty when there is none yet).
    pub fn load(config_dir: &Path) -> Result<ExportState, ClientError> {
        let path = Self::path(config_dir);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                ClientError::file(
                    &path,
                    format!("is not valid ({e}); fix or remove it (it only records exports)"),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ExportState::default()),
            Err(e) => Err(ClientError::file(&path, format!("cannot be read ({e})"))),
        }
    }

    /// Read the record, change it with `change`, and write it back, all under an exclusive lock
    /// (`exports.json.lock`) so that exports running at once each keep their entries. The
    /// record is written only when `change` succeeds.
    pub fn update<T>(
        config_dir: &Path,
        change: impl FnOnce(&mut ExportState) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let lock_path = config_dir.join(format!("{EXPORTS_FILE}.lock"));
        plugboard_base::fs::create_dir(config_dir, true)
            .map_err(|e| ClientError::file(config_dir, format!("cannot be created ({e})")))?;
        let lock = plugboard_base::fs::open_lock_file(&lock_path)
            .map_err(|e| ClientError::file(&lock_path, format!("cannot be opened ({e})")))?;
        lock.lock()
            .map_err(|e| ClientError::file(&lock_path, format!("cannot be locked ({e})")))?;
        let mut state = ExportState::load(config_dir)?;
        let value = change(&mut state)?;
        state.save(config_dir)?;
        Ok(value)
    }

    fn save(&mut self, config_dir: &Path) -> Result<(), ClientError> {
        self.version = 1;
        let path = Self::path(config_dir);
        let mut bytes = serde_json::to_vec_pretty(self).expect("the record serializes");
        bytes.push(b'\n');
        plugboard_base::fs::write_private(&path, &bytes)
            .map_err(|e| ClientError::file(&path, format!("cannot be written ({e})")))
    }

    pub fn file(&self, path: &Path) -> Option<&FileRecord> {
        self.files.get(&file_key(path))
    }

    pub fn file_mut(&mut self, path: &Path, client: &str) -> &mut FileRecord {
        let record = self.files.entry(file_key(path)).or_default();
        if record.client.is_empty() {
            record.client = client.to_string();
        }
        record
    }
}
