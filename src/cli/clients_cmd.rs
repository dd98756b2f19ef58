//! `plugboard export`, `plugboard import` and `plugboard clients`: other MCP clients' config
//! files. Output only; the work is in `crate::clients`.

use std::io::IsTerminal;
use std::path::PathBuf;

use serde::Serialize;

use super::CliError;
use super::args::{ClientArg, ClientsArgs, ExportArgs, ImportArgs};
use super::output::{print_json, print_table, truncate};
use super::test_cmd::runtime;
use crate::clients::import::{InputSpec, guess_format};
use crate::clients::{
    ClientError, ClientKind, ExportAction, ExportChoice, ImportOptions, ImportReport, Rewrite,
    detect as detect_clients, export_now, import_servers, jsonc, plan_export, plan_import,
    plugboard_exe,
};
use crate::manage::Servers;
use crate::secrets::Sensitive;
use crate::secrets::secret_env_var;

impl From<ClientError> for CliError {
    fn from(err: ClientError) -> Self {
        match err {
            ClientError::Manage(e) => e.into(),
            other => CliError::usage(other.to_string()),
        }
    }
}

pub(super) fn kind_of(arg: ClientArg) -> ClientKind {
    match arg {
        ClientArg::ClaudeDesktop => ClientKind::ClaudeDesktop,
        ClientArg::ClaudeCode => ClientKind::ClaudeCode,
        ClientArg::Cursor => ClientKind::Cursor,
        ClientArg::Vscode => ClientKind::Vscode,
        ClientArg::Copilot => ClientKind::Copilot,
        ClientArg::Windsurf => ClientKind::Windsurf,
        ClientArg::Generic => ClientKind::Generic,
    }
}

/// The file of `kind` to read or write: `file` if given, else its file in the project folder
/// `workspace`, else its user-level file.
fn file_of(
    kind: ClientKind,
    file: Option<PathBuf>,
    workspace: Option<&std::path::Path>,
) -> Result<PathBuf, CliError> {
    if let Some(file) = file {
        return Ok(file);
    }
    if let Some(folder) = workspace {
        if !folder.is_dir() {
            return Err(CliError::usage(format!(
                "{} is not a folder",
                folder.display()
            )));
        }
        return match kind.format().workspace_path {
            Some(path) => Ok(path(folder)),
            None => Err(CliError::usage(format!(
                "{} reads no file in a project folder that Plugboard knows; project files: \
                 copilot (`.mcp.json`, which VS Code and the Copilot CLI read), vscode \
                 (`.vscode/mcp.json`, deprecated by VS Code 1.140)",
                kind.label()
            ))),
        };
    }
    if kind == ClientKind::Generic {
        return Err(CliError::usage(
            "the generic format has no file of its own: give one with --file PATH",
        ));
    }
    kind.default_path().ok_or_else(|| {
        CliError::usage(format!(
            "cannot tell where {}'s config file is: HOME (or APPDATA on Windows) is not set",
            kind.label()
        ))
    })
}

pub fn export(servers: &Servers, args: ExportArgs) -> Result<(), CliError> {
    let kind = kind_of(args.client);
    let path = file_of(kind, args.file, args.workspace.as_deref())?;
    if let Some(why) = kind.format().deprecated {
        eprintln!("note: {why}.");
    }
    let config = servers.config().load()?;
    let choice = match &args.profile {
        Some(profile) => {
            crate::gateway::profiles::ProfileStore::in_config_dir(servers.config().dir())
                .get(profile)
                .map_err(|e| CliError::usage(e.to_string()))?;
            match args.http.as_deref() {
                None => ExportChoice::Gateway(profile.clone()),
                Some(text) => {
                    let address = super::gateway_cmd::loopback_address(text)?;
                    if address.port() == 0 {
                        return Err(CliError::usage(
                            "--http: give the port the gateway will listen on (port 0 is a \
                             different free port at each start)",
                        ));
                    }
                    ExportChoice::GatewayOverHttp {
                        profile: profile.clone(),
                        address,
                    }
                }
            }
        }
        None => ExportChoice::All,
    };
    if !args.write {
        let plan = plan_export(
            &config,
            servers.config().dir(),
            kind,
            &path,
            &plugboard_exe()?,
            &choice,
        )?;
        if args.json.json {
            return print_json(&plan);
        }
        println!(
            "Would write {} ({}); nothing was written. Pass --write to write it (a backup is kept).",
            path.display(),
            kind.label()
        );
        print_changes(&plan.changes);
        let mut shown = serde_json::Map::new();
        shown.insert(
            kind.format().servers_key.to_string(),
            serde_json::Value::Object(plan.entries.clone()),
        );
        println!("Plugboard's entries in that file:");
        println!("{}", jsonc::render(&shown).trim_end());
        return Ok(());
    }
    let (plan, backup) = export_now(
        &config,
        servers.config().dir(),
        kind,
        &path,
        &plugboard_exe()?,
        &choice,
        args.force,
    )?;
    if args.json.json {
        #[derive(Serialize)]
        struct Written<'a> {
            #[serde(flatten)]
            plan: &'a crate::clients::ExportPlan,
            backup: Option<PathBuf>,
        }
        return print_json(&Written {
            plan: &plan,
            backup,
        });
    }
    print_changes(&plan.changes);
    if plan.changes_file {
        println!("Wrote {} ({}).", path.display(), kind.label());
    } else {
        println!("{} is already up to date.", path.display());
    }
    if let Some(backup) = backup {
        println!("The previous version is in {}.", backup.display());
    }
    if !plan.disabled.is_empty() {
        println!("Not exported (disabled): {}.", plan.disabled.join(", "));
    }
    if let ExportChoice::GatewayOverHttp { profile, address } = &choice {
        println!(
            "{} reaches the gateway at http://{address}/mcp: keep `plugboard serve --profile \
             {profile} --http {address}` running (it asks for the token with `plugboard serve \
             --profile {profile} --print-headers` when it connects).",
            kind.label()
        );
    }
    Ok(())
}

fn print_changes(changes: &[crate::clients::ExportChange]) {
    if changes.is_empty() {
        println!("  (no Plugboard servers to export)");
    }
    for change in changes {
        let action = match change.action {
            ExportAction::Add => "add",
            ExportAction::Update => "update",
            ExportAction::Unchanged => "unchanged",
            ExportAction::Remove => "remove",
            ExportAction::Conflict => "conflict",
            ExportAction::LeftAlone => "left alone",
        };
        match &change.detail {
            Some(detail) => println!("  {action:<10} {}: {detail}", change.entry),
            None => println!("  {action:<10} {}", change.entry),
        }
    }
}

/// The value of an input of the source file: `PLUGBOARD_SECRET_<ID>`, else a prompt when there
/// is a terminal.
fn input_value(spec: &InputSpec) -> Option<Sensitive<String>> {
    if let Ok(value) = std::env::var(secret_env_var(&spec.id))
        && !value.is_empty()
    {
        return Some(Sensitive::new(value));
    }
    if !std::io::stdin().is_terminal() {
        return None;
    }
    let label = spec.description.as_deref().unwrap_or(&spec.id);
    let prompt = format!("{label} (input `{}`, hidden): ", spec.id);
    let value = if spec.password {
        rpassword::prompt_password(prompt).ok()?
    } else {
        super::input::prompt_line(&format!("{label} (input `{}`)", spec.id))
            .ok()
            .flatten()?
    };
    (!value.is_empty()).then(|| Sensitive::new(value))
}

pub fn import(servers: &Servers, args: ImportArgs) -> Result<(), CliError> {
    let (kind, path) = match (args.client, &args.file) {
        (_, Some(file)) => {
            let kind = match args.format {
                Some(format) => kind_of(format),
                None => guess_format(file)?,
            };
            (kind, file.clone())
        }
        (Some(client), None) => {
            let kind = kind_of(client);
            (kind, file_of(kind, None, args.workspace.as_deref())?)
        }
        (None, None) => return Err(CliError::usage("give --client C or --file PATH")),
    };
    let config = servers.config().load()?;
    let options = ImportOptions {
        extra_secrets: args.secret.clone(),
        input: &input_value,
        workspace: args.workspace.as_deref(),
    };
    let mut plan = plan_import(kind, &path, &config, &options)?;
    crate::clients::quarantine::keep_only(&mut plan, &args.only)?;
    if args.quarantine {
        crate::clients::quarantine::quarantine(&mut plan);
    }
    let policy = crate::policy::current();
    if policy.in_force() && !args.dry_run {
        let (market, _) = super::catalog_cmd::load_market()?;
        for server in &plan.servers {
            policy.check(
                crate::policy::Subject::Imported { name: &server.name },
                market.listing(),
            )?;
        }
    }
    let json = args.json.json;
    if !json || args.dry_run {
        if json {
            return print_json(&plan);
        }
        println!(
            "In {} ({}): {} server(s) to import, {} skipped.",
            path.display(),
            kind.label(),
            plan.servers.len(),
            plan.skipped.len()
        );
        for server in &plan.servers {
            let renamed = if server.name != server.entry {
                format!(" (from `{}`)", server.entry)
            } else {
                String::new()
            };
            println!(
                "  + {}{renamed}: {} {}{}",
                server.name,
                server.transport.label(),
                server.target,
                if server.enabled { "" } else { " [disabled]" }
            );
            if !server.secrets.is_empty() {
                println!("      into the secret store: {}", server.secrets.join(", "));
            }
            for note in &server.notes {
                println!("      note: {note}");
            }
        }
        for same in &plan.recognised {
            println!(
                "  = {}: the installed server `{}` (same command or URL); nothing new is installed",
                same.entry, same.name
            );
        }
        for skipped in &plan.skipped {
            println!("  - {}: skipped, {}", skipped.entry, skipped.reason);
        }
    }
    if args.dry_run {
        println!("Dry run: nothing was changed.");
        return Ok(());
    }
    if plan.servers.is_empty() && (plan.recognised.is_empty() || !args.rewrite_source) {
        if json {
            return print_json(&ImportReport::default());
        }
        println!("Nothing to import.");
        return Ok(());
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::usage(
                "not importing without confirmation: pass --yes (or --dry-run to only look)",
            ));
        }
        let answer = super::input::prompt_line(&format!(
            "Import {} server(s){}? [y/N]",
            plan.servers.len(),
            if args.rewrite_source {
                " and rewrite the source file"
            } else {
                ""
            }
        ))?;
        if !matches!(answer.as_deref(), Some("y" | "Y" | "yes" | "Yes")) {
            println!("Nothing was changed.");
            return Ok(());
        }
    }
    let comments = args.rewrite_source && args.force && jsonc::has_comments(&path);
    // Only entries whose server passes its test become launchers.
    let test_first = args.rewrite_source && !args.no_test && !plan.servers.is_empty();
    let market = if test_first {
        Some(super::catalog_cmd::load_market()?.0)
    } else {
        None
    };
    let plugboard = if args.rewrite_source {
        Some(plugboard_exe()?)
    } else {
        None
    };
    let rewrite = plugboard.as_deref().map(|plugboard| Rewrite {
        plugboard,
        test_with: market.as_ref().map(|m| m.catalog()),
        force: args.force,
    });
    if test_first && !json {
        eprintln!(
            "Importing, then testing the imported servers before the source file is rewritten"
        );
    }
    let imported = match runtime()?.block_on(import_servers(servers, &plan, rewrite)) {
        // A rewrite that would lose what the file holds is refused before anything is imported.
        Err(ClientError::WouldLose { path, what }) => {
            return Err(CliError::usage(format!(
                "{} {what}, so nothing was imported; import without --rewrite-source, or pass \
                 --force to rewrite it anyway (a backup beside it keeps it as it was)",
                path.display()
            )));
        }
        other => other?,
    };
    let report = imported.report;
    let backup = imported.rewritten.then_some(imported.backup);
    if json {
        #[derive(Serialize)]
        struct Done<'a> {
            #[serde(flatten)]
            report: &'a ImportReport,
            rewritten: bool,
            backup: Option<PathBuf>,
        }
        print_json(&Done {
            report: &report,
            rewritten: backup.is_some(),
            backup: backup.clone().flatten(),
        })?;
    } else {
        for (entry, name) in &report.imported {
            println!("Imported `{entry}` as `{name}`.");
        }
        for (entry, error) in &report.failed {
            println!("Could not import `{entry}`: {error}");
        }
        for (entry, name) in &report.recognised {
            println!("`{entry}` is the installed server `{name}`.");
        }
        for (entry, why) in &report.kept_in_source {
            println!(
                "`{entry}` stays as it was in {}: its test failed ({why}); fix it with \
                 `plugboard doctor`, then import again or export",
                path.display()
            );
        }
        match &backup {
            Some(Some(backup)) => {
                println!(
                    "Rewrote {}: the imported entries now run `plugboard run NAME` and hold no \
                     secrets. The previous version is in {} (readable only by you), with the \
                     secrets that moved to the store replaced by ***; delete it once you have \
                     checked the result.",
                    path.display(),
                    backup.display()
                );
                if comments {
                    println!(
                        "note: the comments of {} were not kept (they are in the backup).",
                        path.display()
                    );
                }
            }
            Some(None) => {}
            None if !report.imported.is_empty() => println!(
                "The source file still holds the plaintext values; `--rewrite-source` (or \
                 `plugboard export --client {} --write` after removing those entries) replaces \
                 them with launchers.",
                kind.id()
            ),
            None => {}
        }
    }
    if !report.failed.is_empty() {
        return Err(CliError::failed(format!(
            "{} of {} server(s) could not be imported",
            report.failed.len(),
            plan.servers.len()
        )));
    }
    Ok(())
}

/// `plugboard clients`: the table, or `--remove ENTRY` of one client's file.
pub fn clients(servers: &Servers, args: ClientsArgs) -> Result<(), CliError> {
    if let (Some(client), Some(entry)) = (args.client, &args.remove) {
        let kind = kind_of(client);
        let path = file_of(kind, None, args.workspace.as_deref())?;
        let backup = crate::clients::quarantine::remove_entry(kind, &path, entry, args.force)?;
        println!(
            "Removed `{entry}` from {} ({}).",
            path.display(),
            kind.label()
        );
        if let Some(backup) = backup {
            println!("  The file as it was: {}", backup.display());
        }
        return Ok(());
    }
    if let Some(folder) = &args.workspace
        && !folder.is_dir()
    {
        return Err(CliError::usage(format!(
            "{} is not a folder",
            folder.display()
        )));
    }
    detect(servers, args.workspace.as_deref(), args.json.json)
}

fn detect(
    servers: &Servers,
    workspace: Option<&std::path::Path>,
    json: bool,
) -> Result<(), CliError> {
    let statuses = detect_clients(servers.config().dir(), workspace);
    let all = crate::budget::all_server_tools(servers, false)?;
    let failing = crate::budget::failing_servers(servers, &all);
    // The tools each client gets from its Plugboard entries (enabled tools of enabled servers
    // that work).
    let exposed: Vec<usize> = statuses
        .iter()
        .map(|s| crate::budget::exposed_tools(&all, &s.servers, &failing))
        .collect();
    if json {
        #[derive(Serialize)]
        struct WithTools<'a> {
            #[serde(flatten)]
            status: &'a crate::clients::ClientStatus,
            tools: usize,
        }
        let rows: Vec<WithTools> = statuses
            .iter()
            .zip(&exposed)
            .map(|(status, tools)| WithTools {
                status,
                tools: *tools,
            })
            .collect();
        print_json(&rows)?;
        record_seen(servers, &statuses);
        return Ok(());
    }
    let mut rows = vec![vec![
        "CLIENT".to_string(),
        "FILE".to_string(),
        "PLUGBOARD SERVERS".to_string(),
        "TOOLS".to_string(),
        "OTHER".to_string(),
        "STATE".to_string(),
    ]];
    for (s, tools) in statuses.iter().zip(&exposed) {
        let state = if let Some(e) = &s.error {
            format!("unreadable: {e}")
        } else if !s.exists {
            "no file".into()
        } else if s.drifted {
            format!(
                "drifted: {}",
                s.drift
                    .iter()
                    .map(|d| format!("{} {}", d.entry, d.state))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            "ok".into()
        };
        rows.push(vec![
            match &s.workspace {
                Some(_) => format!("{} (project)", s.label),
                None => s.label.to_string(),
            },
            s.path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "?".into()),
            if s.servers.is_empty() {
                "-".into()
            } else {
                s.servers.join(", ")
            },
            if s.servers.is_empty() {
                "-".into()
            } else {
                tools.to_string()
            },
            s.other_entries.to_string(),
            state,
        ]);
    }
    print_table(&rows);
    // A file the client itself deprecates, while it still holds servers.
    for s in statuses.iter().filter(|s| s.exists) {
        if let Some(why) = s.deprecated
            && (!s.servers.is_empty() || s.other_entries > 0 || !s.gateways.is_empty())
        {
            let workspace = s
                .workspace
                .as_ref()
                .map(|w| format!(" --workspace {}", w.display()))
                .unwrap_or_default();
            println!(
                "note: {} ({}): {why}. Plugboard writes its servers to the new file with \
                 `plugboard export --client copilot{workspace} --write`; \
                 `plugboard import --client vscode{workspace}` brings the others in first.",
                s.label,
                s.path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            );
        }
    }
    let others: Vec<_> = statuses
        .iter()
        .flat_map(|s| s.others.iter().map(move |o| (s, o)))
        .collect();
    if !others.is_empty() {
        println!();
        println!("Other servers in these files (not launched through Plugboard):");
        for (status, other) in &others {
            println!(
                "  {} {} / {}: {}",
                if other.new { "NEW" } else { "   " },
                status.label,
                other.entry,
                truncate(&other.launches, 90)
            );
        }
        if others.iter().any(|(_, o)| o.new) {
            println!(
                "  NEW: not there when you last looked. If you did not add it, import it in \
                 quarantine (`plugboard import --client C --only ENTRY --quarantine`) or take \
                 it out (`plugboard clients --client C --remove ENTRY`)."
            );
        }
    }
    record_seen(servers, &statuses);
    Ok(())
}

/// What the user was just shown counts as seen from now on.
fn record_seen(servers: &Servers, statuses: &[crate::clients::ClientStatus]) {
    if let Err(e) = crate::clients::seen::record(servers.config().dir(), statuses) {
        eprintln!("warning: cannot remember which entries you have seen: {e}");
    }
}
