//! What an install form was filled with, kept in the server's `source.inputs` so that an update
//! can fill the new version's form the same way: plain values as they were entered, secret
//! values as references to the server's secrets (the secret already stored for an environment
//! variable, header or argument when it holds exactly that value, else one more secret named
//! `input.KEY`). Values left empty are not kept: the new form's defaults apply to them.

use std::collections::BTreeMap;

use super::spec::{FormInput, FormSpec, InputKind, PreparedServer};
use crate::config::{ConfigValue, EnvTemplate, SecretRef};
use crate::secrets::{SecretError, SecretKey, SecretStore, Sensitive};

/// The name of the extra secret that keeps a secret field's value.
pub fn input_secret(key: &str) -> String {
    format!("input.{key}")
}

fn is_secret(spec: &FormSpec, input: &FormInput, key: &str) -> bool {
    spec.fields.iter().any(|f| {
        f.key == key
            && if f.secret_toggle {
                input.store_as_secret.get(key).copied().unwrap_or(f.secret)
            } else {
                f.secret || f.input == InputKind::Password
            }
    })
}

/// Record `input` in `prepared`'s source (adding the secrets it needs to `prepared.secrets`).
pub fn record(spec: &FormSpec, input: &FormInput, prepared: &mut PreparedServer) {
    let mut kept = BTreeMap::new();
    for field in &spec.fields {
        let Some(value) = input.get(&field.key) else {
            continue;
        };
        let recorded = if is_secret(spec, input, &field.key) {
            let existing = prepared
                .secrets
                .iter()
                .find(|(_, v)| v.expose() == value)
                .map(|(name, _)| name.clone());
            let name = existing.unwrap_or_else(|| {
                let name = input_secret(&field.key);
                prepared
                    .secrets
                    .insert(name.clone(), Sensitive::new(value.to_owned()));
                name
            });
            ConfigValue::Secret(SecretRef::new(&name))
        } else {
            ConfigValue::Plain(value.to_owned())
        };
        kept.insert(field.key.clone(), recorded);
    }
    if let Some(source) = prepared.config.source.as_mut() {
        source.inputs = kept;
    }
}

/// What can be carried into a new form.
pub struct Restored {
    pub input: FormInput,
    /// Recorded fields the new form no longer has.
    pub dropped: Vec<String>,
}

/// Fill `spec` (a new version's form) from recorded `inputs`, reading secret values from
/// `store` in `namespace`.
pub fn restore(
    spec: &FormSpec,
    inputs: &BTreeMap<String, ConfigValue>,
    store: Option<&dyn SecretStore>,
    namespace: &str,
) -> Result<Restored, SecretError> {
    let mut input = FormInput::default();
    let mut dropped = Vec::new();
    for (key, value) in inputs {
        if !spec.fields.iter().any(|f| &f.key == key) {
            dropped.push(key.clone());
            continue;
        }
        match value {
            ConfigValue::Plain(text) | ConfigValue::FromEnv(EnvTemplate { from_env: text }) => {
                input.set(key.clone(), text.clone());
            }
            ConfigValue::Secret(reference) => {
                let Some(store) = store else { continue };
                if let Some(secret) = store.get(&SecretKey::new(namespace, &reference.secret))? {
                    input.values.insert(key.clone(), secret);
                    let field = spec.fields.iter().find(|f| &f.key == key);
                    if field.is_some_and(|f| f.secret_toggle) {
                        input.store_as_secret.insert(key.clone(), true);
                    }
                }
            }
        }
    }
    Ok(Restored { input, dropped })
}
