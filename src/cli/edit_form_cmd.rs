//! `plugboard edit NAME --set KEY=VALUE | --secret KEY | --clear KEY`: a catalog or registry
//! server changed through the form it was installed with, as the app's Edit does. The form is
//! filled with what the server was installed with, the named fields are changed, and the
//! server is rebuilt from it (what is its own kept), tested and saved in its place.

use std::collections::BTreeSet;

use super::CliError;
use super::args::EditArgs;
use super::catalog_cmd::load_market;
use super::input::{SecretInput, key_value};
use super::test_cmd::{prepared_test, print_result, progress_printer, runtime};
use crate::clock::now_ms;
use crate::config::ServerConfig;
use crate::form::blueprint::Blueprint;
use crate::form::engine::form;
use crate::form::server_json::{Pinning, blueprint};
use crate::form::{FormInput, FormSpec, InputKind, curated};
use crate::manage::Servers;
use crate::reconfigure::{self, FormSource, RebuildError};
use crate::registry::sources::pinning_enabled;
use crate::runtimes;
use crate::secrets::secret_env_var;

pub fn edit(servers: &Servers, args: &EditArgs) -> Result<(), CliError> {
    let name = args.name.as_str();
    let old = servers.config().load()?.server(name)?;
    let (bp, spec) = installed_form(servers, name, &old)?;
    let field = |key: &str| {
        spec.fields.iter().find(|f| f.key == key).ok_or_else(|| {
            let keys: Vec<&str> = spec.fields.iter().map(|f| f.key.as_str()).collect();
            CliError::usage(format!(
                "the form `{name}` was installed with has no field `{key}` (fields: {})",
                if keys.is_empty() {
                    "none".into()
                } else {
                    keys.join(", ")
                }
            ))
        })
    };
    let is_secret = |key: &str| {
        spec.fields
            .iter()
            .any(|f| f.key == key && (f.secret || f.input == InputKind::Password))
    };

    let recorded = reconfigure::recorded(&old, |key| spec.fields.iter().any(|f| f.key == key));
    if recorded.is_empty() && spec.fields.iter().any(|f| f.required) {
        return Err(CliError::usage(format!(
            "`{name}` was installed before Plugboard kept what its form was filled with, so the \
             form cannot be changed field by field: install it again, or change its launch with \
             --env, --header and --url"
        )));
    }
    let mut input = FormInput::default();
    for (key, value) in &recorded.values {
        input.set(key, value);
        if field(key)?.secret_toggle {
            input.store_as_secret.insert(key.to_owned(), false);
        }
    }
    let mut replaced = BTreeSet::new();
    for raw in &args.set {
        let (key, value) = key_value(raw, "--set")?;
        let field = field(key)?;
        if is_secret(key) {
            return Err(CliError::usage(format!(
                "`{key}` is a secret field and is never taken from the command line: use \
                 --secret {key} (the value from stdin, {} or a prompt)",
                secret_env_var(key)
            )));
        }
        // A list field's first --set replaces its lines; the next ones add lines.
        if field.input == InputKind::List && !replaced.insert(key.to_owned()) {
            input.add_line(key, value);
        } else {
            input.set(key, value);
            replaced.insert(key.to_owned());
        }
    }
    let mut cleared = BTreeSet::new();
    for key in &args.clear {
        field(key)?;
        if replaced.contains(key) || args.secret.contains(key) {
            return Err(CliError::usage(format!(
                "--clear {key}: `{key}` is also given a new value"
            )));
        }
        input.values.remove(key);
        cleared.insert(key.clone());
    }
    let mut secrets = SecretInput::for_flags(None, args.secret.len());
    for key in &args.secret {
        let label = &field(key)?.label;
        if !is_secret(key) {
            return Err(CliError::usage(format!(
                "--secret {key}: `{key}` is not a secret field; use --set {key}=…"
            )));
        }
        let value = secrets.read(key, label)?.ok_or_else(|| {
            CliError::usage(format!(
                "no value for `{key}`: pipe it to standard input, set {} or run in a terminal to \
                 be prompted",
                secret_env_var(key)
            ))
        })?;
        input.values.insert(key.clone(), value);
    }

    let prepared = reconfigure::rebuild(
        servers,
        &old,
        name,
        (&bp, &spec),
        input,
        &cleared,
        args.allow_secret_args,
    )
    .map_err(|e| match e {
        RebuildError::Prepare(crate::install::PrepareError::Form(errors)) => {
            CliError::usage(errors.to_string())
        }
        RebuildError::Prepare(crate::install::PrepareError::Refused(refusal)) => refusal.into(),
        RebuildError::Secret(e) => e.into(),
        other => CliError::usage(other.to_string()),
    })?;
    let mut test = None;
    if !args.no_test {
        eprintln!("Testing the changed `{name}` before saving it");
        let (market, _) = load_market()?;
        let started = now_ms();
        let result = runtime()?.block_on(prepared_test(
            &prepared,
            market.catalog(),
            None,
            progress_printer(true),
        ));
        print_result(name, &result);
        if !result.ok {
            return Err(CliError::failed(
                "nothing was changed; fix the problem and try again, or pass --no-test to save \
                 the change untested"
                    .to_owned(),
            ));
        }
        test = Some((started, result));
    }
    reconfigure::replace(
        servers,
        &old,
        &prepared,
        test.as_ref().map(|(started, result)| (*started, result)),
    )?;
    println!("Changed `{name}`.");
    Ok(())
}

/// The form `name` was installed with, as its catalog entry or registry version gives it now.
fn installed_form(
    servers: &Servers,
    name: &str,
    old: &ServerConfig,
) -> Result<(Blueprint, FormSpec), CliError> {
    let no_form = |why: &str| {
        CliError::usage(format!(
            "`{name}` {why}, so it has no form to change: change its launch with --env, \
             --header, --url and the other flags of `plugboard edit`"
        ))
    };
    let (market, _) = load_market()?;
    let bp = match reconfigure::form_source(&market, old).map_err(|e| no_form(&e.to_string()))? {
        FormSource::Catalog(entry) => curated::blueprint(entry),
        FormSource::Registry { row, registry } => {
            let npm_check = |identifier: &str, version: &str, date: &str| {
                crate::deps::npm_before_allowed(identifier, version, date)
            };
            let pinning = Pinning {
                enabled: pinning_enabled(servers.config().dir()),
                npm: Some(&npm_check),
            };
            blueprint(&row, &registry, &pinning)
        }
    };
    let option = old.source.as_ref().map_or("", |s| s.option.as_str());
    let spec = form(&bp, Some(option), runtimes::system())?;
    if spec.option_id != option {
        return Err(no_form(
            "was installed with an option its entry no longer has",
        ));
    }
    Ok((bp, spec))
}
