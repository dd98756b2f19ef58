//! Running gateways, for `plugboard serve --status` and the app. Each `plugboard serve` keeps a
//! private file `gateways/<pid>.json` in the config directory while it runs: its profile, its
//! client, when it started and each server's state. It is rewritten whenever a state changes
//! and removed when the gateway ends; the file of a gateway that was killed is recognised by
//! its process being gone, skipped and removed when read.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The folder of the status files, in the config directory.
pub const GATEWAYS_DIR: &str = "gateways";

/// One running gateway.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GatewayStatus {
    pub pid: u32,
    pub profile: String,
    /// The name the client gave in its handshake, once it has.
    pub client: Option<String>,
    pub started_at_ms: u64,
    pub servers: Vec<ServerStatus>,
}

/// One server of a running gateway.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ServerStatus {
    pub name: String,
    /// `idle` (starts on first use), `starting`, `connected` or `down`.
    pub state: String,
    /// Why it is down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Restarts tried since it went down (it is restarted with backoff).
    #[serde(default)]
    pub restarts: u32,
}

/// The status file of the running gateway; removed when dropped.
pub struct StatusFile {
    path: PathBuf,
}

impl StatusFile {
    /// The file of this process's gateway in `config_dir`.
    pub fn for_this_process(config_dir: &Path) -> StatusFile {
        StatusFile {
            path: config_dir
                .join(GATEWAYS_DIR)
                .join(format!("{}.json", std::process::id())),
        }
    }

    /// Write `status` (a failure to write is said once on stderr by the caller's choice: the
    /// gateway serves on regardless).
    pub fn write(&self, status: &GatewayStatus) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            crate::fs::create_dir(dir, true)?;
        }
        let bytes = serde_json::to_vec_pretty(status).map_err(std::io::Error::other)?;
        crate::fs::write_private(&self.path, &bytes)
    }
}

impl Drop for StatusFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` is still running.
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The gateways running now, oldest first; the files of gateways that are gone are removed.
pub fn running(config_dir: &Path) -> Vec<GatewayStatus> {
    let Ok(entries) = std::fs::read_dir(config_dir.join(GATEWAYS_DIR)) else {
        return vec![];
    };
    let mut found: Vec<GatewayStatus> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|path| {
            let status: GatewayStatus = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            let named_for = path.file_stem()?.to_str()?.parse::<u32>().ok()?;
            if named_for != status.pid || !alive(status.pid) {
                let _ = std::fs::remove_file(&path);
                return None;
            }
            Some(status)
        })
        .collect();
    found.sort_by_key(|s| (s.started_at_ms, s.pid));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_that_is_gone_is_not_listed_and_its_file_goes() {
        let dir = tempfile::tempdir().unwrap();
        let file = StatusFile::for_this_process(dir.path());
        let mine = GatewayStatus {
            pid: std::process::id(),
            profile: "work".into(),
            client: Some("cursor".into()),
            started_at_ms: 1,
            servers: vec![],
        };
        file.write(&mine).unwrap();
        // A gateway killed without cleaning up: its process no longer exists.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = dir.path().join(GATEWAYS_DIR).join(format!("{gone}.json"));
        let dead = GatewayStatus {
            pid: gone,
            ..mine.clone()
        };
        std::fs::write(&stale, serde_json::to_vec(&dead).unwrap()).unwrap();

        assert_eq!(running(dir.path()), [mine]);
        assert!(!stale.exists());
        drop(file);
        assert!(running(dir.path()).is_empty());
    }
}
