//! `ApiError`: the one error shape the app sees, `{code, message, fields}`, built from the core's
//! errors. Messages are redacted of every value the request supplied before they leave the core.

use serde::Serialize;

use crate::catalog::CatalogError;
use crate::config::ConfigError;
use crate::form::FormErrors;
use crate::manage::ManageError;
use crate::redact::Redactor;
use crate::secrets::SecretError;

/// A failed API call. `code` is stable and machine-readable (`not_found`, `duplicate`, `invalid`,
/// `keyring`, `config`, `catalog`, `io`, `unsupported`, `internal`); `message` is for people and
/// never contains a secret value; `fields` names the form fields at fault, when there are any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[error("{code}: {message}")]
pub struct ApiError {
    pub code: String,
    pub message: String,
    pub fields: Vec<FieldError>,
}

/// A problem with one form field: `field` is the field's key (or a path such as `env.2.key`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            code: code.into(),
            message: message.into(),
            fields: vec![],
        }
    }

    /// An `invalid` error for one field.
    pub fn field(field: &str, message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError {
            code: "invalid".into(),
            message: message.clone(),
            fields: vec![FieldError {
                field: field.into(),
                message,
            }],
        }
    }

    /// An `invalid` error for several fields (at least one).
    pub fn fields(fields: Vec<FieldError>) -> ApiError {
        let message = fields
            .iter()
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
            .join("; ");
        ApiError {
            code: "invalid".into(),
            message,
            fields,
        }
    }

    /// This error with every one of `values` (the request's values) redacted from its message
    /// and field messages, by the same redactor as everything else that leaves the core (its
    /// encoded forms and secret-looking patterns too).
    pub fn scrub<'a>(mut self, values: impl IntoIterator<Item = &'a str>) -> ApiError {
        let redactor = Redactor::new(values);
        self.message = redactor.redact(&self.message);
        for f in &mut self.fields {
            f.message = redactor.redact(&f.message);
        }
        self
    }
}

impl From<ConfigError> for ApiError {
    fn from(err: ConfigError) -> ApiError {
        let code = match &err {
            ConfigError::NotFound { .. } => "not_found",
            ConfigError::Duplicate { .. } | ConfigError::CaseCollision { .. } => {
                return ApiError {
                    code: "duplicate".into(),
                    message: err.to_string(),
                    fields: vec![FieldError {
                        field: "name".into(),
                        message: err.to_string(),
                    }],
                };
            }
            ConfigError::InvalidName(_) => return ApiError::field("name", err.to_string()),
            ConfigError::Invalid { .. } => "invalid",
            ConfigError::Io { .. } => "io",
            _ => "config",
        };
        ApiError::new(code, err.to_string())
    }
}

impl From<SecretError> for ApiError {
    fn from(err: SecretError) -> ApiError {
        ApiError::new("keyring", err.to_string())
    }
}

impl From<ManageError> for ApiError {
    fn from(err: ManageError) -> ApiError {
        match err {
            ManageError::Config(e) => e.into(),
            ManageError::Secrets(e) => e.into(),
            ManageError::NoConfigDir => ApiError::new("config", err.to_string()),
            ManageError::Invalid { .. } => ApiError::new("invalid", err.to_string()),
            ManageError::Policy(_) => ApiError::new("policy", err.to_string()),
            ManageError::SecretOnCommandLine { .. } => {
                ApiError::new("secret_on_command_line", err.to_string())
            }
            _ => ApiError::new("internal", err.to_string()),
        }
    }
}

impl From<CatalogError> for ApiError {
    fn from(err: CatalogError) -> ApiError {
        ApiError::new("catalog", err.to_string())
    }
}

impl From<FormErrors> for ApiError {
    fn from(err: FormErrors) -> ApiError {
        ApiError::fields(
            err.errors
                .into_iter()
                .map(|e| FieldError {
                    field: e.field,
                    message: e.message,
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_redacts_the_values_and_their_forms_but_not_ordinary_words() {
        let err = ApiError::field(
            "url",
            "`https://u:tok-123456@x` has tok-123456 and tok%2D123456 in it, ok",
        )
        .scrub(["tok-123456", "https://u:tok-123456@x", "ok"]);
        assert!(!err.message.contains("tok-123456"), "{}", err.message);
        assert!(!err.message.contains("tok%2D123456"), "{}", err.message);
        assert!(err.message.ends_with("in it, ok"), "{}", err.message);
        assert_eq!(err.fields[0].message, err.message);
    }

    #[test]
    fn config_errors_map_to_stable_codes() {
        let e: ApiError = ConfigError::NotFound { name: "x".into() }.into();
        assert_eq!(e.code, "not_found");
        let e: ApiError = ConfigError::Duplicate { name: "x".into() }.into();
        assert_eq!(
            (e.code.as_str(), e.fields[0].field.as_str()),
            ("duplicate", "name")
        );
        let e: ApiError = ConfigError::InvalidName("bad".into()).into();
        assert_eq!(e.code, "invalid");
    }
}
