//! The install form: derived from a catalog connection option, rendered by the app and filled by
//! the CLI (`--set KEY=VALUE`), then turned into a server config plus the secrets to store.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::catalog::{
    CatalogAuth, CatalogOAuth, CatalogTransport, ConnectionOption, Entry, Field, FieldKind,
    Registration,
};
use crate::config::{
    Auth, ConfigValue, OAuthSettings, SecretRef, ServerConfig, Source, TransportKind,
    validate_remote_url,
};
use crate::secrets::Sensitive;

/// What a form field fills in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldTarget {
    /// An environment variable of a stdio server; the key is its name.
    Env,
    /// An argument appended to a stdio server's command line (split on whitespace).
    Arg,
    /// An HTTP header of a remote server; the key is its name.
    Header,
    /// The API key or bearer token of a remote server.
    Credential,
    /// The server URL, where the catalog lets the user change it.
    Url,
    /// The id of an OAuth app the user registered with the provider.
    OauthClientId,
    /// The secret of that OAuth app, if it has one.
    OauthClientSecret,
}

/// How the field is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    Text,
    Password,
    Url,
}

/// One field of the install form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormField {
    pub key: String,
    pub label: String,
    pub target: FieldTarget,
    pub input: InputKind,
    pub required: bool,
    /// Stored in the secret store unless the user turns that off.
    pub secret: bool,
    /// Whether the user may choose between storing it as a secret or as plain config.
    pub secret_toggle: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Markdown; links are https only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// One connection option of the entry, for the option chooser.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OptionSummary {
    pub id: String,
    pub label: String,
    pub transport: TransportKind,
}

/// The form for installing one option of one catalog entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormSpec {
    pub entry_id: String,
    pub option_id: String,
    pub option_label: String,
    pub transport: TransportKind,
    /// The command line a stdio option will run (before argument fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Whether installing ends with an OAuth sign-in.
    pub oauth: bool,
    /// The server name used unless the user picks another.
    pub default_name: String,
    pub fields: Vec<FormField>,
    pub options: Vec<OptionSummary>,
}

/// A field that failed validation, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Every problem found in a filled form (or a bad option choice).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}", self.errors.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; "))]
pub struct FormErrors {
    pub errors: Vec<FieldError>,
}

impl FormErrors {
    fn one(field: &str, message: impl Into<String>) -> Self {
        FormErrors {
            errors: vec![FieldError {
                field: field.into(),
                message: message.into(),
            }],
        }
    }
}

/// What the user entered. Values are `Sensitive` because any of them may be a secret.
#[derive(Debug, Default)]
pub struct FormInput {
    pub values: BTreeMap<String, Sensitive<String>>,
    /// Per-field override of "store as secret", for fields with a toggle.
    pub store_as_secret: BTreeMap<String, bool>,
}

impl FormInput {
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.values.insert(key.into(), Sensitive::new(value.into()));
        self
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.values
            .get(key)
            .map(|v| v.expose().trim())
            .filter(|v| !v.is_empty())
    }
}

/// A server ready to test and save: its config, and the secrets to put in its namespace.
#[derive(Debug)]
pub struct PreparedServer {
    pub name: String,
    pub config: ServerConfig,
    pub secrets: BTreeMap<String, Sensitive<String>>,
}

/// The form for `option_id` of `entry` (its preferred option when `None`).
pub fn form_for(entry: &Entry, option_id: Option<&str>) -> Result<FormSpec, FormErrors> {
    let option = choose_option(entry, option_id)?;
    let mut fields = Vec::new();
    let (transport, command, url) = match &option.transport {
        CatalogTransport::Stdio {
            command,
            args,
            env_fields,
            arg_fields,
        } => {
            fields.extend(env_fields.iter().map(|f| field(f, FieldTarget::Env)));
            fields.extend(arg_fields.iter().map(|f| field(f, FieldTarget::Arg)));
            let line = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            (TransportKind::Stdio, Some(line), None)
        }
        CatalogTransport::Shttp(remote) | CatalogTransport::Sse(remote) => {
            if remote.url_editable {
                fields.push(FormField {
                    key: "url".into(),
                    label: "Server URL".into(),
                    target: FieldTarget::Url,
                    input: InputKind::Url,
                    required: true,
                    secret: false,
                    secret_toggle: false,
                    placeholder: Some(remote.url.clone()),
                    help: Some("Change it for a regional or self-hosted endpoint.".into()),
                    default: Some(remote.url.clone()),
                });
            }
            fields.extend(
                remote
                    .header_fields
                    .iter()
                    .map(|f| field(f, FieldTarget::Header)),
            );
            let kind = match option.transport {
                CatalogTransport::Sse(_) => TransportKind::Sse,
                _ => TransportKind::Shttp,
            };
            (kind, None, Some(remote.url.clone()))
        }
    };
    match &option.auth {
        CatalogAuth::ApiKey { credential, .. } | CatalogAuth::Bearer { credential } => {
            fields.push(FormField {
                key: credential.secret_name.clone(),
                label: credential.label.clone(),
                target: FieldTarget::Credential,
                input: InputKind::Password,
                required: !credential.optional,
                secret: true,
                secret_toggle: false,
                placeholder: credential.placeholder.clone(),
                help: Some(credential.help.clone()),
                default: None,
            });
        }
        CatalogAuth::Oauth2 { oauth } if oauth.registration == Registration::PreRegistered => {
            fields.extend(oauth_client_fields());
        }
        CatalogAuth::Oauth2 { .. } | CatalogAuth::None => {}
    }
    Ok(FormSpec {
        entry_id: entry.id.clone(),
        option_id: option.id.clone(),
        option_label: option.label.clone(),
        transport,
        command,
        url,
        oauth: matches!(option.auth, CatalogAuth::Oauth2 { .. }),
        default_name: entry.id.clone(),
        fields,
        options: entry
            .options
            .iter()
            .map(|o| OptionSummary {
                id: o.id.clone(),
                label: o.label.clone(),
                transport: match o.transport {
                    CatalogTransport::Stdio { .. } => TransportKind::Stdio,
                    CatalogTransport::Shttp(_) => TransportKind::Shttp,
                    CatalogTransport::Sse(_) => TransportKind::Sse,
                },
            })
            .collect(),
    })
}

fn choose_option<'a>(
    entry: &'a Entry,
    option_id: Option<&str>,
) -> Result<&'a ConnectionOption, FormErrors> {
    match option_id {
        None => Ok(entry.default_option()),
        Some(id) => entry.option(id).ok_or_else(|| {
            let known: Vec<_> = entry.options.iter().map(|o| o.id.as_str()).collect();
            FormErrors::one(
                "option",
                format!(
                    "`{}` has no option `{id}`; choose one of: {}",
                    entry.id,
                    known.join(", ")
                ),
            )
        }),
    }
}

fn field(f: &Field, target: FieldTarget) -> FormField {
    let password = f.kind == FieldKind::Password;
    FormField {
        key: f.key.clone(),
        label: f.label.clone(),
        target,
        input: if password {
            InputKind::Password
        } else {
            InputKind::Text
        },
        required: f.required,
        secret: password && target != FieldTarget::Arg,
        secret_toggle: target != FieldTarget::Arg,
        placeholder: f.placeholder.clone(),
        help: f.help.clone(),
        default: f.default.clone(),
    }
}

fn oauth_client_fields() -> [FormField; 2] {
    [
        FormField {
            key: "client_id".into(),
            label: "OAuth client ID".into(),
            target: FieldTarget::OauthClientId,
            input: InputKind::Text,
            required: true,
            secret: false,
            secret_toggle: false,
            placeholder: None,
            help: Some(
                "This provider does not let apps register themselves: create an OAuth app in its \
                 developer settings with a loopback redirect URI and paste its client ID."
                    .into(),
            ),
            default: None,
        },
        FormField {
            key: "client_secret".into(),
            label: "OAuth client secret".into(),
            target: FieldTarget::OauthClientSecret,
            input: InputKind::Password,
            required: false,
            secret: true,
            secret_toggle: false,
            placeholder: None,
            help: Some("Only if the OAuth app was given a secret.".into()),
            default: None,
        },
    ]
}

/// Check a filled form and turn it into a server. `name` is the server name (already validated
/// by the caller against the store); the secrets get a fresh namespace.
pub fn build_server(
    entry: &Entry,
    spec: &FormSpec,
    input: &FormInput,
    name: &str,
) -> Result<PreparedServer, FormErrors> {
    let option = choose_option(entry, Some(&spec.option_id))?;
    let mut errors = Vec::new();
    for key in input.values.keys() {
        if !spec.fields.iter().any(|f| &f.key == key) {
            let known: Vec<_> = spec.fields.iter().map(|f| f.key.as_str()).collect();
            errors.push(FieldError {
                field: key.clone(),
                message: if known.is_empty() {
                    "this option has no fields".into()
                } else {
                    format!("unknown field; this option has: {}", known.join(", "))
                },
            });
        }
    }
    let mut config = match (&option.transport, &spec.url) {
        (CatalogTransport::Stdio { command, args, .. }, _) => {
            ServerConfig::stdio(command.clone(), args.clone())
        }
        (_, url) => ServerConfig::remote(spec.transport, url.clone().unwrap_or_default()),
    };
    let mut secrets = BTreeMap::new();
    let mut client_id = None;
    let mut client_secret = None;
    for f in &spec.fields {
        let value = input.get(&f.key).or(f.default.as_deref());
        let Some(value) = value else {
            if f.required {
                errors.push(FieldError {
                    field: f.key.clone(),
                    message: format!("{} is required", f.label),
                });
            }
            continue;
        };
        let as_secret = if f.secret_toggle {
            input
                .store_as_secret
                .get(&f.key)
                .copied()
                .unwrap_or(f.secret)
        } else {
            f.secret
        };
        let stored = |secrets: &mut BTreeMap<String, Sensitive<String>>| {
            if as_secret {
                secrets.insert(f.key.clone(), Sensitive::new(value.to_string()));
                ConfigValue::Secret(SecretRef::new(&f.key))
            } else {
                ConfigValue::Plain(value.to_string())
            }
        };
        match f.target {
            FieldTarget::Env => {
                let v = stored(&mut secrets);
                config.env.insert(f.key.clone(), v);
            }
            FieldTarget::Header => {
                if value.contains(['\r', '\n']) {
                    errors.push(FieldError {
                        field: f.key.clone(),
                        message: "a header value cannot contain line breaks".into(),
                    });
                    continue;
                }
                let v = stored(&mut secrets);
                config.headers.insert(f.key.clone(), v);
            }
            FieldTarget::Arg => config
                .args
                .extend(value.split_whitespace().map(str::to_string)),
            FieldTarget::Url => match validate_remote_url(value) {
                Ok(_) => config.url = Some(value.to_string()),
                Err(message) => errors.push(FieldError {
                    field: f.key.clone(),
                    message,
                }),
            },
            FieldTarget::Credential => {
                secrets.insert(f.key.clone(), Sensitive::new(value.to_string()));
                config.auth = credential_auth(&option.auth, &f.key);
            }
            FieldTarget::OauthClientId => client_id = Some(value.to_string()),
            FieldTarget::OauthClientSecret => {
                secrets.insert(f.key.clone(), Sensitive::new(value.to_string()));
                client_secret = Some(SecretRef::new(&f.key));
            }
        }
    }
    if let CatalogAuth::Oauth2 { oauth } = &option.auth {
        config.auth = Auth::Oauth2(oauth_settings(oauth, client_id, client_secret));
    }
    if !errors.is_empty() {
        return Err(FormErrors { errors });
    }
    config.source = Some(Source {
        catalog: entry.id.clone(),
        option: option.id.clone(),
    });
    config.secret_namespace = Some(new_secret_namespace());
    Ok(PreparedServer {
        name: name.to_string(),
        config,
        secrets,
    })
}

fn credential_auth(auth: &CatalogAuth, secret_name: &str) -> Auth {
    match auth {
        CatalogAuth::ApiKey { header, .. } => Auth::ApiKey {
            header: header.clone(),
            key: SecretRef::new(secret_name),
        },
        _ => Auth::Bearer {
            token: SecretRef::new(secret_name),
        },
    }
}

fn oauth_settings(
    oauth: &CatalogOAuth,
    client_id: Option<String>,
    client_secret: Option<SecretRef>,
) -> OAuthSettings {
    OAuthSettings {
        client_id,
        client_secret,
        scopes: oauth.scopes.clone(),
        client_auth: oauth.client_auth,
        authorization_url: oauth.authorization_url.clone(),
        token_url: oauth.token_url.clone(),
        callback_port: None,
    }
}

/// A fresh, random secret namespace for a new server.
pub fn new_secret_namespace() -> String {
    format!("{:016x}", rand::random::<u64>())
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
        Some(ConfigValue::Secret(_)) => FieldState::SecretRef,
    };
    let fixed_args = spec
        .command
        .as_deref()
        .map(|c| c.split(' ').count().saturating_sub(1))
        .unwrap_or(0);
    let mut extra_args = server.args.iter().skip(fixed_args).cloned();
    spec.fields
        .iter()
        .map(|f| {
            let state = match f.target {
                FieldTarget::Env => from_value(server.env.get(&f.key)),
                FieldTarget::Header => from_value(server.headers.get(&f.key)),
                FieldTarget::Arg => extra_args
                    .next()
                    .map_or(FieldState::Empty, FieldState::Plain),
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
