//! `plugboard secrets use keyring|file`, `status [--json]`, `unlock [--hours N]` and `lock`:
//! choose the secret store explicitly, see whether it works, and hold the encrypted file's
//! passphrase in the kernel keyring for programs that have no terminal to ask on.

use serde::Serialize;

use super::CliError;
use super::args::{SecretsCommand, SecretsUnlockArgs, StoreArg};
use super::output::print_json;
use crate::config::config_dir;
use crate::secrets::file_store::{
    find_passphrase, forget_passphrase, held_passphrase, hold_passphrase,
};
use crate::secrets::selection::{choose_store, chosen_store, open_chosen, secrets_file};
use crate::secrets::{FileStore, KeyringStore, SecretStore, StoreKind};

pub fn run(command: SecretsCommand) -> Result<(), CliError> {
    let dir = config_dir().ok_or_else(|| {
        CliError::usage(
            "no config directory: set PLUGBOARD_HOME or HOME so Plugboard knows where to keep its files",
        )
    })?;
    match command {
        SecretsCommand::Use(args) => match args.store {
            StoreArg::File => {
                let path = secrets_file(&dir);
                let shown = path.display().to_string();
                let exists = path.exists();
                let passphrase = find_passphrase(&path, !exists)?;
                let store = FileStore::with_passphrase(&path, passphrase);
                store.create_or_open()?;
                store.check().map_err(|e| {
                    CliError::failed(format!("the encrypted file does not work: {e}"))
                })?;
                choose_store(&dir, StoreKind::File)?;
                println!(
                    "Secrets are now kept in {shown}, encrypted with your passphrase{}.",
                    if exists {
                        " (existing file opened)"
                    } else {
                        " (new file)"
                    }
                );
                println!(
                    "Plugboard asks for the passphrase when it needs a secret, or reads it from \
                     PLUGBOARD_SECRETS_PASSPHRASE. MCP clients that launch `plugboard run` have \
                     no terminal to ask on: run `plugboard secrets unlock` after you log in and \
                     the kernel holds the passphrase in memory for them (12 hours by default); \
                     never put it in their config files. Secrets already in the OS keyring were \
                     not moved: enter them again with `plugboard edit NAME --secret-env KEY`."
                );
                Ok(())
            }
            StoreArg::Keyring => {
                let store = KeyringStore::open()?;
                store.check()?;
                choose_store(&dir, StoreKind::Keyring)?;
                println!("Secrets are now kept in the {}.", store.describe());
                Ok(())
            }
        },
        SecretsCommand::Status(json) => status(&dir, json.json),
        SecretsCommand::Unlock(args) => unlock(&dir, args),
        SecretsCommand::Lock => lock(&dir),
    }
}

/// The encrypted file, when it is the chosen store.
fn chosen_file(dir: &std::path::Path) -> Result<std::path::PathBuf, CliError> {
    match chosen_store(dir)? {
        StoreKind::File => Ok(secrets_file(dir)),
        StoreKind::Keyring => Err(CliError::usage(
            "secrets are kept in the OS keyring, which has no passphrase to hold; `unlock` and \
             `lock` are for the encrypted file (`plugboard secrets use file`)",
        )),
    }
}

fn unlock(dir: &std::path::Path, args: SecretsUnlockArgs) -> Result<(), CliError> {
    let path = chosen_file(dir)?;
    if !path.exists() {
        return Err(CliError::usage(format!(
            "{} does not exist: create it with `plugboard secrets use file`",
            path.display()
        )));
    }
    // Typed (or from the environment), never an older held one: unlocking proves it anew.
    let passphrase = match std::env::var(crate::secrets::file_store::PASSPHRASE_ENV) {
        Ok(value) if !value.is_empty() => crate::secrets::Sensitive::new(value),
        _ => rpassword::prompt_password(format!(
            "Passphrase for {} (input hidden): ",
            path.display()
        ))
        .map(crate::secrets::Sensitive::new)
        .map_err(|_| {
            CliError::usage("`plugboard secrets unlock` asks for the passphrase on a terminal")
        })?,
    };
    let hours = args.hours;
    hold_passphrase(
        &path,
        passphrase,
        std::time::Duration::from_secs(u64::from(hours) * 3600),
    )?;
    println!(
        "The kernel holds the passphrase of {} for {hours} hour{} (in memory only; gone at \
         reboot, or now with `plugboard secrets lock`). Programs you run, including MCP clients \
         launching `plugboard run`, open the file without asking; the servers Plugboard starts \
         cannot read it.",
        path.display(),
        if hours == 1 { "" } else { "s" }
    );
    Ok(())
}

fn lock(dir: &std::path::Path) -> Result<(), CliError> {
    let path = chosen_file(dir)?;
    if forget_passphrase(&path)? {
        println!(
            "The passphrase is no longer held: programs with no terminal cannot open {}.",
            path.display()
        );
    } else {
        println!("No passphrase was held for {}.", path.display());
    }
    Ok(())
}

#[derive(Serialize)]
struct Status {
    store: Option<StoreKind>,
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The encrypted file only: whether `plugboard secrets unlock` holds its passphrase now.
    #[serde(skip_serializing_if = "Option::is_none")]
    held: Option<bool>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn status(dir: &std::path::Path, json: bool) -> Result<(), CliError> {
    let kind = chosen_store(dir);
    let mut status = Status {
        store: kind.as_ref().ok().copied(),
        description: None,
        path: matches!(kind, Ok(StoreKind::File)).then(|| secrets_file(dir).display().to_string()),
        held: matches!(kind, Ok(StoreKind::File))
            .then(|| held_passphrase(&secrets_file(dir)).is_some()),
        ok: false,
        error: None,
    };
    match kind.and_then(|_| open_chosen(dir)) {
        Ok(store) => {
            status.description = Some(store.describe());
            match store.check() {
                Ok(()) => status.ok = true,
                Err(e) => status.error = Some(e.to_string()),
            }
        }
        Err(e) => status.error = Some(e.to_string()),
    }
    if json {
        print_json(&status)?;
    } else {
        println!(
            "Secret store: {}",
            status
                .description
                .clone()
                .or(status.store.map(|k| k.as_str().to_string()))
                .unwrap_or_else(|| "unknown".into())
        );
        if status.ok {
            println!("Works: a test secret was written, read back and deleted.");
        }
        match status.held {
            Some(true) => println!(
                "Unlocked: the kernel keyring holds the passphrase for programs with no terminal."
            ),
            Some(false) => println!(
                "Locked: programs with no terminal cannot open the file (`plugboard secrets unlock`)."
            ),
            None => {}
        }
    }
    match status.error {
        Some(error) => Err(CliError::failed(format!(
            "the secret store does not work: {error}"
        ))),
        None => Ok(()),
    }
}
