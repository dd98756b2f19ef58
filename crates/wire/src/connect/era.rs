//! The two protocol eras of MCP: **modern** (2026-07-28 and later: no
//! `initialize`, every request carries its protocol version, client identity and capabilities
//! in `_meta`, `server/discover` says what a server supports) and **legacy** (2025-11-25 and
//! earlier: the `initialize` handshake). This module holds what both the handshake and the
//! bridge of `plugboard run` need to know about them: the versions Plugboard speaks, the
//! `_meta` keys, which JSON-RPC errors only a modern server sends, and how to read the
//! `supported` list of an `UnsupportedProtocolVersionError`.

use rmcp::model::{ErrorCode, ErrorData, ProtocolVersion};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which era a server (or a client) speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Era {
    /// 2026-07-28 and later: per-request `_meta`, `server/discover`, no sessions.
    Modern,
    /// 2025-11-25 and earlier: the `initialize` handshake.
    Legacy,
}

impl Era {
    /// `"modern"` or `"legacy"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
    }

    /// The era of a protocol version (a version with an `initialize` handshake is legacy).
    pub fn of(version: &ProtocolVersion) -> Era {
        if version.has_initialize() {
            Era::Legacy
        } else {
            Era::Modern
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `_meta` key of the protocol version a modern request is made in.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's name and version.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the client's capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the log level a modern request asks for.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's name and version in a modern result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The prefix of every `_meta` key the protocol itself defines.
pub const META_PREFIX: &str = "io.modelcontextprotocol/";

/// `UnsupportedProtocolVersionError`.
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
/// `MissingRequiredClientCapabilityError`.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
/// `HeaderMismatch` (streamable HTTP).
pub const HEADER_MISMATCH: i32 = -32020;

/// The modern versions Plugboard speaks, most preferred first.
pub fn modern_versions() -> Vec<ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .rev()
        .filter(|v| !v.has_initialize())
        .cloned()
        .collect()
}

/// The legacy versions Plugboard speaks, newest first.
pub fn legacy_versions() -> Vec<ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .rev()
        .filter(|v| v.has_initialize())
        .cloned()
        .collect()
}

/// Every version Plugboard speaks, newest first, as text (for messages).
pub fn spoken_versions() -> Vec<String> {
    modern_versions()
        .into_iter()
        .chain(legacy_versions())
        .map(|v| v.to_string())
        .collect()
}

/// Whether Plugboard speaks `version`.
pub fn speaks(version: &str) -> bool {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .any(|v| v.as_str() == version)
}

/// The version an `initialize` asks for.
pub fn legacy_request_version() -> ProtocolVersion {
    ProtocolVersion::LATEST_WITH_INITIALIZE
}

/// Whether `code` is a JSON-RPC error that only a modern server sends: a server that answers
/// with one speaks the modern era, even when it rejected the request.
pub fn is_modern_error(code: ErrorCode) -> bool {
    matches!(
        code.0,
        UNSUPPORTED_PROTOCOL_VERSION | MISSING_REQUIRED_CLIENT_CAPABILITY | HEADER_MISMATCH
    )
}

/// The `supported` versions of an `UnsupportedProtocolVersionError` (`data.supported`), in the
/// server's order. `None` when the error is not one or lists nothing readable.
pub fn supported_of(error: &ErrorData) -> Option<Vec<String>> {
    if error.code.0 != UNSUPPORTED_PROTOCOL_VERSION {
        return None;
    }
    let listed = error.data.as_ref()?.get("supported")?.as_array()?;
    Some(
        listed
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
    )
}

/// The first of `ours` (in our order of preference) that `theirs` lists.
pub fn best_common(ours: &[ProtocolVersion], theirs: &[String]) -> Option<ProtocolVersion> {
    ours.iter()
        .find(|v| theirs.iter().any(|t| t == v.as_str()))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_split_by_era() {
        assert_eq!(modern_versions(), vec![ProtocolVersion::V_2026_07_28]);
        assert_eq!(legacy_versions()[0], ProtocolVersion::V_2025_11_25);
        assert!(legacy_versions().iter().all(|v| Era::of(v) == Era::Legacy));
        assert!(speaks("2024-11-05") && speaks("2026-07-28") && !speaks("1900-01-01"));
        assert_eq!(
            spoken_versions()[..2],
            ["2026-07-28".to_string(), "2025-11-25".to_string()]
        );
    }

    #[test]
    fn unsupported_version_errors_are_read() {
        let error = ErrorData::new(
            ErrorCode(-32022),
            "Unsupported protocol version",
            Some(serde_json::json!({"supported": ["2027-01-01", "2026-07-28"], "requested": "x"})),
        );
        let listed = supported_of(&error).unwrap();
        assert_eq!(listed, ["2027-01-01", "2026-07-28"]);
        assert_eq!(
            best_common(&modern_versions(), &listed),
            Some(ProtocolVersion::V_2026_07_28)
        );
        assert!(is_modern_error(error.code));
        assert!(!is_modern_error(ErrorCode(-32601)));
        let other = ErrorData::new(ErrorCode(-32601), "nope", None);
        assert_eq!(supported_of(&other), None);
        assert_eq!(
            best_common(&modern_versions(), &["1900-01-01".into()]),
            None
        );
    }
}
