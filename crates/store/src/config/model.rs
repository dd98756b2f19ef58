//! The server model: one installed MCP server as it is stored in `mcp_config.json`.
//!
//! Secret values never appear here; fields that hold one carry a [`SecretRef`] naming the secret
//! inside the server's own namespace ([`ServerConfig::secret_namespace`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::tools::ToolPolicy;
use crate::secrets::SecretKey;

/// The pattern every server name must match: `^[A-Za-z0-9_-]{1,64}$`.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!(
            "server name `{name}` must be 1 to 64 characters long"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "server name `{name}` contains `{bad}`; use only letters, digits, `_` and `-`"
        ));
    }
    if name.starts_with('-') {
        return Err(format!(
            "server name `{name}` starts with `-`, which commands would read as an option; start it with a letter or digit"
        ));
    }
    Ok(())
}

/// How Plugboard talks to a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// A local process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// The legacy HTTP+SSE transport (protocol 2024-11-05).
    Sse,
    /// Streamable HTTP (protocol 2025-03-26 and later).
    Shttp,
    /// A URL whose transport is found out by trying streamable HTTP, then SSE.
    Auto,
}

impl TransportKind {
    pub fn is_remote(self) -> bool {
        !matches!(self, TransportKind::Stdio)
    }

    pub fn label(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Sse => "SSE",
            TransportKind::Shttp => "streamable HTTP",
            TransportKind::Auto => "HTTP (auto-detect)",
        }
    }
}

/// A pointer to a secret in the server's namespace: `{"secret": "NAME"}` in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    pub secret: String,
}

impl SecretRef {
    pub fn new(name: impl Into<String>) -> Self {
        SecretRef {
            secret: name.into(),
        }
    }
}

/// The value of an env variable or header: plain text, a reference to a secret, or text
/// that names variables of the environment Plugboard runs in (`${env:NAME}`, kept from another
/// client's file on import and filled in when the server starts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConfigValue {
    Plain(String),
    Secret(SecretRef),
    FromEnv(EnvTemplate),
}

/// Text with `${env:NAME}` references, serialized as `{"from_env": "Bearer ${env:TOKEN}"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvTemplate {
    pub from_env: String,
}

/// The start of an environment reference: `${env:NAME}`.
pub const ENV_REF_OPEN: &str = "${env:";

impl EnvTemplate {
    /// The variables the text names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let text = self.from_env.as_str();
        text.match_indices(ENV_REF_OPEN).filter_map(move |(at, _)| {
            let rest = &text[at + ENV_REF_OPEN.len()..];
            let end = rest.find('}')?;
            Some(&rest[..end]).filter(|n| !n.is_empty())
        })
    }

    /// The text with each reference replaced by `lookup(NAME)`; the first name it cannot fill
    /// is the error.
    pub fn fill(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = self.from_env.as_str();
        while let Some(at) = rest.find(ENV_REF_OPEN) {
            let after = &rest[at + ENV_REF_OPEN.len()..];
            let Some(end) = after.find('}') else { break };
            out.push_str(&rest[..at]);
            let name = &after[..end];
            out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

impl ConfigValue {
    pub fn secret_name(&self) -> Option<&str> {
        match self {
            ConfigValue::Secret(r) => Some(&r.secret),
            ConfigValue::Plain(_) | ConfigValue::FromEnv(_) => None,
        }
    }

    /// How the value reads in a listing: plain text as it is, a template as its text; `None`
    /// for a secret.
    pub fn shown(&self) -> Option<&str> {
        match self {
            ConfigValue::Plain(text) => Some(text),
            ConfigValue::FromEnv(t) => Some(&t.from_env),
            ConfigValue::Secret(_) => None,
        }
    }
}

/// How the client authenticates to a remote server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Auth {
    #[default]
    None,
    /// The key is sent verbatim in `header`.
    ApiKey { header: String, key: SecretRef },
    /// `Authorization: Bearer <token>`.
    Bearer { token: SecretRef },
    /// `Authorization: Basic base64(username:password)`.
    Basic {
        username: String,
        password: SecretRef,
    },
    /// A single custom header whose value is secret.
    Header { name: String, value: SecretRef },
    /// OAuth 2.1 as the MCP authorization spec describes; tokens live in the secret store.
    Oauth2(OAuthSettings),
}

impl Auth {
    /// The secret names this auth mode refers to.
    pub fn secret_names(&self) -> Vec<&str> {
        match self {
            Auth::None => vec![],
            Auth::ApiKey { key, .. } => vec![&key.secret],
            Auth::Bearer { token } => vec![&token.secret],
            Auth::Basic { password, .. } => vec![&password.secret],
            Auth::Header { value, .. } => vec![&value.secret],
            Auth::Oauth2(o) => o
                .client_secret
                .iter()
                .chain(o.private_key.iter())
                .chain(o.grant.secrets())
                .map(|r| r.secret.as_str())
                .collect(),
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Auth::None => "none",
            Auth::ApiKey { .. } => "API key",
            Auth::Bearer { .. } => "bearer token",
            Auth::Basic { .. } => "basic",
            Auth::Header { .. } => "custom header",
            Auth::Oauth2(_) => "OAuth",
        }
    }
}

/// How the token endpoint authenticates the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuthMethod {
    #[default]
    None,
    ClientSecretBasic,
    ClientSecretPost,
}

/// OAuth settings of one server. Tokens are not here: they are in the secret store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<SecretRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(default)]
    pub client_auth: ClientAuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// A fixed loopback port for the redirect URI (pre-registered clients need a stable one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// How the tokens are obtained: a user's sign-in unless set.
    #[serde(default, skip_serializing_if = "OAuthGrant::is_sign_in")]
    pub grant: OAuthGrant,
    /// The client's private key (PKCS#8 PEM, P-256): the client credentials grant then
    /// authenticates with a signed assertion (`private_key_jwt`, ES256) instead of a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<SecretRef>,
}

/// How a server's OAuth tokens are obtained.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OAuthGrant {
    /// The user signs in in the browser (authorization code with PKCE).
    #[default]
    AuthorizationCode,
    /// The client itself, with its secret or its private key: no user (a service account).
    ClientCredentials,
    /// Enterprise-managed authorization: the user's ID token from the organisation's identity
    /// provider is exchanged there for an identity assertion grant, which the server's
    /// authorization server takes instead of a sign-in.
    IdentityAssertion {
        /// The identity provider's token endpoint.
        idp_token_endpoint: String,
        /// This client at the identity provider.
        idp_client_id: String,
        /// This client's secret at the identity provider (sent with `client_secret_basic`), in
        /// the secret store; none for a public client there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idp_client_secret: Option<SecretRef>,
        /// The user's ID token, in the secret store.
        id_token: SecretRef,
    },
}

impl OAuthGrant {
    pub fn is_sign_in(&self) -> bool {
        matches!(self, OAuthGrant::AuthorizationCode)
    }

    /// The secrets this grant refers to.
    pub fn secrets(&self) -> Vec<&SecretRef> {
        match self {
            OAuthGrant::IdentityAssertion {
                id_token,
                idp_client_secret,
                ..
            } => std::iter::once(id_token)
                .chain(idp_client_secret.iter())
                .collect(),
            _ => vec![],
        }
    }
}

/// Where a server came from, when it was installed from the catalog, a registry or a bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The curated catalog entry (empty for a registry server).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub catalog: String,
    pub option: String,
    /// The registry version it was installed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistryOrigin>,
    /// The MCPB bundle it runs from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<BundleOrigin>,
    /// What the install form was filled with, field by field (secret fields as references to
    /// this server's secrets), so an update can fill the new version's form the same way.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, ConfigValue>,
}

/// An MCPB bundle a server runs from: unpacked in `dir` (inside the config directory's
/// `bundles/`, removed with the server).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleOrigin {
    /// The manifest's name and version.
    pub name: String,
    pub version: String,
    /// SHA-256 of the bundle file.
    pub sha256: String,
    pub dir: String,
    /// The local file it was installed from, if it was not a registry package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A server installed from an MCP registry: which registry, name and version, and the
/// dependency pin its launch carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryOrigin {
    pub url: String,
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<DependencyPin>,
}

/// Dependencies resolved as of a date: `uv --exclude-newer DATE`, `npm --before DATE`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyPin {
    /// `uv` or `npm`.
    pub tool: String,
    pub flag: String,
    pub date: String,
}

/// A command that prints a remote server's headers as a JSON object of strings on stdout
/// (`{"Authorization": "Bearer …"}`). It runs without a shell, with a small environment that
/// carries no credentials, before the first request, again once `ttl` seconds have passed, and
/// again after a 401 or 403.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadersHelper {
    /// The program: an absolute path, or a name found on `PATH`.
    pub command: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Seconds its headers are used before it runs again (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

impl HeadersHelper {
    /// The longest a helper's headers are kept, and the default.
    pub const MAX_TTL: u64 = 86_400;
    pub const DEFAULT_TTL: u64 = 300;

    pub fn validate(&self) -> Result<(), String> {
        let command = self.command.trim();
        if command.is_empty() {
            return Err("a headers helper needs a command".into());
        }
        if command.starts_with('-') {
            return Err(format!(
                "the headers helper `{command}` starts with `-`; give the program's path"
            ));
        }
        if command.contains('/') && !std::path::Path::new(command).is_absolute() {
            return Err(format!(
                "the headers helper `{command}` is a relative path; give an absolute one (or a \
                 program name found on PATH)"
            ));
        }
        match self.ttl {
            Some(0) => Err("the headers helper's ttl must be at least 1 second".into()),
            Some(t) if t > Self::MAX_TTL => Err(format!(
                "the headers helper's ttl is at most {} seconds (a day)",
                Self::MAX_TTL
            )),
            _ => Ok(()),
        }
    }

    /// How long its headers are used before it runs again.
    pub fn ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.ttl.unwrap_or(Self::DEFAULT_TTL))
    }
}

/// A local process that serves a remote-transport server on this machine (a registry package
/// whose transport is streamable HTTP or SSE on loopback): Plugboard starts it before
/// connecting to `url` and stops its process group afterwards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalLaunch {
    pub command: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, ConfigValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// The secrets an argument refers to with `${secret:NAME}` (replaced by the secret's value, in
/// memory, when the process starts).
pub fn arg_secret_names(arg: &str) -> impl Iterator<Item = &str> {
    arg.match_indices(SECRET_ARG_OPEN)
        .filter_map(move |(at, _)| {
            let rest = &arg[at + SECRET_ARG_OPEN.len()..];
            let end = rest.find('}')?;
            let name = &rest[..end];
            (!name.is_empty()).then_some(name)
        })
}

/// The start of a secret reference inside an argument: `${secret:NAME}`.
pub const SECRET_ARG_OPEN: &str = "${secret:";

/// `${secret:NAME}`.
pub fn secret_arg(name: &str) -> String {
    format!("{SECRET_ARG_OPEN}{name}}}")
}

fn default_true() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

/// One installed server. Unknown fields are kept in `extra` and written back unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerConfig {
    #[serde(rename = "type")]
    pub transport: TransportKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, ConfigValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, ConfigValue>,
    /// Remote servers: a command the user trusts that prints headers to send (a corporate
    /// sign-in tool minting short-lived tokens); its output is never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers_helper: Option<HeadersHelper>,
    #[serde(default, skip_serializing_if = "is_auth_none")]
    pub auth: Auth,
    /// Send credentials over plain `http://` to a host that is not this machine (anyone on the
    /// way can read them). Off unless the user said so for this server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_insecure_http: bool,
    /// Put secrets on the server's command line, where every local user can read them
    /// (`/proc/PID/cmdline`) and runners log them. Off unless the user said so for this server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_secret_args: bool,
    /// Seconds to allow for a whole test (connect, handshake, listing, probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Pass terminal, bidi and tag characters in tool results through `run` and the gateway
    /// (they are taken out otherwise). Off unless the user said so for this server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_control_characters: bool,
    /// What a stdio server may touch (`plugboard sandbox`). Absent: not sandboxed (servers
    /// saved before the sandbox existed run as they did until the user turns it on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<plugboard_sandbox::Settings>,
    /// Absent means enabled.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// For a remote-transport server that Plugboard runs locally: how to start it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<LocalLaunch>,
    /// The namespace of this server's secrets. Stable across renames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_namespace: Option<String>,
    /// Which of its tools other clients see (`plugboard tools`).
    #[serde(default, skip_serializing_if = "ToolPolicy::is_empty")]
    pub tools: ToolPolicy,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_auth_none(auth: &Auth) -> bool {
    matches!(auth, Auth::None)
}

impl ServerConfig {
    /// A stdio server with no env.
    pub fn stdio(command: impl Into<String>, args: Vec<String>) -> Self {
        ServerConfig {
            command: Some(command.into()),
            args,
            ..Self::empty(TransportKind::Stdio)
        }
    }

    /// A remote server at `url`.
    pub fn remote(transport: TransportKind, url: impl Into<String>) -> Self {
        ServerConfig {
            url: Some(url.into()),
            ..Self::empty(transport)
        }
    }

    fn empty(transport: TransportKind) -> Self {
        ServerConfig {
            transport,
            command: None,
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            headers_helper: None,
            auth: Auth::None,
            allow_insecure_http: false,
            allow_secret_args: false,
            timeout: None,
            keep_control_characters: false,
            sandbox: None,
            enabled: true,
            source: None,
            launch: None,
            secret_namespace: None,
            tools: ToolPolicy::default(),
            extra: Map::new(),
        }
    }

    /// The sandbox a newly added server starts with: on for a server started on this machine,
    /// except a container runtime's client (the container is its isolation) and Plugboard's
    /// own launcher (the server it starts gets its own sandbox); none for a remote server.
    pub fn new_sandbox(&self) -> Option<plugboard_sandbox::Settings> {
        let (command, args) = match (&self.transport, &self.launch) {
            (TransportKind::Stdio, _) => (self.command.as_deref()?, &self.args),
            (_, Some(launch)) => (launch.command.as_str(), &launch.args),
            _ => return None,
        };
        let unboxed = super::argv::is_container_runtime(command)
            || super::argv::is_plugboard_launcher(command, args);
        (!unboxed).then(plugboard_sandbox::Settings::on)
    }

    /// [`Self::new_sandbox`], but kept off (and saying so) when the user asked to run the server
    /// without one.
    pub fn new_sandbox_unless(&self, refused: bool) -> Option<plugboard_sandbox::Settings> {
        match self.new_sandbox() {
            Some(_) if refused => Some(plugboard_sandbox::Settings::default()),
            planned => planned,
        }
    }

    /// The namespace this server's secret references resolve in. Hand-written servers without
    /// one use their name (and get a stable namespace on their first rename).
    pub fn secret_namespace<'a>(&'a self, name: &'a str) -> &'a str {
        self.secret_namespace.as_deref().unwrap_or(name)
    }

    /// The non-empty plain (not keyring) env and header values: users paste tokens there, so
    /// they are redacted like secrets.
    pub fn plain_values(&self) -> Vec<String> {
        self.env
            .values()
            .chain(self.headers.values())
            .chain(self.launch.iter().flat_map(|l| l.env.values()))
            .filter_map(|v| match v {
                ConfigValue::Plain(text) if !text.is_empty() => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every secret this server refers to (env, headers, auth), as keys in its namespace.
    pub fn secret_keys(&self, name: &str) -> Vec<SecretKey> {
        let namespace = self.secret_namespace(name);
        let launch = self.launch.as_ref();
        let mut names: Vec<&str> = self
            .env
            .values()
            .chain(self.headers.values())
            .chain(launch.into_iter().flat_map(|l| l.env.values()))
            .filter_map(ConfigValue::secret_name)
            .chain(self.auth.secret_names())
            .chain(
                self.args
                    .iter()
                    .chain(launch.into_iter().flat_map(|l| l.args.iter()))
                    .chain(self.url.iter())
                    .flat_map(|a| arg_secret_names(a)),
            )
            .chain(
                self.source
                    .iter()
                    .flat_map(|s| s.inputs.values())
                    .filter_map(ConfigValue::secret_name),
            )
            .collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .map(|n| SecretKey::new(namespace, n))
            .collect()
    }

    /// Check that the fields this transport needs are present and well formed.
    pub fn validate(&self) -> Result<(), String> {
        match self.transport {
            TransportKind::Stdio => {
                match self.command.as_deref() {
                    Some(c) if !c.trim().is_empty() => {}
                    _ => return Err("a stdio server needs a command".into()),
                }
                if self.headers_helper.is_some() {
                    return Err("a stdio server has no headers helper (it has no headers)".into());
                }
                if self.url.is_some() {
                    return Err("a stdio server has no url".into());
                }
                for key in self.env.keys() {
                    validate_env_key(key)?;
                }
            }
            _ => {
                let url = self.url.as_deref().ok_or("a remote server needs a url")?;
                validate_remote_url(url)?;
                if self.command.is_some() {
                    return Err("a remote server has no command".into());
                }
                if let Some(helper) = &self.headers_helper {
                    helper.validate()?;
                }
                for key in self.headers.keys() {
                    validate_header_name(key)?;
                }
                if let Some(launch) = &self.launch {
                    if launch.command.trim().is_empty() {
                        return Err("a locally started server needs a command".into());
                    }
                    for key in launch.env.keys() {
                        validate_env_key(key)?;
                    }
                    let host = url::Url::parse(url)
                        .ok()
                        .and_then(|u| u.host_str().map(str::to_owned))
                        .unwrap_or_default();
                    if !is_loopback_host(&host) {
                        return Err(format!(
                            "a locally started server must be reached on this machine \
                             (127.0.0.1, localhost), not `{host}`"
                        ));
                    }
                }
            }
        }
        if self.timeout == Some(0) {
            return Err("timeout must be at least 1 second".into());
        }
        Ok(())
    }
}

/// An env variable name: `^[A-Za-z_][A-Za-z0-9_.-]*$` (`-` and `.` too: registry servers
/// read names such as `X-API-Key`, which the environment carries fine).
pub fn validate_env_key(key: &str) -> Result<(), String> {
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) {
        Ok(())
    } else {
        Err(format!(
            "`{key}` is not a valid environment variable name (letters, digits, `_`, `-` and `.`, \
             starting with a letter or `_`)"
        ))
    }
}

/// Environment variables that change what a server runs rather than how it is configured: the
/// dynamic loader's, the language runtimes' preload and module paths, the shell's start-up file,
/// `PATH`, and the package indexes its runner fetches it from.
const LAUNCH_ENV: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "BASH_ENV",
    "ENV",
    "GIT_SSH_COMMAND",
];
const LAUNCH_ENV_PREFIXES: &[&str] = &["npm_config_", "NPM_CONFIG_", "UV_", "PIP_", "BUN_"];

/// Whether setting `key` in a server's environment changes what it runs (see [`LAUNCH_ENV`]):
/// such a variable is judged like a new command.
pub fn is_launch_env(key: &str) -> bool {
    LAUNCH_ENV.contains(&key) || LAUNCH_ENV_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// An HTTP header name (RFC 9110 token characters).
pub fn validate_header_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!("`{name}` is not a valid HTTP header name"))
    }
}

/// `127.0.0.1`, `localhost`, `[::1]` and the like.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A server URL: absolute `http` or `https` with a host.
pub fn validate_remote_url(raw: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(raw).map_err(|e| format!("`{raw}` is not a valid URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{raw}` must use http:// or https://"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{raw}` has no host"));
    }
    // A secret may be in the path, the query or the user part (`${secret:NAME}`, substituted
    // when the server is reached), never in the host: where a server is must be plain to see.
    let after_scheme = &raw[raw.find("//").map_or(0, |at| at + 2)..];
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.contains(SECRET_ARG_OPEN) {
        return Err(format!(
            "`{raw}` takes its host from a secret; the host must be plain"
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_pattern() {
        assert!(validate_name("github").is_ok());
        assert!(validate_name("my_server-2").is_ok());
        assert!(validate_name("").is_err());
        assert!(validate_name(&"a".repeat(65)).is_err());
        assert!(validate_name("has space").unwrap_err().contains("` `"));
        assert!(validate_name("dot.ted").is_err());
    }

    #[test]
    fn unknown_fields_round_trip() {
        let json = serde_json::json!({
            "type": "stdio", "command": "npx", "args": ["-y", "x"],
            "env": {"A": "plain", "B": {"secret": "B"}},
            "future_field": {"nested": [1, 2]},
            "enabled": false
        });
        let server: ServerConfig = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(server.env["B"].secret_name(), Some("B"));
        assert!(!server.enabled);
        assert_eq!(serde_json::to_value(&server).unwrap(), json);
    }

    #[test]
    fn auth_serializes_with_a_type_tag() {
        let auth = Auth::ApiKey {
            header: "X-API-Key".into(),
            key: SecretRef::new("KEY"),
        };
        let v = serde_json::to_value(&auth).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "api_key", "header": "X-API-Key", "key": {"secret": "KEY"}})
        );
    }

    #[test]
    fn secret_keys_are_namespaced_and_deduplicated() {
        let mut server = ServerConfig::remote(TransportKind::Shttp, "https://example.com/mcp");
        server.secret_namespace = Some("ns1".into());
        server
            .headers
            .insert("X-Key".into(), ConfigValue::Secret(SecretRef::new("TOKEN")));
        server.auth = Auth::Bearer {
            token: SecretRef::new("TOKEN"),
        };
        let keys = server.secret_keys("name");
        assert_eq!(keys, vec![SecretKey::new("ns1", "TOKEN")]);
    }

    #[test]
    fn validation_names_the_problem() {
        let server = ServerConfig::remote(TransportKind::Shttp, "ftp://example.com");
        assert!(server.validate().unwrap_err().contains("http"));
        let server = ServerConfig::stdio(" ", vec![]);
        assert!(server.validate().unwrap_err().contains("command"));
        assert!(validate_env_key("1ABC").is_err());
        assert!(validate_header_name("Bad Header").is_err());
    }
}
