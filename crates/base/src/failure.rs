//! How a test can fail: the error kinds docs/errors.md lists and a classified [`Failure`] (what
//! happened and what to do). Below `resolve` and `probe`, which both classify failures.

use serde::{Deserialize, Serialize};

/// Why a test failed, as docs/errors.md lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The configuration cannot be used as it is (missing secret, keyring unavailable, bad URL).
    Config,
    /// The command was not found or is not executable.
    Spawn,
    /// The process ended (before the handshake, or in the middle of the test).
    Exited,
    /// The overall deadline passed.
    Timeout,
    /// Connection refused, DNS failure, TLS failure.
    Connection,
    /// An unexpected HTTP status or redirect.
    Http,
    /// 401/403, or the server needs OAuth.
    Unauthorized,
    /// The catalog's credential probe failed.
    Credentials,
    /// Not MCP: logs on stdout, bad JSON-RPC, unsupported protocol version, oversized message.
    Protocol,
    /// A JSON-RPC error on a required method.
    Server,
}

impl ErrorKind {
    /// The name used in JSON (`"config"`, `"spawn"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::Spawn => "spawn",
            ErrorKind::Exited => "exited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Http => "http",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Credentials => "credentials",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Server => "server",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A classified failure: what went wrong and what the user should do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    /// What happened, in one or two sentences.
    pub error: String,
    /// What to do about it.
    pub hint: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, error: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind,
            error: error.into(),
            hint: hint.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.error)
    }
}
