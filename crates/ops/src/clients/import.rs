//! Import: another client's servers into Plugboard.
//!
//! [`plan_import`] reads the file and works out, per entry, the Plugboard server it becomes (or
//! why it is skipped) without changing anything: variables are expanded the way that client
//! does (`${env:X}`, `${X}` / `${X:-default}`, `${input:ID}` with VS Code's `inputs`,
//! `${userHome}`), entries that already are `plugboard run X` launchers are skipped, names are
//! made valid and unique (`name`, `name-2`, …), and every literal secret — env values and
//! headers whose names look secret ([`looks_secret`]), those the user names, values of password
//! inputs, and the `Authorization: Bearer` token (which becomes [`Auth::Bearer`]) — is set
//! aside to go into the secret store, the config keeping only a reference.
//! [`apply_import`] installs the planned servers; [`rewrite_source`] then turns their entries in
//! the source file into launchers, so the plaintext is gone from it too (after a backup).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use super::{
    ClientError, ClientFormat, ClientKind, VarSyntax, gateway_target, jsonc, launcher_entry,
    launcher_target,
};
use crate::config::{
    Auth, Config, ConfigValue, EnvTemplate, HeadersHelper, SecretRef, ServerConfig, TransportKind,
    secret_arg, validate_name,
};
use crate::form::{PreparedServer, new_secret_namespace};
use crate::manage::{Servers, looks_secret};
use crate::secret_shapes::looks_like_secret_value;
use crate::secrets::Sensitive;

/// The secret name an imported `Authorization: Bearer` token is stored under.
pub const BEARER_SECRET: &str = crate::credentials::BEARER_TOKEN;

/// A VS Code input (`inputs[]` of `mcp.json`).
#[derive(Clone, Debug, Serialize)]
pub struct InputSpec {
    pub id: String,
    pub description: Option<String>,
    pub password: bool,
    pub default: Option<String>,
}

/// How to import.
pub struct ImportOptions<'a> {
    /// More env variable / header names to treat as secrets (case-insensitive).
    pub extra_secrets: Vec<String>,
    /// The value of an input (`${input:ID}`): from the environment, a prompt, or `None` when it
    /// cannot be had.
    pub input: &'a dyn Fn(&InputSpec) -> Option<Sensitive<String>>,
    /// The project folder the file belongs to, for a workspace file: `${workspaceFolder}` is
    /// that folder.
    pub workspace: Option<&'a Path>,
}

/// One entry that will become a Plugboard server. Secret values are not serialized.
#[derive(Debug, Serialize)]
pub struct PlannedServer {
    /// The entry's key in the source file.
    pub entry: String,
    /// The Plugboard server name.
    pub name: String,
    #[serde(rename = "type")]
    pub transport: TransportKind,
    /// The command line or URL.
    pub target: String,
    /// What moves into the secret store: `env NAME`, `header NAME`, `bearer token`.
    pub secrets: Vec<String>,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub config: ServerConfig,
    #[serde(skip)]
    pub secret_values: BTreeMap<String, Sensitive<String>>,
}

/// An entry that is not imported, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub entry: String,
    pub reason: String,
}

/// An entry that is a server Plugboard has installed already (the same command and
/// arguments, or the same URL): nothing new is installed, and a rewrite of the source makes
/// the entry launch the installed server.
#[derive(Debug, Serialize)]
pub struct Recognised {
    pub entry: String,
    /// The installed server it is.
    pub name: String,
    /// Its literal secrets, kept out of the rewrite's backup.
    #[serde(skip)]
    pub secret_values: Vec<Sensitive<String>>,
}

/// What an import would do.
#[derive(Debug, Serialize)]
pub struct ImportPlan {
    pub client: ClientKind,
    pub path: PathBuf,
    pub servers: Vec<PlannedServer>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recognised: Vec<Recognised>,
    pub skipped: Vec<Skipped>,
}

/// What an import did.
#[derive(Debug, Default, Serialize)]
pub struct ImportReport {
    /// (entry in the source, Plugboard name) of every server installed.
    pub imported: Vec<(String, String)>,
    /// (entry, installed name) of every entry that is a server installed already.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recognised: Vec<(String, String)>,
    /// (entry, error) of every server that could not be installed.
    pub failed: Vec<(String, String)>,
    /// (entry, why) of imported servers whose test failed: their entries in the source file
    /// stay as they were, so the client keeps what worked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_in_source: Vec<(String, String)>,
}

/// A value after variable expansion: its text with the environment references kept
/// (`${env:NAME}`), whether a password input went into it, and the variables it names.
struct Expanded {
    text: String,
    secret: bool,
    env_refs: Vec<String>,
}

impl Expanded {
    /// The text with its environment references filled in from this environment.
    fn filled(&self) -> Result<String, String> {
        EnvTemplate {
            from_env: self.text.clone(),
        }
        .fill(|name| std::env::var(name).ok())
        .map_err(|name| {
            format!("it uses `${{env:{name}}}` and {name} is not set in this environment")
        })
    }

    /// An env or header value: a reference to the environment stays one.
    fn into_value(self) -> ConfigValue {
        if self.env_refs.is_empty() {
            ConfigValue::Plain(self.text)
        } else {
            ConfigValue::FromEnv(EnvTemplate {
                from_env: self.text,
            })
        }
    }
}

struct Expander<'a> {
    vars: VarSyntax,
    inputs: &'a [InputSpec],
    ask: &'a dyn Fn(&InputSpec) -> Option<Sensitive<String>>,
    cache: std::cell::RefCell<BTreeMap<String, Option<Sensitive<String>>>>,
    workspace: Option<&'a Path>,
}

impl Expander<'_> {
    fn expand(&self, text: &str) -> Result<Expanded, String> {
        let mut out = String::new();
        let mut secret = false;
        let mut env_refs = vec![];
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let inner = &after[..end];
            rest = &after[end + 1..];
            if let Some(name) = self.env_reference(inner) {
                out.push_str(&format!("${{env:{name}}}"));
                env_refs.push(name.to_owned());
                continue;
            }
            match self.variable(inner)? {
                Some((value, is_secret)) => {
                    out.push_str(&value);
                    secret |= is_secret;
                }
                None => {
                    out.push_str("${");
                    out.push_str(inner);
                    out.push('}');
                }
            }
        }
        out.push_str(rest);
        Ok(Expanded {
            text: out,
            secret,
            env_refs,
        })
    }

    /// The variable `${inner}` names in this client's syntax when it is a plain reference to
    /// the environment (`${env:NAME}`, or `${NAME}` where the client expands that; not one with
    /// a default): kept as a reference instead of copying today's value.
    fn env_reference<'t>(&self, inner: &'t str) -> Option<&'t str> {
        let name = match inner.strip_prefix("env:") {
            Some(name) if self.vars.env_colon => name,
            Some(_) => return None,
            None if matches!(
                inner,
                "userHome"
                    | "workspaceFolder"
                    | "workspaceFolderBasename"
                    | "workspaceRoot"
                    | "cwd"
            ) =>
            {
                return None;
            }
            None if self.vars.bare && !inner.contains(':') => inner,
            None => return None,
        };
        crate::config::validate_env_key(name).ok().map(|_| name)
    }

    /// The value of `${inner}`, `None` when this client does not expand that form.
    fn variable(&self, inner: &str) -> Result<Option<(String, bool)>, String> {
        if let Some(name) = inner.strip_prefix("env:") {
            if !self.vars.env_colon {
                return Ok(None);
            }
            return match std::env::var(name) {
                Ok(v) => Ok(Some((v, false))),
                Err(_) => Err(format!(
                    "it uses `${{env:{name}}}` and {name} is not set in this environment"
                )),
            };
        }
        if let Some(id) = inner.strip_prefix("input:") {
            if !self.vars.inputs {
                return Ok(None);
            }
            let spec = self
                .inputs
                .iter()
                .find(|i| i.id == id)
                .cloned()
                .unwrap_or(InputSpec {
                    id: id.to_string(),
                    description: None,
                    password: false,
                    default: None,
                });
            let cached = self.cache.borrow().get(id).cloned();
            let value = match cached {
                Some(v) => v,
                None => {
                    let v = (self.ask)(&spec).or_else(|| spec.default.clone().map(Sensitive::new));
                    self.cache.borrow_mut().insert(id.to_string(), v.clone());
                    v
                }
            };
            return match value {
                Some(v) => Ok(Some((v.expose().clone(), spec.password))),
                None => Err(format!(
                    "it needs a value for `${{input:{id}}}`{}: set {} (or run in a terminal to be asked)",
                    spec.description
                        .as_deref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default(),
                    crate::secrets::secret_env_var(id)
                )),
            };
        }
        if inner == "userHome" && self.vars.user_home {
            let home = super::Dirs::from_env()
                .home
                .ok_or("no home directory is known")?;
            return Ok(Some((home.to_string_lossy().into_owned(), false)));
        }
        if let Some(folder) = self.workspace.filter(|_| self.vars.user_home) {
            match inner {
                "workspaceFolder" | "workspaceRoot" => {
                    return Ok(Some((folder.to_string_lossy().into_owned(), false)));
                }
                "workspaceFolderBasename" => {
                    let base = folder.file_name().unwrap_or(folder.as_os_str());
                    return Ok(Some((base.to_string_lossy().into_owned(), false)));
                }
                _ => {}
            }
        }
        if matches!(
            inner,
            "workspaceFolder" | "workspaceFolderBasename" | "workspaceRoot" | "cwd"
        ) {
            return Err(format!(
                "it uses `${{{inner}}}`, which only the client knows (it depends on the open project)"
            ));
        }
        if self.vars.bare {
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            if crate::config::validate_env_key(name).is_ok() {
                return match (std::env::var(name), default) {
                    (Ok(v), _) => Ok(Some((v, false))),
                    (Err(_), Some(d)) => Ok(Some((d.to_string(), false))),
                    (Err(_), None) => Err(format!(
                        "it uses `${{{name}}}` and {name} is not set in this environment"
                    )),
                };
            }
        }
        Ok(None)
    }
}

fn inputs_of(doc: &Map<String, Value>) -> Vec<InputSpec> {
    doc.get("inputs")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| {
                    Some(InputSpec {
                        id: i.get("id")?.as_str()?.to_string(),
                        description: i
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        password: i.get("password").and_then(Value::as_bool).unwrap_or(false),
                        default: i.get("default").and_then(Value::as_str).map(str::to_string),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A valid server name from an entry key: other characters become `-`, at most 64.
fn base_name(key: &str) -> String {
    let mut name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    name = name.trim_matches('-').to_string();
    if name.is_empty() {
        name = "server".into();
    }
    name.chars().take(56).collect()
}

fn unique_name(base: &str, taken: &BTreeSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|c| !taken.contains(c))
        .expect("some name is free")
}

fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn remote_kind(kind: Option<&str>) -> Option<TransportKind> {
    match kind.map(str::to_ascii_lowercase).as_deref() {
        Some("sse") => Some(TransportKind::Sse),
        Some("http" | "streamable-http" | "streamable_http" | "streamablehttp" | "shttp") => {
            Some(TransportKind::Shttp)
        }
        _ => None,
    }
}

/// What one entry becomes: the config, the secret values to store, what was moved into the
/// store (for display), and notes.
type Converted = (
    ServerConfig,
    BTreeMap<String, Sensitive<String>>,
    Vec<String>,
    Vec<String>,
);

/// A client's `headersHelper` (a command line its client runs through a shell) as a helper
/// Plugboard runs without one: split into words, a leading `~/` as the home folder, a
/// relative program path from the folder of the file it came from. Shell syntax is refused.
fn headers_helper_of(line: &str, source_dir: &Path) -> Result<HeadersHelper, String> {
    let home = super::Dirs::from_env().home;
    let line = match (line.trim().strip_prefix("~/"), &home) {
        (Some(rest), Some(home)) => format!("{}/{rest}", home.display()),
        _ => line.trim().to_owned(),
    };
    if crate::command_line::needs_a_shell(&line) {
        return Err("it uses shell syntax, and Plugboard runs helpers without a shell".into());
    }
    let mut words = crate::command_line::split_command_line(&line)?.into_iter();
    let program = words.next().ok_or("it is empty")?;
    let command = if program.contains('/') && !Path::new(&program).is_absolute() {
        let relative: PathBuf = Path::new(&program)
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        source_dir.join(relative).to_string_lossy().into_owned()
    } else {
        program
    };
    let helper = HeadersHelper {
        command,
        args: words.collect(),
        ttl: None,
    };
    helper.validate()?;
    Ok(helper)
}

/// One entry → a server config, the secrets to store, and notes.
fn convert(
    format: &ClientFormat,
    entry: &Map<String, Value>,
    expander: &Expander,
    extra_secrets: &[String],
    source_dir: &Path,
) -> Result<Converted, String> {
    let is_extra = |k: &str| extra_secrets.iter().any(|s| s.eq_ignore_ascii_case(k));
    let kind = entry.get("type").and_then(Value::as_str);
    let url_key = format
        .url_keys
        .iter()
        .chain(["url", "serverUrl", "httpUrl"].iter())
        .find(|k| entry.get(**k).and_then(Value::as_str).is_some());
    let mut secrets = BTreeMap::new();
    let mut moved = vec![];
    let mut notes = vec![];
    let mut config = if let Some(url_key) = url_key {
        let raw = entry[*url_key].as_str().unwrap_or_default();
        let url = expander.expand(raw)?;
        let url_text = url.filled()?;
        let transport = remote_kind(kind).unwrap_or(TransportKind::Auto);
        let templated = url_without_secrets(
            &url_text,
            url.secret || !url.env_refs.is_empty(),
            &mut secrets,
        );
        if !secrets.is_empty() {
            moved.push("secrets of its URL".to_string());
        }
        let mut config = ServerConfig::remote(transport, templated);
        if let Some(headers) = entry.get("headers").and_then(Value::as_object) {
            for (key, value) in headers {
                let Some(raw) = text_of(value) else {
                    continue;
                };
                let value = expander.expand(&raw)?;
                let bearer = key.eq_ignore_ascii_case("authorization")
                    && value.text.len() > 7
                    && value.text[..7].eq_ignore_ascii_case("bearer ");
                if !value.env_refs.is_empty() && !value.secret {
                    // `Bearer ${env:TOKEN}`: the reference stays one, filled in at launch.
                    config.headers.insert(key.clone(), value.into_value());
                } else if bearer {
                    let token = value.text[7..].trim().to_string();
                    secrets.insert(BEARER_SECRET.to_string(), Sensitive::new(token));
                    config.auth = Auth::Bearer {
                        token: SecretRef::new(BEARER_SECRET),
                    };
                    moved.push("bearer token".to_string());
                } else if looks_secret(key)
                    || is_extra(key)
                    || value.secret
                    || value_holds_secret(&value.text)
                {
                    secrets.insert(key.clone(), Sensitive::new(value.text));
                    config.headers.insert(
                        key.clone(),
                        ConfigValue::Secret(SecretRef::new(key.clone())),
                    );
                    moved.push(format!("header {key}"));
                } else {
                    config
                        .headers
                        .insert(key.clone(), ConfigValue::Plain(value.text));
                }
            }
        }
        if let Some(line) = entry.get("headersHelper").and_then(Value::as_str) {
            match headers_helper_of(line, source_dir) {
                Ok(helper) => config.headers_helper = Some(helper),
                Err(why) => notes.push(format!(
                    "its headersHelper was left out: {why}; put the command in a script and \
                     run `plugboard edit NAME --headers-helper SCRIPT`"
                )),
            }
        }
        if entry.get("command").is_some() {
            notes.push("it has both a URL and a command; the URL was used".into());
        }
        config
    } else {
        if let Some(kind) = kind
            && !kind.eq_ignore_ascii_case("stdio")
        {
            return Err(format!("its type is `{kind}` but it has no URL"));
        }
        let command = entry
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or("it has neither a command nor a URL")?;
        let command = expander.expand(command)?;
        let mut args = vec![];
        for arg in entry
            .get("args")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let Some(raw) = text_of(arg) else {
                return Err("one of its arguments is not a string".into());
            };
            let arg = expander.expand(&raw)?;
            let text = arg.filled()?;
            let flag_before = args.last().map(String::as_str);
            match secret_in_arg(&text, arg.secret || !arg.env_refs.is_empty(), flag_before) {
                Some((prefix, value)) => {
                    let secret = format!("ARG_{}", args.len() + 1);
                    secrets.insert(secret.clone(), Sensitive::new(value));
                    args.push(format!("{prefix}{}", crate::config::secret_arg(&secret)));
                    moved.push(format!("argument {}", args.len()));
                }
                None => args.push(text),
            }
        }
        if command.secret {
            return Err("a password input is part of its command".into());
        }
        let command = Expanded {
            text: command.filled()?,
            ..command
        };
        let on_argv = secrets.keys().any(|k| k.starts_with("ARG_"));
        let mut config = ServerConfig::stdio(command.text, args);
        if on_argv {
            // The client passed the secret on the command line; the server may know no other
            // way. It keeps working, and the user is told how to do better.
            config.allow_secret_args = true;
            notes.push(
                "it takes a secret on its command line, where every user of this machine can \
                 read it; its value is now in the keyring, and it is still passed that way. If \
                 the server can read it from an environment variable, move it there and run \
                 `plugboard edit NAME --refuse-secret-args`"
                    .into(),
            );
        }
        if let Some(env) = entry.get("env").and_then(Value::as_object) {
            for (key, value) in env {
                let Some(raw) = text_of(value) else {
                    continue;
                };
                if crate::config::validate_env_key(key).is_err() {
                    notes.push(format!(
                        "env `{key}` is not a valid variable name and was left out"
                    ));
                    continue;
                }
                let value = expander.expand(&raw)?;
                if !value.env_refs.is_empty() && !value.secret {
                    // `${env:TOKEN}`: the reference stays one, filled in at launch.
                    config.env.insert(key.clone(), value.into_value());
                } else if looks_secret(key)
                    || is_extra(key)
                    || value.secret
                    || value_holds_secret(&value.text)
                {
                    secrets.insert(key.clone(), Sensitive::new(value.text));
                    config.env.insert(
                        key.clone(),
                        ConfigValue::Secret(SecretRef::new(key.clone())),
                    );
                    moved.push(format!("env {key}"));
                } else {
                    config
                        .env
                        .insert(key.clone(), ConfigValue::Plain(value.text));
                }
            }
        }
        if let Some(cwd) = entry.get("cwd").and_then(Value::as_str) {
            config.cwd = Some(expander.expand(cwd)?.filled()?);
        }
        if entry.get("envFile").is_some() {
            notes.push(
                "its `envFile` was not imported; add those variables with `plugboard edit`".into(),
            );
        }
        config
    };
    if entry.get("disabled").and_then(Value::as_bool) == Some(true)
        || entry.get("enabled").and_then(Value::as_bool) == Some(false)
    {
        config.enabled = false;
    }
    config.secret_namespace = Some(new_secret_namespace());
    config.validate()?;
    Ok((config, secrets, moved, notes))
}

/// Whether a value carries a secret nobody labelled: a token's shape, or a URL (a DSN such as
/// `postgres://app:PW@db`) with a password or a secret-looking query parameter.
fn value_holds_secret(value: &str) -> bool {
    looks_like_secret_value(value)
        || url::Url::parse(value).is_ok_and(|u| {
            u.password().is_some()
                || u.query_pairs()
                    .any(|(k, v)| looks_secret(&k) || looks_like_secret_value(&v))
        })
}

/// The secret in one argument, if any, as (the text kept before it, the secret): the value of
/// `--api-key=VALUE`, the argument after a secret-looking flag (`--token VALUE`), a token's
/// shape, a URL with a password, or (`whole`) all of it.
fn secret_in_arg(arg: &str, whole: bool, flag_before: Option<&str>) -> Option<(String, String)> {
    let is_flag = |f: &str| f.starts_with('-') && looks_secret(f.trim_start_matches('-'));
    if let Some((flag, value)) = arg.split_once('=')
        && flag.starts_with('-')
        && !value.is_empty()
        && (is_flag(flag) || whole || value_holds_secret(value))
    {
        return Some((format!("{flag}="), value.to_owned()));
    }
    let after_flag = flag_before.is_some_and(|f| is_flag(f) && !f.contains('='));
    if whole || (after_flag && !arg.starts_with('-')) || value_holds_secret(arg) {
        return Some((String::new(), arg.to_owned()));
    }
    None
}

/// A URL with its secrets replaced by `${secret:…}` references (their values go to
/// `secrets`): a password in its user part, secret-looking query parameters and path
/// segments, or (`whole_path_and_query`: a password input or an environment reference went
/// into it) the whole path and query.
fn url_without_secrets(
    url: &str,
    whole_path_and_query: bool,
    secrets: &mut BTreeMap<String, Sensitive<String>>,
) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    let mut out = format!("{}://", parsed.scheme());
    if !parsed.username().is_empty() || parsed.password().is_some() {
        if looks_like_secret_value(parsed.username()) {
            secrets.insert(
                "URL_USERNAME".into(),
                Sensitive::new(parsed.username().to_owned()),
            );
            out.push_str(&secret_arg("URL_USERNAME"));
        } else {
            out.push_str(parsed.username());
        }
        if let Some(password) = parsed.password() {
            secrets.insert("URL_PASSWORD".into(), Sensitive::new(password.to_owned()));
            out.push(':');
            out.push_str(&secret_arg("URL_PASSWORD"));
        }
        out.push('@');
    }
    out.push_str(parsed.host_str().unwrap_or_default());
    if let Some(port) = parsed.port() {
        out.push_str(&format!(":{port}"));
    }
    parsed.set_fragment(None);
    if whole_path_and_query {
        let rest = parsed[url::Position::BeforePath..].trim_start_matches('/');
        if !rest.is_empty() {
            secrets.insert("URL_PATH".into(), Sensitive::new(rest.to_owned()));
            out.push('/');
            out.push_str(&secret_arg("URL_PATH"));
            return out;
        }
    }
    for segment in parsed.path().split('/').skip(1) {
        out.push('/');
        if looks_like_secret_value(segment) {
            secrets.insert("URL_PATH_TOKEN".into(), Sensitive::new(segment.to_owned()));
            out.push_str(&secret_arg("URL_PATH_TOKEN"));
        } else {
            out.push_str(segment);
        }
    }
    if let Some(query) = parsed.query() {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                let decoded: String = url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                if !value.is_empty() && (looks_secret(key) || looks_like_secret_value(&decoded)) {
                    let secret = format!(
                        "URL_{}",
                        key.to_ascii_uppercase()
                            .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
                    );
                    // The value as written (still percent-encoded): filled back in unchanged.
                    secrets.insert(secret.clone(), Sensitive::new(value.to_owned()));
                    format!("{key}={}", secret_arg(&secret))
                } else {
                    pair.to_owned()
                }
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

fn target_of(config: &ServerConfig) -> String {
    match (&config.url, &config.command) {
        (Some(url), _) => url.clone(),
        (None, Some(cmd)) => std::iter::once(cmd.clone())
            .chain(config.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The servers of a `kind` file at `path`, as they would be imported next to `existing`.
/// Nothing is changed.
pub fn plan_import(
    kind: ClientKind,
    path: &Path,
    existing: &Config,
    options: &ImportOptions,
) -> Result<ImportPlan, ClientError> {
    let format = kind.format();
    if !path.exists() {
        return Err(ClientError::file(path, "does not exist"));
    }
    let doc = jsonc::read_object(path)?;
    let inputs = inputs_of(&doc);
    let expander = Expander {
        vars: format.vars,
        inputs: &inputs,
        ask: options.input,
        cache: Default::default(),
        workspace: options.workspace,
    };
    let empty = Map::new();
    let entries = match doc.get(format.servers_key) {
        None => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(ClientError::file(
                path,
                format!("`{}` is not a JSON object", format.servers_key),
            ));
        }
    };
    let mut taken: BTreeSet<String> = existing.names().map(str::to_string).collect();
    let installed: Vec<(String, ServerConfig)> = existing
        .servers()
        .into_iter()
        .filter_map(|(name, server)| Some((name.to_owned(), server.ok()?)))
        .collect();
    let mut plan = ImportPlan {
        client: kind,
        path: path.to_path_buf(),
        servers: vec![],
        recognised: vec![],
        skipped: vec![],
    };
    for (key, entry) in entries {
        let skip = |reason: String| Skipped {
            entry: key.clone(),
            reason,
        };
        let Some(object) = entry.as_object() else {
            plan.skipped
                .push(skip("the entry is not a JSON object".into()));
            continue;
        };
        if let Some(target) = launcher_target(entry) {
            plan.skipped.push(skip(format!(
                "it already runs through Plugboard (`plugboard run {target}`)"
            )));
            continue;
        }
        if let Some(profile) = gateway_target(entry) {
            plan.skipped.push(skip(format!(
                "it is Plugboard's gateway (profile `{profile}`)"
            )));
            continue;
        }
        match convert(
            format,
            object,
            &expander,
            &options.extra_secrets,
            path.parent().unwrap_or(Path::new(".")),
        ) {
            Ok((config, secret_values, secrets, notes)) => {
                if let Some((name, _)) = installed.iter().find(|(_, s)| same_server(s, &config)) {
                    plan.recognised.push(Recognised {
                        entry: key.clone(),
                        name: name.clone(),
                        secret_values: secret_values.into_values().collect(),
                    });
                    continue;
                }
                let name = unique_name(&base_name(key), &taken);
                debug_assert!(validate_name(&name).is_ok());
                taken.insert(name.clone());
                plan.servers.push(PlannedServer {
                    entry: key.clone(),
                    name,
                    transport: config.transport,
                    target: target_of(&config),
                    secrets,
                    enabled: config.enabled,
                    notes,
                    config,
                    secret_values,
                });
            }
            Err(reason) => plan.skipped.push(skip(reason)),
        }
    }
    Ok(plan)
}

/// Install the planned servers, secrets first (each server on its own: one failure does not
/// stop the others).
pub fn apply_import(servers: &Servers, plan: &ImportPlan) -> ImportReport {
    let mut report = ImportReport::default();
    for planned in &plan.servers {
        let prepared = PreparedServer {
            name: planned.name.clone(),
            config: planned.config.clone(),
            secrets: planned.secret_values.clone(),
        };
        match servers.install(&prepared) {
            Ok(()) => report
                .imported
                .push((planned.entry.clone(), planned.name.clone())),
            Err(e) => report.failed.push((planned.entry.clone(), e.to_string())),
        }
    }
    report.recognised = plan
        .recognised
        .iter()
        .map(|r| (r.entry.clone(), r.name.clone()))
        .collect();
    report
}

/// Test the servers just imported (in parallel) before their entries in the source file are
/// turned into launchers: an entry whose server fails its test stays as it was in the source
/// ([`ImportReport::kept_in_source`]), so a rewrite never takes away a server that worked.
async fn test_before_rewrite(
    servers: &Servers,
    catalog: &crate::catalog::Catalog,
    report: &mut ImportReport,
) {
    let tests = report.imported.iter().map(|(entry, name)| async move {
        let result = crate::checks::test_installed(servers, catalog, name, None, |_| {}).await;
        let failure = match result {
            Ok(r) if r.ok => None,
            Ok(r) => Some(r.error.unwrap_or_else(|| "its test failed".to_owned())),
            Err(e) => Some(e.to_string()),
        };
        (entry.clone(), failure)
    });
    for (entry, failure) in futures::future::join_all(tests).await {
        if let Some(why) = failure {
            report.imported.retain(|(e, _)| *e != entry);
            report.kept_in_source.push((entry, why));
        }
    }
}

/// How an import treats the client's file it read.
pub struct Rewrite<'a> {
    /// The `plugboard` the launchers run.
    pub plugboard: &'a Path,
    /// Test the imported servers first, with this catalog: an entry whose server fails stays as
    /// it was in the file.
    pub test_with: Option<&'a crate::catalog::Catalog>,
    /// Rewrite the file even when that loses what it holds (comments, an inexact number).
    pub force: bool,
}

/// What an import did.
#[derive(Debug)]
pub struct Imported {
    pub report: ImportReport,
    /// The client's file was rewritten (its imported entries are launchers now).
    pub rewritten: bool,
    /// The backup of the file as it was before the rewrite.
    pub backup: Option<PathBuf>,
}

/// Import the planned servers and, with `rewrite`, turn their entries in the client's file
/// into launchers: a rewrite that would lose what the file holds is refused
/// ([`ClientError::WouldLose`]) before anything is imported, unless forced.
pub async fn import_servers(
    servers: &Servers,
    plan: &ImportPlan,
    rewrite: Option<Rewrite<'_>>,
) -> Result<Imported, ClientError> {
    if let Some(rewrite) = &rewrite
        && !rewrite.force
        && let Some(what) = std::fs::read_to_string(&plan.path)
            .ok()
            .and_then(|text| jsonc::rewrite_loss(&text))
    {
        return Err(ClientError::WouldLose {
            path: plan.path.clone(),
            what,
        });
    }
    let mut report = apply_import(servers, plan);
    let Some(rewrite) = rewrite else {
        return Ok(Imported {
            report,
            rewritten: false,
            backup: None,
        });
    };
    if let Some(catalog) = rewrite.test_with
        && !report.imported.is_empty()
    {
        test_before_rewrite(servers, catalog, &mut report).await;
    }
    let backup = rewrite_source(
        servers.config().dir(),
        plan,
        &report,
        rewrite.plugboard,
        rewrite.force,
    )?;
    Ok(Imported {
        report,
        rewritten: true,
        backup,
    })
}

/// Whether `a` and `b` are the same server: the same URL, the same program with the same
/// arguments (secret references stand for any value), or the same package started by the same
/// runner with the same arguments whatever version either pins (`npx -y pkg` is the installed
/// `npx -y pkg@1.2.3`).
fn same_server(a: &ServerConfig, b: &ServerConfig) -> bool {
    let masked = |text: &str| {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find(crate::config::SECRET_ARG_OPEN) {
            out.push_str(&rest[..at]);
            out.push('\u{1}');
            rest = rest[at..].find('}').map_or("", |end| &rest[at + end + 1..]);
        }
        out.push_str(rest);
        out
    };
    match (&a.url, &b.url, &a.command, &b.command) {
        (Some(x), Some(y), _, _) => {
            masked(x.trim_end_matches('/')) == masked(y.trim_end_matches('/'))
        }
        (None, None, Some(x), Some(y)) => {
            let program = |c: &str| {
                Path::new(c)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let same_args = |p: &[String], q: &[String]| {
                p.len() == q.len() && p.iter().zip(q).all(|(p, q)| masked(p) == masked(q))
            };
            if let (Some((run_a, package_a, rest_a)), Some((run_b, package_b, rest_b))) = (
                crate::launch_diff::runner_identity(a),
                crate::launch_diff::runner_identity(b),
            ) {
                return run_a == run_b && package_a == package_b && same_args(&rest_a, &rest_b);
            }
            program(x) == program(y) && same_args(&a.args, &b.args)
        }
        _ => false,
    }
}

/// Turn the imported entries of the source file into `plugboard run NAME` launchers (after a
/// timestamped backup), so their plaintext secrets are gone from it, and record them as
/// Plugboard's. Returns the backup's path.
fn rewrite_source(
    config_dir: &Path,
    plan: &ImportPlan,
    report: &ImportReport,
    plugboard: &Path,
    force: bool,
) -> Result<Option<PathBuf>, ClientError> {
    if report.imported.is_empty() && report.recognised.is_empty() {
        return Ok(None);
    }
    let format = plan.client.format();
    let mut doc = jsonc::read_object(&plan.path)?;
    let Some(Value::Object(entries)) = doc.get_mut(format.servers_key) else {
        return Err(ClientError::file(
            &plan.path,
            format!(
                "`{}` is gone from the file; it was not rewritten",
                format.servers_key
            ),
        ));
    };
    let mut written = vec![];
    let home = super::launcher_home(config_dir);
    for (key, name) in report.imported.iter().chain(&report.recognised) {
        let launcher = launcher_entry(format, plugboard, name, home.as_deref());
        if let Some(slot) = entries.get_mut(key) {
            *slot = launcher.clone();
            written.push((key.clone(), name.clone(), launcher));
        }
    }
    // The values that moved into the secret store leave no copy in the backup either.
    let moved: Vec<&str> = plan
        .servers
        .iter()
        .filter(|s| report.imported.iter().any(|(entry, _)| *entry == s.entry))
        .flat_map(|s| s.secret_values.values().map(|v| v.expose().as_str()))
        .chain(
            plan.recognised
                .iter()
                .flat_map(|r| r.secret_values.iter().map(|v| v.expose().as_str())),
        )
        .collect();
    let backup = jsonc::write_with_backup_without(&plan.path, &doc, &moved, force)?;
    super::export::record_entries(config_dir, plan.client, &plan.path, &written)?;
    Ok(backup)
}

/// Guess the format of a file for `import --file` without `--format`: VS Code when it has
/// `servers`, Windsurf when an entry has `serverUrl`, else generic.
pub fn guess_format(path: &Path) -> Result<ClientKind, ClientError> {
    let doc = jsonc::read_object(path)?;
    if doc.get("servers").is_some_and(Value::is_object) && doc.get("mcpServers").is_none() {
        return Ok(ClientKind::Vscode);
    }
    let windsurf = doc
        .get("mcpServers")
        .and_then(Value::as_object)
        .is_some_and(|m| m.values().any(|e| e.get("serverUrl").is_some()));
    Ok(if windsurf {
        ClientKind::Windsurf
    } else {
        ClientKind::Generic
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_input(_: &InputSpec) -> Option<Sensitive<String>> {
        None
    }

    #[test]
    fn a_package_is_the_same_server_whatever_version_is_pinned() {
        let run = |command: &str, args: &[&str]| {
            ServerConfig::stdio(command, args.iter().map(|s| s.to_string()).collect())
        };
        let installed = run(
            "npx",
            &[
                "-y",
                "--before",
                "2026-01-01",
                "@modelcontextprotocol/server-memory@2025.9.25",
            ],
        );
        assert!(same_server(
            &installed,
            &run(
                "/usr/bin/npx",
                &["-y", "@modelcontextprotocol/server-memory"]
            )
        ));
        assert!(!same_server(
            &installed,
            &run("npx", &["-y", "@modelcontextprotocol/server-everything"])
        ));
        let folders = |dir: &str| {
            run(
                "npx",
                &["-y", "@modelcontextprotocol/server-filesystem@1", dir],
            )
        };
        assert!(same_server(
            &folders("/a"),
            &run("npx", &["@modelcontextprotocol/server-filesystem", "/a"])
        ));
        assert!(
            !same_server(&folders("/a"), &folders("/b")),
            "other folders, another server"
        );
        assert!(same_server(
            &run(
                "uvx",
                &[
                    "--exclude-newer",
                    "2026-01-01",
                    "mcp-server-fetch==2025.4.7"
                ]
            ),
            &run("uvx", &["mcp-server-fetch"])
        ));
        assert!(!same_server(
            &run("uvx", &["mcp-server-fetch"]),
            &run("npx", &["mcp-server-fetch"])
        ));
        assert!(same_server(
            &run("node", &["server.js"]),
            &run("/usr/bin/node", &["server.js"])
        ));
        assert!(!same_server(
            &run("node", &["a.js"]),
            &run("node", &["b.js"])
        ));
    }

    #[test]
    fn names_are_made_valid_and_unique() {
        let taken: BTreeSet<String> = ["github".to_string(), "github-2".to_string()].into();
        assert_eq!(unique_name(&base_name("github"), &taken), "github-3");
        assert_eq!(base_name("my server.v2"), "my-server-v2");
        assert_eq!(base_name("!!!"), "server");
    }

    #[test]
    fn variables_expand_per_client() {
        let inputs = vec![InputSpec {
            id: "pat".into(),
            description: Some("Token".into()),
            password: true,
            default: None,
        }];
        let ask = |spec: &InputSpec| (spec.id == "pat").then(|| Sensitive::new("tok-123".into()));
        let vscode = Expander {
            vars: super::super::vscode::FORMAT.vars,
            inputs: &inputs,
            ask: &ask,
            cache: Default::default(),
            workspace: None,
        };
        let e = vscode.expand("Bearer ${input:pat}").unwrap();
        assert_eq!(e.text, "Bearer tok-123");
        assert!(e.secret);
        assert!(vscode.expand("${workspaceFolder}/x").is_err());
        // In a project's own file, the project folder is known.
        let in_project = Expander {
            workspace: Some(Path::new("/src/app")),
            ..vscode
        };
        assert_eq!(
            in_project
                .expand("${workspaceFolder}/db:${workspaceFolderBasename}")
                .unwrap()
                .text,
            "/src/app/db:app"
        );
        assert!(in_project.expand("${cwd}").is_err());
        let claude = Expander {
            vars: super::super::claude_code::FORMAT.vars,
            inputs: &[],
            ask: &no_input,
            cache: Default::default(),
            workspace: None,
        };
        let e = claude
            .expand("${PLUGBOARD_SURELY_UNSET_VAR:-fallback}/${env:KEEP}")
            .unwrap();
        assert_eq!(e.text, "fallback/${env:KEEP}");
        // A reference to the environment stays one (in one syntax); filling it in now fails
        // where the variable is unset.
        let kept = claude.expand("${PLUGBOARD_SURELY_UNSET_VAR}").unwrap();
        assert_eq!(kept.text, "${env:PLUGBOARD_SURELY_UNSET_VAR}");
        assert_eq!(kept.env_refs, ["PLUGBOARD_SURELY_UNSET_VAR"]);
        assert!(kept.filled().is_err());
    }
}
