//! The tool choices of a removed server, kept so that installing the same server again (same
//! name, same source) brings them back: a user who removes and re-installs GitHub's server
//! does not switch its 80 tools off again. One file per name under `<config dir>/tool-state/`,
//! written on remove when there was something chosen, consumed on install.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ServerConfig, ToolPolicy};

#[derive(Serialize, Deserialize)]
struct Remembered {
    /// What the server was: its catalog source, else its command or URL.
    identity: Value,
    tools: ToolPolicy,
}

fn path(config_dir: &Path, name: &str) -> PathBuf {
    config_dir.join("tool-state").join(format!("{name}.json"))
}

/// What makes a re-install "the same server": where it came from (catalog entry and option,
/// or registry source), else what it launches.
fn identity(server: &ServerConfig) -> Value {
    match &server.source {
        Some(source) => serde_json::json!({"source": source}),
        None => serde_json::json!({
            "command": server.command,
            "args": server.args,
            "url": server.url,
        }),
    }
}

/// Keep the tool choices of `server`, which is being removed as `name` (nothing is written
/// when nothing was chosen). Best effort: a failure only loses the memory.
pub fn remember(config_dir: &Path, name: &str, server: &ServerConfig) {
    if server.tools.is_empty() {
        return;
    }
    let file = path(config_dir, name);
    let record = Remembered {
        identity: identity(server),
        tools: server.tools.clone(),
    };
    if let Ok(text) = serde_json::to_vec_pretty(&record) {
        let _ = plugboard_base::fs::write_private(&file, &text);
    }
}

/// Before `server` is installed as `name`: bring back the remembered choices of the same
/// server under the same name, if it has none of its own. Returns whether it did.
pub fn recall(config_dir: &Path, name: &str, server: &mut ServerConfig) -> bool {
    let file = path(config_dir, name);
    let Ok(bytes) = std::fs::read(&file) else {
        return false;
    };
    let Ok(record) = serde_json::from_slice::<Remembered>(&bytes) else {
        return false;
    };
    if !server.tools.is_empty() || record.identity != identity(server) {
        return false;
    }
    server.tools = record.tools;
    true
}

/// Forget what was remembered for `name` (after an install took it, or chose otherwise).
pub fn forget(config_dir: &Path, name: &str) {
    let _ = std::fs::remove_file(path(config_dir, name));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_server_gets_its_choices_back_and_another_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut server = ServerConfig::stdio("node", vec!["everything.js".into()]);
        server.tools.set("get-env", false);
        remember(dir.path(), "ev", &server);
        let mut other = ServerConfig::stdio("node", vec!["other.js".into()]);
        assert!(!recall(dir.path(), "ev", &mut other));
        assert!(other.tools.is_empty());
        let mut again = ServerConfig::stdio("node", vec!["everything.js".into()]);
        assert!(!recall(dir.path(), "other-name", &mut again));
        assert!(recall(dir.path(), "ev", &mut again));
        assert!(again.tools.disabled.contains("get-env"));
        forget(dir.path(), "ev");
        let mut third = ServerConfig::stdio("node", vec!["everything.js".into()]);
        assert!(!recall(dir.path(), "ev", &mut third));
    }
}
