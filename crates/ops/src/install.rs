//! Installing a server from a filled form, for every front end: the form's values become a
//! server (with what the user chose beyond the form), which is refused before anything runs
//! when it would put a secret on the command line; after its test, it is saved and the test
//! becomes its first health record. The CLI's `install`, the app's install form and `update`
//! go through here, so the same entry and values give the same config and secret names.

use std::path::Path;

use crate::form::blueprint::Blueprint;
use crate::form::engine::build;
use crate::form::inputs::record;
use crate::form::{FormErrors, FormInput, FormSpec, PreparedServer};
use crate::manage::{ManageError, Servers, refuse_secrets_on_argv};
use crate::probe::TestResult;

/// What the user chose beyond the form's fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Choices<'a> {
    /// Accept a secret on the server's command line.
    pub allow_secret_args: bool,
    /// Run it without the sandbox its launch would get.
    pub no_sandbox: bool,
    /// The unpacked MCPB bundle it runs from (its working folder).
    pub bundle_dir: Option<&'a Path>,
}

/// Why a filled form does not give a server that may be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// A field is missing or wrong.
    #[error(transparent)]
    Form(#[from] FormErrors),
    /// The server would take a secret on its command line without the user's consent.
    #[error(transparent)]
    Refused(#[from] ManageError),
}

/// The server the form describes, with the values entered recorded for a later update, and
/// its working folder in its bundle; nothing is checked beyond the form.
pub fn from_form(
    blueprint: &Blueprint,
    spec: &FormSpec,
    input: &FormInput,
    name: &str,
    bundle_dir: Option<&Path>,
) -> Result<PreparedServer, FormErrors> {
    let mut prepared = build(blueprint, spec, input, name)?;
    record(spec, input, &mut prepared);
    if let Some(dir) = bundle_dir {
        prepared.config.cwd = Some(dir.display().to_string());
    }
    Ok(prepared)
}

/// The server to test and then [`save`]: [`from_form`] with the user's `choices`, refused when
/// it would take a secret on its command line without consent.
pub fn prepare(
    blueprint: &Blueprint,
    spec: &FormSpec,
    input: &FormInput,
    name: &str,
    choices: &Choices,
) -> Result<PreparedServer, PrepareError> {
    let mut prepared = from_form(blueprint, spec, input, name, choices.bundle_dir)?;
    prepared.config.allow_secret_args = choices.allow_secret_args;
    if choices.no_sandbox {
        prepared.config.sandbox = prepared.config.new_sandbox_unless(true);
    }
    refuse_secrets_on_argv(name, &prepared.config)?;
    Ok(prepared)
}

/// Save a prepared server (secrets to the secret store, the rest to the config) and keep its
/// pre-save test, started at `started_at_ms`, as its first health record. A server whose
/// tokens come without a user is bound to the authorization server its test got a token from:
/// its credentials are sent to no other later.
pub fn save(
    servers: &Servers,
    prepared: &PreparedServer,
    pre_save_test: Option<(u64, &TestResult)>,
) -> Result<(), ManageError> {
    servers.install(prepared)?;
    if let Some((started_at_ms, result)) = pre_save_test {
        if let Some(issuer) = result.authorization_server.as_deref().filter(|_| result.ok)
            && crate::oauth::machine::without_user(&prepared.config)
        {
            let store = servers.secrets()?;
            crate::oauth::bind_issuer(&prepared.name, &prepared.config, store.as_ref(), issuer)?;
        }
        crate::checks::seed_health(servers, &prepared.name, started_at_ms, result);
    }
    Ok(())
}
