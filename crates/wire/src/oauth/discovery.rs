//! Discovery: from an MCP server URL to the authorization server's endpoints.
//!
//! 401 + `WWW-Authenticate` → protected resource metadata (RFC 9728: the header's
//! `resource_metadata`, else the path-suffixed well-known URL, then the root one) → authorization
//! server metadata (RFC 8414 with path insertion, then OpenID Connect discovery in both forms).
//! The 2025-03-26 fallbacks: without resource metadata the MCP server's origin is the
//! authorization server, and without any metadata the endpoints are `/authorize`, `/token` and
//! `/register` there.

use serde_json::Value;
use url::Url;

use super::OAuthError;
use super::challenge::{BearerChallenge, parse_bearer_challenge};
use super::http::{Http, display_url};
use crate::config::OAuthSettings;

/// RFC 9728 protected resource metadata (the fields Plugboard uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedResourceMetadata {
    /// Where it was found.
    pub url: String,
    pub resource: Option<String>,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// How the authorization server's endpoints were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetadataSource {
    /// RFC 8414 or OpenID Connect metadata at this URL.
    Discovered(String),
    /// No metadata anywhere: the 2025-03-26 default endpoints on the server's origin.
    DefaultEndpoints,
}

/// RFC 8414 authorization server metadata (the fields Plugboard uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub revocation_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub client_id_metadata_document_supported: bool,
    pub authorization_response_iss_parameter_supported: bool,
    pub source: MetadataSource,
}

/// Everything discovery learned about one MCP server.
#[derive(Clone, Debug)]
pub struct Discovery {
    /// The MCP server URL as configured.
    pub server_url: String,
    /// The RFC 8707 `resource` to send: the protected resource metadata's `resource` when it
    /// covers the server URL, else the canonical server URL.
    pub resource: String,
    pub protected_resource: Option<ProtectedResourceMetadata>,
    pub auth_server: AuthServerMetadata,
    /// The Bearer challenge of the 401 (or 403) that started this, if any.
    pub challenge: Option<BearerChallenge>,
    /// True when the server has no protected resource metadata (the 2025-03-26 flow).
    pub legacy: bool,
}

/// Discover how to sign in to the MCP server at `server_url`.
///
/// `challenge` is the `WWW-Authenticate` value of a 401/403 the caller already has; without
/// one, an unauthenticated request is made to get it (`sse`: a GET of the SSE endpoint,
/// otherwise an `initialize` POST).
pub(crate) async fn discover(
    http: &Http,
    server_url: &str,
    sse: bool,
    challenge: Option<&str>,
    settings: &OAuthSettings,
) -> Result<Discovery, OAuthError> {
    let server = parse_http_url(server_url, "the server URL")?;
    let challenge = match challenge {
        Some(header) => parse_bearer_challenge(header),
        None => probe(http, server.as_str(), sse).await?,
    };

    let prm = find_protected_resource(http, &server, challenge.as_ref()).await?;
    let resource = match prm.as_ref().and_then(|p| p.resource.as_deref()) {
        Some(declared) => {
            if !resource_covers(declared, &server) {
                return Err(OAuthError::Discovery(format!(
                    "the server's protected resource metadata is for `{declared}`, not for {}; \
                     refusing to sign in (a server may only ask for tokens for itself)",
                    display_url(server.as_str())
                )));
            }
            declared.to_string()
        }
        None => canonical_resource(&server),
    };

    let overrides = (
        settings.authorization_url.as_deref(),
        settings.token_url.as_deref(),
    );
    let mut auth_server = match &prm {
        Some(prm) => {
            let issuer = prm.authorization_servers.first().ok_or_else(|| {
                OAuthError::Discovery(format!(
                    "the protected resource metadata at {} names no authorization server",
                    display_url(&prm.url)
                ))
            })?;
            let issuer_url = parse_http_url(issuer, "the authorization server")?;
            match find_auth_server_metadata(http, &issuer_url, IssuerCheck::Exact).await? {
                Some(meta) => meta,
                None => match overrides {
                    (Some(a), Some(t)) => configured_endpoints(&issuer_url, a, t),
                    _ => {
                        return Err(OAuthError::Discovery(format!(
                            "the authorization server {} publishes no metadata \
                             (/.well-known/oauth-authorization-server or \
                             /.well-known/openid-configuration); set its authorization and token \
                             URLs in the server's OAuth settings",
                            display_url(issuer)
                        )));
                    }
                },
            }
        }
        None => {
            // 2025-03-26: the authorization base URL is the MCP server URL without its path.
            let mut origin = server.clone();
            origin.set_path("/");
            origin.set_query(None);
            origin.set_fragment(None);
            match find_auth_server_metadata(http, &origin, IssuerCheck::SameOrigin).await? {
                Some(meta) => meta,
                None => default_endpoints(&origin),
            }
        }
    };
    if let Some(a) = overrides.0 {
        auth_server.authorization_endpoint = a.to_string();
    }
    if let Some(t) = overrides.1 {
        auth_server.token_endpoint = t.to_string();
    }
    check_endpoints(&auth_server)?;

    Ok(Discovery {
        server_url: server_url.to_string(),
        resource,
        legacy: prm.is_none(),
        protected_resource: prm,
        auth_server,
        challenge,
    })
}

/// Make an unauthenticated request and return the Bearer challenge of a 401/403.
async fn probe(http: &Http, url: &str, sse: bool) -> Result<Option<BearerChallenge>, OAuthError> {
    let reply = http.probe_mcp(url, sse).await?;
    if (200..300).contains(&reply.status)
        && let Some(session) = &reply.session_id
    {
        http.delete_session(url, session).await;
    }
    Ok(match reply.status {
        401 | 403 => reply
            .www_authenticate
            .as_deref()
            .and_then(parse_bearer_challenge),
        _ => None,
    })
}

async fn find_protected_resource(
    http: &Http,
    server: &Url,
    challenge: Option<&BearerChallenge>,
) -> Result<Option<ProtectedResourceMetadata>, OAuthError> {
    let mut candidates: Vec<String> = vec![];
    if let Some(url) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
        parse_http_url(url, "the resource_metadata URL of the server's challenge")?;
        candidates.push(url.to_string());
    }
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(well_known(server, "oauth-protected-resource", path));
    }
    candidates.push(well_known(server, "oauth-protected-resource", ""));
    candidates.dedup();
    for url in candidates {
        let reply = match http.get(&url).await {
            Ok(reply) => reply,
            // An unreachable well-known URL is "not there"; the next candidate may work.
            Err(_) => continue,
        };
        if !reply.is_success() {
            continue;
        }
        let Some(doc) = reply.json() else { continue };
        let servers = string_list(&doc, "authorization_servers").unwrap_or_default();
        if servers.is_empty() && doc.get("resource").is_none() {
            continue;
        }
        return Ok(Some(ProtectedResourceMetadata {
            url,
            resource: string(&doc, "resource"),
            authorization_servers: servers,
            scopes_supported: string_list(&doc, "scopes_supported"),
        }));
    }
    Ok(None)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum IssuerCheck {
    /// RFC 8414 §3.3: the metadata's issuer is the identifier the URL was built from.
    Exact,
    /// 2025-03-26 servers: the issuer is on the MCP server's own origin.
    SameOrigin,
}

/// Try the metadata URLs of `issuer` in the order the MCP spec gives.
async fn find_auth_server_metadata(
    http: &Http,
    issuer: &Url,
    check: IssuerCheck,
) -> Result<Option<AuthServerMetadata>, OAuthError> {
    let path = issuer.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            well_known(issuer, "oauth-authorization-server", ""),
            well_known(issuer, "openid-configuration", ""),
        ]
    } else {
        vec![
            well_known(issuer, "oauth-authorization-server", path),
            well_known(issuer, "openid-configuration", path),
            {
                let mut u = issuer.clone();
                u.set_path(&format!("{path}/.well-known/openid-configuration"));
                u.set_query(None);
                u.to_string()
            },
        ]
    };
    for url in candidates {
        let reply = match http.get(&url).await {
            Ok(reply) => reply,
            Err(_) => continue,
        };
        if !reply.is_success() {
            continue;
        }
        let Some(doc) = reply.json() else { continue };
        let meta = parse_metadata(&doc, &url)?;
        let ok = match check {
            IssuerCheck::Exact => same_identifier(&meta.issuer, issuer.as_str()),
            IssuerCheck::SameOrigin => Url::parse(&meta.issuer)
                .map(|u| u.origin() == issuer.origin())
                .unwrap_or(false),
        };
        if !ok {
            return Err(OAuthError::Discovery(format!(
                "the authorization server metadata at {} names the issuer `{}`, but it was \
                 looked up for `{}`; refusing to use it (RFC 8414 §3.3)",
                display_url(&url),
                meta.issuer,
                issuer
            )));
        }
        return Ok(Some(meta));
    }
    Ok(None)
}

fn parse_metadata(doc: &Value, url: &str) -> Result<AuthServerMetadata, OAuthError> {
    let required = |field: &str| {
        string(doc, field).ok_or_else(|| {
            OAuthError::Discovery(format!(
                "the authorization server metadata at {} has no `{field}`",
                display_url(url)
            ))
        })
    };
    Ok(AuthServerMetadata {
        issuer: required("issuer")?,
        authorization_endpoint: required("authorization_endpoint")?,
        token_endpoint: required("token_endpoint")?,
        registration_endpoint: string(doc, "registration_endpoint"),
        revocation_endpoint: string(doc, "revocation_endpoint"),
        scopes_supported: string_list(doc, "scopes_supported"),
        code_challenge_methods_supported: string_list(doc, "code_challenge_methods_supported"),
        token_endpoint_auth_methods_supported: string_list(
            doc,
            "token_endpoint_auth_methods_supported",
        ),
        client_id_metadata_document_supported: doc
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        authorization_response_iss_parameter_supported: doc
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        source: MetadataSource::Discovered(url.to_string()),
    })
}

/// 2025-03-26: no metadata at all → `/authorize`, `/token`, `/register` on the origin.
fn default_endpoints(origin: &Url) -> AuthServerMetadata {
    let at = |path: &str| {
        let mut u = origin.clone();
        u.set_path(path);
        u.to_string()
    };
    let issuer = origin.as_str().trim_end_matches('/').to_string();
    AuthServerMetadata {
        issuer,
        authorization_endpoint: at("/authorize"),
        token_endpoint: at("/token"),
        registration_endpoint: Some(at("/register")),
        revocation_endpoint: None,
        scopes_supported: None,
        code_challenge_methods_supported: None,
        token_endpoint_auth_methods_supported: None,
        client_id_metadata_document_supported: false,
        authorization_response_iss_parameter_supported: false,
        source: MetadataSource::DefaultEndpoints,
    }
}

/// Endpoints the user configured for an authorization server that publishes no metadata.
fn configured_endpoints(issuer: &Url, authorization: &str, token: &str) -> AuthServerMetadata {
    AuthServerMetadata {
        issuer: issuer.as_str().trim_end_matches('/').to_string(),
        authorization_endpoint: authorization.to_string(),
        token_endpoint: token.to_string(),
        registration_endpoint: None,
        revocation_endpoint: None,
        scopes_supported: None,
        code_challenge_methods_supported: None,
        token_endpoint_auth_methods_supported: None,
        client_id_metadata_document_supported: false,
        authorization_response_iss_parameter_supported: false,
        source: MetadataSource::DefaultEndpoints,
    }
}

/// PKCE S256 must be possible, and every endpoint that will receive a secret (token,
/// registration, revocation) must be https, or http on a loopback host.
fn check_endpoints(meta: &AuthServerMetadata) -> Result<(), OAuthError> {
    if let Some(methods) = &meta.code_challenge_methods_supported
        && !methods.iter().any(|m| m == "S256")
    {
        return Err(OAuthError::Discovery(format!(
            "the authorization server {} does not support PKCE with S256 (it offers: {}); \
             refusing to sign in without it",
            meta.issuer,
            if methods.is_empty() {
                "nothing".to_string()
            } else {
                methods.join(", ")
            }
        )));
    }
    let endpoints = [
        ("token endpoint", Some(&meta.token_endpoint)),
        ("registration endpoint", meta.registration_endpoint.as_ref()),
        ("revocation endpoint", meta.revocation_endpoint.as_ref()),
    ];
    for (what, url) in endpoints {
        if let Some(url) = url {
            let parsed = parse_http_url(url, what)?;
            if !secure_or_loopback(&parsed) {
                return Err(OAuthError::Discovery(format!(
                    "the {what} {} is plain http on a non-loopback host; refusing to send \
                     credentials to it",
                    display_url(url)
                )));
            }
        }
    }
    Ok(())
}

/// `https`, or `http` to a loopback host (127.0.0.0/8, ::1, localhost).
pub(crate) fn secure_or_loopback(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => is_loopback_host(url),
        _ => false,
    }
}

pub(crate) fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => {
            d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost")
        }
        None => false,
    }
}

/// `/.well-known/<name><path>` on the URL's origin (RFC 8414 §3.1 path insertion).
fn well_known(base: &Url, name: &str, path: &str) -> String {
    let mut u = base.clone();
    u.set_path(&format!("/.well-known/{name}{path}"));
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// The canonical URI of an MCP server for RFC 8707 `resource`: lower-case scheme and host, no
/// fragment, no trailing slash on a bare origin.
pub fn canonical_resource(server: &Url) -> String {
    let mut u = server.clone();
    u.set_fragment(None);
    let s = u.to_string();
    if u.path() == "/" && u.query().is_none() {
        s.trim_end_matches('/').to_string()
    } else {
        s
    }
}

/// Whether the metadata's `resource` covers `server`: same origin, and the server's path is
/// the resource's path or below it.
fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    let want = resource.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    want.is_empty() || have == want || have.starts_with(&format!("{want}/"))
}

/// Two issuer identifiers are the same, ignoring one trailing slash.
fn same_identifier(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

pub(crate) fn parse_http_url(raw: &str, what: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(raw)
        .map_err(|e| OAuthError::Discovery(format!("{what} `{raw}` is not a valid URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(OAuthError::Discovery(format!(
            "{what} `{}` is not an http(s) URL",
            display_url(raw)
        )));
    }
    Ok(url)
}

fn string(doc: &Value, field: &str) -> Option<String> {
    doc.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn string_list(doc: &Value, field: &str) -> Option<Vec<String>> {
    doc.get(field).and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_urls_insert_the_path() {
        let u = Url::parse("https://as.example/tenant1").unwrap();
        assert_eq!(
            well_known(&u, "oauth-authorization-server", "/tenant1"),
            "https://as.example/.well-known/oauth-authorization-server/tenant1"
        );
    }

    #[test]
    fn resource_must_cover_the_server() {
        let server = Url::parse("http://127.0.0.1:5000/mcp").unwrap();
        assert!(resource_covers("http://127.0.0.1:5000", &server));
        assert!(resource_covers("http://127.0.0.1:5000/mcp", &server));
        assert!(resource_covers("http://127.0.0.1:5000/mcp/", &server));
        assert!(!resource_covers("http://127.0.0.1:5000/other", &server));
        assert!(!resource_covers("http://127.0.0.1:5000/m", &server));
        assert!(!resource_covers("https://evil.example.com/mcp", &server));
    }

    #[test]
    fn canonical_resource_forms() {
        let c = |s: &str| canonical_resource(&Url::parse(s).unwrap());
        assert_eq!(c("HTTPS://MCP.Example.com/"), "https://mcp.example.com");
        assert_eq!(
            c("https://mcp.example.com/mcp#x"),
            "https://mcp.example.com/mcp"
        );
    }

    #[test]
    fn loopback_hosts() {
        let l = |s: &str| secure_or_loopback(&Url::parse(s).unwrap());
        assert!(l("http://127.0.0.1:1/x"));
        assert!(l("http://[::1]:1/x"));
        assert!(l("http://localhost/x"));
        assert!(l("https://example.com"));
        assert!(!l("http://example.com"));
        assert!(!l("javascript:alert(1)"));
    }

    #[test]
    fn s256_is_required_when_methods_are_listed() {
        let origin = Url::parse("https://as.example/").unwrap();
        let mut meta = default_endpoints(&origin);
        assert!(check_endpoints(&meta).is_ok());
        meta.code_challenge_methods_supported = Some(vec!["plain".into()]);
        let err = check_endpoints(&meta).unwrap_err().to_string();
        assert!(err.contains("S256"), "{err}");
    }
}
