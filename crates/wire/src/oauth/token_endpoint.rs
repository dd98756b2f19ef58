//! Requests to the token endpoint. The grants the `oauth2` crate has a request for go through
//! it: the authorization code exchange (with the PKCE verifier and the RFC 8707 `resource`),
//! the refresh token grant and the client credentials grant (a secret, or a signed assertion
//! as extra parameters). The two it has none for, the JWT bearer grant of enterprise-managed
//! authorization (RFC 7523 §2.1) and any other extension grant, are sent as forms here. Either
//! way one reader turns the answer into tokens or a refusal, with every value in play scrubbed
//! from what a server said.

use std::borrow::Cow;

use oauth2::basic::{
    BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse,
};
use oauth2::{
    AccessToken, AuthType, AuthorizationCode, ClientId, ClientSecret, EndpointNotSet, EndpointSet,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope, StandardRevocableToken,
    TokenUrl,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::OAuthError;
use super::challenge::split_scopes;
use super::error::scrub;
use super::http::{ClientAuth, GrantTransport, Http, display_url};
use super::registration::ClientIdentity;
use crate::config::ClientAuthMethod;
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
    let grants = grant_client(token_endpoint, client)?;
    let redirect = RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|_| OAuthError::Config(format!("`{redirect_uri}` is not a redirect URL")))?;
    let transport = GrantTransport::new(http);
    let answer = grants
        .exchange_code(AuthorizationCode::new(code.expose().clone()))
        .set_pkce_verifier(PkceCodeVerifier::new(verifier.expose().clone()))
        .set_redirect_uri(Cow::Owned(redirect))
        .add_extra_param("resource", resource)
        .request_async(&transport)
        .await;
    let secrets = [code.expose().as_str(), verifier.expose().as_str()];
    read(
        answer,
        transport.last_status(),
        token_endpoint,
        client,
        &secrets,
    )
}

/// Use a refresh token.
pub(crate) async fn refresh_grant(
    http: &Http,
    token_endpoint: &str,
    client: &ClientIdentity,
    refresh_token: &str,
    resource: &str,
) -> Result<TokenReply, OAuthError> {
    let grants = grant_client(token_endpoint, client)?;
    let transport = GrantTransport::new(http);
    let refresh = RefreshToken::new(refresh_token.to_owned());
    let answer = grants
        .exchange_refresh_token(&refresh)
        .add_extra_param("resource", resource)
        .request_async(&transport)
        .await;
    read(
        answer,
        transport.last_status(),
        token_endpoint,
        client,
        &[refresh_token],
    )
}

/// The client credentials grant (RFC 6749 §4.4) for `resource`, the client authenticated by
/// its secret as its method says or, with `assertion`, by that signed JWT (RFC 7523 §2.2).
pub(crate) async fn client_credentials(
    http: &Http,
    token_endpoint: &str,
    client: &ClientIdentity,
    scopes: &[String],
    resource: &str,
    assertion: Option<&str>,
) -> Result<TokenReply, OAuthError> {
    let grants = grant_client(token_endpoint, client)?;
    let transport = GrantTransport::new(http);
    let mut request = grants
        .exchange_client_credentials()
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", resource);
    if let Some(assertion) = assertion {
        request = request
            .add_extra_param("client_assertion_type", CLIENT_ASSERTION_TYPE)
            .add_extra_param("client_assertion", assertion);
    }
    let answer = request.request_async(&transport).await;
    let secrets = [assertion.unwrap_or("")];
    read(
        answer,
        transport.last_status(),
        token_endpoint,
        client,
        &secrets,
    )
}

/// How a signed client assertion is named in a token request.
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A token request of a grant the `oauth2` crate has no request for: `params` (with their
/// `grant_type`), the client authenticated as its method says, the answer read as the crate's
/// are. `secrets`: the values in `params` no error text may quote.
pub(crate) async fn extension_grant(
    http: &Http,
    endpoint: &str,
    params: &[(&str, &str)],
    client: &ClientIdentity,
    secrets: &[&str],
) -> Result<TokenReply, OAuthError> {
    let auth = ClientAuth {
        client_id: &client.client_id,
        client_secret: client.client_secret.as_ref(),
        method: client.auth_method,
    };
    let reply = http.post_form(endpoint, params, Some(&auth)).await?;
    let answer = if reply.status == 200 {
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(&reply.body))
            .map_err(|e| RequestTokenError::Parse(e, vec![]))
    } else {
        match serde_json::from_slice::<BasicErrorResponse>(&reply.body) {
            Ok(error) => Err(RequestTokenError::ServerResponse(error)),
            Err(_) => Err(RequestTokenError::Other(String::new())),
        }
    };
    read(answer, Some(reply.status), endpoint, client, secrets)
}

/// The `oauth2` client for one token endpoint and client identity, authenticating as the
/// client's method says (`none`, or a secret method without a secret: `client_id` in the form).
type GrantClient = oauth2::Client<
    BasicErrorResponse,
    IssuedTokens,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
>;

fn grant_client(token_endpoint: &str, client: &ClientIdentity) -> Result<GrantClient, OAuthError> {
    let token_url = TokenUrl::new(token_endpoint.to_owned()).map_err(|_| {
        OAuthError::Discovery(format!(
            "the token endpoint `{}` is not a URL",
            display_url(token_endpoint)
        ))
    })?;
    let grants = oauth2::Client::new(ClientId::new(client.client_id.clone()))
        .set_token_uri(token_url)
        .set_auth_type(AuthType::RequestBody);
    Ok(match (&client.client_secret, client.auth_method) {
        (Some(secret), ClientAuthMethod::ClientSecretBasic) => grants
            .set_client_secret(ClientSecret::new(secret.expose().clone()))
            .set_auth_type(AuthType::BasicAuth),
        (Some(secret), ClientAuthMethod::ClientSecretPost) => {
            grants.set_client_secret(ClientSecret::new(secret.expose().clone()))
        }
        _ => grants,
    })
}

/// A token response as servers send it (RFC 6749 §5.1), read leniently where real servers
/// differ: no `token_type` means Bearer, `expires_in` may be a string or a fraction, `scope` is
/// space-separated.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct IssuedTokens {
    access_token: AccessToken,
    #[serde(default = "bearer", deserialize_with = "any_case")]
    token_type: oauth2::basic::BasicTokenType,
    #[serde(default, deserialize_with = "lenient_seconds")]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<RefreshToken>,
    #[serde(default, deserialize_with = "scope_list")]
    scope: Option<Vec<Scope>>,
}

impl oauth2::TokenResponse for IssuedTokens {
    type TokenType = oauth2::basic::BasicTokenType;

    fn access_token(&self) -> &AccessToken {
        &self.access_token
    }

    fn token_type(&self) -> &Self::TokenType {
        &self.token_type
    }

    fn expires_in(&self) -> Option<std::time::Duration> {
        self.expires_in.map(std::time::Duration::from_secs)
    }

    fn refresh_token(&self) -> Option<&RefreshToken> {
        self.refresh_token.as_ref()
    }

    fn scopes(&self) -> Option<&Vec<Scope>> {
        self.scope.as_ref()
    }
}

fn bearer() -> oauth2::basic::BasicTokenType {
    oauth2::basic::BasicTokenType::Bearer
}

fn any_case<'de, D: Deserializer<'de>>(d: D) -> Result<oauth2::basic::BasicTokenType, D::Error> {
    let name = String::deserialize(d)?.to_ascii_lowercase();
    oauth2::basic::BasicTokenType::deserialize(Value::String(name))
        .map_err(serde::de::Error::custom)
}

fn lenient_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    })
}

fn scope_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Scope>>, D::Error> {
    Ok(Option::<String>::deserialize(d)?
        .map(|s| split_scopes(&s).into_iter().map(Scope::new).collect()))
}

/// What the `oauth2` crate (or [`extension_grant`]) made of an answer, whose HTTP `status` is
/// known if one came: tokens, a refusal (the server's error and description, scrubbed of
/// `secrets` and the client's secret), or what was wrong with the answer.
fn read(
    answer: Result<IssuedTokens, RequestTokenError<OAuthError, BasicErrorResponse>>,
    status: Option<u16>,
    endpoint: &str,
    client: &ClientIdentity,
    secrets: &[&str],
) -> Result<TokenReply, OAuthError> {
    let mut all_secrets: Vec<&str> = secrets.iter().copied().filter(|s| !s.is_empty()).collect();
    if let Some(secret) = &client.client_secret {
        all_secrets.push(secret.expose());
    }
    let tokens = match answer {
        Ok(tokens) => tokens,
        Err(RequestTokenError::Request(e)) => return Err(e),
        Err(RequestTokenError::ServerResponse(refusal)) => {
            let error = refusal.error().as_ref().to_owned();
            let message = match refusal.error_description() {
                Some(description) if !description.is_empty() => format!(
                    "{} ({})",
                    scrub(&error, &all_secrets),
                    scrub(description, &all_secrets)
                ),
                _ => scrub(&error, &all_secrets),
            };
            return Ok(TokenReply::Refused { error, message });
        }
        Err(RequestTokenError::Parse(e, _)) if status == Some(200) => {
            // serde's own words name a missing field but may quote a value of the wrong type:
            // only the field's name and place are said.
            let path = e.path().to_string();
            let what = if e
                .inner()
                .to_string()
                .contains("missing field `access_token`")
            {
                "without an access_token".to_owned()
            } else if path == "." {
                "with something that is not a token response".to_owned()
            } else {
                format!("with a token response it cannot read (at `{path}`)")
            };
            return Err(OAuthError::TokenEndpoint(format!(
                "{} answered {what}",
                display_url(endpoint)
            )));
        }
        Err(_) => {
            let status = match status {
                Some(status) => format!("HTTP {status}"),
                None => "no answer".to_owned(),
            };
            return Ok(TokenReply::Refused {
                error: String::new(),
                message: format!("{status} from {}", display_url(endpoint)),
            });
        }
    };
    let access_token = tokens.access_token.into_secret();
    if access_token.is_empty() {
        return Err(OAuthError::TokenEndpoint(format!(
            "{} answered without an access_token",
            display_url(endpoint)
        )));
    }
    if tokens.token_type != oauth2::basic::BasicTokenType::Bearer {
        return Err(OAuthError::TokenEndpoint(format!(
            "{} issued a `{}` token; only Bearer tokens are supported",
            display_url(endpoint),
            scrub(tokens.token_type.as_ref(), &[access_token.as_str()])
        )));
    }
    Ok(TokenReply::Issued(TokenResponse {
        access_token: Sensitive::new(access_token),
        token_type: "Bearer".into(),
        expires_in: tokens.expires_in,
        refresh_token: tokens
            .refresh_token
            .map(RefreshToken::into_secret)
            .filter(|s| !s.is_empty())
            .map(Sensitive::new),
        scope: tokens
            .scope
            .map(|scopes| scopes.into_iter().map(|s| s.to_string()).collect()),
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::*;
    use crate::oauth::registration::ClientSource;

    const ENDPOINT: &str = "https://as.example/token";
    const CODE: &str = "CODE-0123456789";
    const VERIFIER: &str = "VERIFIER-0123456789";

    fn client(method: ClientAuthMethod, secret: Option<&str>) -> ClientIdentity {
        ClientIdentity {
            client_id: "client-1".into(),
            client_secret: secret.map(|s| Sensitive::new(s.to_owned())),
            auth_method: method,
            source: ClientSource::PreRegistered,
        }
    }

    /// A code exchange answered with `status` and `body`, read as the real requests are, and
    /// the request the crate built.
    async fn exchange(
        identity: &ClientIdentity,
        status: u16,
        body: &str,
    ) -> (Result<TokenReply, OAuthError>, oauth2::HttpRequest) {
        let sent = Mutex::new(None);
        let answer = |request: oauth2::HttpRequest| {
            *sent.lock().unwrap() = Some(request);
            let response = oauth2::http::Response::builder()
                .status(status)
                .body(body.as_bytes().to_vec())
                .unwrap();
            async move { Ok::<_, OAuthError>(response) }
        };
        let redirect = RedirectUrl::new("http://127.0.0.1:4000/callback".into()).unwrap();
        let answer = grant_client(ENDPOINT, identity)
            .unwrap()
            .exchange_code(AuthorizationCode::new(CODE.into()))
            .set_pkce_verifier(PkceCodeVerifier::new(VERIFIER.into()))
            .set_redirect_uri(Cow::Owned(redirect))
            .add_extra_param("resource", "https://mcp.example/mcp")
            .request_async(&answer)
            .await;
        let reply = read(answer, Some(status), ENDPOINT, identity, &[CODE, VERIFIER]);
        (reply, sent.into_inner().unwrap().unwrap())
    }

    fn form(request: &oauth2::HttpRequest) -> HashMap<String, String> {
        url::form_urlencoded::parse(request.body())
            .into_owned()
            .collect()
    }

    fn tokens(reply: Result<TokenReply, OAuthError>) -> TokenResponse {
        match reply {
            Ok(TokenReply::Issued(tokens)) => tokens,
            Ok(TokenReply::Refused { message, .. }) => panic!("refused: {message}"),
            Err(e) => panic!("{e}"),
        }
    }

    fn refusal(reply: Result<TokenReply, OAuthError>) -> (String, String) {
        match reply {
            Ok(TokenReply::Refused { error, message }) => (error, message),
            Ok(TokenReply::Issued(_)) => panic!("tokens where a refusal was expected"),
            Err(e) => panic!("{e}"),
        }
    }

    #[tokio::test]
    async fn a_code_exchange_sends_the_verifier_resource_and_client_as_its_method_says() {
        let basic = client(ClientAuthMethod::ClientSecretBasic, Some("s3cret:x"));
        let (_, sent) = exchange(&basic, 200, r#"{"access_token":"a"}"#).await;
        let fields = form(&sent);
        assert_eq!(fields["grant_type"], "authorization_code");
        assert_eq!(fields["code"], CODE);
        assert_eq!(fields["code_verifier"], VERIFIER);
        assert_eq!(fields["redirect_uri"], "http://127.0.0.1:4000/callback");
        assert_eq!(fields["resource"], "https://mcp.example/mcp");
        assert!(!fields.contains_key("client_secret"), "{fields:?}");
        // RFC 6749 §2.3.1: each part form-encoded, then base64 ("client-1:s3cret%3Ax").
        let authorization = sent.headers()["authorization"].to_str().unwrap();
        assert_eq!(authorization, "Basic Y2xpZW50LTE6czNjcmV0JTNBeA==");

        let post = client(ClientAuthMethod::ClientSecretPost, Some("s3cret"));
        let (_, sent) = exchange(&post, 200, r#"{"access_token":"a"}"#).await;
        assert_eq!(form(&sent)["client_secret"], "s3cret");
        assert!(sent.headers().get("authorization").is_none());

        let public = client(ClientAuthMethod::None, None);
        let (_, sent) = exchange(&public, 200, r#"{"access_token":"a"}"#).await;
        assert_eq!(form(&sent)["client_id"], "client-1");
        assert!(!form(&sent).contains_key("client_secret"));
    }

    #[tokio::test]
    async fn a_token_answer_is_read_as_real_servers_send_it() {
        let public = client(ClientAuthMethod::None, None);
        let answer = r#"{"access_token":"at-1","token_type":"BEARER","expires_in":"3600",
            "refresh_token":"rt-1","scope":"read write"}"#;
        let issued = tokens(exchange(&public, 200, answer).await.0);
        assert_eq!(issued.access_token.expose(), "at-1");
        assert_eq!(issued.expires_in, Some(3600));
        assert_eq!(issued.refresh_token.unwrap().expose(), "rt-1");
        assert_eq!(issued.scope.unwrap(), ["read", "write"]);

        // No token_type: Bearer. A fractional lifetime: its whole seconds.
        let answer = r#"{"access_token":"at-2","expires_in":59.9}"#;
        let issued = tokens(exchange(&public, 200, answer).await.0);
        assert_eq!(issued.token_type, "Bearer");
        assert_eq!(issued.expires_in, Some(59));

        for (body, expected) in [
            (r#"{"access_token":"at","token_type":"mac"}"#, "only Bearer"),
            (r#"{"token_type":"bearer"}"#, "without an access_token"),
            (r#"{"access_token":""}"#, "without an access_token"),
            ("<html>sign in</html>", "not a token response"),
            (r#"{"access_token":"at","scope":7}"#, "at `scope`"),
        ] {
            match exchange(&public, 200, body).await.0 {
                Err(err) => assert!(err.to_string().contains(expected), "{body}: {err}"),
                Ok(_) => panic!("{body} was taken"),
            }
        }
    }

    #[tokio::test]
    async fn a_refusal_says_what_the_server_said_without_the_values_in_play() {
        let basic = client(
            ClientAuthMethod::ClientSecretBasic,
            Some("client-secret-value"),
        );
        let body = r#"{"error":"invalid_grant","error_description":
            "code CODE-0123456789 with client-secret-value was used"}"#;
        let (error, message) = refusal(exchange(&basic, 400, body).await.0);
        assert_eq!(error, "invalid_grant");
        assert!(message.starts_with("invalid_grant ("), "{message}");
        assert!(!message.contains(CODE), "{message}");
        assert!(!message.contains("client-secret-value"), "{message}");

        for body in ["<html>bad gateway</html>", "", r#"{"detail":"no"}"#] {
            let (error, message) = refusal(exchange(&basic, 502, body).await.0);
            assert_eq!(error, "", "{body:?}");
            assert_eq!(
                message, "HTTP 502 from https://as.example/token",
                "{body:?}"
            );
        }
    }
}
