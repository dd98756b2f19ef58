//! `Sensitive<T>`: a wrapper for secret values that never prints or serializes its contents.

use std::fmt;

/// A secret value. `Debug` and `Display` print `***`, and serializing it is an error, so a secret
/// cannot leak into logs, JSON output or an IPC payload by accident. Read it with [`expose`].
///
/// [`expose`]: Sensitive::expose
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Sensitive<T>(T);

impl<T> Sensitive<T> {
    pub fn new(value: T) -> Self {
        Sensitive(value)
    }

    /// The secret itself. Call this only where the value is about to be used (substituted into a
    /// child's environment or a request header, or written to the secret store).
    pub fn expose(&self) -> &T {
        &self.0
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl From<String> for Sensitive<String> {
    fn from(value: String) -> Self {
        Sensitive(value)
    }
}

impl<T> fmt::Debug for Sensitive<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sensitive(***)")
    }
}

impl<T> fmt::Display for Sensitive<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl<T> serde::Serialize for Sensitive<T> {
    fn serialize<S: serde::Serializer>(&self, _serializer: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom(
            "refusing to serialize a secret value",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_or_serializes_the_value() {
        let secret = Sensitive::new("hunter2-very-secret".to_string());
        assert_eq!(format!("{secret:?}"), "Sensitive(***)");
        assert_eq!(secret.to_string(), "***");
        let err = serde_json::to_string(&secret).unwrap_err();
        assert!(err.to_string().contains("refusing to serialize"));
        assert_eq!(secret.expose(), "hunter2-very-secret");
    }
}
