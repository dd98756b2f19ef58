//! An in-memory secret store for unit tests and ad hoc runs that must not touch the keyring.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{SecretError, SecretKey, SecretStore, Sensitive};

/// Keeps secrets in process memory only. Nothing survives the process.
#[derive(Default)]
pub struct MemoryStore {
    values: Mutex<HashMap<SecretKey, Sensitive<String>>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// The keys currently stored, sorted (for tests).
    pub fn keys(&self) -> Vec<SecretKey> {
        let mut keys: Vec<_> = self.lock().keys().cloned().collect();
        keys.sort();
        keys
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SecretKey, Sensitive<String>>> {
        self.values
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, key: &SecretKey) -> Result<Option<Sensitive<String>>, SecretError> {
        Ok(self.lock().get(key).cloned())
    }

    fn set(&self, key: &SecretKey, value: &Sensitive<String>) -> Result<(), SecretError> {
        self.lock().insert(key.clone(), value.clone());
        Ok(())
    }

    fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        self.lock().remove(key);
        Ok(())
    }

    fn check(&self) -> Result<(), SecretError> {
        super::check_round_trip(self)
    }

    fn describe(&self) -> String {
        "in-memory store (nothing is kept)".into()
    }
}
