//! Who Plugboard is to the authorization server, in the MCP spec's order: a pre-registered
//! client (id, optional secret, auth method), a client ID metadata document URL where the server
//! advertises `client_id_metadata_document_supported`, or dynamic client registration
//! (RFC 7591), whose result is kept in the secret store and reused while it fits.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::OAuthError;
use super::discovery::AuthServerMetadata;
use super::error::scrub;
use super::http::{Http, display_url, now_secs};
use crate::config::{ClientAuthMethod, OAuthSettings};
use crate::secrets::Sensitive;

/// Where the client identity came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ClientSource {
    /// Configured by the user (`client_id`, optional `client_secret`).
    PreRegistered,
    /// A client ID metadata document URL used as the client id.
    MetadataDocument,
    /// Dynamic client registration (RFC 7591).
    Dynamic,
}

/// The client as the token endpoint will see it.
#[derive(Clone, Debug)]
pub(crate) struct ClientIdentity {
    pub client_id: String,
    pub client_secret: Option<Sensitive<String>>,
    pub auth_method: ClientAuthMethod,
    pub source: ClientSource,
}

/// A dynamic registration as kept in the secret store (`oauth_client`).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct StoredClient {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub auth_method: ClientAuthMethod,
    /// The authorization server it was registered with.
    pub issuer: String,
    pub redirect_uri: String,
    pub registered_at: u64,
    /// RFC 7591 `client_secret_expires_at` (0 or absent: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_expires_at: Option<u64>,
}

impl std::fmt::Debug for StoredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("auth_method", &self.auth_method)
            .field("issuer", &self.issuer)
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

impl StoredClient {
    pub fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone().map(Sensitive::new),
            auth_method: self.auth_method,
            source: ClientSource::Dynamic,
        }
    }

    /// Whether this registration can be used for a sign-in at `issuer` with `redirect_uri`.
    pub fn fits(&self, issuer: &str, redirect_uri: &str) -> bool {
        let expired = self
            .secret_expires_at
            .is_some_and(|t| t != 0 && t <= now_secs() + 60);
        self.issuer == issuer && self.redirect_uri == redirect_uri && !expired
    }
}

/// What the caller knows beyond the server config.
pub(crate) struct ClientChoice<'a> {
    pub settings: &'a OAuthSettings,
    /// The configured client secret, resolved from the secret store.
    pub configured_secret: Option<Sensitive<String>>,
    /// A client ID metadata document URL (the server's setting, else the app's).
    pub metadata_document_url: Option<&'a str>,
    /// An earlier dynamic registration.
    pub stored: Option<&'a StoredClient>,
    /// The authorization server the configured client was last used with (the issuer of the
    /// tokens of the last sign-in with it), which its secret stays bound to.
    pub bound_issuer: Option<&'a str>,
    pub redirect_uri: &'a str,
    pub client_name: &'a str,
}

/// Pick or obtain the client identity. Returns the identity and, when a dynamic registration
/// was just made, the registration to store.
pub(crate) async fn client_identity(
    http: &Http,
    meta: &AuthServerMetadata,
    choice: ClientChoice<'_>,
) -> Result<(ClientIdentity, Option<StoredClient>), OAuthError> {
    if let Some(client_id) = choice
        .settings
        .client_id
        .as_deref()
        .filter(|c| !c.is_empty())
    {
        let secret = choice.configured_secret;
        // RFC 9700 §4.4 (mix-up): a client's credentials were issued by one authorization server
        // and go to it only, whatever server the MCP server names later.
        if secret.is_some()
            && let Some(bound) = choice.bound_issuer
            && bound != meta.issuer
        {
            return Err(OAuthError::Config(format!(
                "the configured OAuth client was used with the authorization server `{bound}`, \
                 but the server now sends sign-ins to `{}`; its client secret is not sent there. \
                 If the server really moved, sign out (`plugboard auth NAME --sign-out`) and \
                 sign in again",
                meta.issuer
            )));
        }
        let method = match (choice.settings.client_auth, &secret) {
            (ClientAuthMethod::None, Some(_)) => secret_method(meta),
            (ClientAuthMethod::None, None) => ClientAuthMethod::None,
            (method, Some(_)) => method,
            (_, None) => {
                return Err(OAuthError::Config(
                    "the OAuth client authenticates with a client secret, but none is set; set \
                     the client secret or change the client auth method to `none`"
                        .into(),
                ));
            }
        };
        return Ok((
            ClientIdentity {
                client_id: client_id.to_string(),
                client_secret: secret,
                auth_method: method,
                source: ClientSource::PreRegistered,
            },
            None,
        ));
    }
    if meta.client_id_metadata_document_supported
        && let Some(url) = choice.metadata_document_url
    {
        return Ok((
            ClientIdentity {
                client_id: url.to_string(),
                client_secret: None,
                auth_method: ClientAuthMethod::None,
                source: ClientSource::MetadataDocument,
            },
            None,
        ));
    }
    if let Some(stored) = choice.stored
        && stored.fits(&meta.issuer, choice.redirect_uri)
    {
        return Ok((stored.identity(), None));
    }
    let Some(endpoint) = meta.registration_endpoint.as_deref() else {
        return Err(OAuthError::Registration(format!(
            "the authorization server {} offers no dynamic client registration{}; register an \
             OAuth client with it and set its client id (and secret, if it has one) in this \
             server's OAuth settings",
            meta.issuer,
            if meta.client_id_metadata_document_supported {
                " (it accepts client ID metadata documents, but none is configured)"
            } else {
                ""
            }
        )));
    };
    let stored = register(
        http,
        endpoint,
        meta,
        choice.redirect_uri,
        choice.client_name,
    )
    .await?;
    Ok((stored.identity(), Some(stored)))
}

/// The method for a client that has a secret: basic unless the server only lists post.
fn secret_method(meta: &AuthServerMetadata) -> ClientAuthMethod {
    match &meta.token_endpoint_auth_methods_supported {
        Some(methods)
            if !methods.iter().any(|m| m == "client_secret_basic")
                && methods.iter().any(|m| m == "client_secret_post") =>
        {
            ClientAuthMethod::ClientSecretPost
        }
        _ => ClientAuthMethod::ClientSecretBasic,
    }
}

fn method_name(method: ClientAuthMethod) -> &'static str {
    match method {
        ClientAuthMethod::None => "none",
        ClientAuthMethod::ClientSecretBasic => "client_secret_basic",
        ClientAuthMethod::ClientSecretPost => "client_secret_post",
    }
}

fn method_from_name(name: &str) -> Option<ClientAuthMethod> {
    match name {
        "none" => Some(ClientAuthMethod::None),
        "client_secret_basic" => Some(ClientAuthMethod::ClientSecretBasic),
        "client_secret_post" => Some(ClientAuthMethod::ClientSecretPost),
        _ => None,
    }
}

/// RFC 7591 dynamic registration of a native public client (or a confidential one when the
/// server accepts nothing else).
async fn register(
    http: &Http,
    endpoint: &str,
    meta: &AuthServerMetadata,
    redirect_uri: &str,
    client_name: &str,
) -> Result<StoredClient, OAuthError> {
    let requested = match &meta.token_endpoint_auth_methods_supported {
        Some(methods) if !methods.iter().any(|m| m == "none") => {
            if methods.iter().any(|m| m == "client_secret_basic") {
                ClientAuthMethod::ClientSecretBasic
            } else if methods.iter().any(|m| m == "client_secret_post") {
                ClientAuthMethod::ClientSecretPost
            } else {
                ClientAuthMethod::None
            }
        }
        _ => ClientAuthMethod::None,
    };
    let body = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method_name(requested),
        "application_type": "native",
    });
    let reply = http.post_json(endpoint, &body).await?;
    let doc = reply.json().unwrap_or(Value::Null);
    let secret = doc
        .get("client_secret")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if !reply.is_success() {
        let detail = doc
            .get("error_description")
            .or_else(|| doc.get("error"))
            .and_then(Value::as_str)
            .map(|s| scrub(s, &[secret.as_deref().unwrap_or("")]))
            .unwrap_or_else(|| format!("HTTP {}", reply.status));
        return Err(OAuthError::Registration(format!(
            "{} refused the registration: {detail}",
            display_url(endpoint)
        )));
    }
    let client_id = doc
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            OAuthError::Registration(format!(
                "{} answered without a client_id",
                display_url(endpoint)
            ))
        })?
        .to_string();
    let answered = doc
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .and_then(method_from_name);
    let auth_method = match (answered.unwrap_or(requested), &secret) {
        (ClientAuthMethod::None, _) => ClientAuthMethod::None,
        (_, None) => ClientAuthMethod::None,
        (m, Some(_)) => m,
    };
    Ok(StoredClient {
        client_id,
        client_secret: secret,
        auth_method,
        issuer: meta.issuer.clone(),
        redirect_uri: redirect_uri.to_string(),
        registered_at: now_secs(),
        secret_expires_at: doc.get("client_secret_expires_at").and_then(Value::as_u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_client_debug_hides_the_secret() {
        let c = StoredClient {
            client_id: "id".into(),
            client_secret: Some("very-secret-value".into()),
            auth_method: ClientAuthMethod::ClientSecretBasic,
            issuer: "https://as".into(),
            redirect_uri: "http://127.0.0.1:1/callback".into(),
            registered_at: 0,
            secret_expires_at: None,
        };
        assert!(!format!("{c:?}").contains("very-secret-value"));
        assert!(c.fits("https://as", "http://127.0.0.1:1/callback"));
        assert!(!c.fits("https://as", "http://127.0.0.1:2/callback"));
    }
}
