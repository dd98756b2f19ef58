//! Resolve: a stored server config plus the secret store → everything needed to reach the
//! server, right before the connection. Secret references are substituted from the server's
//! own namespace, auth becomes headers, a stdio command is found (on PATH, else on the login
//! shell's PATH), and a [`Redactor`] is built from every secret, env and header value.
//! Secret values live only inside [`Sensitive`] here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;

use crate::config::{
    Auth, ConfigValue, LaunchArg, SECRET_ARG_OPEN, SecretRef, ServerConfig, TransportKind,
};
use crate::connect::Era;
use crate::connect::env::{self, LookupError};
pub use crate::connect::target::{RemoteTarget, StdioTarget, Target};
use crate::credential_probe::CredentialProbe;
use crate::failure::{ErrorKind, Failure};
use crate::redact::Redactor;
use crate::secrets::{MemoryStore, SecretError, SecretKey, SecretStore, Sensitive};

/// The default overall time allowed for one test: generous, because the first `npx`/`uvx`
/// run of a server downloads it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The secret that holds a server's OAuth access token (written by the OAuth flow).
pub const OAUTH_ACCESS_TOKEN: &str = "oauth_access_token";

/// A server with everything resolved: what `probe::test_server` needs.
pub struct ResolvedServer {
    name: String,
    transport: TransportKind,
    target: Target,
    timeout: Duration,
    redactor: Redactor,
    probe: Option<CredentialProbe>,
    sends_credentials: bool,
    resolve_time: Duration,
    known_era: Option<Era>,
}

impl std::fmt::Debug for ResolvedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedServer")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ResolvedServer {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The configured transport (`auto` stays `auto` here).
    pub fn transport(&self) -> TransportKind {
        self.transport
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The overall deadline of a test.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Override the overall deadline (e.g. `plugboard test --timeout`).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The redactor built from this server's secret, env and header values.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The catalog's credential probe, if any.
    pub fn probe(&self) -> Option<&CredentialProbe> {
        self.probe.as_ref()
    }

    /// Whether requests carry credentials (auth mode or an `Authorization` header).
    pub fn sends_credentials(&self) -> bool {
        self.sends_credentials
    }

    /// How long resolving took.
    pub fn resolve_time(&self) -> Duration {
        self.resolve_time
    }

    /// The server's protocol era, when it is known (from its last test): the handshake then
    /// speaks it directly instead of probing.
    pub fn known_era(&self) -> Option<Era> {
        self.known_era
    }

    pub fn set_known_era(&mut self, era: Option<Era>) {
        self.known_era = era;
    }

    /// The target and the redactor, taken apart.
    pub fn into_parts(self) -> (Target, Redactor) {
        (self.target, self.redactor)
    }
}

/// The local process of a server Plugboard starts itself (its `launch`: a package serving HTTP
/// on this machine), resolved as a stdio server is: secrets substituted, command found.
pub fn resolve_launch(
    name: &str,
    server: &ServerConfig,
    secrets: &dyn SecretStore,
) -> Result<(StdioTarget, Redactor), ResolveError> {
    let launch = server
        .launch
        .as_ref()
        .ok_or_else(|| ResolveError::Invalid {
            server: name.to_owned(),
            detail: "it has no local process to start".into(),
        })?;
    let mut local = ServerConfig::stdio(launch.command.clone(), launch.args.clone());
    local.env = launch.env.clone();
    local.cwd = launch.cwd.clone();
    local.allow_secret_args = server.allow_secret_args;
    local.sandbox = server.sandbox.clone();
    local.secret_namespace = Some(server.secret_namespace(name).to_owned());
    let (target, redactor) = resolve(name, &local, secrets, None)?.into_parts();
    match target {
        Target::Stdio(stdio) => Ok((stdio, redactor)),
        Target::Remote(_) => unreachable!("a stdio config resolves to a stdio target"),
    }
}

/// Why a server could not be resolved. Each error knows its [`ErrorKind`] and a hint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    #[error("the configuration of server `{server}` is invalid: {detail}")]
    Invalid { server: String, detail: String },
    #[error("the secret `{secret}` of server `{server}` is not set")]
    MissingSecret { server: String, secret: String },
    #[error("server `{server}` takes `{variable}` from the environment, and it is not set")]
    MissingEnv { server: String, variable: String },
    #[error("cannot read the secrets of server `{server}`: {source}")]
    SecretStore {
        server: String,
        #[source]
        source: SecretError,
    },
    #[error("server `{server}` uses OAuth and has not been authorized yet")]
    NeedsOAuth { server: String },
    #[error("`{command}` was not found")]
    CommandNotFound {
        command: String,
        checked_login_shell: bool,
    },
    #[error("`{}` is not executable (permission denied)", path.display())]
    NotExecutable { command: String, path: PathBuf },
    #[error("the working directory `{}` of server `{server}` does not exist", cwd.display())]
    MissingCwd { server: String, cwd: PathBuf },
    #[error(
        "server `{server}` takes the secret `{secret}` on its command line, where every user of \
         this machine can read it; it was not started"
    )]
    SecretOnCommandLine { server: String, secret: String },
    #[error(
        "server `{server}` would send its credentials over plain http to `{host}`, where anyone \
         on the way can read them; nothing was sent"
    )]
    InsecureCredentials { server: String, host: String },
    #[error("server `{server}` has no headers: {detail}")]
    HeadersHelper {
        server: String,
        command: String,
        detail: String,
    },
}

impl ResolveError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            ResolveError::Invalid { .. }
            | ResolveError::MissingSecret { .. }
            | ResolveError::MissingEnv { .. }
            | ResolveError::SecretStore { .. }
            | ResolveError::MissingCwd { .. }
            | ResolveError::InsecureCredentials { .. }
            | ResolveError::SecretOnCommandLine { .. } => ErrorKind::Config,
            ResolveError::NeedsOAuth { .. } | ResolveError::HeadersHelper { .. } => {
                ErrorKind::Unauthorized
            }
            ResolveError::CommandNotFound { .. } | ResolveError::NotExecutable { .. } => {
                ErrorKind::Spawn
            }
        }
    }

    /// What the user should do.
    pub fn hint(&self) -> String {
        match self {
            ResolveError::Invalid { server, .. } => {
                format!("fix the server with `plugboard edit {server}` or reinstall it")
            }
            ResolveError::MissingSecret { server, secret } => format!(
                "the secret `{secret}` of server `{server}` is not set; run \
                 `plugboard edit {server} --secret-env {secret}` or reinstall the server"
            ),
            ResolveError::MissingEnv { server, variable } => format!(
                "set `{variable}` in the environment the server is started from (the app or \
                 the client that launches it), or store the value in the keyring: `plugboard \
                 edit {server} --secret-env {variable}`"
            ),
            ResolveError::SecretStore { source, .. } => match source {
                SecretError::Unavailable { fix, .. }
                | SecretError::Locked { fix, .. }
                | SecretError::File { fix, .. } => fix.clone(),
                other => format!(
                    "{other}; check that the secret store works (`plugboard secrets status`)"
                ),
            },
            ResolveError::NeedsOAuth { server } => {
                format!("the server requires OAuth sign-in: run `plugboard auth {server}`")
            }
            ResolveError::CommandNotFound {
                command,
                checked_login_shell,
            } => command_not_found_hint(command, *checked_login_shell),
            ResolveError::NotExecutable { path, .. } => format!(
                "`{}` exists but cannot be executed; make it executable (chmod +x) or give the \
                 path of the real program",
                path.display()
            ),
            ResolveError::MissingCwd { server, .. } => format!(
                "create the directory or change the server's working directory with \
                 `plugboard edit {server}`"
            ),
            ResolveError::SecretOnCommandLine { server, .. } => format!(
                "a command line is visible to every process on this machine (/proc/PID/cmdline) \
                 and runners such as npm log it. If the server can read the value from an \
                 environment variable, pass it that way (`plugboard edit {server} --secret-env \
                 VAR`) and remove the argument; only if you accept the risk, allow it with \
                 `plugboard edit {server} --allow-secret-args`"
            ),
            ResolveError::HeadersHelper {
                server, command, ..
            } => format!(
                "run `{command}` yourself: it must print a JSON object of headers and exit 0 \
                 (a sign-in it needs may have expired); change it with `plugboard edit {server} \
                 --headers-helper PATH`"
            ),
            ResolveError::InsecureCredentials { server, .. } => format!(
                "use the server's https:// address (`plugboard edit {server} --url https://…`); \
                 only if you trust every network between you and it, allow plain http with \
                 `plugboard edit {server} --allow-insecure-http`"
            ),
        }
    }

    /// The error as a classified [`Failure`].
    pub fn failure(&self) -> Failure {
        Failure::new(self.kind(), self.to_string(), self.hint())
    }
}

/// A hint for a command that is not on PATH, aware of the usual runtimes.
pub fn command_not_found_hint(command: &str, checked_login_shell: bool) -> String {
    let base = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command)
        .trim_end_matches(".exe")
        .trim_end_matches(".cmd");
    let full_path = command.contains('/') || command.contains('\\');
    let whence = if full_path {
        format!("`{command}` does not exist.")
    } else if checked_login_shell {
        format!("`{command}` was not found on PATH (also checked your login shell's PATH).")
    } else {
        format!("`{command}` was not found on PATH.")
    };
    // What provides the program, for the runtimes commands most often are.
    let install: Option<String> = match base {
        "npx" | "npm" => Some("install Node.js, which provides npx".into()),
        "node" => Some("install Node.js".into()),
        "uvx" | "uv" => Some("install uv (https://docs.astral.sh/uv/), which provides uvx".into()),
        "python" | "python3" | "pip" | "pipx" => {
            Some("install Python 3 (on many systems the command is `python3`)".into())
        }
        "docker" | "podman" => Some(format!("install {base} (and start its daemon)")),
        "deno" => Some("install Deno".into()),
        "bun" | "bunx" => Some("install Bun, which provides bunx".into()),
        _ => None,
    };
    let capitalised = |s: &str| {
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    let advice = match (full_path, install) {
        // A full path that does not exist: "give the full path" would be no advice.
        (true, Some(install)) => format!("Check the path, or {install}."),
        (true, None) => {
            "Check the path (a typo, or a program that was moved or uninstalled).".into()
        }
        (false, Some(install)) if base == "node" => {
            format!(
                "{}, or give the full path of `node`.",
                capitalised(&install)
            )
        }
        (false, Some(install)) => format!("{}, or give the full path.", capitalised(&install)),
        (false, None) => "Install it, or give the full path of the program.".into(),
    };
    format!("{whence} {advice}")
}

struct Secrets<'a> {
    name: &'a str,
    namespace: &'a str,
    store: &'a dyn SecretStore,
    seen: Vec<String>,
}

impl Secrets<'_> {
    fn get(&mut self, reference: &SecretRef) -> Result<Sensitive<String>, ResolveError> {
        let key = SecretKey::new(self.namespace, &reference.secret);
        match self.store.get(&key) {
            Ok(Some(value)) => {
                self.seen.push(value.expose().clone());
                Ok(value)
            }
            Ok(None) => Err(ResolveError::MissingSecret {
                server: self.name.to_owned(),
                secret: reference.secret.clone(),
            }),
            Err(source) => Err(ResolveError::SecretStore {
                server: self.name.to_owned(),
                source,
            }),
        }
    }

    fn value(&mut self, value: &ConfigValue) -> Result<Sensitive<String>, ResolveError> {
        match value {
            ConfigValue::Plain(text) => Ok(Sensitive::new(text.clone())),
            ConfigValue::Secret(reference) => self.get(reference),
            ConfigValue::FromEnv(template) => template
                .fill(|var| std::env::var(var).ok())
                .map(Sensitive::new)
                .map_err(|variable| ResolveError::MissingEnv {
                    server: self.name.to_owned(),
                    variable,
                }),
        }
    }

    /// An argument with each `${secret:NAME}` replaced by that secret.
    fn arg(&mut self, arg: &str) -> Result<String, ResolveError> {
        let mut out = String::new();
        let mut rest = arg;
        while let Some(at) = rest.find(SECRET_ARG_OPEN) {
            let after = &rest[at + SECRET_ARG_OPEN.len()..];
            let Some(end) = after.find('}') else { break };
            out.push_str(&rest[..at]);
            let secret = self.get(&SecretRef::new(&after[..end]))?;
            out.push_str(secret.expose());
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Resolve server `name` for a test or a connection. `probe` is the catalog's credential
/// probe for the server's catalog entry, if it has one.
pub fn resolve(
    name: &str,
    server: &ServerConfig,
    secrets: &dyn SecretStore,
    probe: Option<CredentialProbe>,
) -> Result<ResolvedServer, ResolveError> {
    let started = Instant::now();
    server.validate().map_err(|detail| ResolveError::Invalid {
        server: name.to_owned(),
        detail,
    })?;
    let mut store = Secrets {
        name,
        namespace: server.secret_namespace(name),
        store: secrets,
        seen: vec![],
    };
    let mut redact_values: Vec<String> = vec![];

    let mut env_values = vec![];
    for (key, value) in &server.env {
        let value = store.value(value)?;
        redact_values.push(value.expose().clone());
        env_values.push((key.clone(), value));
    }

    let mut sends_credentials = false;
    let target = match server.transport {
        TransportKind::Stdio => {
            let command = server.command.clone().unwrap_or_default();
            let cwd = server.cwd.as_ref().map(PathBuf::from);
            if let Some(dir) = &cwd
                && !dir.is_dir()
            {
                return Err(ResolveError::MissingCwd {
                    server: name.to_owned(),
                    cwd: dir.clone(),
                });
            }
            let env_path = env_values
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.expose().clone());
            let found =
                env::find_command(&command, cwd.as_deref(), env_path.as_deref()).map_err(|e| {
                    match e {
                        LookupError::NotFound {
                            checked_login_shell,
                        } => ResolveError::CommandNotFound {
                            command: command.clone(),
                            checked_login_shell,
                        },
                        LookupError::NotExecutable(path) => ResolveError::NotExecutable {
                            command: command.clone(),
                            path,
                        },
                    }
                })?;
            let mut args = Vec::with_capacity(server.args.len());
            for planned in crate::config::plan_args(&command, &server.args) {
                match planned {
                    LaunchArg::Plain(arg) => args.push(arg.to_owned()),
                    LaunchArg::EnvFromSecret { name: key, value } => {
                        args.push(key.to_owned());
                        let value = Sensitive::new(store.arg(value)?);
                        env_values.retain(|(k, _)| k != key);
                        env_values.push((key.to_owned(), value));
                    }
                    LaunchArg::WithSecret(arg) if server.allow_secret_args => {
                        args.push(store.arg(arg)?);
                    }
                    LaunchArg::WithSecret(arg) => {
                        return Err(ResolveError::SecretOnCommandLine {
                            server: name.to_owned(),
                            secret: crate::config::arg_secret_names(arg)
                                .next()
                                .unwrap_or_default()
                                .to_owned(),
                        });
                    }
                }
            }
            if server.allow_secret_args && is_npm_runner(&command) {
                // npm writes its argv to a debug log in ~/.npm/_logs on every run; with
                // no log files, a secret on the command line stays out of them.
                env_values.push(("npm_config_logs_max".to_owned(), Sensitive::new("0".into())));
            }
            let mut target = StdioTarget {
                command,
                program: found.path,
                args,
                env: env_values,
                cwd,
                via_login_shell: found.via_login_shell,
                sandbox: None,
            };
            if let Some(settings) = server.sandbox.as_ref().filter(|s| s.enabled) {
                target
                    .plan_sandbox(settings, server.secret_namespace(name))
                    .map_err(|detail| ResolveError::Invalid {
                        server: name.to_owned(),
                        detail,
                    })?;
            }
            Target::Stdio(target)
        }
        _ => {
            let raw = server.url.as_deref().unwrap_or_default();
            crate::config::validate_remote_url(raw).map_err(|detail| ResolveError::Invalid {
                server: name.to_owned(),
                detail,
            })?;
            // A secret in the URL (`${secret:NAME}` in its path, query or user part) is
            // substituted here, in memory; the request then carries a credential.
            let with_secrets = store.arg(raw)?;
            if with_secrets != raw {
                sends_credentials = true;
            }
            let url = url::Url::parse(&with_secrets).map_err(|e| ResolveError::Invalid {
                server: name.to_owned(),
                detail: format!("its URL with its secrets filled in is not valid ({e})"),
            })?;
            redact_values.extend(url_encodings_of_secrets(&store.seen, &url));
            let mut headers = vec![];
            for (key, value) in &server.headers {
                let lower = key.to_ascii_lowercase();
                if value.secret_name().is_some()
                    || ["auth", "key", "token", "secret"]
                        .iter()
                        .any(|w| lower.contains(w))
                {
                    sends_credentials = true;
                }
                let value = store.value(value)?;
                redact_values.push(value.expose().clone());
                headers.push((key.clone(), value));
            }
            if let Some(helper) = &server.headers_helper {
                let given =
                    crate::headers_helper::headers(name, raw, helper).map_err(|detail| {
                        ResolveError::HeadersHelper {
                            server: name.to_owned(),
                            command: helper.command.clone(),
                            detail,
                        }
                    })?;
                sends_credentials = true;
                for (key, value) in given {
                    store.seen.push(value.expose().clone());
                    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&key));
                    headers.push((key, value));
                }
            }
            let auth_header = match &server.auth {
                Auth::None => None,
                Auth::Bearer { token } => {
                    let token = store.get(token)?;
                    Some((
                        "Authorization".to_owned(),
                        format!("Bearer {}", token.expose()),
                    ))
                }
                Auth::ApiKey { header, key } => {
                    let key = store.get(key)?;
                    Some((header.clone(), key.expose().clone()))
                }
                Auth::Basic { username, password } => {
                    let password = store.get(password)?;
                    let encoded = base64::engine::general_purpose::STANDARD
                        .encode(format!("{username}:{}", password.expose()));
                    redact_values.push(encoded.clone());
                    Some(("Authorization".to_owned(), format!("Basic {encoded}")))
                }
                Auth::Header {
                    name: header,
                    value,
                } => {
                    let value = store.get(value)?;
                    Some((header.clone(), value.expose().clone()))
                }
                Auth::Oauth2(_) => {
                    let key = SecretKey::new(store.namespace, OAUTH_ACCESS_TOKEN);
                    match secrets.get(&key) {
                        Ok(Some(token)) if !token.expose().is_empty() => {
                            store.seen.push(token.expose().clone());
                            Some((
                                "Authorization".to_owned(),
                                format!("Bearer {}", token.expose()),
                            ))
                        }
                        Ok(_) => {
                            return Err(ResolveError::NeedsOAuth {
                                server: name.to_owned(),
                            });
                        }
                        Err(source) => {
                            return Err(ResolveError::SecretStore {
                                server: name.to_owned(),
                                source,
                            });
                        }
                    }
                }
            };
            if let Some((header, value)) = auth_header {
                sends_credentials = true;
                redact_values.push(value.clone());
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&header));
                headers.push((header, Sensitive::new(value)));
            }
            for (key, value) in &headers {
                if reqwest::header::HeaderName::from_bytes(key.as_bytes()).is_err()
                    || reqwest::header::HeaderValue::from_str(value.expose()).is_err()
                {
                    return Err(ResolveError::Invalid {
                        server: name.to_owned(),
                        detail: format!(
                            "the header `{key}` has a name or value that HTTP does not allow \
                             (line breaks or control characters?)"
                        ),
                    });
                }
            }
            if sends_credentials
                && url.scheme() == "http"
                && !crate::config::is_loopback_host(url.host_str().unwrap_or_default())
                && !server.allow_insecure_http
            {
                return Err(ResolveError::InsecureCredentials {
                    server: name.to_owned(),
                    host: url.host_str().unwrap_or_default().to_owned(),
                });
            }
            let helper = server.headers_helper.clone().map(|helper| {
                std::sync::Arc::new(crate::headers_helper::HelperSource {
                    server: name.to_owned(),
                    url: raw.to_owned(),
                    helper,
                })
                    as std::sync::Arc<dyn crate::connect::header_source::HeaderSource>
            });
            Target::Remote(RemoteTarget {
                url,
                headers,
                helper,
            })
        }
    };
    let secrets = std::mem::take(&mut store.seen);
    redact_values.retain(|v| !v.is_empty());
    redact_values.sort();
    redact_values.dedup();

    Ok(ResolvedServer {
        name: name.to_owned(),
        transport: server.transport,
        target,
        timeout: server
            .timeout
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TIMEOUT),
        redactor: Redactor::new(redact_values).with_secrets(secrets),
        probe,
        sends_credentials,
        resolve_time: started.elapsed(),
        known_era: None,
    })
}

/// `npx` and `npm`, which log their argv.
fn is_npm_runner(command: &str) -> bool {
    let base = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    matches!(base, "npx" | "npm" | "npx.cmd" | "npm.cmd")
}

/// The forms a secret takes once a URL is parsed (percent-encoded in the path, the query or
/// the user part), so that the redactor also hides them where the URL is shown.
fn url_encodings_of_secrets(secrets: &[String], url: &url::Url) -> Vec<String> {
    let text = url.as_str();
    let mut forms = vec![];
    for secret in secrets {
        let Ok(mut probe) = url::Url::parse("http://h/") else {
            continue;
        };
        probe.set_path(secret);
        let in_path = probe.path().trim_start_matches('/').to_owned();
        probe.set_query(Some(secret));
        let in_query = probe.query().unwrap_or_default().to_owned();
        let in_form: String = url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
        for form in [in_path, in_query, in_form] {
            if form != *secret && !form.is_empty() && text.contains(&form) {
                forms.push(form);
            }
        }
    }
    forms
}

/// A secret store that answers the server's OAuth access token from memory (fresh from the
/// OAuth module, refreshed if needed) and everything else from the real store, so that
/// [`resolve`] builds the `Authorization` header from that token.
pub struct WithAccessToken {
    token: MemoryStore,
    base: Arc<dyn SecretStore>,
}

impl WithAccessToken {
    pub fn new(base: Arc<dyn SecretStore>, namespace: &str, token: &Sensitive<String>) -> Self {
        let overlay = MemoryStore::new();
        let _ = overlay.set(&SecretKey::new(namespace, OAUTH_ACCESS_TOKEN), token);
        WithAccessToken {
            token: overlay,
            base,
        }
    }
}

impl SecretStore for WithAccessToken {
    fn get(&self, key: &SecretKey) -> Result<Option<Sensitive<String>>, SecretError> {
        match self.token.get(key)? {
            Some(value) => Ok(Some(value)),
            None => self.base.get(key),
        }
    }
    fn set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError> {
        self.base.set(key, value)
    }
    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        self.base.delete(key)
    }
    fn check(&self) -> Result<(), SecretError> {
        self.base.check()
    }
    fn describe(&self) -> String {
        self.base.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SecretRef;
    use crate::secrets::MemoryStore;

    fn store_with(ns: &str, pairs: &[(&str, &str)]) -> MemoryStore {
        let store = MemoryStore::new();
        for (k, v) in pairs {
            store
                .set(&SecretKey::new(ns, *k), &Sensitive::new((*v).to_owned()))
                .unwrap();
        }
        store
    }

    #[test]
    fn secrets_are_substituted_from_the_servers_namespace() {
        let mut server = ServerConfig::stdio("sh", vec![]);
        server
            .env
            .insert("TOKEN".into(), ConfigValue::Secret(SecretRef::new("TOKEN")));
        server
            .env
            .insert("PLAIN".into(), ConfigValue::Plain("p-value".into()));
        let store = store_with("srv", &[("TOKEN", "s3cr3t-value")]);
        let resolved = resolve("srv", &server, &store, None).unwrap();
        let Target::Stdio(target) = resolved.target() else {
            panic!("stdio")
        };
        let env = target.child_env();
        let get = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert_eq!(get("TOKEN").unwrap(), "s3cr3t-value");
        assert_eq!(get("PLAIN").unwrap(), "p-value");
        assert!(get("PATH").is_some());
        let redacted = resolved.redactor().redact("x s3cr3t-value y p-value");
        assert!(!redacted.contains("s3cr3t-value") && !redacted.contains("p-value"));
        // Another server's namespace does not see it.
        let err = resolve("other", &server, &store, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        assert!(
            err.hint()
                .contains("plugboard edit other --secret-env TOKEN"),
            "{}",
            err.hint()
        );
    }

    #[test]
    fn auth_becomes_headers() {
        let store = store_with("r", &[("T", "tok-123456"), ("P", "pw-abcdef")]);
        let mut server = ServerConfig::remote(TransportKind::Shttp, "https://example.com/mcp");
        server.auth = Auth::Bearer {
            token: SecretRef::new("T"),
        };
        let resolved = resolve("r", &server, &store, None).unwrap();
        let Target::Remote(target) = resolved.target() else {
            panic!("remote")
        };
        assert_eq!(target.headers[0].0, "Authorization");
        assert_eq!(target.headers[0].1.expose(), "Bearer tok-123456");
        assert!(resolved.sends_credentials());

        server.auth = Auth::Basic {
            username: "me".into(),
            password: SecretRef::new("P"),
        };
        let resolved = resolve("r", &server, &store, None).unwrap();
        let Target::Remote(target) = resolved.target() else {
            panic!("remote")
        };
        let expected = base64::engine::general_purpose::STANDARD.encode("me:pw-abcdef");
        assert_eq!(target.headers[0].1.expose(), &format!("Basic {expected}"));
        assert!(!resolved.redactor().redact(&expected).contains(&expected));

        server.auth = Auth::ApiKey {
            header: "X-Api-Key".into(),
            key: SecretRef::new("T"),
        };
        let resolved = resolve("r", &server, &store, None).unwrap();
        let Target::Remote(target) = resolved.target() else {
            panic!("remote")
        };
        assert_eq!(target.headers[0].0, "X-Api-Key");
        assert_eq!(target.headers[0].1.expose(), "tok-123456");
    }

    #[test]
    fn oauth_without_a_token_is_unauthorized() {
        let store = MemoryStore::new();
        let mut server = ServerConfig::remote(TransportKind::Shttp, "https://example.com/mcp");
        server.auth = Auth::Oauth2(Default::default());
        let err = resolve("gh", &server, &store, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unauthorized);
        assert!(err.hint().contains("plugboard auth gh"));
    }

    #[test]
    fn missing_commands_get_runtime_aware_hints() {
        let server = ServerConfig::stdio("/nonexistent/dir/npx", vec![]);
        let err = resolve("s", &server, &MemoryStore::new(), None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Spawn);
        assert!(err.hint().contains("Node.js"), "{}", err.hint());
        assert!(err.hint().contains("Check the path"), "{}", err.hint());
        assert!(!command_not_found_hint("/opt/x/server", false).contains("full path"));
        assert!(command_not_found_hint("server", false).contains("full path of the program"));
        let hint = command_not_found_hint("uvx", true);
        assert!(
            hint.contains("login shell") && hint.contains("uv"),
            "{hint}"
        );
        assert!(command_not_found_hint("docker", true).contains("daemon"));
        assert!(command_not_found_hint("python3", false).contains("Python"));
    }
}
