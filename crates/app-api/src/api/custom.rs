//! The custom server editor: a server of any transport and auth mode, added or changed as a
//! whole from the editor's model. Secret values the editor leaves empty (`None`) are kept;
//! secrets written go to the keyring before the config changes, and secrets the server no
//! longer refers to are deleted after.

use std::collections::{BTreeMap, BTreeSet};

use super::dto::{CustomAuth, CustomServer, KeyValue, Transport};
use super::error::{ApiError, FieldError};
use crate::config::{
    Auth, ClientAuthMethod, ConfigValue, OAuthSettings, SecretRef, ServerConfig, TransportKind,
    validate_env_key, validate_header_name, validate_name, validate_remote_url,
};
use crate::form::{PreparedServer, new_secret_namespace};
use crate::manage::{Servers, looks_secret};
use crate::secrets::{SecretKey, SecretStore, Sensitive};

use crate::credentials::{self, OAUTH_CLIENT_SECRET};

/// The editor's model of a saved server. Secret and masked values are `None`.
pub(super) fn to_custom(
    name: &str,
    config: &ServerConfig,
    store: Option<&dyn SecretStore>,
) -> CustomServer {
    let namespace = config.secret_namespace(name);
    let is_set = |secret: &str| -> Option<bool> {
        store.and_then(|s| {
            s.get(&SecretKey::new(namespace, secret))
                .ok()
                .map(|v| v.is_some())
        })
    };
    let values = |map: &BTreeMap<String, ConfigValue>| -> Vec<KeyValue> {
        map.iter()
            .map(|(k, v)| match v {
                ConfigValue::Secret(r) => KeyValue {
                    key: k.clone(),
                    value: None,
                    secret: true,
                    set: is_set(&r.secret),
                },
                ConfigValue::Plain(_) | ConfigValue::FromEnv(_) if looks_secret(k) => KeyValue {
                    key: k.clone(),
                    value: None,
                    secret: false,
                    set: Some(true),
                },
                ConfigValue::Plain(p)
                | ConfigValue::FromEnv(crate::config::EnvTemplate { from_env: p }) => KeyValue {
                    key: k.clone(),
                    value: Some(p.clone()),
                    secret: false,
                    set: None,
                },
            })
            .collect()
    };
    let auth = match &config.auth {
        Auth::None => CustomAuth::None,
        Auth::Bearer { token } => CustomAuth::Bearer {
            token: None,
            set: is_set(&token.secret),
        },
        Auth::ApiKey { header, key } => CustomAuth::ApiKey {
            header: header.clone(),
            key: None,
            set: is_set(&key.secret),
        },
        Auth::Header { name, value } => CustomAuth::ApiKey {
            header: name.clone(),
            key: None,
            set: is_set(&value.secret),
        },
        Auth::Basic { username, password } => CustomAuth::Basic {
            username: username.clone(),
            password: None,
            set: is_set(&password.secret),
        },
        Auth::Oauth2(o) => CustomAuth::Oauth2 {
            client_id: o.client_id.clone(),
            client_secret: None,
            client_secret_set: o.client_secret.as_ref().and_then(|r| is_set(&r.secret)),
            scopes: o.scopes.clone(),
            authorization_url: o.authorization_url.clone(),
            token_url: o.token_url.clone(),
        },
    };
    CustomServer {
        name: name.to_string(),
        transport: config.transport.into(),
        command: config.command.clone().unwrap_or_default(),
        args: config.args.clone(),
        cwd: config.cwd.clone().unwrap_or_default(),
        url: config.url.clone().unwrap_or_default(),
        env: values(&config.env),
        headers: values(&config.headers),
        auth,
        timeout: config.timeout.map(|t| t.min(u32::MAX as u64) as u32),
    }
}

/// A server as the editor would save it: its name, config, the secrets to write, and the
/// config it replaces. Nothing is saved.
pub(super) struct Prepared {
    pub name: String,
    pub config: ServerConfig,
    pub secrets: BTreeMap<String, Sensitive<String>>,
    before: Option<ServerConfig>,
}

/// Check the editor's model and build the server from it, or every field error at once (scrubbed
/// of every value the editor sent).
pub(super) fn prepare(
    servers: &Servers,
    original: Option<&str>,
    input: &CustomServer,
) -> Result<Prepared, ApiError> {
    let supplied: Vec<String> = supplied_values(input);
    let scrub = |e: ApiError| e.scrub(supplied.iter().map(String::as_str));
    let current = servers.config().load()?;
    let before = match original {
        Some(name) => Some(current.server(name).map_err(|e| scrub(e.into()))?),
        None => None,
    };
    let name = input.name.trim().to_string();
    let mut errors = Vec::new();
    if let Err(m) = validate_name(&name) {
        errors.push(fe("name", m));
    } else if let Err(taken) = current.check_free(&name, original) {
        errors.push(fe("name", taken.to_string()));
    }
    let (config, secrets) = build(
        input,
        before.as_ref(),
        original.unwrap_or(&name),
        &mut errors,
    );
    if !errors.is_empty() {
        return Err(scrub(ApiError::fields(errors)));
    }
    Ok(Prepared {
        name,
        config,
        secrets,
        before,
    })
}

/// Add (`original` = `None`) or replace a server from the editor's model; returns its name.
pub(super) fn save(
    servers: &Servers,
    original: Option<&str>,
    input: &CustomServer,
) -> Result<String, ApiError> {
    let supplied: Vec<String> = supplied_values(input);
    let scrub = |e: ApiError| e.scrub(supplied.iter().map(String::as_str));
    let Prepared {
        name,
        config,
        secrets,
        before,
    } = prepare(servers, original, input)?;
    match (original, before) {
        (None, _) => {
            let prepared = PreparedServer {
                name: name.clone(),
                config,
                secrets,
            };
            servers.install(&prepared).map_err(|e| scrub(e.into()))?;
        }
        (Some(old), Some(_)) => {
            servers
                .replace(old, &config, &secrets)
                .map_err(|e| scrub(e.into()))?;
            if old != name {
                // The launchers in other apps' files follow the new name.
                crate::lifecycle::rename_server(servers, old, &name)?;
            }
        }
        (Some(_), None) => unreachable!("loaded above"),
    }
    Ok(name)
}

fn fe(field: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

fn supplied_values(input: &CustomServer) -> Vec<String> {
    let mut out: Vec<String> = input
        .env
        .iter()
        .chain(&input.headers)
        .filter_map(|kv| kv.value.clone())
        .collect();
    match &input.auth {
        CustomAuth::Bearer { token: Some(v), .. }
        | CustomAuth::ApiKey { key: Some(v), .. }
        | CustomAuth::Basic {
            password: Some(v), ..
        }
        | CustomAuth::Oauth2 {
            client_secret: Some(v),
            ..
        } => out.push(v.clone()),
        _ => {}
    }
    out
}

/// Build the config (and the secrets to write) from the editor's model, collecting field errors.
fn build(
    input: &CustomServer,
    before: Option<&ServerConfig>,
    old_name: &str,
    errors: &mut Vec<FieldError>,
) -> (ServerConfig, BTreeMap<String, Sensitive<String>>) {
    let kind: TransportKind = input.transport.into();
    let mut config = match input.transport {
        Transport::Stdio => {
            let command = input.command.trim();
            if command.is_empty() {
                errors.push(fe("command", "enter the command that starts the server"));
            }
            let args = input
                .args
                .iter()
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect();
            ServerConfig::stdio(command, args)
        }
        _ => {
            let url = input.url.trim();
            if url.is_empty() {
                errors.push(fe("url", "enter the server URL"));
            } else if let Err(m) = validate_remote_url(url) {
                errors.push(fe("url", m));
            }
            ServerConfig::remote(kind, url)
        }
    };
    if let Some(before) = before {
        config.enabled = before.enabled;
        config.source = before.source.clone();
        config.extra = before.extra.clone();
        config.tools = before.tools.clone();
        config.secret_namespace = Some(before.secret_namespace(old_name).to_string());
        config.sandbox = before.sandbox.clone();
    } else {
        config.secret_namespace = Some(new_secret_namespace());
        config.sandbox = config.new_sandbox();
    }
    let cwd = input.cwd.trim();
    if !cwd.is_empty() {
        if input.transport != Transport::Stdio {
            errors.push(fe("cwd", "only a stdio server has a working directory"));
        }
        config.cwd = Some(cwd.to_string());
    }
    config.timeout = match input.timeout {
        Some(0) => {
            errors.push(fe("timeout", "the timeout must be at least 1 second"));
            None
        }
        Some(t) if t > 3600 => {
            errors.push(fe("timeout", "the timeout can be at most 3600 seconds"));
            None
        }
        t => t.map(u64::from),
    };
    let mut secrets = BTreeMap::new();
    let mut secret_names = BTreeSet::new();
    let remote = input.transport != Transport::Stdio;
    if remote && input.env.iter().any(|kv| !kv.key.trim().is_empty()) {
        errors.push(fe(
            "env",
            "environment variables are for stdio servers; use headers",
        ));
    }
    if !remote && input.headers.iter().any(|kv| !kv.key.trim().is_empty()) {
        errors.push(fe(
            "headers",
            "headers are for remote servers; use environment variables",
        ));
    }
    for (list, field, is_env) in [
        (&input.env, "env", true),
        (&input.headers, "headers", false),
    ] {
        let before_map = before.map(|b| if is_env { &b.env } else { &b.headers });
        let mut seen = BTreeSet::new();
        for (i, kv) in list.iter().enumerate() {
            let key = kv.key.trim();
            if key.is_empty() && kv.value.as_deref().is_none_or(|v| v.trim().is_empty()) {
                continue;
            }
            let path = format!("{field}.{i}");
            let valid = if is_env {
                validate_env_key(key)
            } else {
                validate_header_name(key)
            };
            if let Err(m) = valid {
                errors.push(fe(
                    &format!("{path}.key"),
                    if key.is_empty() {
                        "enter a name".into()
                    } else {
                        m
                    },
                ));
                continue;
            }
            let folded = if is_env {
                key.to_string()
            } else {
                key.to_ascii_lowercase()
            };
            if !seen.insert(folded) {
                errors.push(fe(
                    &format!("{path}.key"),
                    format!("`{key}` is listed twice"),
                ));
                continue;
            }
            let value = match &kv.value {
                Some(v) => {
                    if !is_env && v.contains(['\r', '\n']) {
                        errors.push(fe(
                            &format!("{path}.value"),
                            "a header value cannot contain line breaks",
                        ));
                        continue;
                    }
                    if kv.secret {
                        if v.is_empty() {
                            errors.push(fe(&format!("{path}.value"), "enter the secret value"));
                            continue;
                        }
                        if !secret_names.insert(key.to_string()) {
                            errors.push(fe(
                                &format!("{path}.key"),
                                format!("another secret is already named `{key}`"),
                            ));
                            continue;
                        }
                        secrets.insert(key.to_string(), Sensitive::new(v.clone()));
                        ConfigValue::Secret(SecretRef::new(key))
                    } else {
                        ConfigValue::Plain(v.clone())
                    }
                }
                None => match before_map.and_then(|m| m.get(key)) {
                    Some(existing) => {
                        if let ConfigValue::Secret(r) = existing {
                            secret_names.insert(r.secret.clone());
                        }
                        existing.clone()
                    }
                    None => {
                        errors.push(fe(&format!("{path}.value"), "enter a value"));
                        continue;
                    }
                },
            };
            if is_env {
                config.env.insert(key.to_string(), value);
            } else {
                config.headers.insert(key.to_string(), value);
            }
        }
    }
    let before_auth_secret = before.and_then(|b| match &b.auth {
        Auth::Bearer { token: r }
        | Auth::ApiKey { key: r, .. }
        | Auth::Header { value: r, .. }
        | Auth::Basic { password: r, .. } => Some(r.clone()),
        _ => None,
    });
    let mut auth_secret = |value: &Option<String>,
                           preferred: &str,
                           field: &str,
                           errors: &mut Vec<FieldError>|
     -> Option<SecretRef> {
        match value {
            Some(v) if !v.trim().is_empty() => {
                if v.contains(['\r', '\n']) {
                    errors.push(fe(field, "the value cannot contain line breaks"));
                    return None;
                }
                let name = credentials::unused_name(preferred, |n| secret_names.contains(n));
                secrets.insert(name.clone(), Sensitive::new(v.trim().to_string()));
                Some(SecretRef::new(name))
            }
            _ => match &before_auth_secret {
                Some(r) => Some(r.clone()),
                None => {
                    errors.push(fe(field, "enter the credential"));
                    None
                }
            },
        }
    };
    if !matches!(input.auth, CustomAuth::None) && !remote {
        errors.push(fe("auth", "authentication applies to remote servers; a stdio server gets its credentials through environment variables"));
    } else {
        config.auth = match &input.auth {
            CustomAuth::None => Auth::None,
            CustomAuth::Bearer { token, .. } => {
                auth_secret(token, credentials::BEARER_TOKEN, "auth.token", errors)
                    .map(|token| Auth::Bearer { token })
                    .unwrap_or_default()
            }
            CustomAuth::ApiKey { header, key, .. } => {
                let header = header.trim();
                if let Err(m) = validate_header_name(header) {
                    errors.push(fe(
                        "auth.header",
                        if header.is_empty() {
                            "enter the header name".into()
                        } else {
                            m
                        },
                    ));
                }
                auth_secret(key, credentials::API_KEY, "auth.key", errors)
                    .map(|key| Auth::ApiKey {
                        header: header.to_string(),
                        key,
                    })
                    .unwrap_or_default()
            }
            CustomAuth::Basic {
                username, password, ..
            } => {
                if username.trim().is_empty() {
                    errors.push(fe("auth.username", "enter the user name"));
                }
                auth_secret(password, credentials::PASSWORD, "auth.password", errors)
                    .map(|password| Auth::Basic {
                        username: username.trim().to_string(),
                        password,
                    })
                    .unwrap_or_default()
            }
            CustomAuth::Oauth2 {
                client_id,
                client_secret,
                scopes,
                authorization_url,
                token_url,
                ..
            } => {
                let before_oauth = before.and_then(|b| match &b.auth {
                    Auth::Oauth2(o) => Some(o),
                    _ => None,
                });
                let text = |v: &Option<String>| {
                    v.as_deref()
                        .map(str::trim)
                        .filter(|v| !v.is_empty())
                        .map(String::from)
                };
                let mut endpoint = |v: &Option<String>, field: &str| {
                    let url = text(v)?;
                    if let Err(m) = crate::oauth::validate_authorization_url(&url) {
                        errors.push(fe(field, m.to_string()));
                    }
                    Some(url)
                };
                let authorization_url = endpoint(authorization_url, "auth.authorization_url");
                let token_url = endpoint(token_url, "auth.token_url");
                let client_id = text(client_id);
                let secret = match client_secret.as_deref().map(str::trim) {
                    Some("") => None,
                    Some(v) => {
                        if client_id.is_none() {
                            errors.push(fe(
                                "auth.client_secret",
                                "a client secret belongs to a client ID: enter the client ID too",
                            ));
                        }
                        secrets.insert(OAUTH_CLIENT_SECRET.into(), Sensitive::new(v.to_string()));
                        Some(SecretRef::new(OAUTH_CLIENT_SECRET))
                    }
                    None => before_oauth.and_then(|o| o.client_secret.clone()),
                };
                let scopes = scopes
                    .iter()
                    .flat_map(|s| s.split([' ', ',']))
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                Auth::Oauth2(OAuthSettings {
                    client_auth: match (&secret, before_oauth) {
                        (None, _) => ClientAuthMethod::None,
                        (Some(_), Some(b)) if b.client_auth != ClientAuthMethod::None => {
                            b.client_auth
                        }
                        (Some(_), _) => ClientAuthMethod::ClientSecretPost,
                    },
                    client_id,
                    client_secret: secret,
                    scopes,
                    authorization_url,
                    token_url,
                    callback_port: before_oauth.and_then(|o| o.callback_port),
                })
            }
        };
    }
    if errors.is_empty()
        && let Err(m) = config.validate()
    {
        errors.push(fe("server", m));
    }
    (config, secrets)
}
