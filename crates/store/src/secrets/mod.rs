//! Secrets: the `SecretStore` trait, keys namespaced per server, and the stores behind it.
//!
//! The config file never holds a secret value, only a reference by name (see `config::SecretRef`).
//! A reference is resolved inside the namespace of the server that holds it, so one server can
//! never receive another server's secret, whatever its config says.

pub mod file_store;
mod keyring_store;
mod memory_store;
pub mod selection;
mod sensitive;

pub use file_store::FileStore;
pub use keyring_store::KeyringStore;
pub use memory_store::MemoryStore;
pub use selection::StoreKind;
pub use sensitive::Sensitive;

/// The name under which every Plugboard secret is filed in the OS keyring.
pub const KEYRING_SERVICE: &str = "plugboard";

/// Where one secret lives: the owning server's secret namespace plus the secret's name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SecretKey {
    namespace: String,
    name: String,
}

impl SecretKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        SecretKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The account string used in the keyring: `<namespace>/<name>`.
    pub fn account(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Why a secret store could not do what was asked. Messages say what is missing and how to fix it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// No store can be reached at all (no D-Bus session, no Secret Service, unsupported OS).
    #[error("no usable OS keyring: {detail}. {fix}")]
    Unavailable { detail: String, fix: String },
    /// The store exists but refuses access (locked, or no default collection).
    #[error("the OS keyring is locked or not set up: {detail}. {fix}")]
    Locked { detail: String, fix: String },
    /// Any other failure reported by the back end.
    #[error("the OS keyring failed: {0}")]
    Backend(String),
    /// The encrypted-file store (or the setting that chose it) cannot be used: a wrong
    /// passphrase, no way to ask for one, a damaged or unreadable file.
    #[error("the encrypted secret store cannot be used: {detail}. {fix}")]
    File { detail: String, fix: String },
}

/// The environment variable a secret field can be passed in: `PLUGBOARD_SECRET_<KEY>`, with the
/// key upper-cased and anything but letters and digits turned into `_`.
pub fn secret_env_var(key: &str) -> String {
    let key: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("PLUGBOARD_SECRET_{key}")
}

/// A place to keep secret values. Implementations are synchronous and thread-safe.
pub trait SecretStore: Send + Sync {
    /// The value stored under `key`, or `None` when there is none.
    fn get(&self, key: &SecretKey) -> Result<Option<Sensitive<String>>, SecretError>;
    /// Store `value` under `key`, replacing any earlier value.
    fn set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError>;
    /// Delete the value under `key`. Deleting a value that is not there is not an error.
    fn delete(&self, key: &SecretKey) -> Result<(), SecretError>;
    /// Prove the store works with a real write, read and delete.
    fn check(&self) -> Result<(), SecretError>;
    /// A short human description ("OS keyring (Secret Service)").
    fn describe(&self) -> String;
}

/// Run `check` on a store and the round trip it implies, shared by the store implementations.
fn check_round_trip(store: &dyn SecretStore) -> Result<(), SecretError> {
    // A key of its own per call, so concurrent checks (other threads, other processes) never
    // delete each other's probe.
    let unique = format!(
        "probe-{}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    );
    let key = SecretKey::new("plugboard-self-check", &unique);
    let value = Sensitive::new(unique.clone());
    store.set(&key, &value)?;
    let read = store.get(&key)?;
    store.delete(&key)?;
    match read {
        Some(read) if read == value => Ok(()),
        _ => Err(SecretError::Backend(
            "a value written to the store could not be read back".into(),
        )),
    }
}
