//! Whether a remote server checks the credentials it was sent: after a test passed with them
//! and no credential probe could prove them, one request goes to the same URL without any of
//! the configured headers. A 401 or 403 shows that the server refuses what comes without them
//! and accepted what came with them: the credentials are verified. An answer shows that it
//! does not check them here. Anything else proves nothing either way. Nothing secret is sent:
//! the request carries no configured header, and redirects are not followed.

use std::time::Duration;

use serde_json::json;

/// How long the request without credentials may take.
const LIMIT: Duration = Duration::from_secs(5);

/// What a request without the configured headers showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforcement {
    /// Refused (401 or 403): the server checks the credentials.
    Refused,
    /// Answered: the server does not need them for this.
    Answered,
}

/// Send `initialize` to `url` without the configured headers; `None` when the answer shows
/// neither (another status, no answer, a redirect).
pub async fn check(url: &url::Url) -> Option<Enforcement> {
    let client = crate::tls::http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(LIMIT)
        .build()
        .ok()?;
    let body = json!({"jsonrpc": "2.0", "id": "plugboard-credential-check", "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "plugboard", "version": env!("CARGO_PKG_VERSION")}}});
    let response = client
        .post(url.clone())
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .ok()?;
    match response.status().as_u16() {
        401 | 403 => Some(Enforcement::Refused),
        200..=299 => Some(Enforcement::Answered),
        _ => None,
    }
}
