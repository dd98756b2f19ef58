//! The app's MCPB bundles and policy: a bundle file opened (dropped on the window or chosen)
//! becomes a pending bundle, unpacked, whose install form is the ordinary one (entry id
//! `bundle:TOKEN`); a registry option that is a bundle is fetched when its form is asked for;
//! a pending bundle is kept when its server is installed and removed when the form is closed.
//! Every install path asks the organisation policy first; `policy_status` says what is in force.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::dto::{BundleView, PolicyView};
use super::{Api, ApiError, ErrorCode};
use crate::bundles::{OpenError, OpenedBundle, open_file, open_package};
use crate::form::Blueprint;
use crate::policy::{PolicyState, Refusal, Subject};

/// The prefix of a pending bundle's entry id.
pub const BUNDLE_PREFIX: &str = "bundle:";

/// Bundles unpacked for an install form that is still open.
#[derive(Default)]
pub struct PendingBundles {
    bundles: Mutex<HashMap<String, OpenedBundle>>,
}

impl PendingBundles {
    fn put(&self, bundle: OpenedBundle) -> String {
        let token = format!("{:016x}", rand::random::<u64>());
        self.lock().insert(token.clone(), bundle);
        token
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, OpenedBundle>> {
        self.bundles.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn blueprint(&self, token: &str) -> Option<Blueprint> {
        self.lock().get(token).map(|b| b.blueprint.clone())
    }

    pub(super) fn dir(&self, token: &str) -> Option<String> {
        self.lock()
            .get(token)
            .map(|b| b.dir().display().to_string())
    }

    pub(super) fn view(&self, token: &str) -> Option<BundleView> {
        self.lock().get(token).map(|b| {
            let m = &b.unpacked.manifest;
            BundleView {
                token: token.to_owned(),
                name: m.name.clone(),
                title: m.title().to_owned(),
                version: m.version.clone(),
                description: m.description.clone(),
                author: m.author.clone(),
                sha256: b.unpacked.sha256.clone(),
                files: b.unpacked.files as u32,
                bytes: b.unpacked.bytes as f64,
                tools: m.tools.clone(),
            }
        })
    }

    /// The server was saved: its bundle stays where it is.
    pub(super) fn keep(&self, token: &str) {
        if let Some(b) = self.lock().remove(token) {
            b.keep();
        }
    }

    /// The form was closed: the bundle is removed.
    fn discard(&self, token: &str) -> bool {
        self.lock().remove(token).is_some()
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        ApiError::new(ErrorCode::Policy, refusal.to_string())
    }
}

impl From<OpenError> for ApiError {
    fn from(err: OpenError) -> Self {
        match err {
            OpenError::Policy(r) => r.into(),
            other => {
                let fix = other.fix().map(|f| format!(" ({f})")).unwrap_or_default();
                ApiError::new(ErrorCode::Bundle, format!("{other}{fix}"))
            }
        }
    }
}

/// The token of a `bundle:TOKEN` entry id.
pub fn bundle_token(entry_id: &str) -> Option<&str> {
    entry_id.strip_prefix(BUNDLE_PREFIX)
}

impl Api {
    /// The organisation policy in force.
    pub fn policy_status(&self) -> PolicyView {
        let state = crate::policy::current();
        let (path, registries, only, names) = match &state {
            PolicyState::InForce(p) => (
                Some(p.path.display().to_string()),
                p.registries.clone().unwrap_or_default(),
                p.only_registry_servers,
                p.allowed_names.clone().unwrap_or_default(),
            ),
            PolicyState::Broken { path, .. } => {
                (Some(path.display().to_string()), vec![], false, vec![])
            }
            PolicyState::None => (None, vec![], false, vec![]),
        };
        PolicyView {
            in_force: state.in_force(),
            broken: matches!(state, PolicyState::Broken { .. }),
            summary: state.summary(),
            path,
            registries,
            only_registry_servers: only,
            allowed_names: names,
        }
    }

    /// Refuse `subject` when the policy does not allow it.
    pub(super) fn allowed(&self, subject: Subject<'_>) -> Result<(), ApiError> {
        let policy = crate::policy::current();
        policy.usable()?;
        if !policy.in_force() {
            return Ok(());
        }
        let market = self.market()?;
        policy.check(subject, market.listing())?;
        Ok(())
    }

    /// Open the bundle file at `path` (dropped on the window or chosen): unpacked, checked, with
    /// an install form under the entry id `bundle:TOKEN`.
    pub fn open_bundle(&self, path: &str) -> Result<String, ApiError> {
        let policy = crate::policy::current();
        policy.usable()?;
        let market = self.market()?;
        let bundle = open_file(
            self.servers.config().dir(),
            Path::new(path),
            &policy,
            market.listing(),
        )?;
        Ok(format!("{BUNDLE_PREFIX}{}", self.bundles.put(bundle)))
    }

    /// Fetch the MCPB package `url` of registry server `name` for its install form.
    pub(super) fn fetch_registry_bundle(&self, name: &str, url: &str) -> Result<String, ApiError> {
        let market = self.market()?;
        let at = market.listing().find(name).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("the marketplace has no `{name}`"),
            )
        })?;
        let row = market
            .listing()
            .row(at)
            .map_err(|e| ApiError::new(ErrorCode::Registry, e.to_string()))?;
        let registry = market.listing().registry_url(at).to_owned();
        self.allowed(Subject::Registry {
            registry: &registry,
            name,
        })?;
        let dir = self.servers.config().dir().to_owned();
        let url = url.to_owned();
        // The download runs on a thread of its own with its own runtime: this may be called
        // from a runtime's thread.
        let opened = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ApiError::new(ErrorCode::Io, e.to_string()))?;
            rt.block_on(open_package(&dir, &row, &registry, &url))
                .map_err(ApiError::from)
        })
        .join()
        .map_err(|_| {
            ApiError::new(ErrorCode::Bundle, "fetching the bundle failed unexpectedly")
        })??;
        Ok(format!("{BUNDLE_PREFIX}{}", self.bundles.put(opened)))
    }

    /// Close a bundle's install form without installing: its unpacked files are removed.
    pub fn discard_bundle(&self, entry_id: &str) -> bool {
        bundle_token(entry_id).is_some_and(|t| self.bundles.discard(t))
    }
}
