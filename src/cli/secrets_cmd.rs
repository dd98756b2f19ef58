//! `plugboard secrets use keyring|file` and `plugboard secrets status [--json]`: choose the
//! secret store explicitly and see whether it works.

use serde::Serialize;

use super::CliError;
use super::args::{SecretsCommand, StoreArg};
use super::output::print_json;
use crate::config::config_dir;
use crate::secrets::file_store::passphrase_from_env_or_tty;
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
                let passphrase = passphrase_from_env_or_tty(&shown, !exists)?;
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
                     no terminal to ask on, and putting the passphrase in their config files \
                     would leave it in plaintext next to the file it protects: where other apps \
                     launch your servers, keep secrets in the OS keyring \
                     (`plugboard secrets use keyring`). Secrets already in the OS keyring were \
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
    }
}

#[derive(Serialize)]
struct Status {
    store: Option<StoreKind>,
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
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
    }
    match status.error {
        Some(error) => Err(CliError::failed(format!(
            "the secret store does not work: {error}"
        ))),
        None => Ok(()),
    }
}
