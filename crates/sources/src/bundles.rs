//! Installing from MCPB bundles: a local `.mcpb` file or a registry package that names one
//! becomes an unpacked bundle in the config directory plus its blueprint (`form::mcpb`), after
//! the checks that come before any install — the organisation policy (a local file is allowed
//! under a registry-only policy only when a policy registry publishes its SHA-256), the
//! download's https and `fileSha256`, safe unpacking, and the manifest's compatibility.
//!
//! An [`OpenedBundle`] removes its directory when dropped unless [`OpenedBundle::keep`] was
//! called after the server was saved: a failed test, a bad form or a cancelled install leaves
//! nothing behind.

use std::path::{Path, PathBuf};

use crate::form::mcpb::{BundleSite, SystemDirs, blueprint};
use crate::form::{Blueprint, blueprint::RegistryRef};
use crate::mcpb::fetch::{self, FetchError, sha256_file};
use crate::mcpb::{BundleError, BundleStore, Limits, Unpacked, compat};
use crate::policy::{PolicyState, Published, Refusal, Subject};
use crate::registry::RegistryRow;

/// Why a bundle could not be opened for install.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error(transparent)]
    Policy(#[from] Refusal),
    #[error("{path}: {detail}")]
    File { path: String, detail: String },
    #[error("`{name}` {version} has no MCPB package {url}")]
    NoSuchPackage {
        name: String,
        version: String,
        url: String,
    },
}

impl OpenError {
    /// The fix, where one is known (a missing runtime).
    pub fn fix(&self) -> Option<&str> {
        match self {
            OpenError::Bundle(BundleError::Incompatible(i)) if !i.fix.is_empty() => Some(&i.fix),
            _ => None,
        }
    }
}

/// A bundle unpacked for install, with its blueprint.
#[derive(Debug)]
pub struct OpenedBundle {
    pub unpacked: Unpacked,
    pub blueprint: Blueprint,
    store: BundleStore,
    kept: bool,
}

impl OpenedBundle {
    /// The server was saved: its bundle stays.
    pub fn keep(mut self) -> PathBuf {
        self.kept = true;
        self.unpacked.dir.clone()
    }

    pub fn dir(&self) -> &Path {
        &self.unpacked.dir
    }
}

impl Drop for OpenedBundle {
    fn drop(&mut self) {
        if !self.kept {
            self.store.remove(&self.unpacked.dir);
        }
    }
}

fn opened(
    store: BundleStore,
    unpacked: Unpacked,
    file: Option<&Path>,
    registry: Option<RegistryRef>,
    package_env: &[crate::registry::model::KeyValueInput],
) -> Result<OpenedBundle, OpenError> {
    let site = BundleSite {
        dir: &unpacked.dir,
        sha256: &unpacked.sha256,
        file,
        registry,
        package_env,
    };
    let mut blueprint = blueprint(&unpacked.manifest, &site, &SystemDirs::current());
    // A registry server keeps the name the registry gives it.
    if let Some(r) = &site.registry {
        blueprint.default_name =
            crate::form::server_json::server_name_for(crate::registry::model::short_name(&r.name));
    }
    let bundle = OpenedBundle {
        unpacked,
        blueprint,
        store,
        kept: false,
    };
    // Dropping `bundle` on an incompatibility removes what was unpacked.
    compat::check(&bundle.unpacked.manifest).map_err(BundleError::from)?;
    Ok(bundle)
}

/// Open the bundle file at `path` for install.
pub fn open_file(
    config_dir: &Path,
    path: &Path,
    policy: &PolicyState,
    published: &dyn Published,
) -> Result<OpenedBundle, OpenError> {
    let file_error = |detail: String| OpenError::File {
        path: path.display().to_string(),
        detail,
    };
    let meta = std::fs::metadata(path).map_err(|e| file_error(e.to_string()))?;
    if !meta.is_file() {
        return Err(file_error("is not a file".into()));
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let sha256 = sha256_file(path).map_err(|e| file_error(e.to_string()))?;
    policy.check(
        Subject::LocalBundle {
            file: &absolute.display().to_string(),
            sha256: &sha256,
        },
        published,
    )?;
    let store = BundleStore::in_config_dir(config_dir);
    let unpacked = store.unpack(path, &sha256, &Limits::default())?;
    opened(store, unpacked, Some(&absolute), None, &[])
}

/// Open the MCPB package `url` of registry row `row` (from registry `registry`): download it
/// over https, check its `fileSha256`, unpack it. The caller has checked the policy for the
/// registry server.
pub async fn open_package(
    config_dir: &Path,
    row: &RegistryRow,
    registry: &str,
    url: &str,
) -> Result<OpenedBundle, OpenError> {
    let server = &row.server;
    let package = server
        .packages
        .iter()
        .find(|p| p.registry_type == "mcpb" && p.identifier == url)
        .ok_or_else(|| OpenError::NoSuchPackage {
            name: server.name.clone(),
            version: server.version.clone(),
            url: url.to_owned(),
        })?;
    let store = BundleStore::in_config_dir(config_dir);
    std::fs::create_dir_all(store.root()).map_err(|e| OpenError::File {
        path: store.root().display().to_string(),
        detail: e.to_string(),
    })?;
    let download = store
        .root()
        .join(format!(".download-{:016x}.mcpb", rand::random::<u64>()));
    fetch::download(url, package.file_sha256.as_deref(), &download)
        .await
        .map_err(|e: FetchError| BundleError::from(e))?;
    let sha256 = package
        .file_sha256
        .as_deref()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let unpacked = store.unpack(&download, &sha256, &Limits::default());
    let _ = std::fs::remove_file(&download);
    let registry_ref = RegistryRef {
        registry: registry.to_owned(),
        name: server.name.clone(),
        version: server.version.clone(),
        published_at: row.meta.official.published_at.clone(),
    };
    opened(
        store,
        unpacked?,
        None,
        Some(registry_ref),
        &package.environment_variables,
    )
}
