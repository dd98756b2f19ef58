//! Updates of servers installed from a registry: which have a newer version ([`outdated`],
//! from the registry caches), and moving one to a newer (or a chosen) version safely —
//! [`plan`] re-resolves the new version through the same form with the same field values and
//! secrets (`form::inputs`), fetches its bundle if it is one, and computes the launch diff
//! (command, package, host, env: [`crate::launch_diff`]) without starting anything;
//! [`PlannedUpdate::test`] then tests it (the one step that hands the secrets to the new
//! version: callers ask first when the launch diff says the destination is new) and computes the
//! tool diff against the approved pin; nothing is written until [`apply`], and a failed test
//! means nothing changes at all (a fetched bundle is removed again).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bundles::{OpenError, OpenedBundle, open_package};
use crate::catalog::Catalog;
use crate::config::{ConfigError, RegistryOrigin, ServerConfig};
use crate::form::engine::form;
use crate::form::inputs::restore;
use crate::form::server_json::{Pinning, blueprint};
use crate::form::{FormErrors, FormInput, PreparedServer};
use crate::install::from_form;
use crate::launch_diff::LaunchDiff;
use crate::manage::{ManageError, Servers};
use crate::market::{FindError, Found, Market};
use crate::pinning::{PinStore, Snapshot, ToolChanges, compare};
use crate::policy::{PolicyState, Refusal, Subject};
use crate::probe::{StageEvent, TestResult};
use crate::reconfigure::{keep_identity, replace};
use crate::registry::Status;
use crate::registry::listing::Listing;
use crate::secrets::SecretError;

/// Where an installed registry server stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    Current,
    UpdateAvailable,
    /// Its registry no longer lists it (a registry no longer read, or a deletion it never
    /// said).
    NotListed,
    /// Its registry deleted it (`removed` says why).
    Removed,
}

/// One row of `plugboard outdated`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutdatedRow {
    pub name: String,
    pub registry: String,
    pub registry_name: String,
    pub installed: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest: Option<String>,
    pub state: Standing,
    /// The registry's deprecation message of the latest version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<String>,
    /// Its registry deleted it: the registry's message (or that it gave none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<String>,
    /// Installed from an MCPB bundle.
    pub bundle: bool,
}

fn numbers(v: &str) -> Vec<u64> {
    v.trim_start_matches('v')
        .split(['.', '-', '+'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// Whether `latest` is newer than `installed` (numerically where both read as versions).
pub fn is_newer(latest: &str, installed: &str) -> bool {
    let (a, b) = (numbers(latest), numbers(installed));
    if a.is_empty() || b.is_empty() {
        return latest != installed;
    }
    let len = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    match (0..len)
        .map(|i| at(&a, i).cmp(&at(&b, i)))
        .find(|o| o.is_ne())
    {
        Some(o) => o.is_gt(),
        None => latest != installed && !latest.contains('-') && installed.contains('-'),
    }
}

/// The registry origin of an installed server, if it came from one.
pub fn origin(server: &ServerConfig) -> Option<&RegistryOrigin> {
    server.source.as_ref()?.registry.as_ref()
}

/// The standing of one installed server.
pub fn standing(name: &str, server: &ServerConfig, listing: &Listing) -> Option<OutdatedRow> {
    let origin = origin(server)?;
    let bundle = server.source.as_ref().is_some_and(|s| s.bundle.is_some());
    let found = listing.find(&origin.name);
    let (latest, deprecated) = match found {
        Some(at) => {
            let brief = listing.brief(at);
            (
                Some(brief.version.to_string()),
                (brief.status == Status::Deprecated)
                    .then(|| brief.status_message.unwrap_or("deprecated").to_owned()),
            )
        }
        None => (None, None),
    };
    let removed = latest
        .is_none()
        .then(|| listing.removal(&origin.name))
        .flatten()
        .map(|r| {
            r.message
                .clone()
                .unwrap_or_else(|| "the registry gave no reason".to_owned())
        });
    let state = match &latest {
        None if removed.is_some() => Standing::Removed,
        None => Standing::NotListed,
        Some(l) if is_newer(l, &origin.version) => Standing::UpdateAvailable,
        Some(_) => Standing::Current,
    };
    Some(OutdatedRow {
        name: name.to_owned(),
        registry: origin.url.clone(),
        registry_name: origin.name.clone(),
        installed: origin.version.clone(),
        latest,
        state,
        deprecated,
        removed,
        bundle,
    })
}

/// Every installed registry server and where it stands, by name.
pub fn outdated(servers: &Servers, listing: &Listing) -> Result<Vec<OutdatedRow>, ConfigError> {
    let config = servers.config().load()?;
    Ok(config
        .servers()
        .into_iter()
        .filter_map(|(name, s)| s.ok().and_then(|s| standing(&name, &s, listing)))
        .collect())
}

/// Why an update could not be prepared or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateError {
    #[error("`{0}` was not installed from a registry, so it has no newer versions to move to")]
    NotFromRegistry(String),
    #[error("`{name}` is at {version} already")]
    AlreadyThere { name: String, version: String },
    #[error("`{name}`: its registry no longer lists `{registry_name}`; nothing to update to")]
    NotListed { name: String, registry_name: String },
    #[error(transparent)]
    Find(#[from] FindError),
    #[error(transparent)]
    Policy(#[from] Refusal),
    #[error(transparent)]
    Bundle(#[from] OpenError),
    #[error("the new version's form cannot be filled from the installed one: {0}")]
    Form(#[from] FormErrors),
    #[error(transparent)]
    Secrets(#[from] SecretError),
    #[error(transparent)]
    Manage(#[from] ManageError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// A new version resolved and compared with the installed one, not yet started.
#[derive(Debug)]
pub struct PlannedUpdate {
    pub name: String,
    pub from_version: String,
    pub to_version: String,
    pub prepared: PreparedServer,
    /// How its launch differs from the installed one's.
    pub launch: LaunchDiff,
    /// What the new version's launch does that weakens its isolation.
    pub warnings: Vec<String>,
    /// Recorded fields the new version's form no longer has.
    pub dropped_inputs: Vec<String>,
    bundle: Option<OpenedBundle>,
    old: ServerConfig,
    old_dir: std::path::PathBuf,
}

impl PlannedUpdate {
    /// Start the new version with the server's secrets and test it, and compare its tools with
    /// the approved ones. Ask the user first when [`LaunchDiff::needs_consent`].
    pub async fn test(self, progress: impl FnMut(StageEvent)) -> PendingUpdate {
        let dir = self.old_dir.clone();
        let test =
            crate::checks::test_prepared(&self.prepared, &Catalog::default(), None, progress).await;
        let approved = PinStore::in_config_dir(&dir)
            .get(&self.name)
            .ok()
            .flatten()
            .and_then(|f| f.approved);
        let changes = compare(
            approved.as_ref(),
            &Snapshot::of(&test.tools, test.instructions.as_deref()),
        );
        PendingUpdate {
            name: self.name,
            from_version: self.from_version,
            to_version: self.to_version,
            prepared: self.prepared,
            launch: self.launch,
            test,
            changes,
            dropped_inputs: self.dropped_inputs,
            bundle: self.bundle,
            old: self.old,
        }
    }
}

/// A tested new version, not yet saved.
#[derive(Debug)]
pub struct PendingUpdate {
    pub name: String,
    pub from_version: String,
    pub to_version: String,
    pub prepared: PreparedServer,
    /// How its launch differs from the installed one's.
    pub launch: LaunchDiff,
    pub test: TestResult,
    /// Against the approved tools (everything is added when nothing was approved).
    pub changes: ToolChanges,
    /// Recorded fields the new version's form no longer has.
    pub dropped_inputs: Vec<String>,
    bundle: Option<OpenedBundle>,
    old: ServerConfig,
}

impl PendingUpdate {
    pub fn passed(&self) -> bool {
        self.test.ok
    }
}

/// Re-resolve `name` at version `to` (the listed latest when `None`) and fill its form with
/// the installed values (and `sets`, for fields the new version adds). Nothing is started.
pub async fn plan(
    servers: &Servers,
    market: &Market,
    policy: &PolicyState,
    name: &str,
    to: Option<&str>,
    sets: &[(String, String)],
) -> Result<PlannedUpdate, UpdateError> {
    policy.usable()?;
    let dir = servers.config().dir().to_owned();
    let old = servers.config().load()?.server(name)?;
    let origin = origin(&old)
        .ok_or_else(|| UpdateError::NotFromRegistry(name.to_owned()))?
        .clone();
    let target = match to {
        Some(v) => v.to_owned(),
        None => match market.listing().find(&origin.name) {
            Some(at) => market.listing().brief(at).version.to_string(),
            None => {
                return Err(UpdateError::NotListed {
                    name: name.to_owned(),
                    registry_name: origin.name.clone(),
                });
            }
        },
    };
    if target == origin.version {
        return Err(UpdateError::AlreadyThere {
            name: name.to_owned(),
            version: target,
        });
    }
    let Found::Registry { row, registry } = market.find(&origin.name, Some(&target)).await? else {
        return Err(UpdateError::NotFromRegistry(name.to_owned()));
    };
    policy.check(
        Subject::Registry {
            registry: &registry,
            name: &row.server.name,
        },
        market.listing(),
    )?;
    let npm_check = |identifier: &str, version: &str, date: &str| {
        crate::deps::npm_before_allowed(identifier, version, date)
    };
    let mut bp = blueprint(
        &row,
        &registry,
        &Pinning {
            enabled: origin.pinned.is_some(),
            npm: Some(&npm_check),
        },
    );
    let option_id = old
        .source
        .as_ref()
        .map(|s| s.option.clone())
        .unwrap_or_default();
    // A bundle install stays a bundle install: its option is the one with the same package type.
    let was_bundle = old.source.as_ref().is_some_and(|s| s.bundle.is_some());
    let mut option = bp.option(&option_id).map(|o| o.id.clone());
    if was_bundle {
        option = bp
            .options
            .iter()
            .find(|o| o.bundle.is_some())
            .map(|o| o.id.clone());
    }
    let mut bundle = None;
    if let Some(url) = option
        .as_deref()
        .and_then(|id| bp.option(id))
        .and_then(|o| o.bundle.as_ref())
        .map(|b| b.url.clone())
    {
        let opened = open_package(&dir, &row, &registry, &url).await?;
        bp = opened.blueprint.clone();
        option = Some("mcpb".into());
        bundle = Some(opened);
    }
    let spec = form(&bp, option.as_deref(), crate::runtimes::system())?;
    let namespace = old.secret_namespace(name).to_owned();
    let inputs: BTreeMap<_, _> = old
        .source
        .as_ref()
        .map(|s| s.inputs.clone())
        .unwrap_or_default();
    let needs_store = inputs.values().any(|v| v.secret_name().is_some());
    let store = if needs_store {
        Some(servers.secrets()?.clone())
    } else {
        None
    };
    let restored = restore(&spec, &inputs, store.as_deref(), &namespace)?;
    let mut input: FormInput = restored.input;
    for (k, v) in sets {
        input.set(k.clone(), v.clone());
    }
    let mut prepared = from_form(&bp, &spec, &input, name, bundle.as_ref().map(|b| b.dir()))?;
    let launch = keep_identity(name, &old, &mut prepared);
    crate::manage::refuse_secrets_on_argv(name, &prepared.config)?;
    Ok(PlannedUpdate {
        name: name.to_owned(),
        from_version: origin.version,
        to_version: row.server.version.clone(),
        prepared,
        launch,
        warnings: spec.warnings.clone(),
        dropped_inputs: restored.dropped,
        bundle,
        old,
        old_dir: dir,
    })
}

/// Save a tested update: the new secrets, the new config (one server), the old bundle and the
/// secrets no longer used removed, the new tools approved (the user has seen their diff), the
/// test kept as the server's health. Refused when the test failed.
pub fn apply(servers: &Servers, pending: PendingUpdate) -> Result<ServerConfig, UpdateError> {
    let PendingUpdate {
        name,
        prepared,
        test,
        bundle,
        old,
        ..
    } = pending;
    if !test.ok {
        return Err(UpdateError::Manage(ManageError::Invalid {
            name,
            detail: "the new version's test failed, so nothing was changed".into(),
        }));
    }
    replace(
        servers,
        &old,
        &prepared,
        Some((crate::clock::now_ms(), &test)),
    )?;
    let new = prepared.config;
    if let Some(bundle) = bundle {
        bundle.keep();
    }
    if let Some(old_bundle) = old.source.as_ref().and_then(|s| s.bundle.as_ref())
        && new.source.as_ref().and_then(|s| s.bundle.as_ref()) != Some(old_bundle)
    {
        crate::mcpb::BundleStore::in_config_dir(servers.config().dir())
            .remove(std::path::Path::new(&old_bundle.dir));
    }
    let _ = PinStore::in_config_dir(servers.config().dir()).approve(&name);
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(is_newer("1.10.0", "1.9.0"));
        assert!(!is_newer("1.9.0", "1.10.0"));
        assert!(!is_newer("1.0.0", "1.0.0"));
        assert!(is_newer("2.0.0", "2.0.0-beta.1"));
        assert!(is_newer("v2", "1.5"));
        assert!(is_newer("2025-12-01", "2025-11-01"));
        assert!(is_newer("latest", "abc"));
    }
}
