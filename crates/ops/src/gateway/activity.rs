//! The activity record: one line of JSON per call through a gateway (`activity/activity.jsonl`
//! in the config directory, private), rotated by size. A record holds the call's *shape*: the
//! argument keys and their JSON types, never a value; the result's size, never its content.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The file records go to.
pub const ACTIVITY_FILE: &str = "activity.jsonl";
/// The size at which the file is rotated (the previous one is kept as `activity.1.jsonl`).
pub const ROTATE_AT: u64 = 4 * 1024 * 1024;

/// One call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActivityRecord {
    /// When the call came in (Unix ms).
    pub at_ms: u64,
    /// The client's name (its `clientInfo`), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub profile: String,
    pub server: String,
    /// The tool as the server knows it.
    pub tool: String,
    /// `allow`, `ask_accepted`, `ask_declined`, `deny`, `disabled`, `unknown`, `server_down`,
    /// `invalid_arguments`, `secret_in_arguments`.
    pub decision: String,
    pub duration_ms: f64,
    /// `ok`, `tool_error`, `error`, `refused`.
    pub outcome: String,
    /// Argument keys and their JSON types (`{"path": "string", "depth": "number"}`).
    pub argument_shape: Map<String, Value>,
    /// Bytes of the result as passed on.
    pub result_bytes: usize,
}

/// Keys and JSON types of `arguments`, nested objects described the same way.
pub fn shape_of(arguments: &Map<String, Value>) -> Map<String, Value> {
    arguments
        .iter()
        .map(|(key, value)| {
            let kind = match value {
                Value::Null => Value::from("null"),
                Value::Bool(_) => Value::from("boolean"),
                Value::Number(_) => Value::from("number"),
                Value::String(_) => Value::from("string"),
                Value::Array(_) => Value::from("array"),
                Value::Object(inner) => Value::Object(shape_of(inner)),
            };
            (key.clone(), kind)
        })
        .collect()
}

/// Where `activity --follow` is in the current file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FollowCursor {
    inode: u64,
    offset: u64,
}

/// The activity record of one config directory.
pub struct ActivityLog {
    dir: PathBuf,
}

impl ActivityLog {
    pub fn in_config_dir(config_dir: &Path) -> ActivityLog {
        ActivityLog {
            dir: config_dir.join("activity"),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(ACTIVITY_FILE)
    }

    /// Append `record` (rotating first when the file is full). A record that cannot be written
    /// is reported on stderr and does not stop the call.
    pub fn append(&self, record: &ActivityRecord) {
        if let Err(e) = self.try_append(record) {
            eprintln!("plugboard: the activity record could not be written: {e}");
        }
    }

    fn try_append(&self, record: &ActivityRecord) -> std::io::Result<()> {
        plugboard_base::fs::create_dir(&self.dir, true)?;
        let lock = plugboard_base::fs::open_lock_file(&self.dir.join(".lock"))?;
        lock.lock()?;
        let path = self.path();
        if std::fs::metadata(&path).is_ok_and(|m| m.len() >= ROTATE_AT) {
            std::fs::rename(&path, self.dir.join("activity.1.jsonl"))?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path)?;
        let mut line = serde_json::to_vec(record).expect("a record serializes");
        line.push(b'\n');
        file.write_all(&line)
    }

    /// The records appended to the current file since `cursor` (which then points past them);
    /// a file rotated in between is read from its start. For `activity --follow`.
    pub fn since(&self, cursor: &mut FollowCursor) -> Vec<ActivityRecord> {
        use std::io::{Read, Seek, SeekFrom};
        use std::os::unix::fs::MetadataExt;
        let Ok(mut file) = std::fs::File::open(self.path()) else {
            return vec![];
        };
        let Ok(meta) = file.metadata() else {
            return vec![];
        };
        if meta.ino() != cursor.inode || meta.len() < cursor.offset {
            *cursor = FollowCursor {
                inode: meta.ino(),
                offset: 0,
            };
        }
        let mut fresh = String::new();
        if file.seek(SeekFrom::Start(cursor.offset)).is_err()
            || file.read_to_string(&mut fresh).is_err()
        {
            return vec![];
        }
        // Only whole lines: a record being written is read on the next call.
        let complete = fresh.rfind('\n').map_or(0, |at| at + 1);
        cursor.offset += complete as u64;
        fresh[..complete]
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// A cursor at the end of the current file.
    pub fn end(&self) -> FollowCursor {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(self.path())
            .map(|m| FollowCursor {
                inode: m.ino(),
                offset: m.len(),
            })
            .unwrap_or_default()
    }

    /// Every record kept, oldest first (the rotated file, then the current one). Lines that do
    /// not parse are skipped.
    pub fn read(&self) -> Vec<ActivityRecord> {
        [self.dir.join("activity.1.jsonl"), self.path()]
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .flat_map(|text| {
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shape_names_keys_and_types_never_values() {
        let args =
            json!({"path": "/secret/place", "depth": 3, "opts": {"deep": true, "tags": ["a"]}});
        let shape = shape_of(args.as_object().unwrap());
        assert_eq!(
            Value::Object(shape),
            json!({"path": "string", "depth": "number", "opts": {"deep": "boolean", "tags": "array"}})
        );
    }
}
