//! A custom server (one no catalog entry or registry row describes) from what the user
//! entered, checked and turned into a server config with the secrets to write and an error per
//! field at fault: the launch (command or URL), what a changed server keeps of itself, the
//! working folder and timeout, environment variables and headers (secret or plain; a secret
//! left empty keeps its stored value), and the auth mode. The app's custom editor builds its
//! servers here.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{
    Auth, ClientAuthMethod, ConfigValue, HeadersHelper, OAuthGrant, OAuthSettings, SecretRef,
    ServerConfig, TransportKind, validate_env_key, validate_header_name, validate_remote_url,
};
use crate::credentials::{self, OAUTH_CLIENT_SECRET};
use crate::form::{FieldError, new_secret_namespace};
use crate::secrets::Sensitive;

/// What the user entered for a custom server. Secret values left `None` keep what the server
/// being changed had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomServer {
    pub transport: TransportKind,
    pub command: String,
    /// Passed as they are.
    pub args: Vec<String>,
    pub cwd: String,
    pub url: String,
    pub env: Vec<KeyValue>,
    pub headers: Vec<KeyValue>,
    pub auth: CustomAuth,
    /// Remote only: a command that prints headers to send.
    pub headers_helper: Option<HeadersHelper>,
    /// Seconds (1 to 3600); `None` is the default.
    pub timeout: Option<u32>,
}

/// An environment variable or a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: Option<String>,
    /// Kept in the secret store.
    pub secret: bool,
}

/// How a remote custom server authenticates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CustomAuth {
    #[default]
    None,
    Bearer {
        token: Option<String>,
    },
    ApiKey {
        header: String,
        key: Option<String>,
    },
    Basic {
        username: String,
        password: Option<String>,
    },
    /// OAuth: without a client ID the server's dynamic registration is used; `Some("")` as
    /// the client secret (or the private key) removes the stored one.
    Oauth2 {
        client_id: Option<String>,
        client_secret: Option<String>,
        scopes: Vec<String>,
        authorization_url: Option<String>,
        token_url: Option<String>,
        /// How tokens are obtained; `None` keeps what the server had (a sign-in when new).
        grant: Option<CustomGrant>,
        /// Client credentials: a PKCS#8 P-256 private key (PEM) to sign assertions with.
        private_key: Option<String>,
    },
}

/// How an OAuth server's tokens are obtained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CustomGrant {
    /// A user signs in in the browser.
    SignIn,
    /// The client alone, with its secret or private key.
    ClientCredentials,
    /// Enterprise-managed: the user's ID token exchanged at the identity provider; `id_token`
    /// `None` keeps the stored one. `idp_client_secret`, the client's secret at the identity
    /// provider: `None` keeps the stored one (if any), `Some("")` removes it (a public client
    /// there).
    IdentityAssertion {
        idp_token_endpoint: String,
        idp_client_id: String,
        idp_client_secret: Option<String>,
        id_token: Option<String>,
    },
}

/// The secret names of the grants without a user.
pub const OAUTH_PRIVATE_KEY: &str = "OAUTH_PRIVATE_KEY";
pub const OAUTH_ID_TOKEN: &str = "OAUTH_ID_TOKEN";
pub const OAUTH_IDP_CLIENT_SECRET: &str = "OAUTH_IDP_CLIENT_SECRET";

pub fn fe(field: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

/// Build the config (and the secrets to write) from the editor's model, collecting field
/// errors. `before` is the server being changed, saved under `old_name`.
pub fn build(
    input: &CustomServer,
    before: Option<&ServerConfig>,
    old_name: &str,
    errors: &mut Vec<FieldError>,
) -> (ServerConfig, BTreeMap<String, Sensitive<String>>) {
    let mut draft = Draft {
        before,
        errors,
        secrets: BTreeMap::new(),
        secret_names: BTreeSet::new(),
    };
    let mut config = draft.launch(input);
    match before {
        Some(before) => {
            config.enabled = before.enabled;
            config.source = before.source.clone();
            config.extra = before.extra.clone();
            config.tools = before.tools.clone();
            config.secret_namespace = Some(before.secret_namespace(old_name).to_string());
            config.sandbox = before.sandbox.clone();
        }
        None => {
            config.secret_namespace = Some(new_secret_namespace());
            config.sandbox = config.new_sandbox();
        }
    }
    draft.place_and_time(input, &mut config);
    draft.key_values(input, &mut config);
    let remote = input.transport != TransportKind::Stdio;
    if let Some(helper) = &input.headers_helper {
        if !remote {
            draft.error(
                "headers_helper",
                "only a remote server has headers; a stdio server gets its credentials through \
                 environment variables",
            );
        } else if let Err(m) = helper.validate() {
            draft.error("headers_helper", m);
        } else {
            config.headers_helper = Some(helper.clone());
        }
    }
    if !matches!(input.auth, CustomAuth::None) && !remote {
        draft.error(
            "auth",
            "authentication applies to remote servers; a stdio server gets its credentials \
             through environment variables",
        );
    } else {
        config.auth = draft.auth(&input.auth);
    }
    if draft.errors.is_empty()
        && let Err(m) = config.validate()
    {
        draft.error("server", m);
    }
    (config, draft.secrets)
}

/// A config being built: the server it replaces, the errors found, the secrets to write and
/// the names taken by secrets.
struct Draft<'a> {
    before: Option<&'a ServerConfig>,
    errors: &'a mut Vec<FieldError>,
    secrets: BTreeMap<String, Sensitive<String>>,
    secret_names: BTreeSet<String>,
}

impl Draft<'_> {
    fn error(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(fe(field, message));
    }

    /// The command and arguments of a stdio server, or the URL of a remote one.
    fn launch(&mut self, input: &CustomServer) -> ServerConfig {
        match input.transport {
            TransportKind::Stdio => {
                let command = input.command.trim();
                if command.is_empty() {
                    self.error("command", "enter the command that starts the server");
                }
                ServerConfig::stdio(command, input.args.clone())
            }
            _ => {
                let url = input.url.trim();
                if url.is_empty() {
                    self.error("url", "enter the server URL");
                } else if let Err(m) = validate_remote_url(url) {
                    self.error("url", m);
                }
                ServerConfig::remote(input.transport, url)
            }
        }
    }

    /// The working folder (stdio only) and the timeout (1 to 3600 seconds).
    fn place_and_time(&mut self, input: &CustomServer, config: &mut ServerConfig) {
        let cwd = input.cwd.trim();
        if !cwd.is_empty() {
            if input.transport != TransportKind::Stdio {
                self.error("cwd", "only a stdio server has a working directory");
            }
            config.cwd = Some(cwd.to_string());
        }
        config.timeout = match input.timeout {
            Some(0) => {
                self.error("timeout", "the timeout must be at least 1 second");
                None
            }
            Some(t) if t > 3600 => {
                self.error("timeout", "the timeout can be at most 3600 seconds");
                None
            }
            t => t.map(u64::from),
        };
    }

    /// Environment variables (stdio) and headers (remote), each checked and kept as a secret
    /// reference or a plain value.
    fn key_values(&mut self, input: &CustomServer, config: &mut ServerConfig) {
        let remote = input.transport != TransportKind::Stdio;
        if remote && input.env.iter().any(|kv| !kv.key.trim().is_empty()) {
            self.error(
                "env",
                "environment variables are for stdio servers; use headers",
            );
        }
        if !remote && input.headers.iter().any(|kv| !kv.key.trim().is_empty()) {
            self.error(
                "headers",
                "headers are for remote servers; use environment variables",
            );
        }
        for (list, field, is_env) in [
            (&input.env, "env", true),
            (&input.headers, "headers", false),
        ] {
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
                    let message = if key.is_empty() {
                        "enter a name".into()
                    } else {
                        m
                    };
                    self.error(&format!("{path}.key"), message);
                    continue;
                }
                let folded = if is_env {
                    key.to_string()
                } else {
                    key.to_ascii_lowercase()
                };
                if !seen.insert(folded) {
                    self.error(&format!("{path}.key"), format!("`{key}` is listed twice"));
                    continue;
                }
                let Some(value) = self.value(kv, key, &path, is_env) else {
                    continue;
                };
                if is_env {
                    config.env.insert(key.to_string(), value);
                } else {
                    config.headers.insert(key.to_string(), value);
                }
            }
        }
    }

    /// One variable's or header's value: entered (a secret goes to the secret store), or, left
    /// empty, the one it had.
    fn value(&mut self, kv: &KeyValue, key: &str, path: &str, is_env: bool) -> Option<ConfigValue> {
        let Some(v) = &kv.value else {
            let before = self.before.and_then(|b| {
                if is_env {
                    b.env.get(key)
                } else {
                    b.headers.get(key)
                }
            });
            return match before {
                Some(existing) => {
                    if let ConfigValue::Secret(r) = existing {
                        self.secret_names.insert(r.secret.clone());
                    }
                    Some(existing.clone())
                }
                None => {
                    self.error(&format!("{path}.value"), "enter a value");
                    None
                }
            };
        };
        if !is_env && v.contains(['\r', '\n']) {
            self.error(
                &format!("{path}.value"),
                "a header value cannot contain line breaks",
            );
            return None;
        }
        if !kv.secret {
            return Some(ConfigValue::Plain(v.clone()));
        }
        if v.is_empty() {
            self.error(&format!("{path}.value"), "enter the secret value");
            return None;
        }
        if !self.secret_names.insert(key.to_string()) {
            self.error(
                &format!("{path}.key"),
                format!("another secret is already named `{key}`"),
            );
            return None;
        }
        self.secrets
            .insert(key.to_string(), Sensitive::new(v.clone()));
        Some(ConfigValue::Secret(SecretRef::new(key)))
    }

    /// A credential of the auth mode: entered (stored under `preferred`, or a name not taken
    /// yet), or, left empty, the one the server had.
    fn credential(
        &mut self,
        value: &Option<String>,
        preferred: &str,
        field: &str,
    ) -> Option<SecretRef> {
        match value {
            Some(v) if !v.trim().is_empty() => {
                if v.contains(['\r', '\n']) {
                    self.error(field, "the value cannot contain line breaks");
                    return None;
                }
                let taken = &self.secret_names;
                let name = credentials::unused_name(preferred, |n| taken.contains(n));
                self.secrets
                    .insert(name.clone(), Sensitive::new(v.trim().to_string()));
                Some(SecretRef::new(name))
            }
            _ => {
                let before = self.before.and_then(|b| match &b.auth {
                    Auth::Bearer { token: r }
                    | Auth::ApiKey { key: r, .. }
                    | Auth::Header { value: r, .. }
                    | Auth::Basic { password: r, .. } => Some(r.clone()),
                    _ => None,
                });
                if before.is_none() {
                    self.error(field, "enter the credential");
                }
                before
            }
        }
    }

    fn auth(&mut self, auth: &CustomAuth) -> Auth {
        match auth {
            CustomAuth::None => Auth::None,
            CustomAuth::Bearer { token, .. } => self
                .credential(token, credentials::BEARER_TOKEN, "auth.token")
                .map(|token| Auth::Bearer { token })
                .unwrap_or_default(),
            CustomAuth::ApiKey { header, key, .. } => {
                let header = header.trim();
                if let Err(m) = validate_header_name(header) {
                    let message = if header.is_empty() {
                        "enter the header name".into()
                    } else {
                        m
                    };
                    self.error("auth.header", message);
                }
                self.credential(key, credentials::API_KEY, "auth.key")
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
                    self.error("auth.username", "enter the user name");
                }
                self.credential(password, credentials::PASSWORD, "auth.password")
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
                grant,
                private_key,
            } => {
                let mut settings = self.oauth(
                    client_id,
                    client_secret,
                    scopes,
                    authorization_url,
                    token_url,
                );
                self.grant(&mut settings, grant.as_ref(), private_key.as_deref());
                Auth::Oauth2(settings)
            }
        }
    }

    /// OAuth settings: endpoints checked, a client secret belonging to a client ID, scopes
    /// split on spaces and commas; what was not entered is kept from before.
    fn oauth(
        &mut self,
        client_id: &Option<String>,
        client_secret: &Option<String>,
        scopes: &[String],
        authorization_url: &Option<String>,
        token_url: &Option<String>,
    ) -> OAuthSettings {
        let before = self.before.and_then(|b| match &b.auth {
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
                self.error(field, m.to_string());
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
                    self.error(
                        "auth.client_secret",
                        "a client secret belongs to a client ID: enter the client ID too",
                    );
                }
                self.secrets
                    .insert(OAUTH_CLIENT_SECRET.into(), Sensitive::new(v.to_string()));
                Some(SecretRef::new(OAUTH_CLIENT_SECRET))
            }
            None => before.and_then(|o| o.client_secret.clone()),
        };
        let scopes = scopes
            .iter()
            .flat_map(|s| s.split([' ', ',']))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        OAuthSettings {
            client_auth: match (&secret, before) {
                (None, _) => ClientAuthMethod::None,
                (Some(_), Some(b)) if b.client_auth != ClientAuthMethod::None => b.client_auth,
                (Some(_), _) => ClientAuthMethod::ClientSecretPost,
            },
            client_id,
            client_secret: secret,
            scopes,
            authorization_url,
            token_url,
            callback_port: before.and_then(|o| o.callback_port),
            // Set by [`Draft::grant`]; kept as they were until then.
            grant: before.map(|o| o.grant.clone()).unwrap_or_default(),
            private_key: before.and_then(|o| o.private_key.clone()),
        }
    }

    /// The grant of `settings` (`None`: kept), with the secrets it needs: a grant without a
    /// user needs a client ID, and client credentials a secret or a private key.
    fn grant(
        &mut self,
        settings: &mut OAuthSettings,
        grant: Option<&CustomGrant>,
        private_key: Option<&str>,
    ) {
        match private_key.map(str::trim) {
            Some("") => settings.private_key = None,
            Some(pem) => {
                if !pem.contains("-----BEGIN PRIVATE KEY-----") {
                    self.error(
                        "auth.private_key",
                        "the private key must be a PEM `-----BEGIN PRIVATE KEY-----` block \
                         (PKCS#8, P-256)",
                    );
                }
                self.secrets
                    .insert(OAUTH_PRIVATE_KEY.into(), Sensitive::new(pem.to_string()));
                settings.private_key = Some(SecretRef::new(OAUTH_PRIVATE_KEY));
            }
            None => {}
        }
        let (before_token, before_idp_secret) = match &settings.grant {
            OAuthGrant::IdentityAssertion {
                id_token,
                idp_client_secret,
                ..
            } => (Some(id_token.clone()), idp_client_secret.clone()),
            _ => (None, None),
        };
        match grant {
            None => {}
            Some(CustomGrant::SignIn) => settings.grant = OAuthGrant::AuthorizationCode,
            Some(CustomGrant::ClientCredentials) => {
                settings.grant = OAuthGrant::ClientCredentials;
            }
            Some(CustomGrant::IdentityAssertion {
                idp_token_endpoint,
                idp_client_id,
                idp_client_secret,
                id_token,
            }) => {
                let endpoint = idp_token_endpoint.trim().to_string();
                if let Err(m) = crate::oauth::validate_authorization_url(&endpoint) {
                    self.error("auth.idp_token_endpoint", m.to_string());
                }
                if idp_client_id.trim().is_empty() {
                    self.error(
                        "auth.idp_client_id",
                        "enter the client ID the identity provider knows Plugboard by",
                    );
                }
                let id_token = match id_token.as_deref().map(str::trim) {
                    Some(token) if !token.is_empty() => {
                        self.secrets
                            .insert(OAUTH_ID_TOKEN.into(), Sensitive::new(token.to_string()));
                        Some(SecretRef::new(OAUTH_ID_TOKEN))
                    }
                    _ => before_token,
                };
                let idp_client_secret = match idp_client_secret.as_deref().map(str::trim) {
                    Some("") => None,
                    Some(secret) => {
                        self.secrets.insert(
                            OAUTH_IDP_CLIENT_SECRET.into(),
                            Sensitive::new(secret.to_string()),
                        );
                        Some(SecretRef::new(OAUTH_IDP_CLIENT_SECRET))
                    }
                    None => before_idp_secret,
                };
                match id_token {
                    Some(id_token) => {
                        settings.grant = OAuthGrant::IdentityAssertion {
                            idp_token_endpoint: endpoint,
                            idp_client_id: idp_client_id.trim().to_string(),
                            idp_client_secret,
                            id_token,
                        }
                    }
                    None => self.error(
                        "auth.id_token",
                        "enter the ID token the identity provider issued to you",
                    ),
                }
            }
        }
        if settings.grant.is_sign_in() {
            return;
        }
        // Without a method chosen before, the one the authorization server prefers is taken
        // when tokens are requested (client_secret_basic unless it lists only _post).
        let chosen_before = self.before.is_some_and(
            |b| matches!(&b.auth, Auth::Oauth2(o) if o.client_auth != ClientAuthMethod::None),
        );
        if !chosen_before {
            settings.client_auth = ClientAuthMethod::None;
        }
        if settings.client_id.is_none() {
            self.error(
                "auth.client_id",
                "tokens without a sign-in need the client ID the authorization server knows \
                 Plugboard by",
            );
        }
        let has_secret = settings.client_secret.is_some();
        match settings.grant {
            OAuthGrant::ClientCredentials if !has_secret && settings.private_key.is_none() => {
                self.error(
                    "auth.client_secret",
                    "the client credentials grant needs the client's secret or private key",
                );
            }
            OAuthGrant::IdentityAssertion { .. } if !has_secret => self.error(
                "auth.client_secret",
                "the identity assertion grant needs the client's secret",
            ),
            _ => {}
        }
    }
}
