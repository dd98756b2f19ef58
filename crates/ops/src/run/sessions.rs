//! Who is connected right now: each `plugboard run` session keeps a small record in
//! `<config dir>/sessions/<pid>.json` (the server, the client's name, whether the client can be
//! told of tool changes), written when that changes and removed when the session ends. A change
//! of tool state uses them to say how it reaches running clients ([`notice`]): at once for a
//! client that can be told, at its next start for one that cannot.
//!
//! A record whose process is gone (a `plugboard run` killed with SIGKILL) is dropped by the
//! next reader.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One running session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub server: String,
    pub pid: u32,
    /// The client's name as it introduced itself, if it did.
    pub client: Option<String>,
    /// Whether it gets `notifications/tools/list_changed` (initialized, or listening).
    pub told: bool,
}

fn dir(config_dir: &Path) -> PathBuf {
    config_dir.join("sessions")
}

fn path(config_dir: &Path, pid: u32) -> PathBuf {
    dir(config_dir).join(format!("{pid}.json"))
}

/// Write (or replace) this process's record. Best effort: a record that cannot be written only
/// makes the notice less precise.
pub fn write(config_dir: &Path, record: &SessionRecord) {
    if let Ok(text) = serde_json::to_vec(record) {
        let _ = plugboard_base::fs::write_private(&path(config_dir, record.pid), &text);
    }
}

/// Remove the record of process `pid`.
pub fn remove(config_dir: &Path, pid: u32) {
    let _ = std::fs::remove_file(path(config_dir, pid));
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

/// The running sessions of server `server`, oldest pid first; dead ones are cleaned up.
pub fn running(config_dir: &Path, server: &str) -> Vec<SessionRecord> {
    let Ok(entries) = std::fs::read_dir(dir(config_dir)) else {
        return vec![];
    };
    let mut out: Vec<SessionRecord> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| {
            let record: SessionRecord =
                serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
            if !alive(record.pid) {
                let _ = std::fs::remove_file(e.path());
                return None;
            }
            Some(record)
        })
        .filter(|r| r.server == server)
        .collect();
    out.sort_by_key(|r| r.pid);
    out
}

fn names(records: &[&SessionRecord]) -> String {
    let names: Vec<String> = records
        .iter()
        .map(|r| match &r.client {
            Some(name) => format!("{name} (pid {})", r.pid),
            None => format!("a client (pid {})", r.pid),
        })
        .collect();
    names.join(", ")
}

/// How a change of `server`'s tool state reaches the clients running it now.
pub fn notice(config_dir: &Path, server: &str) -> String {
    let sessions = running(config_dir, server);
    let (told, untold): (Vec<&SessionRecord>, Vec<&SessionRecord>) =
        sessions.iter().partition(|s| s.told);
    match (told.is_empty(), untold.is_empty()) {
        (true, true) => format!(
            "No client is running `{server}` through Plugboard now: each one sees the change at \
             its next start."
        ),
        (false, true) => format!(
            "Connected through `plugboard run {server}` and told at once: {}.",
            names(&told)
        ),
        (told_none, _) => format!(
            "{}Not told, so they see the change only at their next start (they did not ask to \
             hear of tool changes): {}.",
            if told_none {
                String::new()
            } else {
                format!("Told at once: {}. ", names(&told))
            },
            names(&untold)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_say_who_is_told_and_dead_sessions_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        assert!(notice(dir.path(), "ev").contains("next start"));
        let me = std::process::id();
        write(
            dir.path(),
            &SessionRecord {
                server: "ev".into(),
                pid: me,
                client: Some("Claude Code".into()),
                told: true,
            },
        );
        let text = notice(dir.path(), "ev");
        assert!(text.contains("told at once: Claude Code"), "{text}");
        assert!(!text.contains("next start"), "{text}");
        assert!(notice(dir.path(), "other").starts_with("No client"));
        write(
            dir.path(),
            &SessionRecord {
                server: "ev".into(),
                pid: me,
                client: None,
                told: false,
            },
        );
        assert!(notice(dir.path(), "ev").contains("only at their next start"));
        // A pid that cannot be running (beyond the kernel's limit) is cleaned up.
        write(
            dir.path(),
            &SessionRecord {
                server: "ev".into(),
                pid: 4_194_304 + 17,
                client: None,
                told: true,
            },
        );
        assert_eq!(running(dir.path(), "ev").len(), 1);
        assert!(!path(dir.path(), 4_194_304 + 17).exists());
        remove(dir.path(), me);
        assert!(running(dir.path(), "ev").is_empty());
    }
}
