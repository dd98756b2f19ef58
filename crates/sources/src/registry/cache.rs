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

/// A piece of the text arena: `[start, start + len)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// One server's record in memory: where its text is in the arena, nothing allocated on its
/// own (50,000 of them take 3.6 MB besides their text).
#[derive(Clone, Debug, PartialEq)]
struct Record {
    /// Its seven fields are consecutive in the arena: field `i` is `bounds[i]..bounds[i + 1]`
    /// (name, title, description, version, repository, website, status message; an empty one
    /// is absent).
    bounds: [u32; 8],
    /// Its packages in `CachedRegistry::packages`, its remotes' transports in
    /// `CachedRegistry::remotes`.
    packages_start: u32,
    remotes_start: u32,
    packages_len: u16,
    remotes_len: u16,
    status: Status,
    /// Unix seconds, or [`NO_DATE`].
    published_at: i64,
    offset: u64,
    len: u32,
}

/// `Record::published_at` of a row without a publication date.
const NO_DATE: i64 = i64::MIN;

impl Record {
    fn span(&self, field: usize) -> Span {
        Span {
            start: self.bounds[field],
            len: self.bounds[field + 1] - self.bounds[field],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct PackageRecord {
    registry_type: Span,
    identifier: Span,
    transport: Span,
    runtime_hint: Span,
}

/// A package of a server, in brief.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackageBrief<'a> {
    pub registry_type: &'a str,
    pub identifier: &'a str,
    /// `stdio`, `streamable-http`, `sse`.
    pub transport: &'a str,
    pub runtime_hint: Option<&'a str>,
}

/// What the marketplace needs of a server, for every cached row (a view into the cache).
#[derive(Clone, Copy)]
pub struct Brief<'a> {
    pub name: &'a str,
    pub title: Option<&'a str>,
    pub description: &'a str,
    pub version: &'a str,
    pub repository: Option<&'a str>,
    pub website: Option<&'a str>,
    pub status: Status,
    pub status_message: Option<&'a str>,
    /// Unix seconds.
    pub published_at: Option<i64>,
    cache: &'a CachedRegistry,
    record: &'a Record,
}

impl std::fmt::Debug for Brief<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brief")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl<'a> Brief<'a> {
    /// The name shown: the title, else the name's [`short_name`](super::model::short_name).
    pub fn display_name(&self) -> &'a str {
        self.title
            .unwrap_or_else(|| super::model::short_name(self.name))
    }

    /// Its packages.
    pub fn packages(&self) -> impl Iterator<Item = PackageBrief<'a>> + 'a {
        let record = self.record;
        let cache = self.cache;
        cache.packages[record.packages_start as usize..][..record.packages_len as usize]
            .iter()
            .map(move |p| PackageBrief {
                registry_type: cache.text(p.registry_type),
                identifier: cache.text(p.identifier),
                transport: cache.text(p.transport),
                runtime_hint: cache.optional(p.runtime_hint),
            })
    }

    /// Its remotes' transports (`streamable-http`, `sse`).
    pub fn remotes(&self) -> impl Iterator<Item = &'a str> + 'a {
        let record = self.record;
        let cache = self.cache;
        cache.remotes[record.remotes_start as usize..][..record.remotes_len as usize]
            .iter()
            .map(move |s| cache.text(*s))
    }
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

/// The arena under construction: all text of all records, deduplicating nothing.
#[derive(Default)]
struct Arena {
    text: String,
    packages: Vec<PackageRecord>,
    remotes: Vec<Span>,
}

impl Arena {
    /// Where the next text goes.
    fn end(&self) -> u32 {
        u32::try_from(self.text.len()).expect("a cache's text under 4 GiB")
    }

    fn push(&mut self, text: &str) -> Span {
        let start = self.end();
        self.text.push_str(text);
        Span {
            start,
            len: text.len() as u32,
        }
    }

    fn push_optional(&mut self, text: Option<&str>) -> Span {
        text.map_or_else(Span::default, |t| self.push(t))
    }

    fn record(&mut self, line: &[u8], offset: u64) -> Result<Record, String> {
        let b: LineBrief = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let official = b.meta.and_then(|m| m.official);
        let (status, status_message, published_at) = match official {
            Some(o) => (
                match o.status.as_deref() {
                    Some("deprecated") => Status::Deprecated,
                    Some("deleted") => Status::Deleted,
                    _ => Status::Active,
                },
                o.status_message,
                o.published_at.as_deref().and_then(parse_rfc3339),
            ),
            None => (Status::Active, None, None),
        };
        let s = b.server;
        let mut bounds = [0; 8];
        bounds[0] = self.end();
        let fields = [
            Some(&*s.name),
            s.title.as_deref(),
            Some(&*s.description),
            Some(&*s.version),
            s.repository.as_ref().map(|r| &*r.url),
            s.website_url.as_deref(),
            status_message.as_deref(),
        ];
        for (i, field) in fields.into_iter().enumerate() {
            self.push_optional(field);
            bounds[i + 1] = self.end();
        }
        let packages_start = self.packages.len() as u32;
        for p in &s.packages {
            let record = PackageRecord {
                registry_type: self.push(&p.registry_type),
                identifier: self.push(&p.identifier),
                transport: self.push(&p.transport.kind),
                runtime_hint: self.push_optional(p.runtime_hint.as_deref()),
            };
            self.packages.push(record);
        }
        let remotes_start = self.remotes.len() as u32;
        for r in &s.remotes {
            let span = self.push(&r.kind);
            self.remotes.push(span);
        }
        Ok(Record {
            bounds,
            packages_start,
            remotes_start,
            packages_len: s.packages.len().min(u16::MAX as usize) as u16,
            remotes_len: s.remotes.len().min(u16::MAX as usize) as u16,
            status,
            published_at: published_at.unwrap_or(NO_DATE),
            offset,
            len: line.len() as u32,
        })
    }
}

/// One registry's cache, loaded.
#[derive(Debug)]
pub struct CachedRegistry {
    pub header: CacheHeader,
    /// Sorted by name.
    records: Vec<Record>,
    text: String,
    packages: Vec<PackageRecord>,
    remotes: Vec<Span>,
    path: PathBuf,
    /// Kept open for reading rows on demand.
    file: std::sync::Mutex<Option<File>>,
}

fn problem(path: &Path, detail: impl Into<String>) -> CacheProblem {
    CacheProblem {
        path: path.display().to_string(),
        detail: detail.into(),
    }
}

fn read_header_line(
    reader: &mut impl BufRead,
    path: &Path,
    line: &mut Vec<u8>,
) -> Result<CacheHeader, CacheProblem> {
    reader
        .read_until(b'\n', line)
        .map_err(|e| problem(path, e.to_string()))?;
    let header: CacheHeader = serde_json::from_slice(line)
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
    Ok(header)
}

/// The header of the cache at `path` only (its rows are not read): `Ok(None)` when there is
/// no cache.
pub fn read_header(path: &Path) -> Result<Option<CacheHeader>, CacheProblem> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(problem(path, e.to_string())),
    };
    let mut line = Vec::with_capacity(HEADER_SIZE);
    read_header_line(&mut BufReader::new(file), path, &mut line).map(Some)
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
        let header = read_header_line(&mut reader, path, &mut line)?;
        let mut offset = line.len() as u64;
        let mut records = Vec::with_capacity(header.servers);
        let mut arena = Arena::default();
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
            let record = arena
                .record(&line, offset)
                .map_err(|e| problem(path, format!("line {}: {e}", records.len() + 2)))?;
            records.push(record);
            offset += n as u64;
        }
        if records.len() != header.servers {
            return Err(problem(
                path,
                format!(
                    "its header says {} servers but it holds {}",
                    header.servers,
                    records.len()
                ),
            ));
        }
        arena.text.shrink_to_fit();
        arena.packages.shrink_to_fit();
        arena.remotes.shrink_to_fit();
        Ok(Some(CachedRegistry {
            header,
            records,
            text: arena.text,
            packages: arena.packages,
            remotes: arena.remotes,
            path: path.to_path_buf(),
            file: std::sync::Mutex::new(None),
        }))
    }

    fn text(&self, span: Span) -> &str {
        &self.text[span.start as usize..][..span.len as usize]
    }

    fn optional(&self, span: Span) -> Option<&str> {
        (span.len > 0).then(|| self.text(span))
    }

    /// The number of servers.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Server `index`, in brief.
    pub fn brief(&self, index: usize) -> Brief<'_> {
        let record = &self.records[index];
        Brief {
            name: self.text(record.span(0)),
            title: self.optional(record.span(1)),
            description: self.text(record.span(2)),
            version: self.text(record.span(3)),
            repository: self.optional(record.span(4)),
            website: self.optional(record.span(5)),
            status: record.status,
            status_message: self.optional(record.span(6)),
            published_at: (record.published_at != NO_DATE).then_some(record.published_at),
            cache: self,
            record,
        }
    }

    /// Every server, in brief, by name.
    pub fn briefs(&self) -> impl Iterator<Item = Brief<'_>> {
        (0..self.records.len()).map(|i| self.brief(i))
    }

    /// The full row of server `index`, read from the file.
    pub fn row(&self, index: usize) -> Result<RegistryRow, CacheProblem> {
        let record = &self.records[index];
        let name = self.text(record.span(0));
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(File::open(&self.path).map_err(|e| problem(&self.path, e.to_string()))?);
        }
        let file = guard.as_mut().expect("opened");
        file.seek(SeekFrom::Start(record.offset))
            .map_err(|e| problem(&self.path, e.to_string()))?;
        let mut line = vec![0; record.len as usize];
        file.read_exact(&mut line)
            .map_err(|e| problem(&self.path, e.to_string()))?;
        drop(guard);
        let value: Value = serde_json::from_slice(&line)
            .map_err(|e| problem(&self.path, format!("the row of `{name}`: {e}")))?;
        let row = RegistryRow::from_value(&value).map_err(|e| problem(&self.path, e))?;
        if row.server.name != name {
            return Err(problem(
                &self.path,
                "it changed while it was read; load it again",
            ));
        }
        Ok(row)
    }

    /// The position of server `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.records
            .binary_search_by(|r| self.text(r.span(0)).cmp(name))
            .ok()
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
        plugboard_base::fs::create_dir(dir, true)?;
        let tmp = plugboard_base::fs::temp_path_beside(path);
        let mut options = OpenOptions::new();
        options.write(true).read(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&tmp)?;
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
            plugboard_base::fs::put_in_place(file, &self.tmp, &self.path)?;
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
    fn a_record_stays_small() {
        // 50,000 of them are held by the desktop app: 72 bytes each, 3.6 MB.
        assert!(std::mem::size_of::<Record>() <= 72);
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
        let names: Vec<&str> = cache.briefs().map(|b| b.name).collect();
        assert_eq!(names, ["a/one", "b/two", "c/three"]);
        let i = cache.find("a/one").unwrap();
        assert_eq!(cache.brief(i).version, "2");
        assert_eq!(cache.row(i).unwrap(), row("a/one", "2"));
        assert_eq!(cache.brief(1).packages().next().unwrap().identifier, "pkg");
        assert_eq!(cache.brief(1).display_name(), "two");
        assert_eq!(cache.brief(1).description, "about b/two");
        assert_eq!(cache.brief(1).published_at, Some(1_756_684_800));
        assert_eq!(read_header(&path).unwrap().unwrap().servers, 3);
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
            self.header == other.header && self.records == other.records && self.text == other.text
        }
    }
}
