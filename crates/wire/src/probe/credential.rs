//! The credential probe: one read-only tool call, declared by the catalog, that proves the
//! credentials work (a connection alone does not: many servers list their tools without
//! checking the token). A result with `isError: true` always means the probe failed; when a
//! text content (or the structured content) is JSON and the value at the catalog's pointer is
//! one of its "bad credentials" values, the credentials were rejected; any other result passes.

use rmcp::model::CallToolResult;
use serde_json::Value;

use super::result::{ErrorKind, Failure};
use crate::connect::truncate_chars;
use crate::credential_probe::CredentialProbe;

/// What the probe's result says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// The result matched the catalog's "bad credentials" values (the matched value).
    Rejected(String),
    /// `isError: true` without a recognised reason (the text of the result).
    Failed(String),
}

/// The text contents of a tool result.
fn texts(result: &CallToolResult) -> Vec<String> {
    let Ok(Value::Array(content)) = serde_json::to_value(&result.content) else {
        return vec![];
    };
    content
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn matched(probe: &CredentialProbe, value: &Value) -> Option<String> {
    let rule = probe.auth_error.as_ref()?;
    let found = value.pointer(&rule.pointer)?;
    let text = match found {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    rule.values.contains(&text).then_some(text)
}

/// Judge a probe's tool result.
pub fn evaluate(probe: &CredentialProbe, result: &CallToolResult) -> Verdict {
    let texts = texts(result);
    let mut rejected = result
        .structured_content
        .as_ref()
        .and_then(|v| matched(probe, v));
    if rejected.is_none() {
        rejected = texts
            .iter()
            .filter_map(|t| serde_json::from_str::<Value>(t.trim()).ok())
            .find_map(|v| matched(probe, &v));
    }
    if let Some(value) = rejected {
        return Verdict::Rejected(value);
    }
    if result.is_error == Some(true) {
        let text = texts.join(" ");
        return Verdict::Failed(truncate_chars(text.trim(), 300));
    }
    Verdict::Passed
}

/// Whether a failed probe's text says the server could not reach its service (DNS, refused,
/// TLS, a timeout, Node's `fetch failed`): that is a network problem, not a verdict on the
/// credentials.
pub fn is_network_failure(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    [
        "fetch failed",
        "enotfound",
        "eai_again",
        "getaddrinfo",
        "econnrefused",
        "econnreset",
        "etimedout",
        "ehostunreach",
        "enetunreach",
        "socket hang up",
        "network error",
        "networkerror",
        "connection refused",
        "name or service not known",
        "failed to resolve",
        "dns error",
        "certificate",
        "tls handshake",
        "ssl routines",
        "unable to verify the first certificate",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// The failure for a verdict other than [`Verdict::Passed`].
pub fn failure(server: &str, probe: &CredentialProbe, verdict: &Verdict) -> Option<Failure> {
    let tool = &probe.tool;
    match verdict {
        Verdict::Passed => None,
        Verdict::Rejected(value) => Some(Failure::new(
            ErrorKind::Credentials,
            format!("the credential probe `{tool}` failed: the token was rejected ({value})"),
            format!(
                "the credential probe `{tool}` failed: the token was rejected ({value}). Update it \
                 with `plugboard edit {server} --credential`"
            ),
        )),
        Verdict::Failed(text) if is_network_failure(text) => Some(Failure::new(
            ErrorKind::Connection,
            format!(
                "the server started, but its credential check `{tool}` could not reach the \
                 service (network): {text}"
            ),
            "the credentials were not checked: the server cannot reach its service from this \
             machine; check the network, a proxy or VPN, then test again",
        )),
        Verdict::Failed(text) => {
            let detail = if text.is_empty() {
                "the tool reported an error".to_owned()
            } else {
                text.clone()
            };
            Some(Failure::new(
                ErrorKind::Credentials,
                format!("the credential probe `{tool}` failed: {detail}"),
                format!(
                    "the server answered, but the call that proves the credentials work failed; \
                     check the credentials and update them with `plugboard edit {server} \
                     --credential`"
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credential_probe::AuthErrorMatch;

    fn probe() -> CredentialProbe {
        CredentialProbe {
            tool: "get_me".into(),
            arguments: serde_json::json!({}),
            auth_error: Some(AuthErrorMatch {
                pointer: "/error".into(),
                values: vec!["invalid_auth".into(), "not_authed".into()],
            }),
        }
    }

    fn result(json: Value) -> CallToolResult {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn verdicts() {
        let p = probe();
        let ok =
            result(serde_json::json!({"content": [{"type": "text", "text": "{\"ok\":true}"}]}));
        assert_eq!(evaluate(&p, &ok), Verdict::Passed);
        let rejected = result(serde_json::json!({
            "content": [{"type": "text", "text": "{\"ok\":false,\"error\":\"invalid_auth\"}"}]
        }));
        assert_eq!(
            evaluate(&p, &rejected),
            Verdict::Rejected("invalid_auth".into())
        );
        let failed = result(serde_json::json!({
            "content": [{"type": "text", "text": "boom"}], "isError": true
        }));
        assert_eq!(evaluate(&p, &failed), Verdict::Failed("boom".into()));
        let not_json = result(serde_json::json!({"content": [{"type": "text", "text": "hello"}]}));
        assert_eq!(evaluate(&p, &not_json), Verdict::Passed);
        let structured = result(serde_json::json!({
            "content": [], "structuredContent": {"error": "not_authed"}
        }));
        assert_eq!(
            evaluate(&p, &structured),
            Verdict::Rejected("not_authed".into())
        );
        let offline = failure("slack", &p, &Verdict::Failed("fetch failed".into())).unwrap();
        assert_eq!(offline.kind, ErrorKind::Connection);
        assert!(offline.error.contains("network"));
        for text in [
            "getaddrinfo ENOTFOUND slack.com",
            "connect ECONNREFUSED 1.2.3.4:443",
            "self-signed certificate in certificate chain",
        ] {
            assert!(is_network_failure(text), "{text}");
        }
        assert!(!is_network_failure("invalid_auth"));
        let f = failure("slack", &p, &Verdict::Rejected("invalid_auth".into())).unwrap();
        assert_eq!(
            f.hint,
            "the credential probe `get_me` failed: the token was rejected (invalid_auth). Update it with `plugboard edit slack --credential`"
        );
    }
}
