//! The custom server editor: a server of any transport and auth mode, added or changed as a
//! whole from the editor's model. Secret values the editor leaves empty (`None`) are kept;
//! secrets written go to the keyring before the config changes, and secrets the server no
//! longer refers to are deleted after.

use std::collections::BTreeMap;

use super::dto::{CustomAuth, CustomServer, GrantKind, KeyValue};
use super::error::ApiError;
use super::error::FieldError;
use crate::config::{Auth, ConfigValue, OAuthGrant, ServerConfig, validate_name};
use crate::custom::fe;
use crate::form::PreparedServer;
use crate::manage::{Servers, looks_secret};
use crate::secrets::{SecretKey, SecretStore, Sensitive};

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
        Auth::Oauth2(o) => {
            let (grant, idp) = match &o.grant {
                OAuthGrant::AuthorizationCode => (GrantKind::SignIn, None),
                OAuthGrant::ClientCredentials => (GrantKind::ClientCredentials, None),
                OAuthGrant::IdentityAssertion {
                    idp_token_endpoint,
                    idp_client_id,
                    idp_client_secret,
                    id_token,
                } => (
                    GrantKind::IdentityAssertion,
                    Some((
                        idp_token_endpoint,
                        idp_client_id,
                        idp_client_secret,
                        id_token,
                    )),
                ),
            };
            CustomAuth::Oauth2 {
                client_id: o.client_id.clone(),
                client_secret: None,
                client_secret_set: o.client_secret.as_ref().and_then(|r| is_set(&r.secret)),
                scopes: o.scopes.clone(),
                authorization_url: o.authorization_url.clone(),
                token_url: o.token_url.clone(),
                grant,
                private_key: None,
                private_key_set: o.private_key.as_ref().and_then(|r| is_set(&r.secret)),
                idp_token_endpoint: idp.map(|(endpoint, ..)| endpoint.clone()),
                idp_client_id: idp.map(|(_, client, ..)| client.clone()),
                idp_client_secret: None,
                idp_client_secret_set: idp.and_then(|(_, _, secret, _)| {
                    secret.as_ref().map_or(Some(false), |r| is_set(&r.secret))
                }),
                id_token: None,
                id_token_set: idp.and_then(|(.., token)| is_set(&token.secret)),
            }
        }
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
        headers_helper: config
            .headers_helper
            .as_ref()
            .map(|h| super::dto::HeadersHelper {
                command: h.command.clone(),
                args: h.args.clone(),
                ttl: h.ttl.map(|t| t.min(u32::MAX as u64) as u32),
            }),
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
    let (config, secrets) = crate::custom::build(
        &spec_of(input),
        before.as_ref(),
        original.unwrap_or(&name),
        &mut errors,
    );
    if !errors.is_empty() {
        let fields = errors
            .into_iter()
            .map(|e| FieldError {
                field: e.field,
                message: e.message,
            })
            .collect();
        return Err(scrub(ApiError::fields(fields)));
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

/// The editor's model as the core's custom server.
fn spec_of(input: &CustomServer) -> crate::custom::CustomServer {
    let values = |list: &[KeyValue]| {
        list.iter()
            .map(|kv| crate::custom::KeyValue {
                key: kv.key.clone(),
                value: kv.value.clone(),
                secret: kv.secret,
            })
            .collect()
    };
    crate::custom::CustomServer {
        transport: input.transport.into(),
        command: input.command.clone(),
        // The editor's rows: each trimmed, the empty ones left out.
        args: input
            .args
            .iter()
            .map(|a| a.trim().to_owned())
            .filter(|a| !a.is_empty())
            .collect(),
        cwd: input.cwd.clone(),
        url: input.url.clone(),
        env: values(&input.env),
        headers: values(&input.headers),
        headers_helper: input
            .headers_helper
            .as_ref()
            .filter(|h| !h.command.trim().is_empty())
            .map(|h| crate::config::HeadersHelper {
                command: h.command.trim().to_owned(),
                args: h
                    .args
                    .iter()
                    .map(|a| a.trim().to_owned())
                    .filter(|a| !a.is_empty())
                    .collect(),
                ttl: h.ttl.map(u64::from),
            }),
        auth: match &input.auth {
            CustomAuth::None => crate::custom::CustomAuth::None,
            CustomAuth::Bearer { token, .. } => crate::custom::CustomAuth::Bearer {
                token: token.clone(),
            },
            CustomAuth::ApiKey { header, key, .. } => crate::custom::CustomAuth::ApiKey {
                header: header.clone(),
                key: key.clone(),
            },
            CustomAuth::Basic {
                username, password, ..
            } => crate::custom::CustomAuth::Basic {
                username: username.clone(),
                password: password.clone(),
            },
            CustomAuth::Oauth2 {
                client_id,
                client_secret,
                scopes,
                authorization_url,
                token_url,
                grant,
                private_key,
                idp_token_endpoint,
                idp_client_id,
                idp_client_secret,
                id_token,
                ..
            } => crate::custom::CustomAuth::Oauth2 {
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
                scopes: scopes.clone(),
                authorization_url: authorization_url.clone(),
                token_url: token_url.clone(),
                grant: Some(match grant {
                    GrantKind::SignIn => crate::custom::CustomGrant::SignIn,
                    GrantKind::ClientCredentials => crate::custom::CustomGrant::ClientCredentials,
                    GrantKind::IdentityAssertion => crate::custom::CustomGrant::IdentityAssertion {
                        idp_token_endpoint: idp_token_endpoint.clone().unwrap_or_default(),
                        idp_client_id: idp_client_id.clone().unwrap_or_default(),
                        idp_client_secret: idp_client_secret.clone(),
                        id_token: id_token.clone(),
                    },
                }),
                private_key: private_key.clone(),
            },
        },
        timeout: input.timeout,
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
    if let CustomAuth::Oauth2 {
        private_key,
        id_token,
        idp_client_secret,
        ..
    } = &input.auth
    {
        out.extend(
            private_key
                .iter()
                .chain(id_token)
                .chain(idp_client_secret)
                .cloned(),
        );
    }
    out
}
