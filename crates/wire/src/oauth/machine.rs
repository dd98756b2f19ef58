//! Tokens obtained without a user at the browser:
//! - the client credentials grant (RFC 6749 §4.4), the client authenticated with its secret
//!   (`client_secret_basic` or `_post`) or with an assertion signed by its private key
//!   (`private_key_jwt`, RFC 7523 §2.2, ES256 with a P-256 PKCS#8 key);
//! - enterprise-managed authorization: the user's ID token is exchanged at the organisation's
//!   identity provider (RFC 8693) for an identity assertion grant (`id-jag`) naming the MCP
//!   server's authorization server and resource, which that server takes as a JWT bearer grant
//!   (RFC 7523 §2.1), the client authenticated with its secret.
//!
//! Discovery is a sign-in's ([`super::discovery`]); the tokens are stored like a sign-in's and,
//! as neither grant gives a refresh token, obtained again when they expire or a server refuses
//! them ([`OAuthContext::obtain_without_user`], called by the refresh paths).

use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::json;

use super::authorize::random_token;
use super::discovery::{Discovery, discover};
use super::http::{ClientAuth, display_url, now_millis, now_secs};
use super::registration::{ClientIdentity, ClientSource};
use super::store::{TokenRecord, bound_issuer, configured_client_secret, namespace, save_tokens};
use super::token_endpoint::{TokenReply, client_credentials, extension_grant};
use super::{OAuthContext, OAuthError, oauth_settings};
use crate::config::{
    ClientAuthMethod, OAuthGrant, OAuthSettings, SecretRef, ServerConfig, TransportKind,
};
use crate::secrets::{SecretKey, Sensitive};

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// How long a client assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// Whether `server`'s tokens come without a user.
pub fn without_user(server: &ServerConfig) -> bool {
    oauth_settings(server).is_ok_and(|(s, _)| !s.grant.is_sign_in())
}

impl OAuthContext {
    /// Obtain and store new tokens for `server` by its grant, without a user (the caller holds
    /// the server's refresh lock or does not care about a concurrent one). `challenge`: the
    /// `WWW-Authenticate` of the 401 that asked for it, if any.
    pub(crate) async fn obtain_without_user(
        &self,
        name: &str,
        server: &ServerConfig,
        challenge: Option<&str>,
    ) -> Result<Sensitive<String>, OAuthError> {
        let (settings, url) = oauth_settings(server)?;
        let sse = server.transport == TransportKind::Sse;
        let discovery = discover(&self.http, url, sse, challenge, &settings).await?;
        // The client's secret, key or the user's ID token go only to the authorization server
        // they were first used with: a server that now names another one is refused.
        if let Some(previous) = bound_issuer(self.store.as_ref(), namespace(name, server))?
            && previous != discovery.auth_server.issuer
        {
            return Err(OAuthError::Discovery(format!(
                "`{name}` now names another authorization server ({}) than the one its client \
                 was used with ({}); its credentials are not sent there. If that is right, sign \
                 out (`plugboard auth {name} --sign-out`) and connect again",
                display_url(&discovery.auth_server.issuer),
                display_url(&previous)
            )));
        }
        let client_id = settings.client_id.clone().ok_or_else(|| {
            OAuthError::Config(format!(
                "`{name}` gets its tokens without a sign-in but has no client ID; set one with \
                 `plugboard edit {name}`"
            ))
        })?;
        let secret = configured_client_secret(self.store.as_ref(), name, server)?;
        let scopes = settings.scopes.clone();
        let scope = scopes.join(" ");
        let (reply, auth_method) = match &settings.grant {
            OAuthGrant::AuthorizationCode => {
                return Err(OAuthError::LoginRequired(format!(
                    "`{name}` needs a sign-in; run `plugboard auth {name}`"
                )));
            }
            OAuthGrant::ClientCredentials => {
                let assertion = match settings.private_key.as_ref() {
                    Some(reference) => {
                        let key = self.stored(name, server, reference, "private key")?;
                        Some(client_assertion(
                            &client_id,
                            &discovery.auth_server.issuer,
                            key.expose(),
                        )?)
                    }
                    None if secret.is_none() => {
                        return Err(missing(name, "client secret or private key"));
                    }
                    None => None,
                };
                // A signed assertion authenticates the client; a secret, as its method says.
                let method = match assertion {
                    Some(_) => ClientAuthMethod::None,
                    None => secret_method(&settings, &discovery),
                };
                let client = ClientIdentity {
                    client_id: client_id.clone(),
                    client_secret: secret.clone().filter(|_| assertion.is_none()),
                    auth_method: method,
                    source: ClientSource::PreRegistered,
                };
                let reply = client_credentials(
                    &self.http,
                    &discovery.auth_server.token_endpoint,
                    &client,
                    &scopes,
                    &discovery.resource,
                    assertion.as_deref(),
                )
                .await?;
                (reply, method)
            }
            OAuthGrant::IdentityAssertion {
                idp_token_endpoint,
                idp_client_id,
                idp_client_secret,
                id_token,
            } => {
                let id_token = self.stored(name, server, id_token, "ID token")?;
                let idp_client_secret = match idp_client_secret {
                    Some(reference) => Some(self.stored(
                        name,
                        server,
                        reference,
                        "client secret at the identity provider",
                    )?),
                    None => None,
                };
                let idp_client = ClientAuth {
                    client_id: idp_client_id,
                    client_secret: idp_client_secret.as_ref(),
                    method: match idp_client_secret {
                        Some(_) => ClientAuthMethod::ClientSecretBasic,
                        None => ClientAuthMethod::None,
                    },
                };
                let assertion = self
                    .identity_assertion(
                        idp_token_endpoint,
                        &idp_client,
                        &id_token,
                        &discovery,
                        &scope,
                    )
                    .await?;
                if secret.is_none() {
                    return Err(missing(name, "client secret"));
                }
                let method = secret_method(&settings, &discovery);
                let client = ClientIdentity {
                    client_id: client_id.clone(),
                    client_secret: secret.clone(),
                    auth_method: method,
                    source: ClientSource::PreRegistered,
                };
                let mut params = vec![
                    ("grant_type", JWT_BEARER),
                    ("assertion", assertion.expose().as_str()),
                ];
                if !scope.is_empty() {
                    params.push(("scope", scope.as_str()));
                }
                let reply = extension_grant(
                    &self.http,
                    &discovery.auth_server.token_endpoint,
                    &params,
                    &client,
                    &[assertion.expose().as_str()],
                )
                .await?;
                (reply, method)
            }
        };
        let tokens = match reply {
            TokenReply::Issued(tokens) => tokens,
            TokenReply::Refused { message, .. } => {
                return Err(OAuthError::TokenEndpoint(message));
            }
        };
        let record = TokenRecord {
            access_token: tokens.access_token.expose().clone(),
            token_type: tokens.token_type,
            refresh_token: None,
            expires_at_ms: tokens
                .expires_in
                .map(|s| now_millis().saturating_add(s.saturating_mul(1000))),
            obtained_at: now_secs(),
            scopes: tokens.scope.unwrap_or(scopes),
            token_endpoint: discovery.auth_server.token_endpoint.clone(),
            revocation_endpoint: discovery.auth_server.revocation_endpoint.clone(),
            issuer: discovery.auth_server.issuer.clone(),
            resource: discovery.resource.clone(),
            server_url: url.to_owned(),
            client_id,
            client_source: ClientSource::PreRegistered,
            auth_method,
            step_up: None,
        };
        save_tokens(self.store.as_ref(), namespace(name, server), &record)?;
        Ok(Sensitive::new(record.access_token))
    }

    /// The secret `reference` of server `name` (`what` it is, for the error when it is not
    /// in the store).
    fn stored(
        &self,
        name: &str,
        server: &ServerConfig,
        reference: &SecretRef,
        what: &str,
    ) -> Result<Sensitive<String>, OAuthError> {
        self.store
            .get(&SecretKey::new(
                server.secret_namespace(name),
                &reference.secret,
            ))?
            .ok_or_else(|| missing(name, what))
    }

    /// RFC 8693 at the identity provider: the user's ID token for an identity assertion grant
    /// for the MCP server's authorization server and resource, the request made as `idp_client`
    /// (with its secret when it has one).
    async fn identity_assertion(
        &self,
        idp_token_endpoint: &str,
        idp_client: &ClientAuth<'_>,
        id_token: &Sensitive<String>,
        discovery: &Discovery,
        scope: &str,
    ) -> Result<Sensitive<String>, OAuthError> {
        let mut params = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG_TYPE),
            ("subject_token", id_token.expose().as_str()),
            ("subject_token_type", ID_TOKEN_TYPE),
            ("audience", discovery.auth_server.issuer.as_str()),
            ("resource", discovery.resource.as_str()),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope));
        }
        let reply = self
            .http
            .post_form(idp_token_endpoint, &params, Some(idp_client))
            .await?;
        let doc = reply.json();
        let token = doc
            .as_ref()
            .filter(|_| reply.is_success())
            .and_then(|d| d.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty());
        match token {
            Some(token) => Ok(Sensitive::new(token.to_owned())),
            None => {
                let said = doc
                    .as_ref()
                    .and_then(|d| d.get("error"))
                    .and_then(|e| e.as_str())
                    .map(|e| {
                        let mut known = vec![id_token.expose().as_str()];
                        known.extend(idp_client.client_secret.map(|s| s.expose().as_str()));
                        super::error::scrub(e, &known)
                    })
                    .unwrap_or_else(|| format!("HTTP {}", reply.status));
                Err(OAuthError::TokenEndpoint(format!(
                    "the identity provider at {} did not exchange the ID token ({said})",
                    display_url(idp_token_endpoint)
                )))
            }
        }
    }
}

/// The secret method to use: the configured one, else `client_secret_basic` unless the
/// authorization server lists only `client_secret_post`.
fn secret_method(settings: &OAuthSettings, discovery: &Discovery) -> ClientAuthMethod {
    if settings.client_auth != ClientAuthMethod::None {
        return settings.client_auth;
    }
    let supported = discovery
        .auth_server
        .token_endpoint_auth_methods_supported
        .as_deref()
        .unwrap_or_default();
    if !supported.iter().any(|m| m == "client_secret_basic")
        && supported.iter().any(|m| m == "client_secret_post")
    {
        ClientAuthMethod::ClientSecretPost
    } else {
        ClientAuthMethod::ClientSecretBasic
    }
}

fn missing(name: &str, what: &str) -> OAuthError {
    OAuthError::Config(format!(
        "`{name}` gets its tokens without a sign-in but its {what} is not in the keyring; set it \
         with `plugboard edit {name}`"
    ))
}

/// A client assertion (RFC 7523 §2.2) for `client_id` at the authorization server `issuer`,
/// signed ES256 with `pem` (a PKCS#8 P-256 private key).
pub(crate) fn client_assertion(
    client_id: &str,
    issuer: &str,
    pem: &str,
) -> Result<String, OAuthError> {
    let now = now_secs();
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_SECS,
        "jti": random_token(16),
    });
    sign_es256(&json!({"alg": "ES256", "typ": "JWT"}), &claims, pem)
}

/// A compact JWS of `claims`, signed ES256 (`R || S`) with the PKCS#8 PEM key `pem`.
fn sign_es256(
    header: &serde_json::Value,
    claims: &serde_json::Value,
    pem: &str,
) -> Result<String, OAuthError> {
    let der = pem_body(pem)?;
    let rng = SystemRandom::new();
    let key =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng).map_err(|_| {
            OAuthError::Config(
                "the private key is not a P-256 key in PKCS#8 (`-----BEGIN PRIVATE KEY-----`); \
                 ES256 needs one"
                    .into(),
            )
        })?;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let signing_input = format!(
        "{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    );
    let signature = key
        .sign(&rng, signing_input.as_bytes())
        .map_err(|_| OAuthError::Config("the private key could not sign".into()))?;
    Ok(format!(
        "{signing_input}.{}",
        b64.encode(signature.as_ref())
    ))
}

/// The DER bytes of a `-----BEGIN PRIVATE KEY-----` PEM block.
fn pem_body(pem: &str) -> Result<Vec<u8>, OAuthError> {
    let not_pkcs8 = || {
        OAuthError::Config(
            "the private key is not a PEM `-----BEGIN PRIVATE KEY-----` block (PKCS#8)".into(),
        )
    };
    let start = pem
        .find("-----BEGIN PRIVATE KEY-----")
        .ok_or_else(not_pkcs8)?;
    let rest = &pem[start + "-----BEGIN PRIVATE KEY-----".len()..];
    let end = rest
        .find("-----END PRIVATE KEY-----")
        .ok_or_else(not_pkcs8)?;
    let body: String = rest[..end].chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| not_pkcs8())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    fn pem_of(der: &[u8]) -> String {
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<String> = body
            .as_bytes()
            .chunks(64)
            .map(|c| String::from_utf8(c.to_vec()).unwrap())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    }

    #[test]
    fn a_client_assertion_is_an_es256_jws_the_public_key_verifies() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let jwt =
            client_assertion("client-1", "https://as.example", &pem_of(pkcs8.as_ref())).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header: serde_json::Value =
            serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        let claims: serde_json::Value =
            serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        assert!(claims["exp"].as_u64().unwrap() > claims["iat"].as_u64().unwrap());
        let signature = b64.decode(parts[2]).unwrap();
        assert_eq!(signature.len(), 64, "R || S, not DER");
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref())
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the signature verifies");
    }

    #[test]
    fn a_key_that_is_not_pkcs8_p256_is_refused_with_what_is_needed() {
        let err = client_assertion("c", "https://as", "not a key").unwrap_err();
        assert!(err.to_string().contains("PKCS#8"), "{err}");
        let err = client_assertion(
            "c",
            "https://as",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        )
        .unwrap_err();
        assert!(err.to_string().contains("P-256"), "{err}");
    }
}
