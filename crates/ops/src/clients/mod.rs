//! Other MCP clients' config files: where each client keeps its servers, what an entry looks
//! like, and the three things Plugboard does with them:
//!
//! - [`export`]: write Plugboard's enabled servers into a client's file as launchers
//!   (`{"command": "<plugboard>", "args": ["run", NAME]}`, with `PLUGBOARD_HOME` in their
//!   `env` when Plugboard's home is not the default), merging with a timestamped backup,
//!   keeping every other entry and key, and touching only entries Plugboard wrote (recorded in
//!   `<config dir>/exports.json`);
//! - [`import`]: read a client's servers into Plugboard, moving every literal secret into the
//!   secret store, and optionally rewrite the source so its entries become launchers;
//! - [`detect`]: per known client, its file, whether it exists, which Plugboard servers it has and
//!   whether those entries drifted from what Plugboard last wrote (for the app's "Use in…" panel).
//!
//! One file per format ([`claude_desktop`], [`claude_code`], [`cursor`], [`vscode`],
//! [`copilot`], [`windsurf`], [`generic`]) holds that client's facts: paths per OS, the servers key, entry
//! shapes and variable syntax. Files may be JSONC (comments, trailing commas) ([`jsonc`]).

pub mod claude_code;
pub mod claude_desktop;
pub mod copilot;
pub mod cursor;
pub mod export;
pub mod generic;
pub mod import;
pub mod jsonc;
pub mod launchers;
pub mod quarantine;
pub mod seen;
pub mod state;
pub mod vscode;
pub mod windsurf;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

pub use export::{
    ExportAction, ExportChange, ExportChoice, ExportPlan, apply_export, export_now, plan_export,
};
pub use import::{
    ImportOptions, ImportPlan, ImportReport, Imported, PlannedServer, Recognised, Rewrite, Skipped,
    apply_import, import_servers, plan_import,
};

/// The MCP clients Plugboard can export to and import from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientKind {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    /// GitHub Copilot's portable file (VS Code 1.140 on, and the Copilot CLI).
    Copilot,
    /// A plain `{"mcpServers": {...}}` file anywhere.
    Generic,
}

impl ClientKind {
    /// Every client with a file of its own (not [`ClientKind::Generic`]).
    pub const KNOWN: [ClientKind; 6] = [
        ClientKind::ClaudeDesktop,
        ClientKind::ClaudeCode,
        ClientKind::Cursor,
        ClientKind::Vscode,
        ClientKind::Copilot,
        ClientKind::Windsurf,
    ];

    /// The id used on the command line and in JSON (`claude-desktop`).
    pub fn id(self) -> &'static str {
        self.format().id
    }

    pub fn label(self) -> &'static str {
        self.format().label
    }

    pub fn from_id(id: &str) -> Option<ClientKind> {
        ClientKind::KNOWN
            .into_iter()
            .chain([ClientKind::Generic])
            .find(|k| k.id() == id)
    }

    /// The facts of this client's file format.
    pub fn format(self) -> &'static ClientFormat {
        match self {
            ClientKind::ClaudeDesktop => &claude_desktop::FORMAT,
            ClientKind::ClaudeCode => &claude_code::FORMAT,
            ClientKind::Cursor => &cursor::FORMAT,
            ClientKind::Vscode => &vscode::FORMAT,
            ClientKind::Windsurf => &windsurf::FORMAT,
            ClientKind::Copilot => &copilot::FORMAT,
            ClientKind::Generic => &generic::FORMAT,
        }
    }

    /// The client's user-level config file on this OS (from HOME / APPDATA / XDG_CONFIG_HOME),
    /// `None` for the generic format or when no home directory is known.
    pub fn default_path(self) -> Option<PathBuf> {
        (self.format().path)(&Dirs::from_env())
    }
}

/// Which `${...}` forms a client expands in its entries.
#[derive(Clone, Copy, Debug, Default)]
pub struct VarSyntax {
    /// `${env:NAME}` (VS Code, Cursor, Windsurf).
    pub env_colon: bool,
    /// `${NAME}` and `${NAME:-default}` (Claude Code).
    pub bare: bool,
    /// `${input:ID}` with the file's `inputs` (VS Code).
    pub inputs: bool,
    /// `${userHome}` (VS Code, Cursor).
    pub user_home: bool,
}

/// What one client's file looks like.
#[derive(Debug)]
pub struct ClientFormat {
    pub kind: ClientKind,
    pub id: &'static str,
    pub label: &'static str,
    /// The top-level key holding the servers (`mcpServers`, `servers` for VS Code).
    pub servers_key: &'static str,
    /// The `type` written on a launcher entry, for clients that want one (`stdio`).
    pub launcher_type: Option<&'static str>,
    /// Entries list the tools the client may call (`tools`); launchers allow all of them
    /// (`["*"]`), since Plugboard decides which tools a client sees.
    pub launcher_allows_all_tools: bool,
    /// Keys that may hold a remote server's URL, in order of preference.
    pub url_keys: &'static [&'static str],
    /// The client can get a remote server's headers from a command (`headersHelper`), so an
    /// entry for the gateway over HTTP needs no token in its file.
    pub headers_helper: bool,
    pub vars: VarSyntax,
    /// Why this client's file is deprecated by the client itself, and where to go instead.
    pub deprecated: Option<&'static str>,
    /// The user-level file, from the directories of this machine.
    pub path: fn(&Dirs) -> Option<PathBuf>,
    /// The file the client reads inside a project folder (a workspace), if it reads one.
    pub workspace_path: Option<fn(&Path) -> PathBuf>,
}

/// The directories client paths are built from, read from the environment (so tests can use a
/// temporary HOME).
#[derive(Clone, Debug, Default)]
pub struct Dirs {
    /// The OS the paths are for (`std::env::consts::OS`: `linux`, `macos`, `windows`, ...).
    pub os: &'static str,
    pub home: Option<PathBuf>,
    /// `%APPDATA%` (Windows).
    pub appdata: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (Linux).
    pub xdg_config: Option<PathBuf>,
    /// `$COPILOT_HOME` (GitHub Copilot's folder, `~/.copilot` when unset).
    pub copilot_home: Option<PathBuf>,
}

impl Dirs {
    pub fn from_env() -> Dirs {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = if cfg!(windows) {
            var("USERPROFILE").or_else(|| var("HOME"))
        } else {
            var("HOME")
        };
        let xdg_config =
            var("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
        Dirs {
            os: std::env::consts::OS,
            home,
            appdata: var("APPDATA"),
            xdg_config,
            copilot_home: var("COPILOT_HOME"),
        }
    }

    /// The per-user application settings directory of this OS: `~/Library/Application
    /// Support` (macOS), `%APPDATA%` (Windows), `$XDG_CONFIG_HOME` or `~/.config` (others).
    pub fn app_config(&self) -> Option<PathBuf> {
        match self.os {
            "macos" => self
                .home
                .as_ref()
                .map(|h| h.join("Library").join("Application Support")),
            "windows" => self.appdata.clone(),
            _ => self.xdg_config.clone(),
        }
    }
}

/// Why reading or writing a client's file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    #[error("{path}: {detail}")]
    File { path: PathBuf, detail: String },
    /// The client's file changed between the plan and its writing (another export, the client
    /// itself): nothing was written.
    #[error(
        "{path} changed since the export was planned, so nothing was written; plan it again to \
         see the file as it is now"
    )]
    ChangedSincePlan { path: PathBuf },
    /// Rewriting the file would lose what it has (comments, an inexact number): not written.
    #[error(
        "{path} {what}, so nothing was written; edit it by hand, or pass --force to rewrite it \
         anyway (a backup beside it keeps it as it was)"
    )]
    WouldLose { path: PathBuf, what: String },
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Manage(#[from] crate::manage::ManageError),
}

impl ClientError {
    pub(crate) fn file(path: &Path, detail: impl Into<String>) -> ClientError {
        ClientError::File {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }
}

/// The absolute path of the running `plugboard` binary (what launchers name).
pub fn plugboard_exe() -> Result<PathBuf, ClientError> {
    let exe = std::env::current_exe()
        .map_err(|e| ClientError::Usage(format!("cannot find the plugboard binary: {e}")))?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

/// The Plugboard home a launcher must name: `config_dir`, unless it is the default one (where
/// a `plugboard run` started without `PLUGBOARD_HOME` looks anyway).
pub fn launcher_home(config_dir: &Path) -> Option<PathBuf> {
    let same = |a: &Path, b: &Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
    };
    match crate::config::default_config_dir() {
        Some(default) if same(&default, config_dir) => None,
        _ => Some(config_dir.to_path_buf()),
    }
}

/// The launcher entry for server `name` in `format`. With `home`, the entry's environment sets
/// `PLUGBOARD_HOME` to it, so a client started from the desktop finds the same servers.
pub fn launcher_entry(
    format: &ClientFormat,
    plugboard: &Path,
    name: &str,
    home: Option<&Path>,
) -> Value {
    plugboard_entry(format, plugboard, &["run", name], home)
}

/// The gateway entry for profile `profile`: `plugboard serve --profile PROFILE`, one entry that
/// serves every server of the profile.
pub fn gateway_entry(
    format: &ClientFormat,
    plugboard: &Path,
    profile: &str,
    home: Option<&Path>,
) -> Value {
    plugboard_entry(format, plugboard, &["serve", "--profile", profile], home)
}

/// The entry for profile `profile`'s gateway over HTTP at `address`, for a client that gets a
/// server's headers from a command: `{type: "http", url, headersHelper: "<plugboard> serve
/// --profile P --print-headers"}`. The client runs the helper when it connects, so the
/// gateway's bearer token stays in the keyring and out of the client's file.
pub fn http_gateway_entry(
    plugboard: &Path,
    profile: &str,
    address: std::net::SocketAddr,
    home: Option<&Path>,
) -> Value {
    let mut helper = String::new();
    if let Some(home) = home {
        helper.push_str(&format!(
            "PLUGBOARD_HOME={} ",
            shell_quote(&home.to_string_lossy())
        ));
    }
    helper.push_str(&format!(
        "{} serve --profile {} --print-headers",
        shell_quote(&plugboard.to_string_lossy()),
        shell_quote(profile)
    ));
    serde_json::json!({
        "type": "http",
        "url": format!("http://{address}/mcp"),
        "headersHelper": helper,
    })
}

/// `text` as one word for a POSIX shell (single quotes unless it needs none).
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The key of profile `profile`'s gateway entry in a client's file: `plugboard`, or
/// `plugboard-PROFILE` for a profile other than `default`.
pub fn gateway_key(profile: &str) -> String {
    if profile == crate::gateway::profiles::DEFAULT_PROFILE {
        "plugboard".to_owned()
    } else {
        format!("plugboard-{profile}")
    }
}

/// An entry that runs `plugboard` with `args`.
fn plugboard_entry(
    format: &ClientFormat,
    plugboard: &Path,
    args: &[&str],
    home: Option<&Path>,
) -> Value {
    let mut entry = Map::new();
    if let Some(kind) = format.launcher_type {
        entry.insert("type".into(), Value::String(kind.into()));
    }
    if format.launcher_allows_all_tools {
        entry.insert("tools".into(), serde_json::json!(["*"]));
    }
    entry.insert(
        "command".into(),
        Value::String(plugboard.to_string_lossy().into_owned()),
    );
    entry.insert(
        "args".into(),
        Value::Array(args.iter().map(|a| Value::String((*a).into())).collect()),
    );
    if let Some(home) = home {
        let mut env = Map::new();
        env.insert(
            "PLUGBOARD_HOME".into(),
            Value::String(home.to_string_lossy().into_owned()),
        );
        entry.insert("env".into(), Value::Object(env));
    }
    Value::Object(entry)
}

/// If `entry` is a Plugboard launcher (`<…/plugboard> run NAME`), the server it runs.
pub fn launcher_target(entry: &Value) -> Option<&str> {
    match plugboard_args(entry)? {
        [Value::String(run), Value::String(name)] if run == "run" => Some(name),
        _ => None,
    }
}

/// The profile a gateway entry serves: a launcher of `plugboard serve [--profile P]`, or an
/// HTTP entry whose headers helper is `plugboard serve --profile P --print-headers`.
pub fn gateway_target(entry: &Value) -> Option<String> {
    let Some(args) = plugboard_args(entry) else {
        return http_gateway_target(entry);
    };
    match args {
        [Value::String(serve)] if serve == "serve" => {
            Some(crate::gateway::profiles::DEFAULT_PROFILE.to_owned())
        }
        [
            Value::String(serve),
            Value::String(flag),
            Value::String(profile),
        ] if serve == "serve" && flag == "--profile" => Some(profile.clone()),
        _ => None,
    }
}

/// The profile of an HTTP gateway entry ([`http_gateway_entry`]).
fn http_gateway_target(entry: &Value) -> Option<String> {
    let helper = entry.get("headersHelper")?.as_str()?;
    let words = crate::command_line::split_command_line(helper).ok()?;
    let words = match words.split_first() {
        Some((first, rest)) if first.starts_with("PLUGBOARD_HOME=") => rest,
        _ => words.as_slice(),
    };
    match words {
        [command, serve, flag, profile, print]
            if is_plugboard_command(command)
                && serve == "serve"
                && flag == "--profile"
                && print == "--print-headers" =>
        {
            Some(profile.clone())
        }
        _ => None,
    }
}

/// Whether `command` names the `plugboard` program.
fn is_plugboard_command(command: &str) -> bool {
    command
        .rsplit(['/', '\\'])
        .next()
        .is_some_and(|base| base.trim_end_matches(".exe") == "plugboard")
}

/// Whether the entry is Plugboard's own: a relay of one server or a gateway.
pub fn is_plugboard_entry(entry: &Value) -> bool {
    launcher_target(entry).is_some() || gateway_target(entry).is_some()
}

/// The arguments of an entry whose command is `plugboard`.
fn plugboard_args(entry: &Value) -> Option<&[Value]> {
    if !is_plugboard_command(entry.get("command")?.as_str()?) {
        return None;
    }
    Some(entry.get("args")?.as_array()?.as_slice())
}

/// One known client as the app's "Use in…" panel shows it.
#[derive(Clone, Debug, Serialize)]
pub struct ClientStatus {
    pub client: ClientKind,
    pub label: &'static str,
    /// The project folder whose file this is; `None` for the client's user-level file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
    /// The client itself deprecates this file: why, and where its servers go now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<&'static str>,
    /// The file: the client's user-level one (`None` without a home directory), or the one in
    /// `workspace`.
    pub path: Option<PathBuf>,
    pub exists: bool,
    /// Plugboard servers the file launches (entries of the form `plugboard run NAME`).
    pub servers: Vec<String>,
    /// The profiles its gateway entries serve (`plugboard serve --profile P`).
    pub gateways: Vec<String>,
    /// How many other (not Plugboard) entries the file has: candidates for import.
    pub other_entries: usize,
    /// Those entries: what each launches, and whether it is new since the user last looked.
    pub others: Vec<OtherEntry>,
    /// Whether Plugboard's entries differ from what it last wrote there (edited or removed by
    /// someone else).
    pub drifted: bool,
    /// The entries that drifted: `missing` or `modified` (since Plugboard wrote them), or
    /// `server_gone` (it launches a server that is not installed: it fails in that client).
    pub drift: Vec<Drift>,
    /// Why the file could not be read, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An entry of a client's file that is not a Plugboard launcher.
#[derive(Clone, Debug, Serialize)]
pub struct OtherEntry {
    pub entry: String,
    /// Its command line or URL, with anything shaped like a secret shown as `***`.
    pub launches: String,
    /// Not seen before in `plugboard clients` or the app (added, or changed, since the last
    /// look): someone or something else put it there.
    pub new: bool,
    #[serde(skip)]
    pub fingerprint: String,
}

/// What an entry launches, for display: command and arguments, or URL, with every argument
/// shaped like a secret as `***`.
fn launches(entry: &Value) -> String {
    let shown = |text: &str| {
        if crate::secret_shapes::looks_like_secret_value(text) {
            "***".to_owned()
        } else {
            text.to_owned()
        }
    };
    if let Some(url) = entry
        .get("url")
        .or_else(|| entry.get("serverUrl"))
        .and_then(Value::as_str)
    {
        return match url::Url::parse(url) {
            Ok(mut parsed) => {
                parsed.set_query(None);
                let _ = parsed.set_password(None);
                parsed.to_string()
            }
            Err(_) => shown(url),
        };
    }
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("?");
    std::iter::once(shown(command))
        .chain(
            entry
                .get("args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(shown),
        )
        .collect::<Vec<_>>()
        .join(" ")
}

/// One entry that is not what Plugboard last wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Drift {
    pub entry: String,
    pub state: &'static str,
}

/// Every known client: its file, whether it exists, Plugboard's servers in it, and drift.
/// `config_dir` is Plugboard's config directory (where `exports.json` is kept). With
/// `workspace`, the files the clients read in that project folder follow the user-level ones.
pub fn detect(config_dir: &Path, workspace: Option<&Path>) -> Vec<ClientStatus> {
    let dirs = Dirs::from_env();
    let known = Known {
        recorded: state::ExportState::load(config_dir).unwrap_or_default(),
        seen: seen::Seen::load(config_dir),
        installed: crate::config::ConfigStore::new(config_dir.to_owned())
            .load()
            .ok()
            .map(|c| c.names().map(str::to_owned).collect()),
    };
    let user = ClientKind::KNOWN
        .iter()
        .map(|kind| status_of(*kind, (kind.format().path)(&dirs), None, &known));
    let in_workspace = workspace.into_iter().flat_map(|folder| {
        ClientKind::KNOWN.iter().filter_map(|kind| {
            let path = (kind.format().workspace_path?)(folder);
            Some(status_of(*kind, Some(path), Some(folder), &known))
        })
    });
    user.chain(in_workspace).collect()
}

/// What [`detect`] compares every file with.
struct Known {
    recorded: state::ExportState,
    seen: seen::Seen,
    installed: Option<BTreeSet<String>>,
}

/// One client's file (`path`, inside `workspace` when it is a project's) as [`detect`] shows it.
fn status_of(
    kind: ClientKind,
    path: Option<PathBuf>,
    workspace: Option<&Path>,
    known: &Known,
) -> ClientStatus {
    let format = kind.format();
    let mut status = ClientStatus {
        client: kind,
        label: format.label,
        workspace: workspace.map(Path::to_path_buf),
        deprecated: format.deprecated,
        path: path.clone(),
        exists: path.as_ref().is_some_and(|p| p.exists()),
        servers: vec![],
        gateways: vec![],
        other_entries: 0,
        others: vec![],
        drifted: false,
        drift: vec![],
        error: None,
    };
    let Some(path) = path.filter(|p| p.exists()) else {
        return status;
    };
    let doc = match jsonc::read_object(&path) {
        Ok(doc) => doc,
        Err(e) => {
            status.error = Some(e.to_string());
            return status;
        }
    };
    let empty = Map::new();
    let entries = doc
        .get(format.servers_key)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (key, entry) in entries {
        match launcher_target(entry) {
            Some(name) => {
                if known
                    .installed
                    .as_ref()
                    .is_some_and(|names| !names.contains(name))
                {
                    status.drift.push(Drift {
                        entry: key.clone(),
                        state: "server_gone",
                    });
                }
                status.servers.push(name.to_string());
            }
            None if let Some(profile) = gateway_target(entry) => {
                status.gateways.push(profile);
            }
            None => {
                status.other_entries += 1;
                status.others.push(OtherEntry {
                    entry: key.clone(),
                    launches: launches(entry),
                    new: !known.seen.has(&path, key, entry),
                    fingerprint: seen::fingerprint(entry),
                });
            }
        }
    }
    if let Some(record) = known.recorded.file(&path) {
        for (key, written) in &record.entries {
            let state = match entries.get(key) {
                None => Some("missing"),
                Some(now) if now != &written.entry => Some("modified"),
                Some(_) => None,
            };
            if let Some(state) = state {
                status.drift.push(Drift {
                    entry: key.clone(),
                    state,
                });
            }
        }
    }
    status.drifted = !status.drift.is_empty();
    status
}

/// `YYYYMMDD-HHMMSS` (UTC) of now, for backup file names.
pub(crate) fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_are_recognised() {
        let entry = launcher_entry(&vscode::FORMAT, Path::new("/opt/bin/plugboard"), "gh", None);
        assert_eq!(entry["type"], "stdio");
        assert!(entry.get("env").is_none());
        assert_eq!(launcher_target(&entry), Some("gh"));
        let elsewhere = launcher_entry(
            &cursor::FORMAT,
            Path::new("/opt/bin/plugboard"),
            "gh",
            Some(Path::new("/srv/pb")),
        );
        assert_eq!(elsewhere["env"]["PLUGBOARD_HOME"], "/srv/pb");
        assert_eq!(launcher_target(&elsewhere), Some("gh"));
        let other = serde_json::json!({"command": "npx", "args": ["run", "x"]});
        assert_eq!(launcher_target(&other), None);
        let win = serde_json::json!({"command": "C:\\p\\plugboard.exe", "args": ["run", "x"]});
        assert_eq!(launcher_target(&win), Some("x"));
    }

    #[test]
    fn paths_per_os() {
        let path = |kind: ClientKind, os: &'static str| {
            let dirs = Dirs {
                os,
                home: Some(PathBuf::from("/h")),
                appdata: Some(PathBuf::from("/appdata")),
                xdg_config: Some(PathBuf::from("/xdg")),
                copilot_home: None,
            };
            (kind.format().path)(&dirs).unwrap()
        };
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            path(ClientKind::ClaudeDesktop, "macos"),
            p("/h/Library/Application Support/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClientKind::ClaudeDesktop, "windows"),
            p("/appdata/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClientKind::ClaudeDesktop, "linux"),
            p("/xdg/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClientKind::Vscode, "macos"),
            p("/h/Library/Application Support/Code/User/mcp.json")
        );
        assert_eq!(
            path(ClientKind::Vscode, "windows"),
            p("/appdata/Code/User/mcp.json")
        );
        assert_eq!(
            path(ClientKind::Copilot, "linux"),
            p("/h/.copilot/mcp-config.json")
        );
        assert_eq!(
            path(ClientKind::Vscode, "linux"),
            p("/xdg/Code/User/mcp.json")
        );
        for os in ["linux", "macos", "windows"] {
            assert_eq!(path(ClientKind::ClaudeCode, os), p("/h/.claude.json"));
            assert_eq!(path(ClientKind::Cursor, os), p("/h/.cursor/mcp.json"));
            assert_eq!(
                path(ClientKind::Windsurf, os),
                p("/h/.codeium/windsurf/mcp_config.json")
            );
        }
    }

    #[test]
    fn timestamps_look_right() {
        let t = timestamp();
        assert_eq!(t.len(), 15, "{t}");
        assert!(t.starts_with("20"), "{t}");
    }
}
