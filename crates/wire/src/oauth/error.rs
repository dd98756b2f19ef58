//! `OAuthError`: every way signing in, refreshing or revoking can fail, with messages that say
//! what happened and what to do. No variant ever carries a token, a code or a client secret:
//! text that came from a server is scrubbed of the values in play before it is put here.

use crate::secrets::SecretError;

/// A failure of the OAuth module. `Display` is safe to show to the user (no secret values).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The server config does not allow OAuth (stdio, no URL, or another auth mode).
    #[error("{0}")]
    Config(String),
    /// A network or HTTP failure talking to the MCP server or the authorization server.
    #[error("{0}")]
    Http(String),
    /// Protected resource or authorization server metadata could not be found or is unusable.
    #[error("OAuth discovery failed: {0}")]
    Discovery(String),
    /// No client identity could be obtained (no registration endpoint, registration refused).
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization URL is not one Plugboard will open.
    #[error("refusing to open the authorization URL: {0}")]
    UnsafeAuthorizationUrl(String),
    /// The authorization response's `state` does not belong to this sign-in.
    #[error(
        "the authorization response does not belong to this sign-in (its `state` does not match); \
         it was refused. Start the sign-in again"
    )]
    StateMismatch,
    /// RFC 9207: the `iss` of the authorization response is missing or not the expected issuer.
    #[error("the authorization response came from the wrong issuer ({0}); it was refused")]
    IssuerMismatch(String),
    /// The authorization server answered the authorization request with an error.
    #[error("the authorization server refused the sign-in: {0}")]
    AuthorizationDenied(String),
    /// The pasted redirect URL is not a usable authorization response.
    #[error("{0}")]
    BadRedirect(String),
    /// The token endpoint refused a code exchange or a refresh.
    #[error("the token endpoint refused the request: {0}")]
    TokenEndpoint(String),
    /// There are no usable tokens: the user has to sign in (again).
    #[error("{0}")]
    LoginRequired(String),
    /// Scope step-up will not help (the server keeps asking for scopes already granted) or was
    /// tried too often.
    #[error("{0}")]
    StepUpLimit(String),
    /// The secret store failed.
    #[error(transparent)]
    Secrets(#[from] SecretError),
    /// The per-server refresh lock could not be taken.
    #[error("{0}")]
    Lock(String),
    /// No job with this id (finished jobs are forgotten after a while).
    #[error("no OAuth sign-in job `{0}`")]
    UnknownJob(String),
    /// The job is not in a state where this action makes sense.
    #[error("{0}")]
    JobState(String),
    /// The loopback callback listener could not be started.
    #[error("{0}")]
    Listener(String),
}

/// Remove every value in `secrets` (non-empty ones) from `text`, so a server's error text that
/// echoes a token, code or secret back never reaches the user or a log.
pub(crate) fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    let mut values: Vec<&str> = secrets.iter().copied().filter(|s| s.len() >= 4).collect();
    values.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for value in values {
        if out.contains(value) {
            out = out.replace(value, "***");
        }
    }
    // Server text is shown on one line and bounded.
    let mut out: String = out
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if out.len() > 300 {
        let mut end = 300;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_removes_values_and_bounds_text() {
        let s = scrub("bad token abcd1234 and\nxyz", &["abcd1234", "ab"]);
        assert_eq!(s, "bad token *** and xyz");
        assert!(scrub(&"x".repeat(1000), &[]).len() < 310);
    }
}
