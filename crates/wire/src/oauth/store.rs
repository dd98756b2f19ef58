//! The token store: per server, in the server's secret namespace, two secrets holding one JSON
//! document each — `oauth_tokens` (access and refresh token, expiry, granted scopes, the
//! endpoints and client they belong to) and `oauth_client` (a dynamic client registration) —
//! and `oauth_issuer`, the authorization server a client without a user was first accepted by.
//! Nothing of it is ever written anywhere else; the record types print without their secrets.

use serde::{Deserialize, Serialize};

use super::OAuthError;
use super::http::now_millis;
use super::registration::{ClientSource, StoredClient};
use crate::config::{Auth, ClientAuthMethod, ServerConfig};
use crate::secrets::{SecretError, SecretKey, SecretStore, Sensitive};

/// The secret holding the token record.
pub const TOKENS_SECRET: &str = "oauth_tokens";
/// The secret holding a dynamic client registration.
pub const CLIENT_SECRET: &str = "oauth_client";

/// The secret holding the issuer a grant without a user is bound to.
pub const ISSUER_SECRET: &str = "oauth_issuer";

/// Scopes a 403 `insufficient_scope` asked for, waiting for the next sign-in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StepUp {
    pub scopes: Vec<String>,
    pub attempts: u32,
    /// When the last step-up was asked for (Unix seconds); old attempts stop counting.
    #[serde(default)]
    pub at: u64,
}

/// Tokens of one server as stored.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct TokenRecord {
    pub access_token: String,
    #[serde(default = "bearer")]
    pub token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix milliseconds; `None` when the server said nothing about expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    pub obtained_at: u64,
    /// Granted scopes (the requested ones when the server did not say).
    #[serde(default)]
    pub scopes: Vec<String>,
    pub token_endpoint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    pub issuer: String,
    pub resource: String,
    /// The MCP server URL the tokens were obtained for; they are not used for another URL.
    pub server_url: String,
    pub client_id: String,
    pub client_source: ClientSource,
    pub auth_method: ClientAuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_up: Option<StepUp>,
}

fn bearer() -> String {
    "Bearer".into()
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("access_token", &"***")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "***"))
            .field("expires_at_ms", &self.expires_at_ms)
            .field("scopes", &self.scopes)
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl TokenRecord {
    /// Whether the access token is still good for at least `margin_secs`.
    pub fn fresh_for(&self, margin: std::time::Duration) -> bool {
        match self.expires_at_ms {
            Some(at) => now_millis() + (margin.as_millis() as u64) < at,
            None => true,
        }
    }

    /// Every secret value in the record (for scrubbing server text).
    pub fn secret_values(&self) -> Vec<&str> {
        let mut v = vec![self.access_token.as_str()];
        if let Some(r) = &self.refresh_token {
            v.push(r);
        }
        v
    }
}

/// What the UI and CLI may know about a server's sign-in: never a token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct TokenStatus {
    pub signed_in: bool,
    /// Seconds until the access token expires (negative: expired), when known.
    pub expires_in_secs: Option<i32>,
    pub scopes: Vec<String>,
    pub refreshable: bool,
    pub issuer: Option<String>,
    /// `pre_registered`, `metadata_document` or `dynamic`.
    pub client: Option<ClientSource>,
    /// Scopes a server asked for (403 `insufficient_scope`) that the next sign-in will request.
    pub pending_scopes: Vec<String>,
}

/// The secret namespace of a server.
pub(crate) fn namespace<'a>(name: &'a str, server: &'a ServerConfig) -> &'a str {
    server.secret_namespace(name)
}

fn read_json<T: for<'de> Deserialize<'de>>(
    store: &dyn SecretStore,
    key: &SecretKey,
) -> Result<Option<T>, OAuthError> {
    Ok(store
        .get(key)?
        .and_then(|v| serde_json::from_str(v.expose()).ok()))
}

fn write_json<T: Serialize>(
    store: &dyn SecretStore,
    key: &SecretKey,
    value: &T,
) -> Result<(), OAuthError> {
    let text = serde_json::to_string(value)
        .map_err(|e| OAuthError::Config(format!("cannot encode the OAuth record: {e}")))?;
    store.set(key, &Sensitive::new(text))?;
    Ok(())
}

pub(crate) fn load_tokens(
    store: &dyn SecretStore,
    namespace: &str,
) -> Result<Option<TokenRecord>, OAuthError> {
    read_json(store, &SecretKey::new(namespace, TOKENS_SECRET))
}

pub(crate) fn save_tokens(
    store: &dyn SecretStore,
    namespace: &str,
    record: &TokenRecord,
) -> Result<(), OAuthError> {
    write_json(store, &SecretKey::new(namespace, TOKENS_SECRET), record)
}

pub(crate) fn delete_tokens(store: &dyn SecretStore, namespace: &str) -> Result<(), OAuthError> {
    store.delete(&SecretKey::new(namespace, TOKENS_SECRET))?;
    Ok(())
}

pub(crate) fn load_client(
    store: &dyn SecretStore,
    namespace: &str,
) -> Result<Option<StoredClient>, OAuthError> {
    read_json(store, &SecretKey::new(namespace, CLIENT_SECRET))
}

pub(crate) fn save_client(
    store: &dyn SecretStore,
    namespace: &str,
    client: &StoredClient,
) -> Result<(), OAuthError> {
    write_json(store, &SecretKey::new(namespace, CLIENT_SECRET), client)
}

pub(crate) fn delete_client(store: &dyn SecretStore, namespace: &str) -> Result<(), OAuthError> {
    store.delete(&SecretKey::new(namespace, CLIENT_SECRET))?;
    Ok(())
}

/// The authorization server (its issuer) whose tokens `server` holds, if it holds any.
pub fn token_issuer(
    name: &str,
    server: &ServerConfig,
    store: &dyn SecretStore,
) -> Result<Option<String>, OAuthError> {
    Ok(load_tokens(store, namespace(name, server))?.map(|record| record.issuer))
}

/// Bind `server`'s grant without a user to the authorization server `issuer`: its client's
/// secret, key or the user's ID token are sent to no other (the install saves the issuer its
/// test got a token from, before any token of the server is stored).
pub fn bind_issuer(
    name: &str,
    server: &ServerConfig,
    store: &dyn SecretStore,
    issuer: &str,
) -> Result<(), SecretError> {
    let key = SecretKey::new(namespace(name, server), ISSUER_SECRET);
    store.set(&key, &Sensitive::new(issuer.to_owned()))
}

/// The issuer `server`'s grant is bound to: the one bound at install, else the one its stored
/// tokens came from.
pub(crate) fn bound_issuer(
    store: &dyn SecretStore,
    namespace: &str,
) -> Result<Option<String>, OAuthError> {
    if let Some(bound) = store.get(&SecretKey::new(namespace, ISSUER_SECRET))? {
        return Ok(Some(bound.expose().clone()));
    }
    Ok(load_tokens(store, namespace)?.map(|record| record.issuer))
}

pub(crate) fn forget_issuer(store: &dyn SecretStore, namespace: &str) -> Result<(), OAuthError> {
    store.delete(&SecretKey::new(namespace, ISSUER_SECRET))?;
    Ok(())
}

/// The configured (pre-registered) client secret of a server, from its namespace.
pub(crate) fn configured_client_secret(
    store: &dyn SecretStore,
    name: &str,
    server: &ServerConfig,
) -> Result<Option<Sensitive<String>>, OAuthError> {
    match &server.auth {
        Auth::Oauth2(settings) => match &settings.client_secret {
            Some(reference) => Ok(store.get(&SecretKey::new(
                server.secret_namespace(name),
                &reference.secret,
            ))?),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// Every OAuth secret value of a server — access and refresh token, a dynamic registration's
/// client secret — for the redactor (they live in JSON documents in the secret store, so the
/// config's secret references do not name them).
pub fn redaction_values(
    name: &str,
    server: &ServerConfig,
    store: &dyn SecretStore,
) -> Result<Vec<Sensitive<String>>, OAuthError> {
    let ns = namespace(name, server);
    let mut values = vec![];
    if let Some(record) = load_tokens(store, ns)? {
        values.push(Sensitive::new(record.access_token));
        values.extend(record.refresh_token.map(Sensitive::new));
    }
    if let Some(client) = load_client(store, ns)? {
        values.extend(client.client_secret.map(Sensitive::new));
    }
    Ok(values)
}

/// The sign-in state of a server, for display. Never returns a token.
pub fn token_status(
    name: &str,
    server: &ServerConfig,
    store: &dyn SecretStore,
) -> Result<TokenStatus, OAuthError> {
    let record = load_tokens(store, namespace(name, server))?;
    let usable = record
        .as_ref()
        .filter(|r| Some(r.server_url.as_str()) == server.url.as_deref());
    let now = now_millis() as i64;
    Ok(TokenStatus {
        signed_in: usable.is_some(),
        expires_in_secs: usable
            .and_then(|r| r.expires_at_ms)
            .map(|at| ((at as i64 - now) / 1000).clamp(i32::MIN as i64, i32::MAX as i64) as i32),
        scopes: usable.map(|r| r.scopes.clone()).unwrap_or_default(),
        refreshable: usable.is_some_and(|r| r.refresh_token.is_some()),
        issuer: usable.map(|r| r.issuer.clone()),
        client: usable.map(|r| r.client_source),
        pending_scopes: record
            .as_ref()
            .and_then(|r| r.step_up.as_ref())
            .map(|s| s.scopes.clone())
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MemoryStore;

    pub(crate) fn record() -> TokenRecord {
        TokenRecord {
            access_token: "access-secret-1".into(),
            token_type: "Bearer".into(),
            refresh_token: Some("refresh-secret-1".into()),
            expires_at_ms: Some(now_millis() + 3_600_000),
            obtained_at: super::super::http::now_secs(),
            scopes: vec!["read".into()],
            token_endpoint: "https://as/token".into(),
            revocation_endpoint: None,
            issuer: "https://as".into(),
            resource: "https://mcp/mcp".into(),
            server_url: "https://mcp/mcp".into(),
            client_id: "cid".into(),
            client_source: ClientSource::Dynamic,
            auth_method: ClientAuthMethod::None,
            step_up: None,
        }
    }

    #[test]
    fn round_trip_and_debug_hides_tokens() {
        let store = MemoryStore::new();
        let r = record();
        save_tokens(&store, "ns", &r).unwrap();
        let server = ServerConfig::remote(crate::config::TransportKind::Shttp, "https://mcp/mcp");
        let values = redaction_values("ns", &server, &store).unwrap();
        assert_eq!(values.len(), 2);
        let back = load_tokens(&store, "ns").unwrap().unwrap();
        assert_eq!(back.access_token, "access-secret-1");
        let dbg = format!("{back:?}");
        assert!(!dbg.contains("access-secret-1") && !dbg.contains("refresh-secret-1"));
        assert!(back.fresh_for(std::time::Duration::from_secs(60)));
        delete_tokens(&store, "ns").unwrap();
        assert!(load_tokens(&store, "ns").unwrap().is_none());
    }

    #[test]
    fn status_never_holds_a_token() {
        let store = MemoryStore::new();
        let mut server =
            ServerConfig::remote(crate::config::TransportKind::Shttp, "https://mcp/mcp");
        server.auth = Auth::Oauth2(Default::default());
        save_tokens(&store, "s", &record()).unwrap();
        let status = token_status("s", &server, &store).unwrap();
        assert!(status.signed_in && status.refreshable);
        let json = serde_json::to_string(&status).unwrap();
        assert!(!json.contains("secret-1"));
        // Tokens for another URL do not count.
        server.url = Some("https://other/mcp".into());
        assert!(!token_status("s", &server, &store).unwrap().signed_in);
    }
}
