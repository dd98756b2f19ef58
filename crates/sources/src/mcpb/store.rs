//! Where unpacked bundles live: `bundles/<name>-<random>/` in the config directory, one
//! directory per installed server (two servers from one bundle never share files). A bundle is
//! unpacked into its final directory before the pre-save test (its launch names that path) and
//! removed again when the install does not go through; [`BundleStore::remove`] deletes a
//! server's bundle with the server, and only ever a directory directly inside `bundles/`.
//! Directories no server refers to (left by a crash mid-install) are swept after an hour.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::archive::{self, ArchiveError, Limits};
use super::manifest::{Manifest, ManifestError};

/// The bundles folder's name in the config directory.
pub const BUNDLES_DIR: &str = "bundles";

/// Why a bundle could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    #[error("{0}")]
    Fetch(#[from] super::fetch::FetchError),
    #[error("{0}")]
    Incompatible(#[from] super::compat::Incompatible),
    #[error("{path}: {detail}")]
    File { path: String, detail: String },
}

/// The bundles of one config directory.
#[derive(Clone, Debug)]
pub struct BundleStore {
    root: PathBuf,
}

/// A bundle unpacked into its directory, not yet owned by a saved server.
#[derive(Debug)]
pub struct Unpacked {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// SHA-256 of the bundle file.
    pub sha256: String,
    pub files: usize,
    pub bytes: u64,
}

fn slug(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s = s.trim_matches('-').to_owned();
    s.truncate(40);
    if s.is_empty() { "bundle".into() } else { s }
}

impl BundleStore {
    pub fn in_config_dir(config_dir: &Path) -> BundleStore {
        BundleStore {
            root: config_dir.join(BUNDLES_DIR),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `dir` is a bundle directory of this store (directly inside it).
    pub fn owns(&self, dir: &Path) -> bool {
        let (Ok(root), Ok(dir)) = (fs::canonicalize(&self.root), fs::canonicalize(dir)) else {
            return false;
        };
        dir.parent() == Some(root.as_path())
    }

    /// Unpack the bundle file at `file` (digest `sha256`) into a new directory and read its
    /// manifest. Nothing is left behind when this fails.
    pub fn unpack(
        &self,
        file: &Path,
        sha256: &str,
        limits: &Limits,
    ) -> Result<Unpacked, BundleError> {
        fs::create_dir_all(&self.root).map_err(|e| BundleError::File {
            path: self.root.display().to_string(),
            detail: e.to_string(),
        })?;
        let staging = self
            .root
            .join(format!(".unpack-{:016x}", rand::random::<u64>()));
        fs::create_dir(&staging).map_err(|e| BundleError::File {
            path: staging.display().to_string(),
            detail: e.to_string(),
        })?;
        let result = (|| {
            let counts = archive::unpack(file, &staging, limits)?;
            let bytes = fs::read(staging.join("manifest.json")).map_err(ArchiveError::Io)?;
            let manifest = Manifest::parse(&bytes)?;
            let dir = self.root.join(format!(
                "{}-{:08x}",
                slug(&manifest.name),
                rand::random::<u32>()
            ));
            fs::rename(&staging, &dir).map_err(ArchiveError::Io)?;
            Ok(Unpacked {
                dir,
                manifest,
                sha256: sha256.to_owned(),
                files: counts.files,
                bytes: counts.bytes,
            })
        })();
        if result.is_err() {
            let _ = fs::remove_dir_all(&staging);
        }
        result
    }

    /// Delete a bundle directory of this store; anything else is left alone (`false`).
    pub fn remove(&self, dir: &Path) -> bool {
        if !self.owns(dir) {
            return false;
        }
        fs::remove_dir_all(dir).is_ok()
    }

    /// Remove bundle directories no server refers to that are older than an hour (a crash
    /// between unpacking and saving leaves one).
    pub fn sweep(&self, in_use: &[PathBuf]) {
        let Ok(entries) = fs::read_dir(&self.root) else {
            return;
        };
        let cutoff = SystemTime::now() - Duration::from_secs(3600);
        for entry in entries.flatten() {
            let path = entry.path();
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < cutoff);
            if old && path.is_dir() && !in_use.iter().any(|u| u == &path) {
                let _ = fs::remove_dir_all(&path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn bundle(manifest: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut w = zip::ZipWriter::new(file.reopen().unwrap());
        w.start_file("manifest.json", zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(manifest.as_bytes()).unwrap();
        w.finish().unwrap();
        file
    }

    #[test]
    fn unpacks_into_its_own_directory_and_removes_only_its_own() {
        let home = tempfile::tempdir().unwrap();
        let store = BundleStore::in_config_dir(home.path());
        let b = bundle(
            r#"{"manifest_version":"0.3","name":"My Files","version":"1","server":{"type":"node","mcp_config":{"command":"node"}}}"#,
        );
        let one = store.unpack(b.path(), "ab", &Limits::default()).unwrap();
        let two = store.unpack(b.path(), "ab", &Limits::default()).unwrap();
        assert_ne!(one.dir, two.dir);
        assert!(
            one.dir
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("My-Files-")
        );
        assert!(store.remove(&one.dir));
        assert!(!one.dir.exists() && two.dir.exists());
        assert!(
            !store.remove(home.path()),
            "never anything outside bundles/"
        );
        assert!(!store.remove(&store.root().join("..")));

        let bad = bundle(r#"{"manifest_version":"9.0","name":"x","server":{}}"#);
        let err = store
            .unpack(bad.path(), "ab", &Limits::default())
            .unwrap_err();
        assert!(err.to_string().contains("newer"), "{err}");
        let left: Vec<_> = fs::read_dir(store.root())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "only the second bundle remains: {left:?}");
    }
}
