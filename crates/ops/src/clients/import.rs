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
    ClientError, ClientFormat, ClientKind, VarSyntax, jsonc, launcher_entry, launcher_target,
};
use crate::config::{
    Auth, Config, ConfigValue, SecretRef, ServerConfig, TransportKind, validate_name,
};
use crate::form::{PreparedServer, new_secret_namespace};
use crate::manage::{Servers, looks_secret};
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

/// What an import would do.
#[derive(Debug, Serialize)]
pub struct ImportPlan {
    pub client: ClientKind,
    pub path: PathBuf,
    pub servers: Vec<PlannedServer>,
    pub skipped: Vec<Skipped>,
}

/// What an import did.
#[derive(Debug, Default, Serialize)]
pub struct ImportReport {
    /// (entry in the source, Plugboard name) of every server installed.
    pub imported: Vec<(String, String)>,
    /// (entry, error) of every server that could not be installed.
    pub failed: Vec<(String, String)>,
}

/// A value after variable expansion, and whether a password input went into it.
struct Expanded {
    text: String,
    secret: bool,
}

struct Expander<'a> {
    vars: VarSyntax,
    inputs: &'a [InputSpec],
    ask: &'a dyn Fn(&InputSpec) -> Option<Sensitive<String>>,
    cache: std::cell::RefCell<BTreeMap<String, Option<Sensitive<String>>>>,
}

impl Expander<'_> {
    fn expand(&self, text: &str) -> Result<Expanded, String> {
        let mut out = String::new();
        let mut secret = false;
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
        Ok(Expanded { text: out, secret })
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

/// One entry → a server config, the secrets to store, and notes.
fn convert(
    format: &ClientFormat,
    entry: &Map<String, Value>,
    expander: &Expander,
    extra_secrets: &[String],
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
        if url.secret {
            return Err(
                "a password input is part of its URL; Plugboard keeps URLs in plain config".into(),
            );
        }
        let transport = remote_kind(kind).unwrap_or(TransportKind::Auto);
        let mut config = ServerConfig::remote(transport, url.text);
        if let Some(headers) = entry.get("headers").and_then(Value::as_object) {
            for (key, value) in headers {
                let Some(raw) = text_of(value) else {
                    continue;
                };
                let value = expander.expand(&raw)?;
                let bearer = key.eq_ignore_ascii_case("authorization")
                    && value.text.len() > 7
                    && value.text[..7].eq_ignore_ascii_case("bearer ");
                if bearer {
                    let token = value.text[7..].trim().to_string();
                    secrets.insert(BEARER_SECRET.to_string(), Sensitive::new(token));
                    config.auth = Auth::Bearer {
                        token: SecretRef::new(BEARER_SECRET),
                    };
                    moved.push("bearer token".to_string());
                } else if looks_secret(key) || is_extra(key) || value.secret {
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
            if arg.secret {
                return Err(
                    "a password input is passed as a command-line argument; Plugboard never puts \
                     secrets on a command line. Make the server read it from an environment \
                     variable, then import again"
                        .into(),
                );
            }
            args.push(arg.text);
        }
        if command.secret {
            return Err("a password input is part of its command".into());
        }
        let mut config = ServerConfig::stdio(command.text, args);
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
                if looks_secret(key) || is_extra(key) || value.secret {
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
            config.cwd = Some(expander.expand(cwd)?.text);
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
    let mut plan = ImportPlan {
        client: kind,
        path: path.to_path_buf(),
        servers: vec![],
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
        match convert(format, object, &expander, &options.extra_secrets) {
            Ok((config, secret_values, secrets, notes)) => {
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
    report
}

/// Turn the imported entries of the source file into `plugboard run NAME` launchers (after a
/// timestamped backup), so their plaintext secrets are gone from it, and record them as
/// Plugboard's. Returns the backup's path.
pub fn rewrite_source(
    config_dir: &Path,
    plan: &ImportPlan,
    report: &ImportReport,
    plugboard: &Path,
) -> Result<Option<PathBuf>, ClientError> {
    if report.imported.is_empty() {
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
    for (key, name) in &report.imported {
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
        .collect();
    let backup = jsonc::write_with_backup_without(&plan.path, &doc, &moved)?;
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
        };
        let e = vscode.expand("Bearer ${input:pat}").unwrap();
        assert_eq!(e.text, "Bearer tok-123");
        assert!(e.secret);
        assert!(vscode.expand("${workspaceFolder}/x").is_err());
        let claude = Expander {
            vars: super::super::claude_code::FORMAT.vars,
            inputs: &[],
            ask: &no_input,
            cache: Default::default(),
        };
        let e = claude
            .expand("${PLUGBOARD_SURELY_UNSET_VAR:-fallback}/${env:KEEP}")
            .unwrap();
        assert_eq!(e.text, "fallback/${env:KEEP}");
        assert!(claude.expand("${PLUGBOARD_SURELY_UNSET_VAR}").is_err());
    }
}
