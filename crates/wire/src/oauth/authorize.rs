//! The authorization request: PKCE (S256) and the URL built by the `oauth2` crate, `state`,
//! scope selection as the MCP spec orders it, the RFC 8707 `resource`, and the check every
//! authorization URL passes before anything opens it (https, or http on a loopback host; never
//! `javascript:`, `file:` and the like).

use base64::Engine;
use oauth2::{AuthUrl, ClientId, CsrfToken, PkceCodeChallenge, RedirectUrl, Scope};
use rand::RngCore;
use url::Url;

use super::OAuthError;
use super::discovery::{Discovery, is_loopback_host};
use crate::secrets::Sensitive;

/// A PKCE pair: the verifier stays in memory, the challenge goes in the URL.
pub(crate) struct Pkce {
    pub verifier: Sensitive<String>,
    pub challenge: PkceCodeChallenge,
}

impl Pkce {
    pub fn new() -> Pkce {
        // 32 random bytes → 43 base64url characters (RFC 7636 §4.1 allows 43..128).
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        Pkce {
            verifier: Sensitive::new(verifier.into_secret()),
            challenge,
        }
    }
}

/// A random URL-safe string of `bytes` random bytes.
pub(crate) fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

/// The scopes to request, as the MCP spec (2025-11-25, "Scope Selection Strategy") says: the
/// `scope` of the challenge, else the protected resource's `scopes_supported`, else none
/// (the parameter is omitted); then the configured scopes and any step-up scopes are added,
/// and `offline_access` when the authorization server lists it (SEP-2207) and a scope is sent.
pub(crate) fn select_scopes(
    discovery: &Discovery,
    configured: &[String],
    extra: &[String],
) -> Vec<String> {
    fn add(scopes: &mut Vec<String>, s: &str) {
        if !s.is_empty() && !scopes.iter().any(|x| x == s) {
            scopes.push(s.to_string());
        }
    }
    let mut scopes: Vec<String> = vec![];
    if let Some(from_challenge) = discovery.challenge.as_ref().and_then(|c| c.scope.as_ref()) {
        from_challenge.iter().for_each(|s| add(&mut scopes, s));
    } else if let Some(supported) = discovery
        .protected_resource
        .as_ref()
        .and_then(|p| p.scopes_supported.as_ref())
    {
        supported.iter().for_each(|s| add(&mut scopes, s));
    }
    configured.iter().for_each(|s| add(&mut scopes, s));
    extra.iter().for_each(|s| add(&mut scopes, s));
    let offers_offline = discovery
        .auth_server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
    if offers_offline && !scopes.is_empty() {
        add(&mut scopes, "offline_access");
    }
    scopes
}

/// The parameters of one authorization request.
pub(crate) struct AuthorizationRequest<'a> {
    pub endpoint: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub scopes: &'a [String],
    pub state: &'a str,
    pub code_challenge: &'a PkceCodeChallenge,
    pub resource: &'a str,
}

/// Build the authorization URL and check that it is safe to open.
pub(crate) fn authorization_url(req: &AuthorizationRequest<'_>) -> Result<Url, OAuthError> {
    let endpoint = validate_authorization_url(req.endpoint)?;
    let redirect = RedirectUrl::new(req.redirect_uri.to_owned())
        .map_err(|_| OAuthError::Config(format!("`{}` is not a redirect URL", req.redirect_uri)))?;
    let client = oauth2::basic::BasicClient::new(ClientId::new(req.client_id.to_owned()))
        .set_auth_uri(AuthUrl::from_url(endpoint))
        .set_redirect_uri(redirect);
    let (url, _) = client
        .authorize_url(|| CsrfToken::new(req.state.to_owned()))
        .set_pkce_challenge(req.code_challenge.clone())
        .add_scopes(req.scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", req.resource)
        .url();
    validate_authorization_url(url.as_str())
}

/// Check a URL before anything opens it in a browser: absolute `https`, or `http` only on a
/// loopback host; no user info; nothing else (`javascript:`, `data:`, `file:`, custom schemes).
pub fn validate_authorization_url(raw: &str) -> Result<Url, OAuthError> {
    let trimmed = raw.trim();
    if trimmed != raw || raw.chars().any(char::is_control) {
        return Err(OAuthError::UnsafeAuthorizationUrl(
            "it contains spaces or control characters".into(),
        ));
    }
    let url = Url::parse(raw)
        .map_err(|e| OAuthError::UnsafeAuthorizationUrl(format!("it is not a valid URL ({e})")))?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(&url) => {}
        "http" => {
            return Err(OAuthError::UnsafeAuthorizationUrl(format!(
                "it uses plain http on `{}`, which is not a loopback host; only https is allowed \
                 there",
                url.host_str().unwrap_or_default()
            )));
        }
        other => {
            return Err(OAuthError::UnsafeAuthorizationUrl(format!(
                "its scheme is `{other}:`; only https (or http on a loopback host) is allowed"
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(OAuthError::UnsafeAuthorizationUrl("it has no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OAuthError::UnsafeAuthorizationUrl(
            "it carries a user name or password".into(),
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenge_is_s256_of_the_verifier() {
        use sha2::{Digest, Sha256};
        let p = Pkce::new();
        assert_eq!(p.verifier.expose().len(), 43);
        let expected = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(p.verifier.expose().as_bytes()));
        assert_eq!(p.challenge.as_str(), expected);
        assert_eq!(p.challenge.method().as_str(), "S256");
        // RFC 7636 appendix B.
        let v = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(v.as_bytes())),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn unsafe_urls_are_refused() {
        for bad in [
            "javascript:alert(1)",
            "JAVASCRIPT:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "http://evil.example.com/authorize",
            "http://10.0.0.1/authorize",
            "https://user:pw@as.example/authorize",
            " https://as.example/authorize",
            "myapp://authorize",
            "not a url",
        ] {
            assert!(validate_authorization_url(bad).is_err(), "{bad}");
        }
        for good in [
            "https://as.example/authorize?x=1",
            "http://127.0.0.1:8080/authorize",
            "http://localhost:1/authorize",
            "http://[::1]:1/authorize",
        ] {
            assert!(validate_authorization_url(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn authorization_url_has_every_parameter() {
        let scopes = vec!["a".to_string(), "b".to_string()];
        let pkce = Pkce::new();
        let url = authorization_url(&AuthorizationRequest {
            endpoint: "https://as.example/authorize?tenant=1",
            client_id: "cid",
            redirect_uri: "http://127.0.0.1:1/callback",
            scopes: &scopes,
            state: "st",
            code_challenge: &pkce.challenge,
            resource: "https://mcp.example/mcp",
        })
        .unwrap();
        let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(q["tenant"], "1");
        assert_eq!(q["scope"], "a b");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["resource"], "https://mcp.example/mcp");
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], "cid");
        assert_eq!(q["redirect_uri"], "http://127.0.0.1:1/callback");
        assert_eq!(q["state"], "st");
        assert_eq!(q["code_challenge"], pkce.challenge.as_str());
    }
}
