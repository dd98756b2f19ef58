//! `plugboard list | show | edit | enable | disable | rename | remove`.

use super::CliError;
use super::args::EditArgs;
use super::input::{SecretInput, key_value};
use super::output::{print_json, print_table, truncate};
use crate::config::{validate_env_key, validate_header_name, validate_remote_url};
use crate::health::HealthRecord;
use crate::manage::{ServerPatch, ServerView, Servers, ValuePatch, ValueView, looks_secret};
use crate::probe::Verification;
use crate::secrets::secret_env_var;

fn target(view: &ServerView) -> String {
    if let Some(url) = &view.url {
        return url.clone();
    }
    let mut line = view.command.clone().unwrap_or_default();
    for arg in &view.args {
        line.push(' ');
        line.push_str(arg);
    }
    line
}

fn value_text(value: &ValueView) -> String {
    match value {
        ValueView::Plain(v) => v.clone(),
        ValueView::Masked { .. } => "(hidden: plain value with a secret-looking name)".into(),
        ValueView::Secret { secret, set } => match set {
            Some(true) => format!("secret `{secret}` (set)"),
            Some(false) => format!("secret `{secret}` (NOT SET)"),
            None => format!("secret `{secret}` (keyring unavailable)"),
        },
    }
}

/// The last check of a server in a few words.
fn health_label(record: Option<&HealthRecord>) -> String {
    match record.map(|r| &r.result) {
        None => "unchecked".into(),
        Some(r) if r.ok && r.verification == Verification::Verified => "verified".into(),
        Some(r) if r.ok => "reachable".into(),
        Some(r) => format!(
            "failed: {}",
            r.error_kind.map(|k| k.as_str()).unwrap_or("unknown")
        ),
    }
}

pub fn list(servers: &Servers, json: bool) -> Result<(), CliError> {
    let views = servers.views(false)?;
    let health = servers.health();
    if json {
        let rows: Vec<serde_json::Value> = views
            .iter()
            .map(|view| {
                let mut row = serde_json::to_value(view).unwrap_or_default();
                if let Some(record) = health.get(&view.name) {
                    row["health"] = serde_json::json!({
                        "status": health_label(Some(&record)),
                        "ok": record.result.ok,
                        "verification": record.result.verification,
                        "error_kind": record.result.error_kind,
                        "checked_at_ms": record.finished_at_ms,
                    });
                }
                row
            })
            .collect();
        return print_json(&rows);
    }
    if views.is_empty() {
        println!(
            "No servers installed. Find one with `plugboard catalog`, then `plugboard install ID`; \
             or add your own with `plugboard add`."
        );
        return Ok(());
    }
    let mut rows = vec![vec![
        "NAME".to_string(),
        "TYPE".to_string(),
        "ENABLED".to_string(),
        "HEALTH".to_string(),
        "TARGET".to_string(),
    ]];
    for view in &views {
        rows.push(vec![
            view.name.clone(),
            view.transport.map(|t| t.label()).unwrap_or("?").to_string(),
            if view.error.is_some() {
                "broken".into()
            } else if view.enabled {
                "yes".into()
            } else {
                "no".into()
            },
            health_label(health.get(&view.name).as_ref()),
            view.error
                .clone()
                .unwrap_or_else(|| truncate(&target(view), 70)),
        ]);
    }
    print_table(&rows);
    Ok(())
}

pub fn show(servers: &Servers, name: &str, json: bool) -> Result<(), CliError> {
    let view = servers.view(name)?;
    if json {
        return print_json(&view);
    }
    println!("{}", view.name);
    if let Some(t) = view.transport {
        println!("  type:     {}", t.label());
    }
    println!("  enabled:  {}", if view.enabled { "yes" } else { "no" });
    if let Some(source) = &view.source {
        if !source.catalog.is_empty() {
            println!(
                "  from:     catalog `{}`, option `{}`",
                source.catalog, source.option
            );
        }
        if let Some(r) = &source.registry {
            println!(
                "  from:     registry {} ({}), version {}",
                r.name, r.url, r.version
            );
        }
        if let Some(b) = &source.bundle {
            let file = b
                .file
                .as_deref()
                .map(|f| format!(", file {f}"))
                .unwrap_or_default();
            println!(
                "  bundle:   {} {} (sha256 {}{file})",
                b.name, b.version, b.sha256
            );
            println!("  unpacked: {}", b.dir);
        }
    }
    println!("  target:   {}", target(&view));
    if let Some(cwd) = &view.cwd {
        println!("  cwd:      {cwd}");
    }
    for (key, value) in &view.env {
        println!("  env {key} = {}", value_text(value));
    }
    for (key, value) in &view.headers {
        println!("  header {key}: {}", value_text(value));
    }
    if let Some(helper) = &view.headers_helper {
        println!(
            "  headers:  from `{}` (run again after {}s, or when refused)",
            std::iter::once(helper.command.as_str())
                .chain(helper.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            helper.ttl().as_secs()
        );
    }
    if view.auth.kind != "none" {
        let mut line = format!("  auth:     {}", view.auth.kind);
        if let Some(header) = &view.auth.header {
            line.push_str(&format!(" (header {header})"));
        }
        if let Some(cred) = &view.auth.credential {
            line.push_str(&format!(", {}", value_text(cred)));
        }
        println!("{line}");
    }
    if let Some(timeout) = view.timeout {
        println!("  timeout:  {timeout}s");
    }
    Ok(())
}

pub fn set_enabled(servers: &Servers, name: &str, enabled: bool) -> Result<(), CliError> {
    servers.config().set_enabled(name, enabled)?;
    println!(
        "`{name}` is {}.",
        if enabled {
            "enabled"
        } else {
            "disabled (its settings are kept)"
        }
    );
    Ok(())
}

pub fn rename(servers: &Servers, old: &str, new: &str) -> Result<(), CliError> {
    let (_, launchers) = crate::lifecycle::rename_server(servers, old, new)?;
    println!("Renamed `{old}` to `{new}`.");
    print_launcher_changes(&launchers);
    Ok(())
}

/// What became of other apps' launchers of a renamed or removed server.
fn print_launcher_changes(changes: &[crate::clients::launchers::LauncherChange]) {
    for change in changes {
        let place = format!("{} ({})", change.client, change.path.display());
        match change.action {
            "renamed" => println!("{place}: its entry now launches the new name."),
            "removed" => println!("{place}: its entry `{}` was taken out.", change.entry),
            _ => eprintln!(
                "warning: {place} still has an entry `{}` that launches the old server: {}",
                change.entry,
                change.detail.as_deref().unwrap_or_default()
            ),
        }
    }
}

pub fn remove(servers: &Servers, name: &str) -> Result<(), CliError> {
    let (outcome, launchers) =
        super::test_cmd::runtime()?.block_on(crate::lifecycle::remove_server(servers, name))?;
    println!(
        "Removed `{name}`{}.",
        match outcome.secrets_deleted {
            0 => String::new(),
            n => format!(" and its {n} secret(s)"),
        }
    );
    if let Some(dir) = &outcome.bundle_removed {
        println!("Its bundle was deleted ({dir}).");
    }
    for err in &outcome.secret_errors {
        eprintln!("warning: a secret of `{name}` could not be deleted: {err}");
    }
    print_launcher_changes(&launchers);
    Ok(())
}

pub fn edit(servers: &Servers, args: EditArgs) -> Result<(), CliError> {
    if args.pin_dependencies || args.unpin_dependencies {
        return pin_dependencies(servers, &args.name, args.pin_dependencies);
    }
    if !(args.set.is_empty() && args.secret.is_empty() && args.clear.is_empty()) {
        return super::edit_form_cmd::edit(servers, &args);
    }
    let mut patch = ServerPatch::default();
    let mut input = SecretInput::for_flags(
        None,
        args.secret_env.len() + args.secret_header.len() + usize::from(args.credential),
    );
    for raw in &args.env {
        let (k, v) = key_value(raw, "--env")?;
        validate_env_key(k).map_err(CliError::usage)?;
        if looks_secret(k) {
            eprintln!(
                "warning: `{k}` looks like a secret; --secret-env {k} keeps it in the keyring."
            );
        }
        patch.env.insert(k.into(), ValuePatch::Plain(v.into()));
    }
    for raw in &args.header {
        let (k, v) = key_value(raw, "--header")?;
        validate_header_name(k).map_err(CliError::usage)?;
        patch.headers.insert(k.into(), ValuePatch::Plain(v.into()));
    }
    for (keys, into_env) in [(&args.secret_env, true), (&args.secret_header, false)] {
        for k in keys {
            let value = input.read(k, k)?.ok_or_else(|| {
                CliError::usage(format!(
                    "no value for `{k}`: pipe it to standard input, set {} or run in a terminal to be prompted",
                    secret_env_var(k)
                ))
            })?;
            let map = if into_env {
                &mut patch.env
            } else {
                &mut patch.headers
            };
            map.insert(k.clone(), ValuePatch::Secret(value));
        }
    }
    for k in &args.unset_env {
        patch.env.insert(k.clone(), ValuePatch::Remove);
    }
    for k in &args.unset_header {
        patch.headers.insert(k.clone(), ValuePatch::Remove);
    }
    if args.credential {
        let value = input
            .read("CREDENTIAL", "New API key or token")?
            .ok_or_else(|| {
                CliError::usage(format!(
                    "no credential given: pipe it to standard input, set {} or run in a terminal to be prompted",
                    secret_env_var("CREDENTIAL")
                ))
            })?;
        patch.credential = Some(Some(value));
    }
    if let Some(url) = &args.url {
        validate_remote_url(url).map_err(CliError::usage)?;
        patch.url = Some(url.clone());
    }
    if let Some(timeout) = args.timeout {
        patch.timeout = Some((timeout > 0).then_some(timeout));
    }
    if args.allow_insecure_http {
        eprintln!(
            "warning: `{}` may now send its credentials over plain http to a remote host, where \
             anyone on the network path can read and reuse them.",
            args.name
        );
        patch.allow_insecure_http = Some(true);
    } else if args.refuse_insecure_http {
        patch.allow_insecure_http = Some(false);
    }
    if args.allow_secret_args {
        eprintln!(
            "warning: `{}` may now take secrets on its command line, where every user and \
             process of this machine can read them (and npm's logs keep them).",
            args.name
        );
        patch.allow_secret_args = Some(true);
    } else if args.refuse_secret_args {
        patch.allow_secret_args = Some(false);
    }
    if args.keep_control_characters {
        patch.keep_control_characters = Some(true);
    } else if args.strip_control_characters {
        patch.keep_control_characters = Some(false);
    }
    if let Some(helper) = args.helper.helper() {
        helper.validate().map_err(CliError::usage)?;
        patch.headers_helper = Some(Some(helper));
    } else if args.no_headers_helper {
        patch.headers_helper = Some(None);
    }
    servers.edit(&args.name, patch)?;
    println!("Updated `{}`.", args.name);
    Ok(())
}

/// `plugboard edit NAME --pin-dependencies | --unpin-dependencies`.
fn pin_dependencies(servers: &Servers, name: &str, pin: bool) -> Result<(), CliError> {
    if pin {
        let server = servers.config().load()?.server(name)?;
        let date = crate::doctor::deps::dependency_date(servers.config().dir(), &server);
        let relaunch = crate::deps::rot::apply_pin(servers, name, date.as_deref())?;
        println!(
            "`{name}` now runs `{} {}`: its dependencies are resolved as of {}.",
            relaunch.command,
            relaunch.args.join(" "),
            relaunch.date
        );
    } else {
        let args = crate::deps::rot::remove_pin(servers, name)?;
        println!(
            "`{name}` now runs with its dependencies' newest versions ({}).",
            args.join(" ")
        );
    }
    println!("Test it with `plugboard test {name}`.");
    Ok(())
}
