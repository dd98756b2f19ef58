//! The activity record: one line of JSON per call through a gateway (`activity/activity.jsonl`
//! in the config directory, private), rotated by size. A record holds the call's *shape*: the
//! argument keys and their JSON types, never a value; the result's size, never its content.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The file records go to.
pub const ACTIVITY_FILE: &str = "activity.jsonl";
/// The size at which the file is rotated (the previous one is kept as [`ROTATED_FILE`]).
pub const ROTATE_AT: u64 = 4 * 1024 * 1024;
/// The file before the current one.
pub const ROTATED_FILE: &str = "activity.1.jsonl";

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

/// The activity record of one config directory. A gateway keeps its files open between
/// records (a write is then a lock, a look at the file's name, one write and an unlock);
/// gateways writing to the same directory at once take turns by the lock, and one that finds
/// the file rotated by another opens the new one. A gateway records a call just after its
/// answer has gone out ([`ActivityLog::append_soon`]), not on the way to it.
pub struct ActivityLog {
    dir: PathBuf,
    rotate_at: u64,
    open: RefCell<Option<OpenFiles>>,
    /// Records waiting for the end of this turn of the event loop (`append_soon`).
    pending: RefCell<Vec<ActivityRecord>>,
}

/// The lock file and the current record file, as a gateway keeps them open.
struct OpenFiles {
    lock: File,
    file: File,
    /// The inode `file` had when it was opened (renamed away by a rotation, the name points
    /// to another).
    inode: u64,
}

impl ActivityLog {
    pub fn in_config_dir(config_dir: &Path) -> ActivityLog {
        ActivityLog {
            dir: config_dir.join("activity"),
            rotate_at: ROTATE_AT,
            open: RefCell::new(None),
            pending: RefCell::new(Vec::new()),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(ACTIVITY_FILE)
    }

    fn rotated_path(&self) -> PathBuf {
        self.dir.join(ROTATED_FILE)
    }

    /// Append `record` once the tasks this turn of the event loop woke have run: the answer to
    /// the call it describes, handed to the task that writes answers, goes out first. The
    /// records of one turn are written together; those still waiting are written by
    /// [`ActivityLog::flush`] and when the log is dropped. Must run inside a `LocalSet`.
    pub fn append_soon(self: &Rc<Self>, record: ActivityRecord) {
        let first = {
            let mut pending = self.pending.borrow_mut();
            pending.push(record);
            pending.len() == 1
        };
        if first {
            let log = Rc::downgrade(self);
            tokio::task::spawn_local(async move {
                tokio::task::yield_now().await;
                if let Some(log) = log.upgrade() {
                    log.flush();
                }
            });
        }
    }

    /// Write the records [`ActivityLog::append_soon`] holds.
    pub fn flush(&self) {
        let records = std::mem::take(&mut *self.pending.borrow_mut());
        if !records.is_empty() {
            self.write(&records);
        }
    }

    /// Append `records` now (rotating first when the file is full). Records that cannot be
    /// written are reported on stderr and do not stop the calls.
    fn write(&self, records: &[ActivityRecord]) {
        let mut lines = Vec::new();
        for record in records {
            serde_json::to_writer(&mut lines, record).expect("a record serializes");
            lines.push(b'\n');
        }
        let kept_open = self.open.borrow().is_some();
        let mut written = self.try_append(&lines);
        if written.is_err() && kept_open {
            // Once more with the files opened afresh: the directory may have been removed.
            self.open.replace(None);
            written = self.try_append(&lines);
        }
        if let Err(e) = written {
            self.open.replace(None);
            eprintln!("plugboard: the activity record could not be written: {e}");
        }
    }

    fn try_append(&self, line: &[u8]) -> std::io::Result<()> {
        let mut open = self.open.borrow_mut();
        let files = match open.as_mut() {
            Some(files) => files,
            None => {
                plugboard_base::fs::create_dir(&self.dir, true)?;
                let lock = plugboard_base::fs::open_lock_file(&self.dir.join(".lock"))?;
                let file = open_for_append(&self.path())?;
                let inode = file.metadata()?.ino();
                open.insert(OpenFiles { lock, file, inode })
            }
        };
        files.lock.lock()?;
        let written = self.write_locked(files, line);
        let unlocked = files.lock.unlock();
        written.and(unlocked)
    }

    /// With the lock held: reopen the file when another gateway rotated it, rotate it when it
    /// is full, and append `line`.
    fn write_locked(&self, files: &mut OpenFiles, line: &[u8]) -> std::io::Result<()> {
        let path = self.path();
        match std::fs::metadata(&path) {
            Ok(meta) if meta.ino() == files.inode && meta.len() < self.rotate_at => {}
            Ok(meta) if meta.ino() == files.inode => {
                std::fs::rename(&path, self.rotated_path())?;
                self.reopen(files)?;
            }
            _ => self.reopen(files)?,
        }
        files.file.write_all(line)
    }

    fn reopen(&self, files: &mut OpenFiles) -> std::io::Result<()> {
        files.file = open_for_append(&self.path())?;
        files.inode = files.file.metadata()?.ino();
        Ok(())
    }

    /// The records appended to the current file since `cursor` (which then points past them);
    /// a file rotated in between is read from its start. For `activity --follow`.
    pub fn since(&self, cursor: &mut FollowCursor) -> Vec<ActivityRecord> {
        use std::io::{Read, Seek, SeekFrom};
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
        [self.rotated_path(), self.path()]
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

impl Drop for ActivityLog {
    fn drop(&mut self) {
        self.flush();
    }
}

/// `path` opened for appending (made private when it is new).
fn open_for_append(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
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

    fn record(n: usize) -> ActivityRecord {
        ActivityRecord {
            at_ms: n as u64,
            client: None,
            profile: "default".into(),
            server: "fx".into(),
            tool: "echo".into(),
            decision: "allow".into(),
            duration_ms: 0.1,
            outcome: "ok".into(),
            argument_shape: Map::new(),
            result_bytes: n,
        }
    }

    #[test]
    fn two_gateways_appending_across_rotations_lose_no_record_of_the_current_file() {
        let home = tempfile::tempdir().unwrap();
        let small = |_| {
            let mut log = ActivityLog::in_config_dir(home.path());
            log.rotate_at = 2_000;
            log
        };
        let (first, second): (ActivityLog, ActivityLog) = (small(()), small(()));
        for n in 0..100 {
            let writer = if n % 3 == 0 { &second } else { &first };
            writer.write(&[record(n)]);
        }
        let current = std::fs::read_to_string(first.path()).unwrap();
        let rotated = std::fs::read_to_string(first.rotated_path()).unwrap();
        assert!(current.len() < 2_000 + 200, "rotated when full");
        assert!(rotated.len() >= 2_000, "the rotated file was full");
        // Every record since the last rotation is in the current file, in order, whole.
        let kept: Vec<usize> = first.read().iter().map(|r| r.result_bytes).collect();
        assert_eq!(kept.last(), Some(&99));
        assert!(kept.windows(2).all(|w| w[0] + 1 == w[1]), "{kept:?}");
        assert_eq!(
            kept.len(),
            (current + &rotated).lines().count(),
            "every line parses"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_is_recorded_after_its_answer_has_gone_out_and_none_is_lost_at_the_end() {
        let home = tempfile::tempdir().unwrap();
        let results = |log: &ActivityLog| -> Vec<usize> {
            log.read().iter().map(|r| r.result_bytes).collect()
        };
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let log = Rc::new(ActivityLog::in_config_dir(home.path()));
                log.append_soon(record(1));
                log.append_soon(record(2));
                // The task that writes the answer, woken after the calls were recorded.
                let answer = tokio::task::spawn_local({
                    let log = Rc::clone(&log);
                    async move { results(&log) }
                });
                assert_eq!(answer.await.unwrap(), Vec::<usize>::new());
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
                assert_eq!(results(&log), [1, 2]);
                log.append_soon(record(3));
                drop(log);
            })
            .await;
        assert_eq!(results(&ActivityLog::in_config_dir(home.path())), [1, 2, 3]);
    }

    #[test]
    fn a_record_directory_removed_under_a_gateway_is_made_again() {
        let home = tempfile::tempdir().unwrap();
        let log = ActivityLog::in_config_dir(home.path());
        log.write(&[record(1)]);
        std::fs::remove_dir_all(home.path().join("activity")).unwrap();
        log.write(&[record(2)]);
        log.write(&[record(3)]);
        let kept: Vec<usize> = log.read().iter().map(|r| r.result_bytes).collect();
        assert_eq!(kept, vec![2, 3]);
    }
}
