//! The local copy of a registry's listing, so the marketplace works offline and starts without
//! the network: one file per registry in `<config dir>/registry/`, written atomically (temp
//! file, fsync, rename) and versioned.
//!
//! The file is JSON Lines: a fixed-size header line (format version, registry URL, API version,
//! when it was synced, the newest `updatedAt` seen, counts; padded with spaces so it can be
//! written last), then one row per line (the latest version of each server, normalised, sorted
//! by name). Loading keeps only a brief record of each row in memory ([`Brief`]: what the
//! marketplace shows and searches) and where its line is; the full row is read from the file
//! when a server is shown or installed. A cache that cannot be read (truncated, another format,
//! garbage) is reported and treated as absent: the next sync rebuilds it. It never touches the
//! user's config.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::model::{RegistryRow, Status};
use super::time::parse_rfc3339;

/// The cache format this build reads and writes.
pub const CACHE_FORMAT: u32 = 1;
/// The directory of the caches inside the config directory.
pub const CACHE_DIR: &str = "registry";
/// The header line's size, newline included.
const HEADER_SIZE: usize = 1024;

/// The first line of a cache file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheHeader {
    /// The format version ([`CACHE_FORMAT`]).
    pub plugboard_registry_cache: u32,
    pub url: String,
    /// `v0.1` or `v0`.
    pub api: String,
    /// When the last sync finished (Unix seconds, this machine's clock).
    pub synced_at: i64,
    /// The newest `updatedAt` among the rows seen (the registry's clock), for `updated_since`.
    pub newest_update: Option<String>,
    pub servers: usize,
    /// Rows the last sync could not read.
    pub skipped: usize,
}

/// Why a cache file could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the registry cache {path} cannot be used ({detail}); the next `plugboard registry sync` rebuilds it"
)]
pub struct CacheProblem {
    pub path: String,
    pub detail: String,
}

/// The cache file of registry `url` in `config_dir`.
pub fn cache_path(config_dir: &Path, url: &str) -> PathBuf {
    let host: String = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(48)
        .collect();
    let digest = Sha256::digest(url.as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    config_dir
        .join(CACHE_DIR)
        .join(format!("{host}-{hash}.jsonl"))
}

/// A package of a server, in brief.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageBrief {
    pub registry_type: Box<str>,
    pub identifier: Box<str>,
    /// `stdio`, `streamable-http`, `sse`.
    pub transport: Box<str>,
    pub runtime_hint: Option<Box<str>>,
}

/// What the marketplace needs of a server, kept in memory for every cached row.
#[derive(Clone, Debug, PartialEq)]
pub struct Brief {
    pub name: Box<str>,
    pub title: Option<Box<str>>,
    pub description: Box<str>,
    pub version: Box<str>,
    pub repository: Option<Box<str>>,
    pub website: Option<Box<str>>,
    pub packages: Box<[PackageBrief]>,
    /// The remotes' transports (`streamable-http`, `sse`).
    pub remotes: Box<[Box<str>]>,
    pub status: Status,
    pub status_message: Option<Box<str>>,
    /// Unix seconds.
    pub published_at: Option<i64>,
    offset: u64,
    len: u32,
}

#[derive(Deserialize)]
struct LineBrief<'a> {
    #[serde(borrow)]
    server: ServerBrief<'a>,
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<MetaBrief<'a>>,
}

#[derive(Deserialize)]
struct ServerBrief<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    title: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    description: Cow<'a, str>,
    #[serde(borrow)]
    version: Cow<'a, str>,
    #[serde(default, borrow)]
    repository: Option<RepoBrief<'a>>,
    #[serde(rename = "websiteUrl", default, borrow)]
    website_url: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    packages: Vec<PackageLine<'a>>,
    #[serde(default, borrow)]
    remotes: Vec<TransportLine<'a>>,
}

#[derive(Deserialize)]
struct RepoBrief<'a> {
    #[serde(borrow)]
    url: Cow<'a, str>,
}

#[derive(Deserialize)]
struct PackageLine<'a> {
    #[serde(rename = "registryType", borrow)]
    registry_type: Cow<'a, str>,
    #[serde(borrow)]
    identifier: Cow<'a, str>,
    #[serde(rename = "runtimeHint", default, borrow)]
    runtime_hint: Option<Cow<'a, str>>,
    #[serde(borrow)]
    transport: TransportLine<'a>,
}

#[derive(Deserialize)]
struct TransportLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
struct MetaBrief<'a> {
    #[serde(rename = "io.modelcontextprotocol.registry/official", default, borrow)]
    official: Option<OfficialBrief<'a>>,
}

#[derive(Deserialize)]
struct OfficialBrief<'a> {
    #[serde(default, borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(rename = "statusMessage", default, borrow)]
    status_message: Option<Cow<'a, str>>,
    #[serde(rename = "publishedAt", default, borrow)]
    published_at: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct LineName<'a> {
    #[serde(borrow)]
    server: NameOnly<'a>,
}

#[derive(Deserialize)]
struct NameOnly<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

fn boxed(s: Cow<'_, str>) -> Box<str> {
    s.into_owned().into_boxed_str()
}

impl Brief {
    fn from_line(line: &[u8], offset: u64) -> Result<Brief, String> {
        let b: LineBrief = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let official = b.meta.and_then(|m| m.official);
        let (status, status_message, published_at) = match official {
            Some(o) => (
                match o.status.as_deref() {
                    Some("deprecated") => Status::Deprecated,
                    Some("deleted") => Status::Deleted,
                    _ => Status::Active,
                },
                o.status_message.map(boxed),
                o.published_at.as_deref().and_then(parse_rfc3339),
            ),
            None => (Status::Active, None, None),
        };
        let s = b.server;
        Ok(Brief {
            name: boxed(s.name),
            title: s.title.map(boxed),
            description: boxed(s.description),
            version: boxed(s.version),
            repository: s.repository.map(|r| boxed(r.url)),
            website: s.website_url.map(boxed),
            packages: s
                .packages
                .into_iter()
                .map(|p| PackageBrief {
                    registry_type: boxed(p.registry_type),
                    identifier: boxed(p.identifier),
                    transport: boxed(p.transport.kind),
                    runtime_hint: p.runtime_hint.map(boxed),
                })
                .collect(),
            remotes: s.remotes.into_iter().map(|r| boxed(r.kind)).collect(),
            status,
            status_message,
            published_at,
            offset,
            len: line.len() as u32,
        })
    }

    /// The name shown: the title, else the part of the name after the namespace.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .unwrap_or_else(|| self.name.split_once('/').map_or(&*self.name, |(_, n)| n))
    }
}

/// One registry's cache, loaded.
#[derive(Debug)]
pub struct CachedRegistry {
    pub header: CacheHeader,
    /// Sorted by name.
    pub servers: Vec<Brief>,
    path: PathBuf,
}

fn problem(path: &Path, detail: impl Into<String>) -> CacheProblem {
    CacheProblem {
        path: path.display().to_string(),
        detail: detail.into(),
    }
}

impl CachedRegistry {
    /// Load the cache at `path`: `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<CachedRegistry>, CacheProblem> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(problem(path, e.to_string())),
        };
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::with_capacity(8 * 1024);
        reader
            .read_until(b'\n', &mut line)
            .map_err(|e| problem(path, e.to_string()))?;
        let header: CacheHeader = serde_json::from_slice(&line)
            .map_err(|e| problem(path, format!("its header is not readable: {e}")))?;
        if header.plugboard_registry_cache != CACHE_FORMAT {
            return Err(problem(
                path,
                format!(
                    "it is in format {} and this Plugboard reads format {CACHE_FORMAT}",
                    header.plugboard_registry_cache
                ),
            ));
        }
        let mut offset = line.len() as u64;
        let mut servers = Vec::with_capacity(header.servers);
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| problem(path, e.to_string()))?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') {
                return Err(problem(path, "its last line is cut off"));
            }
            let brief = Brief::from_line(&line, offset)
                .map_err(|e| problem(path, format!("line {}: {e}", servers.len() + 2)))?;
            servers.push(brief);
            offset += n as u64;
        }
        if servers.len() != header.servers {
            return Err(problem(
                path,
                format!(
                    "its header says {} servers but it holds {}",
                    header.servers,
                    servers.len()
                ),
            ));
        }
        Ok(Some(CachedRegistry {
            header,
            servers,
            path: path.to_path_buf(),
        }))
    }

    /// The full row of server `index`, read from the file.
    pub fn row(&self, index: usize) -> Result<RegistryRow, CacheProblem> {
        let brief = &self.servers[index];
        let mut file = File::open(&self.path).map_err(|e| problem(&self.path, e.to_string()))?;
        file.seek(SeekFrom::Start(brief.offset))
            .map_err(|e| problem(&self.path, e.to_string()))?;
        let mut line = vec![0; brief.len as usize];
        file.read_exact(&mut line)
            .map_err(|e| problem(&self.path, e.to_string()))?;
        let value: Value = serde_json::from_slice(&line)
            .map_err(|e| problem(&self.path, format!("the row of `{}`: {e}", brief.name)))?;
        let row = RegistryRow::from_value(&value).map_err(|e| problem(&self.path, e))?;
        if *row.server.name != *brief.name {
            return Err(problem(
                &self.path,
                "it changed while it was read; load it again",
            ));
        }
        Ok(row)
    }

    /// The position of server `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.servers.binary_search_by(|b| (*b.name).cmp(name)).ok()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Writes a new cache file next to the old one and puts it in place when finished.
pub struct CacheWriter {
    out: BufWriter<File>,
    tmp: PathBuf,
    path: PathBuf,
    servers: usize,
    last: Option<String>,
    sorted: bool,
}

impl CacheWriter {
    pub fn create(path: &Path) -> std::io::Result<CacheWriter> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(
            ".{name}.{}.{:08x}.tmp",
            std::process::id(),
            rand::random::<u32>()
        ));
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .open(&tmp)?;
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        out.write_all(&[b' '; HEADER_SIZE - 1])?;
        out.write_all(b"\n")?;
        Ok(CacheWriter {
            out,
            tmp,
            path: path.to_path_buf(),
            servers: 0,
            last: None,
            sorted: true,
        })
    }

    /// Add a row (rows should come sorted by name; if they do not, `finish` sorts them).
    pub fn push(&mut self, row: &RegistryRow) -> std::io::Result<()> {
        let line = serde_json::to_vec(row).map_err(std::io::Error::other)?;
        self.push_line(row.name(), &line)
    }

    /// Add a row's line as it is (from an older cache); `line` has no newline.
    pub fn push_line(&mut self, name: &str, line: &[u8]) -> std::io::Result<()> {
        if self.last.as_deref().is_some_and(|last| last >= name) {
            self.sorted = false;
        }
        self.last = Some(name.to_owned());
        self.out.write_all(line)?;
        self.out.write_all(b"\n")?;
        self.servers += 1;
        Ok(())
    }

    /// Write the header, sort if needed, and put the file in place atomically.
    pub fn finish(mut self, mut header: CacheHeader) -> std::io::Result<usize> {
        let result = (|| {
            self.out.flush()?;
            if !self.sorted {
                self.sort_rows()?;
            }
            header.servers = self.servers;
            let mut text = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
            if text.len() >= HEADER_SIZE {
                return Err(std::io::Error::other("the cache header is too long"));
            }
            text.resize(HEADER_SIZE - 1, b' ');
            text.push(b'\n');
            let file = self.out.get_mut();
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&text)?;
            file.sync_all()?;
            std::fs::rename(&self.tmp, &self.path)?;
            if let Some(dir) = self.path.parent()
                && let Ok(d) = File::open(dir)
            {
                let _ = d.sync_all();
            }
            Ok(self.servers)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        result
    }

    /// Rows arrived out of order (or twice): sort them by name, keeping the last of each.
    fn sort_rows(&mut self) -> std::io::Result<()> {
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(HEADER_SIZE as u64))?;
        let mut lines: Vec<(String, Vec<u8>)> = Vec::with_capacity(self.servers);
        let mut reader = BufReader::new(&*file);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line)? > 0 {
            let name = serde_json::from_slice::<LineName>(&line)
                .map(|n| n.server.name.into_owned())
                .map_err(std::io::Error::other)?;
            lines.push((name, std::mem::take(&mut line)));
        }
        // Stable, so equal names keep their order and the last one wins the dedup below.
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(String, Vec<u8>)> = Vec::with_capacity(lines.len());
        for entry in lines {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        let file = self.out.get_mut();
        file.set_len(HEADER_SIZE as u64)?;
        file.seek(SeekFrom::Start(HEADER_SIZE as u64))?;
        let mut writer = BufWriter::new(&*file);
        for (_, line) in &kept {
            writer.write_all(line)?;
        }
        writer.flush()?;
        self.servers = kept.len();
        Ok(())
    }
}

impl Drop for CacheWriter {
    fn drop(&mut self) {
        // Finished writers have renamed it away; an abandoned one leaves nothing behind.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// The name of a cache line (for merging an incremental sync into an older cache).
pub fn line_name(line: &[u8]) -> Option<String> {
    serde_json::from_slice::<LineName>(line)
        .ok()
        .map(|n| n.server.name.into_owned())
}

/// Every line of the cache at `path` after its header, without its newline, in order.
pub fn for_each_line(
    path: &Path,
    mut each: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(256 * 1024, File::open(path)?);
    let mut line = Vec::with_capacity(8 * 1024);
    reader.read_until(b'\n', &mut line)?;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        each(&line)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(name: &str, version: &str) -> RegistryRow {
        RegistryRow::from_value(&json!({
            "server": {"name": name, "version": version, "description": format!("about {name}"),
                       "packages": [{"registryType": "npm", "identifier": "pkg", "version": version, "transport": {"type": "stdio"}}]},
            "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "publishedAt": "2025-09-01T00:00:00Z", "isLatest": true}}
        }))
        .unwrap()
    }

    fn header(url: &str) -> CacheHeader {
        CacheHeader {
            plugboard_registry_cache: CACHE_FORMAT,
            url: url.into(),
            api: "v0.1".into(),
            synced_at: 1,
            newest_update: None,
            servers: 0,
            skipped: 0,
        }
    }

    #[test]
    fn a_cache_round_trips_sorted_and_rows_are_read_on_demand() {
        let dir = tempfile::tempdir().unwrap();
        let path = cache_path(dir.path(), "http://127.0.0.1:1");
        let mut writer = CacheWriter::create(&path).unwrap();
        for (name, v) in [
            ("b/two", "1"),
            ("a/one", "1"),
            ("c/three", "1"),
            ("a/one", "2"),
        ] {
            writer.push(&row(name, v)).unwrap();
        }
        assert_eq!(writer.finish(header("http://127.0.0.1:1")).unwrap(), 3);
        let cache = CachedRegistry::load(&path).unwrap().unwrap();
        let names: Vec<&str> = cache.servers.iter().map(|b| &*b.name).collect();
        assert_eq!(names, ["a/one", "b/two", "c/three"]);
        let i = cache.find("a/one").unwrap();
        assert_eq!(cache.servers[i].version.as_ref(), "2");
        assert_eq!(cache.row(i).unwrap(), row("a/one", "2"));
        assert_eq!(&*cache.servers[1].packages[0].identifier, "pkg");
        assert_eq!(cache.servers[1].display_name(), "two");
        // No temp files are left.
        let files: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(files.len(), 1);
    }

    #[test]
    fn corrupt_caches_are_reported_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = cache_path(dir.path(), "https://r.example");
        assert_eq!(CachedRegistry::load(&path).unwrap(), None);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        for garbage in [
            &b"not json\n"[..],
            b"{\"plugboard_registry_cache\": 99, \"url\": \"u\", \"api\": \"v0.1\", \"synced_at\": 0, \"newest_update\": null, \"servers\": 0, \"skipped\": 0}\n",
            b"",
        ] {
            std::fs::write(&path, garbage).unwrap();
            let err = CachedRegistry::load(&path).unwrap_err();
            assert!(err.to_string().contains("rebuilds it"), "{err}");
        }
        // A cut-off file.
        let mut writer = CacheWriter::create(&path).unwrap();
        writer.push(&row("a/one", "1")).unwrap();
        writer.finish(header("https://r.example")).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        assert!(CachedRegistry::load(&path).is_err());
    }

    impl PartialEq for CachedRegistry {
        fn eq(&self, other: &Self) -> bool {
            self.header == other.header && self.servers == other.servers
        }
    }
}
