//! "Use in other apps" for the app: which MCP clients (Claude Desktop, Cursor, …) are on this
//! machine, which Plugboard servers each one launches, drift from what Plugboard wrote, and
//! exporting the enabled servers into one client's file (with the core's backup). All logic is
//! in [`crate::clients`]; launchers name the `plugboard` command-line tool, never the app.

use std::path::{Path, PathBuf};

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{Api, ApiError, ErrorCode};
use crate::clients::{self, ClientError, ClientKind, ClientStatus, ExportChoice, ExportPlan};

/// One entry of a client's file that is not what Plugboard last wrote there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct DriftView {
    pub entry: String,
    /// `missing` or `modified`.
    pub state: String,
}

/// One known MCP client on this machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ClientView {
    /// `claude-desktop`, `claude-code`, `cursor`, `vscode`, `copilot`, `windsurf`.
    pub id: String,
    pub label: String,
    /// The client itself deprecates this file: why, and where its servers go now.
    pub deprecated: Option<String>,
    /// Its user-level config file (`None` without a home directory).
    pub path: Option<String>,
    pub exists: bool,
    /// Plugboard servers the file launches.
    pub servers: Vec<String>,
    /// Entries that are not Plugboard launchers.
    pub other_entries: u32,
    /// Those entries, with what they launch and whether they are new since the last look.
    pub others: Vec<OtherEntryView>,
    pub drifted: bool,
    pub drift: Vec<DriftView>,
    /// Why the file could not be read.
    pub error: Option<String>,
}

/// An entry of a client's file that is not a Plugboard launcher.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct OtherEntryView {
    pub entry: String,
    /// Its command line or URL, anything shaped like a secret as `***`.
    pub launches: String,
    /// Not there (or different) when the user last marked the entries as seen: someone or
    /// something else added it.
    pub new: bool,
}

/// What taking an entry out of a client's file did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct RemovedEntry {
    pub entry: String,
    pub path: String,
    /// The file as it was, beside it.
    pub backup: Option<String>,
}

/// The global "Use in other apps" panel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ClientsOverview {
    pub clients: Vec<ClientView>,
    /// The `plugboard` command-line tool the launchers will name.
    pub cli_path: Option<String>,
    /// Why exporting is not possible (no `plugboard` CLI found), when it is not.
    pub cli_missing: Option<String>,
}

/// One client, seen from one server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct UseInClient {
    pub id: String,
    pub label: String,
    pub path: Option<String>,
    pub exists: bool,
    /// Whether the client's file launches this server.
    pub has_server: bool,
    /// Whether this server's entry there differs from what Plugboard wrote.
    pub drifted: bool,
    pub error: Option<String>,
}

/// The "Use in…" section of a server's detail view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct UseIn {
    pub name: String,
    /// Only enabled servers are exported.
    pub enabled: bool,
    pub clients: Vec<UseInClient>,
    pub cli_path: Option<String>,
    pub cli_missing: Option<String>,
}

/// What exporting did to one entry of the client's file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ExportChangeView {
    pub entry: String,
    pub server: Option<String>,
    /// `add`, `update`, `unchanged`, `remove`, `conflict`, `left_alone`.
    pub action: String,
    pub detail: Option<String>,
}

/// Which servers an export writes: `servers` (`None`: every enabled one), and whether they are
/// added to what the client launches already (`add`, "Add to Cursor" on one server) or become
/// exactly its Plugboard servers (the checklist).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, specta::Type)]
pub struct ExportSelection {
    pub servers: Option<Vec<String>>,
    #[serde(default)]
    pub add: bool,
    /// One gateway entry serving this profile instead of a launcher per server.
    #[serde(default)]
    pub profile: Option<String>,
}

impl ExportSelection {
    fn choice(&self) -> ExportChoice {
        if let Some(profile) = &self.profile {
            return ExportChoice::Gateway(profile.clone());
        }
        match &self.servers {
            None => ExportChoice::All,
            Some(list) => {
                let set: BTreeSet<String> = list.iter().cloned().collect();
                if self.add {
                    ExportChoice::Add(set)
                } else {
                    ExportChoice::Only(set)
                }
            }
        }
    }
}

/// What an export would do, before it is confirmed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ExportPreview {
    pub client: String,
    pub label: String,
    pub path: String,
    /// Whether the file exists (it is created otherwise).
    pub exists: bool,
    pub changes: Vec<ExportChangeView>,
    /// Plugboard's entries as they will be in the file (pretty JSON; launchers only, they hold
    /// no secret).
    pub entries_json: String,
    pub changes_file: bool,
    /// How the change takes effect ("Restart Claude Desktop to apply.").
    pub apply_hint: String,
}

/// One server found in another client's file, as importing it would make it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ImportCandidate {
    pub entry: String,
    /// The Plugboard name it gets.
    pub name: String,
    pub transport_label: String,
    pub target: String,
    /// What moves into the keyring (`env NAME`, `header NAME`, `bearer token`).
    pub secrets: Vec<String>,
    pub enabled: bool,
    pub notes: Vec<String>,
}

/// What importing from one client would do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ImportPreview {
    pub client: String,
    pub label: String,
    pub path: String,
    pub servers: Vec<ImportCandidate>,
    /// Entries that are not imported, with the reason.
    pub skipped: Vec<DriftView>,
}

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ImportResultView {
    pub imported: Vec<String>,
    /// `entry: why` of each server that could not be imported.
    pub failed: Vec<String>,
    /// The backup of the client's file, when its entries were turned into launchers.
    pub backup: Option<String>,
}

/// How a change to `kind`'s file takes effect.
pub fn apply_hint(kind: ClientKind) -> String {
    let label = kind.label();
    match kind {
        ClientKind::ClaudeCode => format!("Start a new {label} session to apply."),
        ClientKind::Vscode => {
            format!("{label} reloads the file by itself; restart it if the servers do not show.")
        }
        ClientKind::Cursor => format!("Restart {label} (or reload its window) to apply."),
        _ => format!("Restart {label} to apply."),
    }
}

fn change_views(plan: &ExportPlan) -> Vec<ExportChangeView> {
    plan.changes
        .iter()
        .map(|c| ExportChangeView {
            entry: c.entry.clone(),
            server: c.server.clone(),
            action: serde_json::to_value(c.action)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            detail: c.detail.clone(),
        })
        .collect()
}

/// The outcome of `export_to_client`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ExportResult {
    pub client: String,
    pub label: String,
    pub path: String,
    /// The copy of the file as it was before, when it existed and changed.
    pub backup: Option<String>,
    pub changed_file: bool,
    pub changes: Vec<ExportChangeView>,
    /// Servers not exported because they are switched off.
    pub disabled: Vec<String>,
    pub apply_hint: String,
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

fn client_view(s: &ClientStatus) -> ClientView {
    ClientView {
        id: s.client.id().into(),
        label: s.label.into(),
        deprecated: s.deprecated.map(str::to_owned),
        path: s.path.as_deref().map(text),
        exists: s.exists,
        servers: s.servers.clone(),
        other_entries: s.other_entries.min(u32::MAX as usize) as u32,
        others: s
            .others
            .iter()
            .map(|o| OtherEntryView {
                entry: o.entry.clone(),
                launches: o.launches.clone(),
                new: o.new,
            })
            .collect(),
        drifted: s.drifted,
        drift: s
            .drift
            .iter()
            .map(|d| DriftView {
                entry: d.entry.clone(),
                state: d.state.into(),
            })
            .collect(),
        error: s.error.clone(),
    }
}

fn client_error(err: ClientError) -> ApiError {
    match err {
        ClientError::Manage(e) => e.into(),
        ClientError::WouldLose { .. } => ApiError::new(ErrorCode::WouldLose, err.to_string()),
        other => ApiError::new(ErrorCode::Client, other.to_string()),
    }
}

/// The `plugboard` CLI next to `exe` or in one of `path_dirs`, never `exe` itself.
pub(super) fn locate_cli(
    exe: Option<&Path>,
    path_dirs: impl IntoIterator<Item = PathBuf>,
) -> Option<PathBuf> {
    let file = if cfg!(windows) {
        "plugboard.exe"
    } else {
        "plugboard"
    };
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let me = exe.map(canon);
    let beside = me.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    beside
        .into_iter()
        .chain(path_dirs)
        .map(|dir| dir.join(file))
        .find(|c| c.is_file() && Some(canon(c)) != me)
        .map(|c| canon(&c))
}

impl Api {
    /// The `plugboard` CLI the launchers name: set with [`Api::with_cli`], else next to the
    /// running executable, else on PATH. An error message when there is none.
    fn cli(&self) -> Result<PathBuf, String> {
        if let Some(path) = &self.cli {
            return Ok(path.clone());
        }
        let exe = std::env::current_exe().ok();
        let path = std::env::var_os("PATH").unwrap_or_default();
        locate_cli(exe.as_deref(), std::env::split_paths(&path)).ok_or_else(|| {
            "the `plugboard` command-line tool was not found next to the app or on PATH; \
             other apps start your servers through it, so install it first"
                .to_string()
        })
    }

    /// Use `cli` as the `plugboard` command-line tool launchers name (tests, packaging).
    pub fn with_cli(mut self, cli: impl Into<PathBuf>) -> Api {
        self.cli = Some(cli.into());
        self
    }

    /// Every known MCP client on this machine, its file, the Plugboard servers it launches and
    /// drift; and the CLI exports would name.
    pub fn clients_overview(&self) -> ClientsOverview {
        let cli = self.cli();
        ClientsOverview {
            clients: clients::detect(self.servers.config().dir(), None)
                .iter()
                .map(client_view)
                .collect(),
            cli_path: cli.as_deref().ok().map(text),
            cli_missing: cli.err(),
        }
    }

    /// Record every other entry the clients' files hold now as seen: the user looked at them.
    pub fn mark_clients_seen(&self) -> Result<ClientsOverview, ApiError> {
        let dir = self.servers.config().dir();
        clients::seen::record(dir, &clients::detect(dir, None)).map_err(|e| {
            ApiError::new(ErrorCode::Io, format!("cannot remember what you saw: {e}"))
        })?;
        Ok(self.clients_overview())
    }

    /// Import entry `entry` of client `client`'s file in quarantine: disabled, sandboxed
    /// without network, not started; its secrets go to the keyring; the client's file is left
    /// as it is.
    pub fn quarantine_entry(
        &self,
        client: &str,
        entry: &str,
    ) -> Result<ImportResultView, ApiError> {
        let (_, mut plan) = self.import_plan(client)?;
        clients::quarantine::keep_only(&mut plan, &[entry.to_owned()]).map_err(client_error)?;
        clients::quarantine::quarantine(&mut plan);
        for server in &plan.servers {
            self.allowed(crate::policy::Subject::Imported { name: &server.name })?;
        }
        let report = clients::apply_import(&self.servers, &plan);
        Ok(import_result(report, None))
    }

    /// Take entry `entry` out of client `client`'s file (a backup beside it).
    pub fn remove_client_entry(&self, client: &str, entry: &str) -> Result<RemovedEntry, ApiError> {
        let kind = known_client(client)?;
        let path = (kind.format().path)(&clients::Dirs::from_env()).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("{} has no file here", kind.label()),
            )
        })?;
        let backup =
            clients::quarantine::remove_entry(kind, &path, entry, false).map_err(client_error)?;
        Ok(RemovedEntry {
            entry: entry.to_owned(),
            path: text(&path),
            backup: backup.as_deref().map(text),
        })
    }

    /// Which clients launch server `name`.
    pub fn use_in(&self, name: &str) -> Result<UseIn, ApiError> {
        let server = self.servers.config().load()?.server(name)?;
        let overview = self.clients_overview();
        Ok(UseIn {
            name: name.into(),
            enabled: server.enabled,
            clients: overview
                .clients
                .into_iter()
                .map(|c| UseInClient {
                    has_server: c.servers.iter().any(|s| s == name),
                    drifted: c.drift.iter().any(|d| d.entry == name),
                    id: c.id,
                    label: c.label,
                    path: c.path,
                    exists: c.exists,
                    error: c.error,
                })
                .collect(),
            cli_path: overview.cli_path,
            cli_missing: overview.cli_missing,
        })
    }

    /// The client, the `plugboard` its launchers name, and its file.
    fn export_target(&self, client: &str) -> Result<(ClientKind, PathBuf, PathBuf), ApiError> {
        let kind = known_client(client)?;
        let cli = self.cli().map_err(|m| ApiError::new(ErrorCode::NoCli, m))?;
        let path = kind.default_path().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Client,
                format!(
                    "no home directory: where {} keeps its servers is unknown",
                    kind.label()
                ),
            )
        })?;
        Ok((kind, cli, path))
    }

    fn export_plan(
        &self,
        client: &str,
        selection: &ExportSelection,
    ) -> Result<(ClientKind, ExportPlan), ApiError> {
        let (kind, cli, path) = self.export_target(client)?;
        let dir = self.servers.config().dir();
        let config = self.servers.config().load()?;
        let plan = clients::plan_export(&config, dir, kind, &path, &cli, &selection.choice())
            .map_err(client_error)?;
        Ok((kind, plan))
    }

    /// What [`Api::export_to_client`] would write, without writing it.
    pub fn export_preview(
        &self,
        client: &str,
        selection: &ExportSelection,
    ) -> Result<ExportPreview, ApiError> {
        let (kind, plan) = self.export_plan(client, selection)?;
        Ok(ExportPreview {
            client: kind.id().into(),
            label: kind.label().into(),
            path: text(&plan.path),
            exists: plan.exists,
            changes: change_views(&plan),
            entries_json: serde_json::to_string_pretty(&plan.entries).unwrap_or_default(),
            changes_file: plan.changes_file,
            apply_hint: apply_hint(kind),
        })
    }

    /// Write launchers for the chosen enabled servers into client `client`'s file (merged,
    /// other entries kept, a backup of the old file made by the core).
    pub fn export_to_client(
        &self,
        client: &str,
        selection: &ExportSelection,
    ) -> Result<ExportResult, ApiError> {
        let (kind, cli, path) = self.export_target(client)?;
        let config = self.servers.config().load()?;
        let dir = self.servers.config().dir();
        let (plan, backup) =
            clients::export_now(&config, dir, kind, &path, &cli, &selection.choice(), false)
                .map_err(client_error)?;
        Ok(ExportResult {
            client: kind.id().into(),
            label: kind.label().into(),
            path: text(&plan.path),
            backup: backup.as_deref().map(text),
            changed_file: plan.changes_file,
            changes: change_views(&plan),
            disabled: plan.disabled.clone(),
            apply_hint: apply_hint(kind),
        })
    }

    fn import_plan(&self, client: &str) -> Result<(ClientKind, clients::ImportPlan), ApiError> {
        let kind = known_client(client)?;
        let path = kind.default_path().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Client,
                format!("where {} keeps its servers is unknown", kind.label()),
            )
        })?;
        let config = self.servers.config().load()?;
        // The app cannot prompt for VS Code `${input:…}` values: such entries are skipped with
        // the reason, as the CLI does without a terminal.
        let options = clients::ImportOptions {
            extra_secrets: vec![],
            input: &|_| None,
            workspace: None,
        };
        let plan = clients::plan_import(kind, &path, &config, &options).map_err(client_error)?;
        Ok((kind, plan))
    }

    /// The servers in client `client`'s file that could be imported (nothing is changed).
    pub fn import_preview(&self, client: &str) -> Result<ImportPreview, ApiError> {
        let (kind, plan) = self.import_plan(client)?;
        Ok(ImportPreview {
            client: kind.id().into(),
            label: kind.label().into(),
            path: text(&plan.path),
            servers: plan
                .servers
                .iter()
                .map(|s| ImportCandidate {
                    entry: s.entry.clone(),
                    name: s.name.clone(),
                    transport_label: s.transport.label().into(),
                    target: s.target.clone(),
                    secrets: s.secrets.clone(),
                    enabled: s.enabled,
                    notes: s.notes.clone(),
                })
                .collect(),
            skipped: plan
                .recognised
                .iter()
                .map(|r| DriftView {
                    entry: r.entry.clone(),
                    state: format!(
                        "it is the installed server `{}`: nothing new is installed",
                        r.name
                    ),
                })
                .chain(plan.skipped.iter().map(|s| DriftView {
                    entry: s.entry.clone(),
                    state: s.reason.clone(),
                }))
                .collect(),
        })
    }

    /// Import the entries `entries` of client `client`'s file: their plaintext secrets go to
    /// the keyring. With `rewrite_source`, those entries in the client's file become
    /// `plugboard run` launchers (after a backup), so no plaintext token stays there.
    pub fn import_from_client(
        &self,
        client: &str,
        entries: &[String],
        rewrite_source: bool,
    ) -> Result<ImportResultView, ApiError> {
        let (_, mut plan) = self.import_plan(client)?;
        plan.servers.retain(|s| entries.contains(&s.entry));
        plan.recognised.retain(|r| entries.contains(&r.entry));
        for server in &plan.servers {
            self.allowed(crate::policy::Subject::Imported { name: &server.name })?;
        }
        // Only entries whose server passes its test become launchers.
        let cli = if rewrite_source {
            Some(self.cli().map_err(|m| ApiError::new(ErrorCode::NoCli, m))?)
        } else {
            None
        };
        let market = if rewrite_source && !plan.servers.is_empty() {
            Some(self.market()?)
        } else {
            None
        };
        let rewrite = cli.as_deref().map(|plugboard| clients::Rewrite {
            plugboard,
            test_with: market.as_ref().map(|m| m.catalog()),
            force: false,
        });
        let servers = &self.servers;
        let plan = &plan;
        let imported = super::testing::block_on_own_thread(move || {
            clients::import_servers(servers, plan, rewrite)
        })?
        .map_err(|err| match err {
            clients::ClientError::WouldLose { path, what } => ApiError::new(
                ErrorCode::WouldLose,
                format!(
                    "{} {what}, so nothing was imported. Import without rewriting the file, or \
                     edit it by hand.",
                    path.display()
                ),
            ),
            other => client_error(other),
        })?;
        Ok(import_result(
            imported.report,
            imported.backup.as_deref().map(text),
        ))
    }
}

/// What an import did, for the app: the servers imported, and each failure in a sentence.
fn import_result(
    report: clients::import::ImportReport,
    backup: Option<String>,
) -> ImportResultView {
    ImportResultView {
        imported: report.imported.into_iter().map(|(_, name)| name).collect(),
        failed: report
            .failed
            .into_iter()
            .map(|(entry, why)| format!("{entry}: {why}"))
            .chain(report.kept_in_source.into_iter().map(|(entry, why)| {
                format!("{entry}: imported, but its test failed ({why}), so it stays as it was in the client's file")
            }))
            .collect(),
        backup,
    }
}

fn known_client(client: &str) -> Result<ClientKind, ApiError> {
    ClientKind::from_id(client)
        .filter(|k| *k != ClientKind::Generic)
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no known client `{client}`")))
}
