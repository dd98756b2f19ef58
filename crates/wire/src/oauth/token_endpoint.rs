//! Requests to the token endpoint: the authorization code exchange (with the PKCE verifier and
//! the RFC 8707 `resource`), the refresh token grant and the grants without a user
//! (`machine`), with client authentication as the client's method says, and the answer parsed
//! into tokens or a refusal.

use serde_json::Value;

use super::OAuthError;
use super::challenge::split_scopes;
use super::error::scrub;
use super::http::{ClientAuth, Http, display_url};
use super::registration::ClientIdentity;
use crate::secrets::Sensitive;

/// A successful token response.
pub(crate) struct TokenResponse {
    pub access_token: Sensitive<String>,
    pub token_type: String,
    pub expires_in: Option<u64>,
    pub refresh_token: Option<Sensitive<String>>,
    pub scope: Option<Vec<String>>,
}

/// The token endpoint's answer.
pub(crate) enum TokenReply {
    Issued(TokenResponse),
    /// An OAuth error response (`invalid_grant`, `invalid_client`, ...), message scrubbed.
    Refused {
        error: String,
        message: String,
    },
}

/// Exchange an authorization code.
pub(crate) async fn exchange_code(
    http: &Http,
    token_endpoint: &str,
    client: &ClientIdentity,
    code: &Sensitive<String>,
    verifier: &Sensitive<String>,
    redirect_uri: &str,
    resource: &str,
) -> Result<TokenReply, OAuthError> {
    let params = [
        ("grant_type", "authorization_code"),
        ("code", code.expose().as_str()),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier.expose().as_str()),
        ("resource", resource),
    ];
    let secrets = [code.expose().as_str(), verifier.expose().as_str()];
    token_request(http, token_endpoint, &params, Some(client), &secrets).await
}

/// Use a refresh token.
pub(crate) async fn refresh_grant(
    http: &Http,
    token_endpoint: &str,
    client: &ClientIdentity,
    refresh_token: &str,
    resource: &str,
) -> Result<TokenReply, OAuthError> {
    let params = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("resource", resource),
    ];
    token_request(
        http,
        token_endpoint,
        &params,
        Some(client),
        &[refresh_token],
    )
    .await
}

/// A token request of any grant: `params`, the client authenticated as its method says (no
/// client: the form carries its own authentication, a signed assertion), the answer parsed.
/// `secrets`: the values in `params` no error text may quote.
pub(crate) async fn token_request(
    http: &Http,
    endpoint: &str,
    params: &[(&str, &str)],
    client: Option<&ClientIdentity>,
    secrets: &[&str],
) -> Result<TokenReply, OAuthError> {
    let auth = client.map(|client| ClientAuth {
        client_id: &client.client_id,
        client_secret: client.client_secret.as_ref(),
        method: client.auth_method,
    });
    let reply = http.post_form(endpoint, params, auth.as_ref()).await?;
    let client_secret = client
        .and_then(|c| c.client_secret.as_ref())
        .map(|s| s.expose().as_str())
        .unwrap_or("");
    let mut all_secrets: Vec<&str> = secrets.to_vec();
    all_secrets.push(client_secret);
    let doc = reply.json();
    if !reply.is_success() {
        let error = doc
            .as_ref()
            .and_then(|d| d.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let description = doc
            .as_ref()
            .and_then(|d| d.get("error_description"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let message = match (error.is_empty(), description.is_empty()) {
            (true, _) => format!("HTTP {} from {}", reply.status, display_url(endpoint)),
            (false, true) => scrub(&error, &all_secrets),
            (false, false) => format!(
                "{} ({})",
                scrub(&error, &all_secrets),
                scrub(description, &all_secrets)
            ),
        };
        return Ok(TokenReply::Refused { error, message });
    }
    let doc = doc.ok_or_else(|| {
        OAuthError::TokenEndpoint(format!(
            "{} answered with something that is not JSON",
            display_url(endpoint)
        ))
    })?;
    let access_token = doc
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            OAuthError::TokenEndpoint(format!(
                "{} answered without an access_token",
                display_url(endpoint)
            ))
        })?;
    let token_type = doc
        .get("token_type")
        .and_then(Value::as_str)
        .unwrap_or("Bearer")
        .to_string();
    if !token_type.eq_ignore_ascii_case("bearer") {
        return Err(OAuthError::TokenEndpoint(format!(
            "{} issued a `{}` token; only Bearer tokens are supported",
            display_url(endpoint),
            scrub(&token_type, &[access_token])
        )));
    }
    let expires_in = match doc.get("expires_in") {
        Some(Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    Ok(TokenReply::Issued(TokenResponse {
        access_token: Sensitive::new(access_token.to_string()),
        token_type: "Bearer".into(),
        expires_in,
        refresh_token: doc
            .get("refresh_token")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| Sensitive::new(s.to_string())),
        scope: doc.get("scope").and_then(Value::as_str).map(split_scopes),
    }))
}
