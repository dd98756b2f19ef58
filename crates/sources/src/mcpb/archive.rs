//! Unpacking an MCPB bundle (a zip file) without trusting it: every entry name is checked
//! before anything is written (no `..`, no absolute or drive paths, no NUL, no backslash
//! tricks), symlinks are made last and must resolve inside the bundle, and the sizes are bounded
//! by what is actually inflated, not by what the archive claims (a zip bomb is stopped when it
//! passes the limit or an entry inflates far beyond its compressed size). On any refusal the
//! partly written directory is removed by the caller ([`super::store`]).

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

/// Bounds on what a bundle may unpack to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Entries (files, directories, links).
    pub max_entries: usize,
    /// Bytes of all files together, inflated.
    pub max_total_bytes: u64,
    /// Bytes of one file, inflated.
    pub max_entry_bytes: u64,
    /// How many times its compressed size one entry may inflate to, past `ratio_floor` bytes.
    pub max_ratio: u64,
    pub ratio_floor: u64,
}

impl Default for Limits {
    /// Real bundles with their `node_modules` reach a few hundred MB and tens of thousands of
    /// files; these bounds leave room for them and stop anything far beyond.
    fn default() -> Limits {
        Limits {
            max_entries: 100_000,
            max_total_bytes: 1 << 30,
            max_entry_bytes: 512 << 20,
            max_ratio: 200,
            ratio_floor: 16 << 20,
        }
    }
}

/// Why a bundle was not unpacked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    #[error("the file is not a zip archive (an MCPB bundle is one): {0}")]
    NotZip(String),
    #[error("the bundle has an entry `{entry}` that {why}: refused, nothing was installed")]
    UnsafeEntry { entry: String, why: String },
    #[error(
        "the bundle has {count} entries, more than the {limit} allowed: refused as a possible zip bomb"
    )]
    TooManyEntries { count: usize, limit: usize },
    #[error(
        "the bundle unpacks to more than {limit} bytes ({what}): refused as a possible zip bomb"
    )]
    TooLarge { what: String, limit: u64 },
    #[error(
        "the bundle's entry `{entry}` inflates to more than {ratio} times its compressed size: \
         refused as a possible zip bomb"
    )]
    Ratio { entry: String, ratio: u64 },
    #[error("the bundle has no manifest.json at its top level")]
    NoManifest,
    #[error("unpacking the bundle failed: {0}")]
    Io(#[from] io::Error),
}

/// What was unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unpacked {
    pub files: usize,
    pub bytes: u64,
}

/// The entry's path below the bundle root, or why it is unsafe.
fn safe_relative(name: &str) -> Result<PathBuf, String> {
    if name.contains('\0') {
        return Err("has a NUL character in its name".into());
    }
    let unified = name.replace('\\', "/");
    if unified.starts_with('/') {
        return Err("is an absolute path".into());
    }
    let bytes = unified.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err("is an absolute Windows path".into());
    }
    let mut out = PathBuf::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("climbs out of the bundle with `..`".into()),
            p => {
                // What the platform would read as more than a plain name.
                let mut components = Path::new(p).components();
                match (components.next(), components.next()) {
                    (Some(Component::Normal(_)), None) => out.push(p),
                    _ => return Err("is not a plain path".into()),
                }
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err("has an empty name".into());
    }
    Ok(out)
}

/// Copy at most `limit + 1` bytes; `Err(written)` when the entry is longer than `limit`.
fn copy_bounded(
    reader: &mut dyn Read,
    out: &mut dyn Write,
    limit: u64,
) -> io::Result<Result<u64, u64>> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut written = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(Ok(written));
        }
        written += n as u64;
        if written > limit {
            return Ok(Err(written));
        }
        out.write_all(&buf[..n])?;
    }
}

/// Unpack the zip at `archive` into `dest` (which must exist and be empty).
pub fn unpack(archive: &Path, dest: &Path, limits: &Limits) -> Result<Unpacked, ArchiveError> {
    let file = fs::File::open(archive)?;
    let mut zip = zip::ZipArchive::new(io::BufReader::new(file))
        .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
    if zip.len() > limits.max_entries {
        return Err(ArchiveError::TooManyEntries {
            count: zip.len(),
            limit: limits.max_entries,
        });
    }
    // Every name first: nothing is written from an archive with one bad entry.
    let mut plan = Vec::with_capacity(zip.len());
    let mut declared = 0u64;
    let mut manifest = false;
    for i in 0..zip.len() {
        let entry = zip
            .by_index_raw(i)
            .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let relative = safe_relative(&name).map_err(|why| ArchiveError::UnsafeEntry {
            entry: name.clone(),
            why,
        })?;
        declared = declared.saturating_add(entry.size());
        if relative == Path::new("manifest.json") && !entry.is_dir() {
            manifest = true;
        }
        plan.push((relative, name));
    }
    if declared > limits.max_total_bytes {
        return Err(ArchiveError::TooLarge {
            what: format!("its entries declare {declared} bytes"),
            limit: limits.max_total_bytes,
        });
    }
    if !manifest {
        return Err(ArchiveError::NoManifest);
    }
    let mut total = 0u64;
    let mut files = 0usize;
    let mut links = Vec::new();
    for (i, (relative, name)) in plan.into_iter().enumerate() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
        let target = dest.join(&relative);
        if entry.is_dir() {
            fs::create_dir_all(&target)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        if entry.is_symlink() {
            let mut text = String::new();
            entry
                .by_ref()
                .take(4096)
                .read_to_string(&mut text)
                .map_err(|_| ArchiveError::UnsafeEntry {
                    entry: name.clone(),
                    why: "is a link whose target is not text".into(),
                })?;
            links.push((relative, name, text));
            continue;
        }
        let by_ratio = entry
            .compressed_size()
            .saturating_mul(limits.max_ratio)
            .max(limits.ratio_floor);
        let budget = limits
            .max_entry_bytes
            .min(limits.max_total_bytes - total)
            .min(by_ratio);
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .or_else(|e| {
                // A later entry of the same name replaces the earlier one.
                if e.kind() == io::ErrorKind::AlreadyExists && target.is_file() {
                    fs::File::create(&target)
                } else {
                    Err(e)
                }
            })?;
        match copy_bounded(&mut entry, &mut out, budget)? {
            Ok(n) => total += n,
            Err(_) if budget == by_ratio && by_ratio < limits.max_entry_bytes => {
                return Err(ArchiveError::Ratio {
                    entry: name,
                    ratio: limits.max_ratio,
                });
            }
            Err(n) => {
                return Err(ArchiveError::TooLarge {
                    what: format!("`{name}` alone inflates past {}", total + n - 1),
                    limit: if budget == limits.max_entry_bytes {
                        limits.max_entry_bytes
                    } else {
                        limits.max_total_bytes
                    },
                });
            }
        }
        files += 1;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            // Executable bits survive (binary servers need them); setuid and the like do not.
            let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
            fs::set_permissions(&target, fs::Permissions::from_mode(mode))?;
        }
    }
    make_links(dest, links)?;
    Ok(Unpacked {
        files,
        bytes: total,
    })
}

/// Create the archive's symlinks, after every file: each must resolve inside `dest`.
fn make_links(dest: &Path, links: Vec<(PathBuf, String, String)>) -> Result<(), ArchiveError> {
    if links.is_empty() {
        return Ok(());
    }
    let root = fs::canonicalize(dest)?;
    for (relative, name, target) in links {
        let unsafe_link = |why: &str| ArchiveError::UnsafeEntry {
            entry: name.clone(),
            why: why.to_owned(),
        };
        if target.is_empty() || target.contains('\0') {
            return Err(unsafe_link("is a link with no target"));
        }
        if Path::new(&target).is_absolute() || target.starts_with('/') || target.starts_with('\\') {
            return Err(unsafe_link(&format!(
                "is a link to the absolute path `{target}`"
            )));
        }
        let at = dest.join(&relative);
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &at)?;
        #[cfg(not(unix))]
        return Err(unsafe_link(
            "is a link, which this platform does not unpack",
        ));
        match fs::canonicalize(&at) {
            Ok(real) if real.starts_with(&root) => {}
            Ok(_) => {
                let _ = fs::remove_file(&at);
                return Err(unsafe_link(&format!(
                    "is a link out of the bundle (`{target}`)"
                )));
            }
            Err(_) => {
                let _ = fs::remove_file(&at);
                return Err(unsafe_link(&format!(
                    "is a link to `{target}`, which is not in the bundle"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    fn zip_with(entries: &[(&str, &[u8])], links: &[(&str, &str)]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut w = zip::ZipWriter::new(file.reopen().unwrap());
        let opts =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in entries {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        for (name, target) in links {
            w.add_symlink(*name, *target, opts).unwrap();
        }
        w.finish().unwrap();
        file
    }

    #[test]
    fn a_plain_bundle_unpacks_with_its_modes() {
        let z = zip_with(
            &[
                ("manifest.json", b"{}"),
                ("server/index.js", b"x"),
                ("dir/", b""),
            ],
            &[("link", "server/index.js")],
        );
        let dest = tempfile::tempdir().unwrap();
        let got = unpack(z.path(), dest.path(), &Limits::default()).unwrap();
        assert_eq!(got.files, 2);
        assert_eq!(fs::read(dest.path().join("link")).unwrap(), b"x");
    }

    #[test]
    fn names_that_leave_the_bundle_are_refused_before_anything_is_written() {
        for bad in [
            "../evil.txt",
            "a/../../evil",
            "/etc/evil",
            "C:/evil",
            "..\\evil",
            "a\\..\\..\\evil",
            "a\0b",
        ] {
            let z = zip_with(
                &[("manifest.json", b"{}"), ("ok.txt", b"1"), (bad, b"x")],
                &[],
            );
            let dest = tempfile::tempdir().unwrap();
            let err = unpack(z.path(), dest.path(), &Limits::default()).unwrap_err();
            assert!(
                matches!(err, ArchiveError::UnsafeEntry { .. }),
                "{bad}: {err}"
            );
            assert_eq!(
                fs::read_dir(dest.path()).unwrap().count(),
                0,
                "{bad}: nothing written"
            );
        }
    }

    #[test]
    fn links_out_of_the_bundle_are_refused() {
        for target in ["/etc/passwd", "../outside", "a/../../x", "missing"] {
            let z = zip_with(&[("manifest.json", b"{}")], &[("l", target)]);
            let dest = tempfile::tempdir().unwrap();
            let err = unpack(z.path(), dest.path(), &Limits::default()).unwrap_err();
            assert!(
                matches!(err, ArchiveError::UnsafeEntry { .. }),
                "{target}: {err}"
            );
        }
        // A chain: d/l1 -> ../x (inside), l2 -> d/l1/../.. which really is outside.
        let z = zip_with(
            &[("manifest.json", b"{}"), ("x/f", b"1"), ("d/f", b"1")],
            &[("d/l1", "../x"), ("l2", "d/l1/../..")],
        );
        let dest = tempfile::tempdir().unwrap();
        assert!(unpack(z.path(), dest.path(), &Limits::default()).is_err());
    }

    #[test]
    fn bombs_and_crowds_are_stopped() {
        let zeros = vec![0u8; 8 << 20];
        let z = zip_with(&[("manifest.json", b"{}"), ("big", &zeros)], &[]);
        let dest = tempfile::tempdir().unwrap();
        let small = Limits {
            ratio_floor: 1 << 20,
            ..Limits::default()
        };
        let err = unpack(z.path(), dest.path(), &small).unwrap_err();
        assert!(matches!(err, ArchiveError::Ratio { .. }), "{err}");
        let dest = tempfile::tempdir().unwrap();
        let tiny = Limits {
            max_total_bytes: 1 << 20,
            ..Limits::default()
        };
        let err = unpack(z.path(), dest.path(), &tiny).unwrap_err();
        assert!(matches!(err, ArchiveError::TooLarge { .. }), "{err}");
        let dest = tempfile::tempdir().unwrap();
        let few = Limits {
            max_entries: 1,
            ..Limits::default()
        };
        let err = unpack(z.path(), dest.path(), &few).unwrap_err();
        assert!(matches!(err, ArchiveError::TooManyEntries { .. }), "{err}");
        let z = zip_with(&[("server.js", b"x")], &[]);
        let dest = tempfile::tempdir().unwrap();
        assert!(matches!(
            unpack(z.path(), dest.path(), &Limits::default()),
            Err(ArchiveError::NoManifest)
        ));
        let notzip = tempfile::NamedTempFile::new().unwrap();
        fs::write(notzip.path(), b"hello").unwrap();
        assert!(matches!(
            unpack(notzip.path(), dest.path(), &Limits::default()),
            Err(ArchiveError::NotZip(_))
        ));
    }
}
