//! The OS keyring store: Secret Service on Linux, Keychain on macOS, Credential Manager on
//! Windows, all through `keyring-core`.

use std::sync::{Arc, OnceLock};

use keyring_core::{CredentialStore, Entry, Error as KeyringError};

use super::{KEYRING_SERVICE, SecretError, SecretKey, SecretStore, Sensitive};

/// Secrets in the OS keyring, filed under service `plugboard` and account `<namespace>/<name>`.
pub struct KeyringStore {
    store: Arc<CredentialStore>,
    checked: OnceLock<()>,
}

const HEADLESS_FIX: &str = "Run a Secret Service provider (GNOME Keyring, KeePassXC) in your \
desktop session. On a headless machine start one in a private D-Bus session: dbus-run-session -- \
sh -c 'eval \"$(printf PASSWORD | gnome-keyring-daemon --unlock --components=secrets -d)\"; plugboard ...'";

impl KeyringStore {
    /// Connect to the platform's keyring. Fails fast when it cannot be reached; the first write
    /// also proves that it is unlocked and usable.
    pub fn open() -> Result<Self, SecretError> {
        let store = platform_store().map_err(|err| classify(err, "connecting to the keyring"))?;
        Ok(KeyringStore {
            store,
            checked: OnceLock::new(),
        })
    }

    fn entry(&self, key: &SecretKey) -> Result<Entry, SecretError> {
        Entry::new_in_store(&self.store, KEYRING_SERVICE, &key.account())
            .map_err(|err| classify(err, "opening a keyring entry"))
    }

    fn ensure_checked(&self) -> Result<(), SecretError> {
        if self.checked.get().is_none() {
            super::check_round_trip(&Unchecked(self))?;
            let _ = self.checked.set(());
        }
        Ok(())
    }

    fn raw_set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError> {
        self.entry(key)?
            .set_password(value.expose())
            .map_err(|err| classify(err, "writing to the keyring"))
    }
}

/// The store without the one-time write check, used by the check itself.
struct Unchecked<'a>(&'a KeyringStore);

impl SecretStore for Unchecked<'_> {
    fn get(&self, key: &SecretKey) -> Result<Option<Sensitive<String>>, SecretError> {
        self.0.get(key)
    }
    fn set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError> {
        self.0.raw_set(key, value)
    }
    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        self.0.delete(key)
    }
    fn check(&self) -> Result<(), SecretError> {
        Ok(())
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, key: &SecretKey) -> Result<Option<Sensitive<String>>, SecretError> {
        match self.entry(key)?.get_password() {
            Ok(value) => Ok(Some(Sensitive::new(value))),
            Err(KeyringError::NoEntry) => Ok(None),
            Err(err) => Err(classify(err, "reading from the keyring")),
        }
    }

    fn set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError> {
        self.ensure_checked()?;
        self.raw_set(key, value)
    }

    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        match self.entry(key)?.delete_credential() {
            Ok(()) | Err(KeyringError::NoEntry) => Ok(()),
            Err(err) => Err(classify(err, "deleting from the keyring")),
        }
    }

    fn check(&self) -> Result<(), SecretError> {
        super::check_round_trip(&Unchecked(self))
    }

    fn describe(&self) -> String {
        format!("OS keyring ({})", platform_name())
    }
}

#[cfg(target_os = "linux")]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Ok(zbus_secret_service_keyring_store::Store::new()?)
}

#[cfg(target_os = "macos")]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Ok(apple_native_keyring_store::keychain::Store::new()?)
}

#[cfg(target_os = "windows")]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Ok(windows_native_keyring_store::Store::new()?)
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
fn platform_store() -> keyring_core::Result<Arc<CredentialStore>> {
    Err(KeyringError::NotSupportedByStore(
        "no OS keyring is supported on this platform".into(),
    ))
}

fn platform_name() -> &'static str {
    if cfg!(target_os = "linux") {
        "Secret Service"
    } else if cfg!(target_os = "macos") {
        "macOS Keychain"
    } else if cfg!(target_os = "windows") {
        "Windows Credential Manager"
    } else {
        "unsupported"
    }
}

/// Turn a keyring-core error into one that says what is missing and how to fix it.
fn classify(err: KeyringError, doing: &str) -> SecretError {
    match err {
        KeyringError::PlatformFailure(cause) => {
            let detail = cause.to_string();
            let hint = if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none()
                && cfg!(target_os = "linux")
            {
                "there is no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)".to_string()
            } else {
                format!("{doing} failed ({detail})")
            };
            SecretError::Unavailable {
                detail: hint,
                fix: HEADLESS_FIX.into(),
            }
        }
        KeyringError::NoStorageAccess(cause) => SecretError::Locked {
            detail: format!("{doing} was refused ({cause})"),
            fix: "Unlock the login keyring (log in to the desktop session, or run \
                  gnome-keyring-daemon --unlock) and try again"
                .into(),
        },
        KeyringError::NoDefaultStore | KeyringError::NotSupportedByStore(_) => {
            SecretError::Unavailable {
                detail: err.to_string(),
                fix: HEADLESS_FIX.into(),
            }
        }
        other => SecretError::Backend(format!("{doing}: {other}")),
    }
}
