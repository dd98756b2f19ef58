//! Which secret store Plugboard uses: the OS keyring (the default) or the encrypted file,
//! chosen explicitly by the user and kept in `<config dir>/settings.json` as
//! `{"secret_store": "keyring" | "file"}`. Other keys of that file are preserved. Nothing ever
//! switches stores on its own: when the chosen store does not work, the error says so.

use plugboard_base::fs::write_private;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::file_store::{FileStore, SECRETS_FILE};
use super::{KeyringStore, SecretError, SecretStore};

/// The settings file's name inside the config directory.
pub const SETTINGS_FILE: &str = "settings.json";
const KEY: &str = "secret_store";

/// The secret stores a user can choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Keyring,
    File,
}

impl StoreKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Keyring => "keyring",
            StoreKind::File => "file",
        }
    }
}

fn settings_error(path: &Path, detail: String) -> SecretError {
    SecretError::File {
        detail: format!("{} cannot be used: {detail}", path.display()),
        fix: "fix or remove that file; it records which secret store Plugboard uses".into(),
    }
}

fn read_settings(path: &Path) -> Result<Map<String, Value>, SecretError> {
    match fs::read(path) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(settings_error(path, "it is not a JSON object".into())),
            Err(e) => Err(settings_error(path, e.to_string())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(settings_error(path, e.to_string())),
    }
}

/// The store chosen in `config_dir` (the keyring when nothing was chosen).
pub fn chosen_store(config_dir: &Path) -> Result<StoreKind, SecretError> {
    let path = config_dir.join(SETTINGS_FILE);
    let settings = read_settings(&path)?;
    match settings.get(KEY) {
        None => Ok(StoreKind::Keyring),
        Some(Value::String(s)) if s == "keyring" => Ok(StoreKind::Keyring),
        Some(Value::String(s)) if s == "file" => Ok(StoreKind::File),
        Some(other) => Err(settings_error(
            &path,
            format!("`{KEY}` is {other}; it must be \"keyring\" or \"file\""),
        )),
    }
}

/// Record the chosen store in `config_dir/settings.json` (atomically, other keys kept).
pub fn choose_store(config_dir: &Path, kind: StoreKind) -> Result<(), SecretError> {
    let path = config_dir.join(SETTINGS_FILE);
    let mut settings = read_settings(&path)?;
    settings.insert(KEY.into(), Value::String(kind.as_str().into()));
    let mut text = serde_json::to_vec_pretty(&Value::Object(settings)).expect("JSON serializes");
    text.push(b'\n');
    write_private(&path, &text).map_err(|e| settings_error(&path, e.to_string()))
}

/// The encrypted file of `config_dir`.
pub fn secrets_file(config_dir: &Path) -> PathBuf {
    config_dir.join(SECRETS_FILE)
}

/// Open the store chosen in `config_dir`. The file store asks for its passphrase on first use
/// (`PLUGBOARD_SECRETS_PASSPHRASE`, else a no-echo prompt on the terminal).
pub fn open_chosen(config_dir: &Path) -> Result<Arc<dyn SecretStore>, SecretError> {
    match chosen_store(config_dir)? {
        StoreKind::Keyring => Ok(Arc::new(KeyringStore::open()?)),
        StoreKind::File => {
            let path = secrets_file(config_dir);
            if !path.exists() {
                return Err(SecretError::File {
                    detail: format!(
                        "the encrypted secret store was chosen but {} does not exist",
                        path.display()
                    ),
                    fix: "create it with `plugboard secrets use file`, or go back to the OS \
                          keyring with `plugboard secrets use keyring`"
                        .into(),
                });
            }
            Ok(Arc::new(FileStore::with_env_or_prompt(path)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_is_kept_with_other_settings() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(chosen_store(dir.path()).unwrap(), StoreKind::Keyring);
        fs::write(dir.path().join(SETTINGS_FILE), r#"{"theme":"dark"}"#).unwrap();
        choose_store(dir.path(), StoreKind::File).unwrap();
        assert_eq!(chosen_store(dir.path()).unwrap(), StoreKind::File);
        let text = fs::read_to_string(dir.path().join(SETTINGS_FILE)).unwrap();
        assert!(text.contains("dark"), "{text}");
        fs::write(
            dir.path().join(SETTINGS_FILE),
            r#"{"secret_store":"plaintext"}"#,
        )
        .unwrap();
        assert!(chosen_store(dir.path()).is_err());
    }
}
