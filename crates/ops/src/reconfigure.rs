//! Changing an installed server through the form it was installed with (the app's Edit of a
//! catalog or registry server), and the two steps an update to a new version shares with it:
//! - [`recorded`]: what the form was filled with, to show it again (plain values; of a secret
//!   field only that a value is stored, never the value);
//! - [`refill`]: a changed form completed with the stored secrets the user left as they were
//!   (not those the user cleared: their stored values go);
//! - [`keep_identity`]: the rebuilt server keeps what is the server's own rather than the
//!   form's (secret namespace, on/off, timeout, tool switches, sandbox choices, consents);
//! - [`replace`]: saves it (new secrets, the config, the secrets it no longer uses removed,
//!   the test as its health);
//! - [`rebuild`]: the first three in order, as the app's Edit and `plugboard edit --set` do;
//! - [`form_source`]: where the form a server was installed with comes from now, if anywhere.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{ConfigValue, ServerConfig};
use crate::form::blueprint::Blueprint;
use crate::form::inputs::restore;
use crate::form::{FormInput, FormSpec, PreparedServer};
use crate::install::PrepareError;
use crate::launch_diff::{LaunchDiff, launch_diff};
use crate::manage::{ManageError, Servers};
use crate::market::Market;
use crate::probe::TestResult;
use crate::registry::RegistryRow;
use crate::secrets::{SecretError, SecretKey, Sensitive};

/// Where the form an installed server was installed with comes from.
pub enum FormSource<'m> {
    /// Its catalog entry.
    Catalog(&'m crate::catalog::Entry),
    /// The registry version it runs, as the marketplace lists it.
    Registry {
        row: RegistryRow,
        /// The registry's base URL.
        registry: String,
    },
}

/// Why an installed server has no form to change (it is then changed field by field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoForm {
    #[error("was not installed from the catalog or a registry")]
    NotFromMarketplace,
    #[error("comes from a catalog entry that is gone")]
    EntryGone,
    #[error("runs a registry version that is no longer listed")]
    VersionNotListed,
    #[error("comes from a registry that is no longer listed")]
    RegistryNotListed,
}

/// The form server `old` was installed with, as `market` has it now: its catalog entry, or the
/// registry version it runs when that is the version the marketplace lists (a server added by
/// hand, imported or from a bundle has none). The app's Edit and `plugboard edit --set` both
/// ask this.
pub fn form_source<'m>(market: &'m Market, old: &ServerConfig) -> Result<FormSource<'m>, NoForm> {
    let source = old
        .source
        .as_ref()
        .filter(|s| s.bundle.is_none())
        .ok_or(NoForm::NotFromMarketplace)?;
    if !source.catalog.is_empty() {
        return market
            .catalog()
            .get(&source.catalog)
            .map(FormSource::Catalog)
            .ok_or(NoForm::EntryGone);
    }
    let origin = source.registry.as_ref().ok_or(NoForm::NotFromMarketplace)?;
    let listing = market.listing();
    let at = listing.find(&origin.name).ok_or(NoForm::VersionNotListed)?;
    let registry = listing.registry_url(at);
    if registry != origin.url {
        return Err(NoForm::RegistryNotListed);
    }
    match listing.row(at) {
        Ok(row) if row.server.version == origin.version => Ok(FormSource::Registry {
            row,
            registry: registry.to_owned(),
        }),
        _ => Err(NoForm::VersionNotListed),
    }
}

/// Why an installed server could not be rebuilt from its changed form.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RebuildError {
    /// The change removes the value of a field the server cannot do without.
    #[error("{label} is required: it can be replaced, not removed")]
    RequiredCleared { field: String, label: String },
    /// A stored secret could not be read back.
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// The changed form does not give a server that may run.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
}

/// Installed server `old` (named `name`) rebuilt from its form filled with `input`: the secret
/// fields left empty keep their stored values, except those in `cleared` (optional ones only);
/// what is the server's own is kept; consent to secrets on its command line holds for the
/// same program only, unless `allow_secret_args` gives it now.
pub fn rebuild(
    servers: &Servers,
    old: &ServerConfig,
    name: &str,
    (blueprint, spec): (&Blueprint, &FormSpec),
    mut input: FormInput,
    cleared: &BTreeSet<String>,
    allow_secret_args: bool,
) -> Result<PreparedServer, RebuildError> {
    if let Some(field) = spec
        .fields
        .iter()
        .find(|f| f.required && cleared.contains(&f.key))
    {
        return Err(RebuildError::RequiredCleared {
            field: field.key.clone(),
            label: field.label.clone(),
        });
    }
    refill(servers, name, old, spec, &mut input, cleared)?;
    let choices = crate::install::Choices {
        // Checked below, once the server is rebuilt and what is its own is back.
        allow_secret_args: true,
        no_sandbox: false,
        bundle_dir: None,
    };
    let mut prepared = crate::install::prepare(blueprint, spec, &input, name, &choices)?;
    keep_identity(name, old, &mut prepared);
    prepared.config.allow_secret_args |= allow_secret_args;
    crate::manage::refuse_secrets_on_argv(name, &prepared.config).map_err(PrepareError::from)?;
    Ok(prepared)
}

/// What an installed server's form was filled with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Plain fields, as entered.
    pub values: BTreeMap<String, String>,
    /// Secret fields that have a stored value.
    pub secrets_set: BTreeSet<String>,
}

impl Recorded {
    /// Whether anything was recorded (servers installed before inputs were kept have nothing,
    /// and their form would come back empty).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.secrets_set.is_empty()
    }
}

/// The values `config`'s form was filled with, for the fields its form still has.
pub fn recorded(config: &ServerConfig, has_field: impl Fn(&str) -> bool) -> Recorded {
    let mut out = Recorded::default();
    let Some(source) = config.source.as_ref() else {
        return out;
    };
    for (key, value) in &source.inputs {
        if !has_field(key) {
            continue;
        }
        match value {
            ConfigValue::Plain(text) => {
                out.values.insert(key.clone(), text.clone());
            }
            ConfigValue::FromEnv(template) => {
                out.values.insert(key.clone(), template.from_env.clone());
            }
            ConfigValue::Secret(_) => {
                out.secrets_set.insert(key.clone());
            }
        }
    }
    out
}

/// Complete `input` (a changed form of installed server `old`) with the stored value of every
/// secret field it leaves empty: an empty secret field means "keep it", unless it is among
/// `cleared` (the user removed its value; the saved server no longer refers to it, so it is
/// deleted from the secret store).
pub fn refill(
    servers: &Servers,
    name: &str,
    old: &ServerConfig,
    spec: &FormSpec,
    input: &mut FormInput,
    cleared: &BTreeSet<String>,
) -> Result<(), SecretError> {
    let kept: BTreeMap<String, ConfigValue> = old
        .source
        .iter()
        .flat_map(|s| &s.inputs)
        .filter(|(key, value)| {
            value.secret_name().is_some()
                && !cleared.contains(key.as_str())
                && input
                    .values
                    .get(key.as_str())
                    .is_none_or(|v| v.expose().trim().is_empty())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if kept.is_empty() {
        return Ok(());
    }
    let store = servers.secrets()?;
    let restored = restore(spec, &kept, Some(&**store), old.secret_namespace(name))?;
    for (key, value) in restored.input.values {
        input.values.insert(key, value);
    }
    input.store_as_secret.extend(restored.input.store_as_secret);
    Ok(())
}

/// Give `prepared` (server `name` rebuilt from its form) what belongs to the server rather than
/// to its form, from `old`; returns how its launch differs from the old one's.
pub fn keep_identity(name: &str, old: &ServerConfig, prepared: &mut PreparedServer) -> LaunchDiff {
    let new = &mut prepared.config;
    new.secret_namespace = Some(old.secret_namespace(name).to_owned());
    new.enabled = old.enabled;
    new.timeout = old.timeout;
    new.extra = old.extra.clone();
    new.allow_insecure_http = old.allow_insecure_http;
    new.keep_control_characters = old.keep_control_characters;
    new.tools = old.tools.clone();
    new.sandbox = carried_sandbox(old, new);
    let launch = launch_diff(name, old, new);
    // Consent to secrets on the command line holds for the same program and package only.
    prepared.config.allow_secret_args = old.allow_secret_args && !launch.new_destination;
    launch
}

/// The sandbox of a rebuilt server: not sandboxed when it was not (it runs as it did), else the
/// form's own declarations with the user's choices kept (on or off, the network, the folders
/// granted or denied), except paths that were form values and no longer are.
fn carried_sandbox(old: &ServerConfig, new: &ServerConfig) -> Option<plugboard_sandbox::Settings> {
    let old_sandbox = old.sandbox.as_ref()?;
    let mut sandbox = new.sandbox.clone().unwrap_or_default();
    sandbox.enabled = old_sandbox.enabled;
    sandbox.network = old_sandbox.network.clone();
    let plain_inputs = |config: &ServerConfig| -> BTreeSet<String> {
        config
            .source
            .iter()
            .flat_map(|s| s.inputs.values())
            .filter_map(|v| match v {
                ConfigValue::Plain(text) => Some(text.clone()),
                _ => None,
            })
            .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
            .collect()
    };
    let gone: BTreeSet<String> = plain_inputs(old)
        .difference(&plain_inputs(new))
        .cloned()
        .collect();
    let carry = |from: &[String], to: &mut Vec<String>| {
        for path in from {
            if !gone.contains(path) && !to.contains(path) {
                to.push(path.clone());
            }
        }
    };
    carry(&old_sandbox.allow_read, &mut sandbox.allow_read);
    carry(&old_sandbox.allow_write, &mut sandbox.allow_write);
    carry(&old_sandbox.deny, &mut sandbox.deny);
    Some(sandbox)
}

/// Save `prepared` in place of installed server `old` (same name): its secrets, its config,
/// the secrets `old` used and it does not removed, and `test` (when given) as its health.
pub fn replace(
    servers: &Servers,
    old: &ServerConfig,
    prepared: &PreparedServer,
    test: Option<(u64, &TestResult)>,
) -> Result<(), ManageError> {
    let name = &prepared.name;
    let namespace = old.secret_namespace(name).to_owned();
    if !prepared.secrets.is_empty() {
        let store = servers.secrets()?;
        for (secret, value) in &prepared.secrets {
            store.set(
                &SecretKey::new(&namespace, secret),
                value as &Sensitive<String>,
            )?;
        }
    }
    let new = prepared.config.clone();
    servers.config().update(name, |s| {
        *s = new.clone();
        Ok(())
    })?;
    let still_used = new.secret_keys(name);
    if let Ok(store) = servers.secrets() {
        for key in old.secret_keys(name) {
            if !still_used.contains(&key) {
                let _ = store.delete(&key);
            }
        }
    }
    if let Some((started_at_ms, result)) = test {
        crate::checks::seed_health(servers, name, started_at_ms, result);
    }
    Ok(())
}
