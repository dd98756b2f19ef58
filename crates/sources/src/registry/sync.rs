//! Syncing a registry into its cache: the first time (or with `full`) every latest row, page
//! after page (`version=latest`, `limit=100`, following `nextCursor`), written to the new cache
//! as it arrives; afterwards only what changed (`updated_since` the newest `updatedAt` seen,
//! which includes deleted rows), merged into the old cache. Deleted servers disappear;
//! deprecated ones stay, flagged with their message. A row that cannot be read is skipped and
//! counted. A registry that fails (DNS, TLS, an HTTP status, an answer that is not a listing)
//! keeps its old cache and reports why; other registries are not affected.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::cache::{
    CACHE_FORMAT, CacheHeader, CacheProblem, CacheWriter, CachedRegistry, cache_path,
    for_each_line, line_name, read_header,
};
use super::client::{ApiVersion, FetchError, ListQuery, RegistryClient};
use super::model::{RegistryRow, Status};
use super::removed::{self, Removal};
use super::sources::RegistrySource;
use super::time::{now_secs, parse_rfc3339};

/// Live progress of a sync.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SyncProgress {
    /// A registry's sync began. `expected` is the number of servers it had last time.
    Started {
        registry: String,
        full: bool,
        expected: Option<usize>,
    },
    /// Another page arrived.
    Page {
        registry: String,
        rows: usize,
        pages: usize,
    },
}

/// How a registry's sync ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyncReport {
    pub registry: String,
    pub ok: bool,
    /// A pull of everything (rather than the changes since the last sync).
    pub full: bool,
    /// Servers in the cache afterwards.
    pub servers: usize,
    /// Rows received.
    pub received: usize,
    /// Servers added or changed, and removed (deleted in the registry), by an incremental sync.
    pub changed: usize,
    pub removed: usize,
    /// Rows that could not be read and were skipped, with the first few reasons.
    pub skipped: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_examples: Vec<String>,
    pub pages: usize,
    pub ms: u64,
    /// The registry kept naming more pages past the limits of one sync ([`MAX_PAGES`],
    /// [`MAX_ROWS`]): what arrived until then is kept, the rest is not read.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// `dns`, `tls`, `refused`, `timeout`, `network`, `http`, `malformed`, `cache`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The API version used.
    pub api: String,
}

const EXAMPLES_KEPT: usize = 5;

/// The most pages one sync reads from a registry (100 rows a page: ten times the official
/// registry's size at the end of 2026). A registry that names more is cut off, not followed.
pub const MAX_PAGES: usize = 1_000;
/// The most rows one sync reads from a registry, whatever its page size.
pub const MAX_ROWS: usize = 200_000;

struct Counters {
    received: usize,
    skipped: usize,
    examples: Vec<String>,
    pages: usize,
    newest: Option<String>,
}

impl Counters {
    fn new(newest: Option<String>) -> Counters {
        Counters {
            received: 0,
            skipped: 0,
            examples: vec![],
            pages: 0,
            newest,
        }
    }

    fn skip(&mut self, reasons: Vec<String>) {
        self.skipped += reasons.len();
        for r in reasons {
            if self.examples.len() < EXAMPLES_KEPT {
                self.examples.push(r);
            }
        }
    }

    /// Whether the sync has read as much as one sync may.
    fn at_limit(&self) -> bool {
        self.pages >= MAX_PAGES || self.received >= MAX_ROWS
    }

    fn saw(&mut self, row: &RegistryRow) {
        if let Some(updated) = row.meta.official.updated_at.as_deref()
            && newer(updated, self.newest.as_deref())
        {
            self.newest = Some(updated.to_owned());
        }
    }
}

/// Whether timestamp `a` is after `b` (fractions of a second count).
fn newer(a: &str, b: Option<&str>) -> bool {
    let Some(b) = b else { return true };
    let key = |t: &str| {
        let secs = parse_rfc3339(t).unwrap_or(i64::MIN);
        let fraction: String = t
            .split_once('.')
            .map(|(_, f)| f.chars().take_while(char::is_ascii_digit).collect())
            .unwrap_or_default();
        (secs, format!("{fraction:0<9}"))
    };
    key(a) > key(b)
}

/// Sync `registry` into its cache in `config_dir`. `full` ignores the old cache.
pub async fn sync_registry(
    config_dir: &Path,
    registry: &RegistrySource,
    full: bool,
    progress: &mut dyn FnMut(SyncProgress),
) -> SyncReport {
    let started = Instant::now();
    let path = cache_path(config_dir, &registry.url);
    // A cache that cannot be read is rebuilt by a full pull.
    let old = CachedRegistry::load(&path).ok().flatten();
    let incremental = !full
        && old
            .as_ref()
            .is_some_and(|c| c.header.url == registry.url && c.header.newest_update.is_some());
    let api = old
        .as_ref()
        .and_then(|c| ApiVersion::parse(&c.header.api))
        .unwrap_or(ApiVersion::V0_1);
    progress(SyncProgress::Started {
        registry: registry.url.clone(),
        full: !incremental,
        expected: old.as_ref().map(|c| c.len()),
    });
    let mut report = SyncReport {
        registry: registry.url.clone(),
        ok: false,
        full: !incremental,
        servers: old.as_ref().map_or(0, |c| c.len()),
        received: 0,
        changed: 0,
        removed: 0,
        skipped: 0,
        skipped_examples: vec![],
        pages: 0,
        ms: 0,
        truncated: false,
        error_code: None,
        error: None,
        hint: None,
        api: api.as_str().into(),
    };
    let client = RegistryClient::new(&registry.url, api);
    let outcome = match client {
        Err(e) => Err(SyncError::Fetch(e)),
        Ok(mut client) => {
            let result = match (&old, incremental) {
                (Some(old), true) => {
                    pull_changes(
                        &mut client,
                        old,
                        &path,
                        &registry.url,
                        progress,
                        &mut report,
                    )
                    .await
                }
                _ => pull_all(&mut client, &path, &registry.url, progress, &mut report).await,
            };
            report.api = client.api().as_str().into();
            result
        }
    };
    match outcome {
        Ok(servers) => {
            report.ok = true;
            report.servers = servers;
        }
        Err(SyncError::Fetch(e)) => {
            report.error_code = Some(e.code().into());
            report.hint = Some(e.hint());
            report.error = Some(e.to_string());
        }
        Err(SyncError::Cache(detail)) => {
            report.error_code = Some("cache".into());
            report.error = Some(format!(
                "the cache {} could not be written: {detail}",
                path.display()
            ));
            report.hint =
                Some("check the free space and permissions of the config directory".into());
        }
    }
    report.ms = started.elapsed().as_millis() as u64;
    report
}

enum SyncError {
    Fetch(FetchError),
    Cache(String),
}

impl From<FetchError> for SyncError {
    fn from(e: FetchError) -> Self {
        SyncError::Fetch(e)
    }
}

impl From<std::io::Error> for SyncError {
    fn from(e: std::io::Error) -> Self {
        SyncError::Cache(e.to_string())
    }
}

fn header(url: &str, api: ApiVersion, newest: Option<String>, skipped: usize) -> CacheHeader {
    CacheHeader {
        plugboard_registry_cache: CACHE_FORMAT,
        url: url.to_owned(),
        api: api.as_str().into(),
        synced_at: now_secs(),
        newest_update: newest,
        servers: 0,
        skipped,
    }
}

/// Every latest row, into a new cache. Returns the number of servers kept.
async fn pull_all(
    client: &mut RegistryClient,
    path: &Path,
    url: &str,
    progress: &mut dyn FnMut(SyncProgress),
    report: &mut SyncReport,
) -> Result<usize, SyncError> {
    let mut writer = None;
    let mut counters = Counters::new(None);
    let mut query = ListQuery {
        latest_only: true,
        ..ListQuery::default()
    };
    loop {
        let page = client.list(&query).await?;
        // The cache file is created only once the registry answered.
        let writer = match &mut writer {
            Some(w) => w,
            None => writer.insert(CacheWriter::create(path)?),
        };
        counters.pages += 1;
        counters.received += page.rows.len();
        counters.skip(page.malformed);
        for row in &page.rows {
            counters.saw(row);
            // A full listing has no deleted rows; a registry that sends them anyway is obeyed.
            if row.status() != Status::Deleted {
                writer.push(row)?;
            }
        }
        progress(SyncProgress::Page {
            registry: url.to_owned(),
            rows: counters.received,
            pages: counters.pages,
        });
        match page.next_cursor {
            Some(_) if counters.at_limit() => {
                report.truncated = true;
                break;
            }
            Some(cursor) if query.cursor.as_deref() != Some(&cursor) => query.cursor = Some(cursor),
            _ => break,
        }
    }
    fill(report, &counters);
    let writer = writer.expect("a page was read");
    let servers = writer.finish(header(url, client.api(), counters.newest, counters.skipped))?;
    report.changed = servers;
    Ok(servers)
}

/// The rows changed since the last sync, merged into the old cache.
async fn pull_changes(
    client: &mut RegistryClient,
    old: &CachedRegistry,
    path: &Path,
    url: &str,
    progress: &mut dyn FnMut(SyncProgress),
    report: &mut SyncReport,
) -> Result<usize, SyncError> {
    let mut counters = Counters::new(old.header.newest_update.clone());
    // name → the new row's line, or `None` when the server was deleted.
    let mut changes: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let mut deleted: Vec<(String, Removal)> = vec![];
    let mut query = ListQuery {
        latest_only: true,
        updated_since: old.header.newest_update.clone(),
        ..ListQuery::default()
    };
    loop {
        let page = client.list(&query).await?;
        counters.pages += 1;
        counters.received += page.rows.len();
        counters.skip(page.malformed);
        for row in &page.rows {
            counters.saw(row);
            let line = match row.status() {
                Status::Deleted => {
                    deleted.push((
                        row.name().to_owned(),
                        Removal {
                            message: row.meta.official.status_message.clone(),
                            at: row.meta.official.updated_at.clone(),
                        },
                    ));
                    None
                }
                _ => Some(serde_json::to_vec(row).map_err(std::io::Error::other)?),
            };
            changes.insert(row.name().to_owned(), line);
        }
        progress(SyncProgress::Page {
            registry: url.to_owned(),
            rows: counters.received,
            pages: counters.pages,
        });
        match page.next_cursor {
            Some(_) if counters.at_limit() => {
                report.truncated = true;
                break;
            }
            Some(cursor) if query.cursor.as_deref() != Some(&cursor) => query.cursor = Some(cursor),
            _ => break,
        }
    }
    fill(report, &counters);
    report.changed = changes.values().filter(|c| c.is_some()).count();
    report.removed = changes
        .iter()
        .filter(|(name, c)| c.is_none() && old.find(name).is_some())
        .count();
    let back = changes
        .iter()
        .filter(|(_, c)| c.is_some())
        .map(|(name, _)| name.as_str());
    removed::update(path, deleted, back)?;
    if changes.is_empty() {
        // Nothing changed: only the time of the sync is new.
        return rewrite_header(old, path, client.api(), &counters);
    }
    let mut writer = CacheWriter::create(path)?;
    let mut pending = changes.into_iter().peekable();
    for_each_line(old.path(), |line| {
        let name =
            line_name(line).ok_or_else(|| std::io::Error::other("a cached row has no name"))?;
        while let Some((next, _)) = pending.peek() {
            if next.as_str() >= name.as_str() {
                break;
            }
            let (next, change) = pending.next().expect("peeked");
            if let Some(new) = change {
                writer.push_line(&next, &new)?;
            }
        }
        match pending.peek() {
            Some((next, _)) if *next == name => {
                let (next, change) = pending.next().expect("peeked");
                if let Some(new) = change {
                    writer.push_line(&next, &new)?;
                }
            }
            _ => writer.push_line(&name, line)?,
        }
        Ok(())
    })?;
    for (name, change) in pending {
        if let Some(new) = change {
            writer.push_line(&name, &new)?;
        }
    }
    let skipped = counters.skipped;
    Ok(writer.finish(header(url, client.api(), counters.newest, skipped))?)
}

fn rewrite_header(
    old: &CachedRegistry,
    path: &Path,
    api: ApiVersion,
    counters: &Counters,
) -> Result<usize, SyncError> {
    let mut writer = CacheWriter::create(path)?;
    for_each_line(old.path(), |line| {
        let name =
            line_name(line).ok_or_else(|| std::io::Error::other("a cached row has no name"))?;
        writer.push_line(&name, line)
    })?;
    Ok(writer.finish(header(
        &old.header.url,
        api,
        counters.newest.clone(),
        counters.skipped,
    ))?)
}

fn fill(report: &mut SyncReport, counters: &Counters) {
    report.received = counters.received;
    report.skipped = counters.skipped;
    report.skipped_examples = counters.examples.clone();
    report.pages = counters.pages;
}

/// The state of one registry's cache, for `plugboard registry status` and the app.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CacheStatus {
    pub registry: String,
    pub origin: super::sources::Origin,
    pub cached: bool,
    pub servers: usize,
    /// Unix seconds of the last successful sync.
    pub synced_at: Option<i64>,
    pub skipped: usize,
    pub api: Option<String>,
    pub path: String,
    /// Why the cache cannot be used, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The cache state of each registry.
pub fn cache_status(config_dir: &Path, registries: &[RegistrySource]) -> Vec<CacheStatus> {
    registries
        .iter()
        .map(|r| {
            let path = cache_path(config_dir, &r.url);
            // The header says it all; the rows are not read.
            let loaded: Result<Option<CacheHeader>, CacheProblem> = read_header(&path);
            let (header, problem) = match loaded {
                Ok(h) => (h, None),
                Err(p) => (None, Some(p.to_string())),
            };
            CacheStatus {
                registry: r.url.clone(),
                origin: r.origin,
                cached: header.is_some(),
                servers: header.as_ref().map_or(0, |h| h.servers),
                synced_at: header.as_ref().map(|h| h.synced_at),
                skipped: header.as_ref().map_or(0, |h| h.skipped),
                api: header.as_ref().map(|h| h.api.clone()),
                path: path.display().to_string(),
                problem,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_compare_with_their_fractions() {
        assert!(newer(
            "2025-09-09T00:16:49.2Z",
            Some("2025-09-09T00:16:49.16262Z")
        ));
        assert!(!newer(
            "2025-09-09T00:16:49.16262Z",
            Some("2025-09-09T00:16:49.162620Z")
        ));
        assert!(newer(
            "2025-09-10T00:00:00Z",
            Some("2025-09-09T23:59:59.999Z")
        ));
        assert!(newer("2025-01-01T00:00:00Z", None));
    }
}
