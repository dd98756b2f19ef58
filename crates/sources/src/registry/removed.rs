//! The servers a registry deleted, with its message, kept beside its cache
//! (`<cache>.removed.json`). The cache itself drops a deleted server, so the marketplace no
//! longer offers it; this record lets an installed server from it be told why it is gone
//! ("removed from the registry: MESSAGE") instead of only "not listed".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Why and when a registry deleted a server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    /// The registry's `statusMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the registry last changed the row (`updatedAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Removals by server name.
pub type Removals = BTreeMap<String, Removal>;

/// Where the removals of the registry cached at `cache` are kept.
pub fn removals_path(cache: &Path) -> PathBuf {
    cache.with_extension("removed.json")
}

/// The removals recorded for the registry cached at `cache` (none when the file is missing or
/// unreadable: it only adds words to what the cache already says).
pub fn load(cache: &Path) -> Removals {
    std::fs::read(removals_path(cache))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Record what a sync saw: servers `deleted`, and servers listed again (`back`), which are no
/// longer removed.
pub fn update<'a>(
    cache: &Path,
    deleted: Vec<(String, Removal)>,
    back: impl Iterator<Item = &'a str>,
) -> std::io::Result<()> {
    let mut removals = load(cache);
    let before = removals.clone();
    for name in back {
        removals.remove(name);
    }
    removals.extend(deleted);
    if removals == before {
        return Ok(());
    }
    let bytes = serde_json::to_vec_pretty(&removals).map_err(std::io::Error::other)?;
    plugboard_base::fs::write_atomic(&removals_path(cache), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_server_is_remembered_until_it_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("registry-abcd.jsonl");
        let gone = Removal {
            message: Some("spam".into()),
            at: None,
        };
        update(
            &cache,
            vec![("a/b".into(), gone.clone())],
            std::iter::empty(),
        )
        .unwrap();
        assert_eq!(load(&cache).get("a/b"), Some(&gone));
        update(&cache, vec![], ["a/b"].into_iter()).unwrap();
        assert!(load(&cache).is_empty());
    }
}
