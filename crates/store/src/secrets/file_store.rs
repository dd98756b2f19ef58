//! The encrypted-file secret store, for machines without a usable OS keyring (chosen explicitly
//! with `plugboard secrets use file`): every secret in one file, `<config dir>/secrets.age`,
//! encrypted with a passphrase through the `age` format (scrypt passphrase recipient).
//!
//! The decrypted content is JSON `{"format": "plugboard-secrets", "version": 1, "secrets":
//! {"<namespace>": {"<name>": "<value>"}}}`. It never touches the disk unencrypted. Changes
//! are made under a cross-process lock (`secrets.age.lock`): re-read, change, encrypt, write a
//! temp file (0600), fsync, rename over the file, fsync the directory. A wrong passphrase is an
//! error before anything is written, so it can never damage the file.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use age::secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::{SecretError, SecretKey, SecretStore, Sensitive};
use plugboard_base::fs::write_private;

/// The file's name inside the config directory.
pub const SECRETS_FILE: &str = "secrets.age";
/// The environment variable that holds the passphrase.
pub const PASSPHRASE_ENV: &str = "PLUGBOARD_SECRETS_PASSPHRASE";
/// scrypt work factor (log2 N) used when writing: age's own default, about a second on a laptop.
const WORK_FACTOR: u8 = 18;
/// The shortest passphrase a new file is encrypted with. An existing file opens with whatever
/// passphrase it was written with.
pub const MIN_PASSPHRASE_CHARS: usize = 12;
/// The highest work factor accepted when reading (a file written on a much faster machine).
const MAX_WORK_FACTOR: u8 = 22;
const FORMAT: &str = "plugboard-secrets";
const VERSION: u64 = 1;

/// Where the passphrase comes from (asked at most once per store).
pub type PassphraseSource = Box<dyn Fn() -> Result<Sensitive<String>, SecretError> + Send + Sync>;

type Secrets = BTreeMap<String, BTreeMap<String, String>>;

#[derive(Serialize, Deserialize)]
struct Content {
    format: String,
    version: u64,
    #[serde(default)]
    secrets: Secrets,
}

/// What identifies one version of the file on disk (so it is decrypted again only when it
/// changed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Fingerprint {
    len: u64,
    modified_ns: i128,
    #[cfg(unix)]
    ino: u64,
}

fn fingerprint(meta: &fs::Metadata) -> Fingerprint {
    let modified_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(-1);
    Fingerprint {
        len: meta.len(),
        modified_ns,
        #[cfg(unix)]
        ino: std::os::unix::fs::MetadataExt::ino(meta),
    }
}

struct Cache {
    fingerprint: Fingerprint,
    secrets: Secrets,
}

/// Secrets in an age-encrypted file protected by a passphrase.
pub struct FileStore {
    path: PathBuf,
    source: PassphraseSource,
    passphrase: Mutex<Option<Sensitive<String>>>,
    cache: Mutex<Option<Cache>>,
}

fn file_error(detail: impl Into<String>, fix: impl Into<String>) -> SecretError {
    SecretError::File {
        detail: detail.into(),
        fix: fix.into(),
    }
}

impl FileStore {
    /// A store in `path` whose passphrase comes from `source` (called on first use).
    pub fn new(path: impl Into<PathBuf>, source: PassphraseSource) -> FileStore {
        FileStore {
            path: path.into(),
            source,
            passphrase: Mutex::new(None),
            cache: Mutex::new(None),
        }
    }

    /// A store in `path` with a fixed passphrase.
    pub fn with_passphrase(path: impl Into<PathBuf>, passphrase: Sensitive<String>) -> FileStore {
        FileStore::new(path, Box::new(move || Ok(passphrase.clone())))
    }

    /// A store in `path` whose passphrase is `$PLUGBOARD_SECRETS_PASSPHRASE`, else the one
    /// `plugboard secrets unlock` holds in the kernel keyring, else typed at the terminal without
    /// echo (never read from standard input, which may carry MCP traffic).
    pub fn with_env_or_prompt(path: impl Into<PathBuf>) -> FileStore {
        let path = path.into();
        let for_source = path.clone();
        FileStore::new(path, Box::new(move || find_passphrase(&for_source, false)))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file exists yet.
    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// Create the file with no secrets in it, unless it exists. With an existing file, prove the
    /// passphrase opens it.
    pub fn create_or_open(&self) -> Result<(), SecretError> {
        let _lock = self.lock()?;
        if self.read_current()?.is_none() {
            self.write(&Secrets::new())?;
        }
        Ok(())
    }

    /// Decrypt the file now (a wrong passphrase is reported here). A missing file is fine.
    pub fn unlock(&self) -> Result<(), SecretError> {
        self.read_current().map(|_| ())
    }

    fn passphrase(&self) -> Result<Sensitive<String>, SecretError> {
        let mut held = self.passphrase.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = held.as_ref() {
            return Ok(p.clone());
        }
        let p = (self.source)()?;
        if p.expose().is_empty() {
            return Err(file_error(
                "the passphrase is empty",
                format!("set {PASSPHRASE_ENV} or type the passphrase when asked"),
            ));
        }
        *held = Some(p.clone());
        Ok(p)
    }

    fn lock(&self) -> Result<File, SecretError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let lock_path = self.path.with_extension("age.lock");
        let file = plugboard_base::fs::open_lock_file(&lock_path)
            .map_err(|e| io_error("open", &lock_path, e))?;
        file.lock().map_err(|e| io_error("lock", &lock_path, e))?;
        Ok(file)
    }

    /// The secrets as they are on disk now (`None`: no file yet), decrypted only when the file
    /// changed since the last read.
    fn read_current(&self) -> Result<Option<Secrets>, SecretError> {
        let meta = match fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("read", &self.path, e)),
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let print = fingerprint(&meta);
        if let Some(cached) = cache.as_ref()
            && cached.fingerprint == print
        {
            return Ok(Some(cached.secrets.clone()));
        }
        let bytes = fs::read(&self.path).map_err(|e| io_error("read", &self.path, e))?;
        let secrets = self.decrypt(&bytes)?;
        // Fingerprint of what was read (re-stat: the file may have been replaced meanwhile).
        let print = fs::metadata(&self.path)
            .map(|m| fingerprint(&m))
            .unwrap_or(print);
        *cache = Some(Cache {
            fingerprint: print,
            secrets: secrets.clone(),
        });
        Ok(Some(secrets))
    }

    fn decrypt(&self, bytes: &[u8]) -> Result<Secrets, SecretError> {
        let passphrase = self.passphrase()?;
        let mut identity =
            age::scrypt::Identity::new(SecretString::from(passphrase.expose().clone()));
        identity.set_max_work_factor(MAX_WORK_FACTOR);
        let plain = age::decrypt(&identity, bytes).map_err(|e| match e {
            age::DecryptError::DecryptionFailed
            | age::DecryptError::NoMatchingKeys
            | age::DecryptError::KeyDecryptionFailed
            | age::DecryptError::InvalidMac => {
                // Forget the wrong passphrase so a later attempt asks again.
                *self.passphrase.lock().unwrap_or_else(|p| p.into_inner()) = None;
                file_error(
                    format!(
                        "the passphrase does not open {} (wrong passphrase, or the file is damaged)",
                        self.path.display()
                    ),
                    format!(
                        "give the right passphrase (in {PASSPHRASE_ENV}, at the prompt, or held \
                         by `plugboard secrets unlock`); the file was not changed. To go back to \
                         the OS keyring: plugboard secrets use keyring"
                    ),
                )
            }
            other => file_error(
                format!("{} cannot be decrypted ({other})", self.path.display()),
                "restore it from a backup, or move it away and store the secrets again",
            ),
        })?;
        let content: Content = serde_json::from_slice(&plain).map_err(|e| {
            file_error(
                format!(
                    "{} decrypts but its content is not valid ({e})",
                    self.path.display()
                ),
                "restore it from a backup, or move it away and store the secrets again",
            )
        })?;
        if content.format != FORMAT || content.version > VERSION {
            return Err(file_error(
                format!(
                    "{} holds format `{}` version {}, which this Plugboard does not understand",
                    self.path.display(),
                    content.format,
                    content.version
                ),
                "upgrade Plugboard",
            ));
        }
        Ok(content.secrets)
    }

    /// Encrypt `secrets` and replace the file atomically. Called with the lock held.
    fn write(&self, secrets: &Secrets) -> Result<(), SecretError> {
        let passphrase = self.passphrase()?;
        if !self.path.exists() && passphrase.expose().chars().count() < MIN_PASSPHRASE_CHARS {
            return Err(file_error(
                format!(
                    "the passphrase is too short to protect a new secrets file (it needs at \
                     least {MIN_PASSPHRASE_CHARS} characters; a few words make a good one)"
                ),
                format!("choose a longer passphrase and set {PASSPHRASE_ENV} to it"),
            ));
        }
        let content = Content {
            format: FORMAT.into(),
            version: VERSION,
            secrets: secrets.clone(),
        };
        let plain =
            Sensitive::new(serde_json::to_vec(&content).expect("the secrets always serialize"));
        let mut recipient =
            age::scrypt::Recipient::new(SecretString::from(passphrase.expose().clone()));
        recipient.set_work_factor(WORK_FACTOR);
        let encrypted = age::encrypt(&recipient, plain.expose())
            .map_err(|e| file_error(format!("encryption failed ({e})"), "try again"))?;

        let result =
            write_private(&self.path, &encrypted).map_err(|e| io_error("write", &self.path, e));
        if result.is_err() {
            *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
            return result;
        }
        let print = fs::metadata(&self.path).map(|m| fingerprint(&m)).ok();
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = print.map(|fingerprint| Cache {
            fingerprint,
            secrets: secrets.clone(),
        });
        Ok(())
    }

    /// Change the secrets under the lock; nothing is written when `change` returns `false`.
    fn mutate(&self, change: impl FnOnce(&mut Secrets) -> bool) -> Result<(), SecretError> {
        let _lock = self.lock()?;
        let mut secrets = self.read_current()?.unwrap_or_default();
        if change(&mut secrets) {
            self.write(&secrets)?;
        }
        Ok(())
    }

    /// The keys of every stored secret (for migrations and tests), sorted.
    pub fn keys(&self) -> Result<Vec<SecretKey>, SecretError> {
        let secrets = self.read_current()?.unwrap_or_default();
        Ok(secrets
            .iter()
            .flat_map(|(ns, names)| names.keys().map(move |n| SecretKey::new(ns, n)))
            .collect())
    }
}

impl SecretStore for FileStore {
    fn get(&self, key: &SecretKey) -> Result<Option<Sensitive<String>>, SecretError> {
        let secrets = self.read_current()?.unwrap_or_default();
        Ok(secrets
            .get(key.namespace())
            .and_then(|names| names.get(key.name()))
            .map(|v| Sensitive::new(v.clone())))
    }

    fn set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError> {
        self.mutate(|secrets| {
            secrets
                .entry(key.namespace().to_string())
                .or_default()
                .insert(key.name().to_string(), value.expose().clone());
            true
        })
    }

    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        self.mutate(|secrets| {
            let Some(names) = secrets.get_mut(key.namespace()) else {
                return false;
            };
            let removed = names.remove(key.name()).is_some();
            if names.is_empty() {
                secrets.remove(key.namespace());
            }
            removed
        })
    }

    fn check(&self) -> Result<(), SecretError> {
        super::check_round_trip(self)
    }

    fn describe(&self) -> String {
        format!("encrypted file ({})", self.path.display())
    }
}

fn io_error(action: &str, path: &Path, e: std::io::Error) -> SecretError {
    file_error(
        format!("could not {action} {} ({e})", path.display()),
        "check the permissions of Plugboard's config directory",
    )
}

fn create_private_dir(dir: &Path) -> Result<(), SecretError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| io_error("create", dir, e))
}

/// The passphrase of the file at `path`: `$PLUGBOARD_SECRETS_PASSPHRASE`, else the one held in
/// the kernel keyring by `plugboard secrets unlock`, else typed at a no-echo prompt on the
/// terminal (`/dev/tty`, so standard input is never read). With `confirm`, a typed passphrase
/// is asked twice.
pub fn find_passphrase(path: &Path, confirm: bool) -> Result<Sensitive<String>, SecretError> {
    if let Some(value) = std::env::var_os(PASSPHRASE_ENV) {
        let value = value.to_string_lossy().into_owned();
        if !value.is_empty() {
            return Ok(Sensitive::new(value));
        }
    }
    if let Some(held) = held_passphrase(path) {
        return Ok(held);
    }
    let shown = path.display();
    let no_tty = || {
        file_error(
            format!("the passphrase of {shown} is needed and there is no terminal to ask it on"),
            format!(
                "run `plugboard secrets unlock` in a terminal (it holds the passphrase in the \
                 kernel keyring, in memory only, for the programs you run), or set \
                 {PASSPHRASE_ENV} in the environment of the program that runs Plugboard, or go \
                 back to the OS keyring with `plugboard secrets use keyring`"
            ),
        )
    };
    let first = rpassword::prompt_password(format!("Passphrase for {shown} (input hidden): "))
        .map_err(|_| no_tty())?;
    if confirm {
        let again = rpassword::prompt_password("Type it again: ").map_err(|_| no_tty())?;
        if again != first {
            return Err(file_error(
                "the two passphrases differ",
                "run the command again",
            ));
        }
    }
    Ok(Sensitive::new(first))
}

/// What the kernel keyring holds the passphrase of the file at `path` under: one per file, so
/// two Plugboard homes never share one.
fn held_description(path: &Path) -> String {
    let absolute = fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf());
    format!("plugboard:secrets:{}", absolute.display())
}

/// The passphrase `plugboard secrets unlock` holds for the file at `path`, if it still does.
pub fn held_passphrase(path: &Path) -> Option<Sensitive<String>> {
    let bytes = plugboard_base::kernel_keyring::read(&held_description(path))
        .ok()
        .flatten()?;
    String::from_utf8(bytes)
        .ok()
        .filter(|p| !p.is_empty())
        .map(Sensitive::new)
}

/// Hold the passphrase of the file at `path` in the kernel keyring for `ttl`, after proving it
/// opens the file. Nothing is held when it does not.
pub fn hold_passphrase(
    path: &Path,
    passphrase: Sensitive<String>,
    ttl: std::time::Duration,
) -> Result<(), SecretError> {
    FileStore::with_passphrase(path, passphrase.clone()).unlock()?;
    plugboard_base::kernel_keyring::hold(
        &held_description(path),
        passphrase.expose().as_bytes(),
        ttl,
    )
    .map_err(|e| {
        file_error(
            format!("the passphrase could not be held in the kernel keyring: {e}"),
            format!(
                "set {PASSPHRASE_ENV} in the environment of the programs that run Plugboard, or \
                 keep secrets in the OS keyring (`plugboard secrets use keyring`)"
            ),
        )
    })
}

/// Stop holding the passphrase of the file at `path`. `Ok(false)`: none was held.
pub fn forget_passphrase(path: &Path) -> Result<bool, SecretError> {
    plugboard_base::kernel_keyring::forget(&held_description(path)).map_err(|e| {
        file_error(
            format!("the kernel keyring could not be reached: {e}"),
            "nothing was held there by Plugboard on this system",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_wrong_passphrase() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SECRETS_FILE);
        let store = FileStore::with_passphrase(&path, Sensitive::new("right horse battery".into()));
        let key = SecretKey::new("ns", "TOKEN");
        assert!(store.get(&key).unwrap().is_none());
        store
            .set(&key, &Sensitive::new("value-visible-nowhere".into()))
            .unwrap();
        assert_eq!(
            store.get(&key).unwrap().unwrap().expose(),
            "value-visible-nowhere"
        );
        let bytes = fs::read(&path).unwrap();
        assert!(!bytes.windows(21).any(|w| w == b"value-visible-nowhere"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let wrong = FileStore::with_passphrase(&path, Sensitive::new("wrong".into()));
        let err = wrong.get(&key).unwrap_err().to_string();
        assert!(err.contains("passphrase does not open"), "{err}");
        assert!(wrong.set(&key, &Sensitive::new("x".into())).is_err());
        assert_eq!(
            fs::read(&path).unwrap(),
            bytes,
            "a wrong passphrase changes nothing"
        );
        store.delete(&key).unwrap();
        assert!(store.get(&key).unwrap().is_none());
    }
}
