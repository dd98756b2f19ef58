//! The form engine: every source of installable servers becomes the same install form and the
//! same validated server config.
//!
//! ```text
//! catalog entry ──► curated::blueprint ─┐
//! registry row  ──► server_json::blueprint ─┼─► Blueprint ─► engine::form ─► FormSpec (UI, CLI)
//! MCPB manifest ──► mcpb::blueprint ──────┘                 │
//!                                         FormInput ─► engine::build ─► PreparedServer
//! ```
//!
//! - [`blueprint`]: the intermediate form: options, what each launches or reaches, its fields,
//!   where each value goes (argument, environment variable, header, URL) through [`template`]s;
//! - [`curated`]: catalog entries → blueprints;
//! - [`server_json`]: registry `server.json`s → blueprints (npm, PyPI, OCI, NuGet, MCPB shown,
//!   local HTTP packages, remotes, dependency pins);
//! - [`engine`]: blueprint → form (the default option is one that can run here) → validated
//!   server with its secrets;
//! - [`spec`]: the types handed to the UI and the CLI.
//!
//! **Where the next source plugs in.** An MCPB bundle's `manifest.json` is one more translator,
//! `form/mcpb.rs` with `pub fn blueprint(manifest, bundle_dir) -> Blueprint`: its
//! `server.mcp_config` (`command`, `args`, `env`) becomes `Launch::Stdio` with `ArgPlan::Fixed`
//! / `ValuePlan` templates (`${user_config.KEY}` is `{KEY}` here, `${__dirname}` the unpacked
//! bundle's directory); each `user_config` entry a [`FormField`] (`type` string / number /
//! boolean / directory / file → `InputKind::Text`, `Number`, `Boolean`, `FilePath`; `sensitive`
//! → `secret: true`; `required`, `default`, `title` → label, `description` → help; `multiple` →
//! `InputKind::List`); a new `FormSource::Bundle { path, sha256 }` variant records where it came
//! from. Nothing in [`engine`] changes: the form, validation, secrets in the keyring and the
//! built config are the same for it.

pub mod blueprint;
pub mod curated;
pub mod engine;
pub mod inputs;
pub mod mcpb;
pub mod package_names;
mod runners;
pub mod server_json;
pub mod spec;
pub mod template;
pub mod warnings;

use std::collections::BTreeMap;

use serde::Serialize;

pub use blueprint::{Blueprint, FormSource, Pin};
pub use engine::new_secret_namespace;
pub use spec::{
    FieldError, FieldTarget, FormErrors, FormField, FormInput, FormSpec, InputKind, OptionSummary,
    PreparedServer, Unavailable,
};

use crate::catalog::Entry;
use crate::config::{Auth, ConfigValue, ServerConfig};

/// The form for `option_id` of catalog `entry` (its default option when `None`: the first
/// that can run on this machine).
pub fn form_for(entry: &Entry, option_id: Option<&str>) -> Result<FormSpec, FormErrors> {
    engine::form(
        &curated::blueprint(entry),
        option_id,
        crate::runtimes::system(),
    )
}

/// Check a filled form of catalog `entry` and turn it into a server. `name` is the server name
/// (already validated by the caller against the store); the secrets get a fresh namespace.
pub fn build_server(
    entry: &Entry,
    spec: &FormSpec,
    input: &FormInput,
    name: &str,
) -> Result<PreparedServer, FormErrors> {
    engine::build(&curated::blueprint(entry), spec, input, name)
}

/// What a saved server holds for each field of its form: the plain value, or that a secret is
/// referenced. Used to pre-fill an edit form; secret values are never read here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "value", rename_all = "snake_case")]
pub enum FieldState {
    Empty,
    Plain(String),
    SecretRef,
}

/// The form state of a saved server, field by field.
pub fn field_states(spec: &FormSpec, server: &ServerConfig) -> BTreeMap<String, FieldState> {
    let from_value = |v: Option<&ConfigValue>| match v {
        None => FieldState::Empty,
        Some(ConfigValue::Plain(p)) => FieldState::Plain(p.clone()),
        Some(ConfigValue::FromEnv(t)) => FieldState::Plain(t.from_env.clone()),
        Some(ConfigValue::Secret(_)) => FieldState::SecretRef,
    };
    let curated = matches!(spec.source, FormSource::Curated { .. });
    let fixed_args = spec
        .command
        .as_deref()
        .filter(|_| curated)
        .map(|c| c.split(' ').count().saturating_sub(1))
        .unwrap_or(usize::MAX);
    let mut extra_args = server.args.iter().skip(fixed_args).cloned();
    let env = |key: &str| {
        server
            .env
            .get(key)
            .or_else(|| server.launch.as_ref().and_then(|l| l.env.get(key)))
    };
    // The last argument field takes every argument left: its value was split into them (one
    // per word, or per line for a list of folders).
    let last_arg = spec
        .fields
        .iter()
        .rposition(|f| f.target == FieldTarget::Arg);
    spec.fields
        .iter()
        .enumerate()
        .map(|(index, f)| {
            let state = match f.target {
                FieldTarget::Env => from_value(env(&f.key)),
                FieldTarget::Header => from_value(server.headers.get(&f.key)),
                FieldTarget::Arg if Some(index) == last_arg => {
                    let rest: Vec<String> = extra_args.by_ref().collect();
                    let separator = if f.input == InputKind::List {
                        "\n"
                    } else {
                        " "
                    };
                    if rest.is_empty() {
                        FieldState::Empty
                    } else {
                        FieldState::Plain(rest.join(separator))
                    }
                }
                FieldTarget::Arg => extra_args
                    .next()
                    .map_or(FieldState::Empty, FieldState::Plain),
                FieldTarget::Value => FieldState::Empty,
                FieldTarget::Url => server
                    .url
                    .clone()
                    .map_or(FieldState::Empty, FieldState::Plain),
                FieldTarget::Credential => {
                    if server.auth.secret_names().contains(&f.key.as_str()) {
                        FieldState::SecretRef
                    } else {
                        FieldState::Empty
                    }
                }
                FieldTarget::OauthClientId => match &server.auth {
                    Auth::Oauth2(o) => o
                        .client_id
                        .clone()
                        .map_or(FieldState::Empty, FieldState::Plain),
                    _ => FieldState::Empty,
                },
                FieldTarget::OauthClientSecret => match &server.auth {
                    Auth::Oauth2(o) if o.client_secret.is_some() => FieldState::SecretRef,
                    _ => FieldState::Empty,
                },
            };
            (f.key.clone(), state)
        })
        .collect()
}
