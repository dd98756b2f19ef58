//! Health: tests of many servers at once with bounded parallelism, and the last result of each
//! server kept on disk (already redacted, so without secrets).
//!
//! Each check records when it started. A result is stored only if no check that started later
//! has stored one already, so a slow, superseded check never overwrites a newer answer.

use std::fs::{self, File};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::probe::TestResult;

/// The default number of servers tested at the same time.
pub const DEFAULT_PARALLELISM: usize = 16;

/// The last stored check of one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HealthRecord {
    pub name: String,
    /// Unix milliseconds when the check started (what decides which check is newer).
    pub started_at_ms: u64,
    pub finished_at_ms: u64,
    pub result: TestResult,
}

/// What happened to a result handed to [`HealthStore::record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    Stored,
    /// A check that started later had already stored its result; this one was dropped.
    Superseded,
}

/// Last results, one file per server under `<config dir>/health/`.
#[derive(Clone, Debug)]
pub struct HealthStore {
    dir: PathBuf,
}

impl HealthStore {
    /// The store inside a Plugboard config directory.
    pub fn in_config_dir(config_dir: &std::path::Path) -> Self {
        HealthStore {
            dir: config_dir.join("health"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// The last stored check of `name`, if any (an unreadable record counts as none).
    pub fn get(&self, name: &str) -> Option<HealthRecord> {
        let bytes = fs::read(self.path(name)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Store `record` unless a newer check of the same server is already stored.
    pub fn record(&self, record: &HealthRecord) -> std::io::Result<Recorded> {
        plugboard_base::fs::create_dir(&self.dir, true)?;
        let _lock = self.lock()?;
        if let Some(existing) = self.get(&record.name)
            && existing.started_at_ms > record.started_at_ms
        {
            return Ok(Recorded::Superseded);
        }
        let text = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
        plugboard_base::fs::write_private(&self.path(&record.name), &text)?;
        Ok(Recorded::Stored)
    }

    /// Forget `name` (when the server is removed).
    pub fn forget(&self, name: &str) {
        let _ = fs::remove_file(self.path(name));
    }

    /// Move a record when its server is renamed.
    pub fn rename(&self, old: &str, new: &str) {
        let Some(mut record) = self.get(old) else {
            return;
        };
        record.name = new.to_string();
        if self.record(&record).is_ok() {
            self.forget(old);
        }
    }

    fn lock(&self) -> std::io::Result<File> {
        let file = plugboard_base::fs::open_lock_file(&self.dir.join(".lock"))?;
        file.lock()?;
        Ok(file)
    }
}

/// `names` in the order to check them in: the ones whose last check took longest first, then
/// the quicker ones; names never checked count as slowest (a new server may well be slow).
/// Started last, a slow server would stretch the whole run by its own time; started first, it
/// overlaps with all the quick ones (longest-processing-time-first scheduling).
pub fn longest_first(store: &HealthStore, names: Vec<String>) -> Vec<String> {
    let mut timed: Vec<(Option<u64>, String)> = names
        .into_iter()
        .map(|name| {
            let took = store
                .get(&name)
                .map(|r| r.finished_at_ms.saturating_sub(r.started_at_ms));
            (took, name)
        })
        .collect();
    // `None` (never checked) sorts after every `Some` in reverse order, i.e. first; the sort
    // is stable, so equal times keep the given order.
    timed.sort_by(|a, b| match (a.0, b.0) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x),
    });
    timed.into_iter().map(|(_, name)| name).collect()
}

/// Run `check` for every name with at most `parallelism` at a time and return the results in
/// the order given. One slow or failing check never holds up the others beyond the limit.
pub async fn check_all<F, Fut>(
    names: Vec<String>,
    parallelism: usize,
    check: F,
) -> Vec<(String, TestResult)>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = TestResult>,
{
    let check = Arc::new(check);
    let mut results: Vec<(usize, String, TestResult)> =
        futures::stream::iter(names.into_iter().enumerate())
            .map(|(i, name)| {
                let check = check.clone();
                async move {
                    let result = check(name.clone()).await;
                    (i, name, result)
                }
            })
            .buffer_unordered(parallelism.max(1))
            .collect()
            .await;
    results.sort_by_key(|(i, _, _)| *i);
    results.into_iter().map(|(_, n, r)| (n, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportKind;

    fn record(name: &str, started: u64, ok: bool) -> HealthRecord {
        let mut result = TestResult::new(TransportKind::Stdio);
        result.ok = ok;
        HealthRecord {
            name: name.into(),
            started_at_ms: started,
            finished_at_ms: started + 10,
            result,
        }
    }

    #[test]
    fn slowest_and_unchecked_servers_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = HealthStore::in_config_dir(dir.path());
        for (name, took) in [
            ("quick", 10),
            ("slow", 2000),
            ("medium", 300),
            ("quick2", 10),
        ] {
            let mut r = record(name, 1000, true);
            r.finished_at_ms = 1000 + took;
            store.record(&r).unwrap();
        }
        let names = ["quick", "new", "slow", "quick2", "medium"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            longest_first(&store, names),
            ["new", "slow", "medium", "quick", "quick2"]
        );
    }

    #[test]
    fn a_superseded_check_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = HealthStore::in_config_dir(dir.path());
        assert_eq!(
            store.record(&record("a", 200, true)).unwrap(),
            Recorded::Stored
        );
        assert_eq!(
            store.record(&record("a", 100, false)).unwrap(),
            Recorded::Superseded
        );
        assert!(store.get("a").unwrap().result.ok);
        assert_eq!(
            store.record(&record("a", 300, false)).unwrap(),
            Recorded::Stored
        );
        assert!(!store.get("a").unwrap().result.ok);
        store.rename("a", "b");
        assert!(store.get("a").is_none());
        assert_eq!(store.get("b").unwrap().name, "b");
        store.forget("b");
        assert!(store.get("b").is_none());
    }

    #[tokio::test]
    async fn checks_run_concurrently_in_bounded_numbers_and_keep_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let names: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
        let results = check_all(names.clone(), 5, |name| {
            let running = running.clone();
            let peak = peak.clone();
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                let mut r = TestResult::new(TransportKind::Stdio);
                r.ok = name.ends_with('3');
                r
            }
        })
        .await;
        assert_eq!(
            results.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            names
        );
        assert_eq!(peak.load(Ordering::SeqCst), 5);
        assert!(results[3].1.ok && !results[4].1.ok);
    }
}
