//! `ApiError`: the one error shape the app sees, `{code, message, fields}`, built from the core's
//! errors. Messages are redacted of every value the request supplied before they leave the core.

use serde::Serialize;

use crate::catalog::CatalogError;
use crate::config::ConfigError;
use crate::form::FormErrors;
use crate::manage::ManageError;
use crate::probe::ErrorKind;
use crate::redact::Redactor;
use crate::secrets::SecretError;

/// What went wrong, for programs: the stable codes docs/errors.md lists, in snake case. A
/// failed test's kind is one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// A request value is wrong (see `fields`).
    Invalid,
    /// A server with that name (or one differing only in case) exists.
    Duplicate,
    /// No such server, entry, client, session, question, update or bundle form.
    NotFound,
    /// The config cannot be read or used; or a test could not start for its config.
    Config,
    /// Reading, locking or writing a file failed.
    Io,
    /// The secret store cannot be used.
    Keyring,
    /// The catalog cannot be loaded.
    Catalog,
    /// The organisation policy refuses it.
    Policy,
    /// The server would take a secret on its command line.
    SecretOnCommandLine,
    /// The new version runs or reaches something else, with the secrets.
    UpdateNewDestination,
    /// Rewriting another app's file would lose what it holds.
    WouldLose,
    /// An MCPB bundle cannot be fetched, verified, unpacked or used.
    Bundle,
    /// A registry could not be asked for a server's details.
    Registry,
    /// Another client's config file cannot be read or written.
    Client,
    /// The `plugboard` command line was not found.
    NoCli,
    /// A server's tools are not known until it has been tested.
    NotTested,
    /// The tool pin store cannot be read or written.
    Pin,
    /// An update cannot be prepared.
    Update,
    /// OAuth sign-in failed.
    Oauth,
    /// The user cancelled it.
    Cancelled,
    /// The system cannot do it here.
    Unsupported,
    /// A bug: a thread, runtime or task failed unexpectedly.
    Internal,
    /// Try it: the server lists no such tool.
    UnknownTool,
    /// Try it: the tool is switched off.
    Disabled,
    /// Try it: the tool is held until its definition is approved.
    Held,
    /// Try it: the call changes things and was not confirmed.
    NeedsConfirmation,
    /// Try it: the arguments fail the tool's input schema (see `fields`).
    InvalidArguments,
    /// A test or request ran out of time.
    Timeout,
    /// The server answered with an error.
    Server,
    /// Try it: the session is closed.
    Closed,
    /// Try it: the server asked something the app cannot answer.
    Unanswerable,
    /// Try it: the request failed.
    Failed,
    /// A test: the command was not found or cannot run.
    Spawn,
    /// A test: the process ended.
    Exited,
    /// A test: the connection failed (refused, DNS, TLS).
    Connection,
    /// A test: an unexpected HTTP status or redirect.
    Http,
    /// A test: 401/403, or the server needs OAuth.
    Unauthorized,
    /// A test: the catalog's credential probe failed.
    Credentials,
    /// A test: the server does not speak MCP correctly.
    Protocol,
}

impl ErrorCode {
    /// The code as sent (`"not_found"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Invalid => "invalid",
            ErrorCode::Duplicate => "duplicate",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Config => "config",
            ErrorCode::Io => "io",
            ErrorCode::Keyring => "keyring",
            ErrorCode::Catalog => "catalog",
            ErrorCode::Policy => "policy",
            ErrorCode::SecretOnCommandLine => "secret_on_command_line",
            ErrorCode::UpdateNewDestination => "update_new_destination",
            ErrorCode::WouldLose => "would_lose",
            ErrorCode::Bundle => "bundle",
            ErrorCode::Registry => "registry",
            ErrorCode::Client => "client",
            ErrorCode::NoCli => "no_cli",
            ErrorCode::NotTested => "not_tested",
            ErrorCode::Pin => "pin",
            ErrorCode::Update => "update",
            ErrorCode::Oauth => "oauth",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::Internal => "internal",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::Disabled => "disabled",
            ErrorCode::Held => "held",
            ErrorCode::NeedsConfirmation => "needs_confirmation",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Server => "server",
            ErrorCode::Closed => "closed",
            ErrorCode::Unanswerable => "unanswerable",
            ErrorCode::Failed => "failed",
            ErrorCode::Spawn => "spawn",
            ErrorCode::Exited => "exited",
            ErrorCode::Connection => "connection",
            ErrorCode::Http => "http",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Credentials => "credentials",
            ErrorCode::Protocol => "protocol",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tests compare codes with their strings.
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl From<ErrorKind> for ErrorCode {
    fn from(kind: ErrorKind) -> ErrorCode {
        match kind {
            ErrorKind::Config => ErrorCode::Config,
            ErrorKind::Spawn => ErrorCode::Spawn,
            ErrorKind::Exited => ErrorCode::Exited,
            ErrorKind::Timeout => ErrorCode::Timeout,
            ErrorKind::Connection => ErrorCode::Connection,
            ErrorKind::Http => ErrorCode::Http,
            ErrorKind::Unauthorized => ErrorCode::Unauthorized,
            ErrorKind::Credentials => ErrorCode::Credentials,
            ErrorKind::Protocol => ErrorCode::Protocol,
            ErrorKind::Server => ErrorCode::Server,
            _ => ErrorCode::Failed,
        }
    }
}

/// A failed API call. `code` is stable and machine-readable; `message` is for people and never
/// contains a secret value; `fields` names the form fields at fault, when there are any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error, specta::Type)]
#[error("{code}: {message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub fields: Vec<FieldError>,
}

/// A problem with one form field: `field` is the field's key (or a path such as `env.2.key`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            fields: vec![],
        }
    }

    /// An `invalid` error for one field.
    pub fn field(field: &str, message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError {
            code: ErrorCode::Invalid,
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
            code: ErrorCode::Invalid,
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
            ConfigError::NotFound { .. } => ErrorCode::NotFound,
            ConfigError::Duplicate { .. } | ConfigError::CaseCollision { .. } => {
                return ApiError {
                    code: ErrorCode::Duplicate,
                    message: err.to_string(),
                    fields: vec![FieldError {
                        field: "name".into(),
                        message: err.to_string(),
                    }],
                };
            }
            ConfigError::InvalidName(_) => return ApiError::field("name", err.to_string()),
            ConfigError::Invalid { .. } => ErrorCode::Invalid,
            ConfigError::Io { .. } => ErrorCode::Io,
            _ => ErrorCode::Config,
        };
        ApiError::new(code, err.to_string())
    }
}

impl From<SecretError> for ApiError {
    fn from(err: SecretError) -> ApiError {
        ApiError::new(ErrorCode::Keyring, err.to_string())
    }
}

impl From<ManageError> for ApiError {
    fn from(err: ManageError) -> ApiError {
        match err {
            ManageError::Config(e) => e.into(),
            ManageError::Secrets(e) => e.into(),
            ManageError::NoConfigDir => ApiError::new(ErrorCode::Config, err.to_string()),
            ManageError::Invalid { .. } => ApiError::new(ErrorCode::Invalid, err.to_string()),
            ManageError::Policy(_) => ApiError::new(ErrorCode::Policy, err.to_string()),
            ManageError::SecretOnCommandLine { .. } => {
                ApiError::new(ErrorCode::SecretOnCommandLine, err.to_string())
            }
            _ => ApiError::new(ErrorCode::Internal, err.to_string()),
        }
    }
}

impl From<CatalogError> for ApiError {
    fn from(err: CatalogError) -> ApiError {
        ApiError::new(ErrorCode::Catalog, err.to_string())
    }
}

impl From<crate::install::PrepareError> for ApiError {
    fn from(err: crate::install::PrepareError) -> Self {
        match err {
            crate::install::PrepareError::Form(errors) => errors.into(),
            crate::install::PrepareError::Refused(refusal) => refusal.into(),
            other => ApiError::new(ErrorCode::Invalid, other.to_string()),
        }
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
    fn codes_are_sent_as_their_strings() {
        for code in [
            ErrorCode::Invalid,
            ErrorCode::Duplicate,
            ErrorCode::NotFound,
            ErrorCode::Config,
            ErrorCode::Io,
            ErrorCode::Keyring,
            ErrorCode::Catalog,
            ErrorCode::Policy,
            ErrorCode::SecretOnCommandLine,
            ErrorCode::UpdateNewDestination,
            ErrorCode::WouldLose,
            ErrorCode::Bundle,
            ErrorCode::Registry,
            ErrorCode::Client,
            ErrorCode::NoCli,
            ErrorCode::NotTested,
            ErrorCode::Pin,
            ErrorCode::Update,
            ErrorCode::Oauth,
            ErrorCode::Cancelled,
            ErrorCode::Unsupported,
            ErrorCode::Internal,
            ErrorCode::UnknownTool,
            ErrorCode::Disabled,
            ErrorCode::Held,
            ErrorCode::NeedsConfirmation,
            ErrorCode::InvalidArguments,
            ErrorCode::Timeout,
            ErrorCode::Server,
            ErrorCode::Closed,
            ErrorCode::Unanswerable,
            ErrorCode::Failed,
            ErrorCode::Spawn,
            ErrorCode::Exited,
            ErrorCode::Connection,
            ErrorCode::Http,
            ErrorCode::Unauthorized,
            ErrorCode::Credentials,
            ErrorCode::Protocol,
        ] {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
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
