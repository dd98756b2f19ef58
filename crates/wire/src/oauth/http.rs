//! The HTTP side of OAuth: two reqwest clients (metadata GETs may follow a few redirects; POSTs
//! to token, registration and revocation endpoints never do), bounded bodies, form encoding and
//! client authentication at the token endpoint (RFC 6749 §2.3.1), and the transport the
//! `oauth2` crate's grant requests go through.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use super::OAuthError;
use crate::config::ClientAuthMethod;
use crate::secrets::Sensitive;

/// The most bytes read from any metadata, registration or token response.
const MAX_BODY: usize = 1024 * 1024;

/// HTTP clients used by the OAuth module.
#[derive(Clone)]
pub(crate) struct Http {
    get: reqwest::Client,
    post: reqwest::Client,
}

/// A response read to the end: status, a few headers, the body.
pub(crate) struct Reply {
    pub status: u16,
    pub www_authenticate: Option<String>,
    pub session_id: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Who the client is at the token endpoint.
pub(crate) struct ClientAuth<'a> {
    pub client_id: &'a str,
    pub client_secret: Option<&'a Sensitive<String>>,
    pub method: ClientAuthMethod,
}

impl Http {
    pub fn new(timeout: Duration) -> Result<Http, OAuthError> {
        let build = |redirects: reqwest::redirect::Policy| {
            crate::tls::http_client_builder()
                .redirect(redirects)
                .timeout(timeout)
                .connect_timeout(timeout.min(Duration::from_secs(10)))
                .user_agent(concat!("plugboard/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| OAuthError::Http(format!("cannot create an HTTP client: {e}")))
        };
        Ok(Http {
            get: build(reqwest::redirect::Policy::limited(5))?,
            post: build(reqwest::redirect::Policy::none())?,
        })
    }

    /// GET `url` expecting JSON.
    pub async fn get(&self, url: &str) -> Result<Reply, OAuthError> {
        let request = self.get.get(url).header("Accept", "application/json");
        send(request, url).await
    }

    /// POST a JSON document.
    pub async fn post_json(&self, url: &str, body: &Value) -> Result<Reply, OAuthError> {
        let request = self
            .post
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(body.to_string());
        send(request, url).await
    }

    /// POST an `application/x-www-form-urlencoded` form, authenticating the client as its
    /// method says (`client_secret_basic`: Authorization header; `client_secret_post`: in the
    /// form; `none`: only `client_id` in the form).
    pub async fn post_form(
        &self,
        url: &str,
        params: &[(&str, &str)],
        client: Option<&ClientAuth<'_>>,
    ) -> Result<Reply, OAuthError> {
        let (body, authorization) = form_body(params, client);
        let mut request = self
            .post
            .post(url)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json");
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        send(request.body(body), url).await
    }
}

/// The form body and the Authorization header value for a token-endpoint style request.
fn form_body(params: &[(&str, &str)], client: Option<&ClientAuth<'_>>) -> (String, Option<String>) {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        form.append_pair(k, v);
    }
    let mut authorization = None;
    if let Some(client) = client {
        match (client.method, client.client_secret) {
            (ClientAuthMethod::ClientSecretBasic, Some(secret)) => {
                authorization = Some(basic_header(client.client_id, secret));
            }
            (ClientAuthMethod::ClientSecretPost, Some(secret)) => {
                form.append_pair("client_id", client.client_id);
                form.append_pair("client_secret", secret.expose());
            }
            _ => {
                form.append_pair("client_id", client.client_id);
            }
        }
    }
    (form.finish(), authorization)
}

impl Http {
    /// The unauthenticated MCP request that makes a protected server answer 401 with its
    /// `WWW-Authenticate` challenge: an `initialize` POST (streamable HTTP) or an SSE GET.
    pub async fn probe_mcp(&self, url: &str, sse: bool) -> Result<Reply, OAuthError> {
        let request = if sse {
            self.post.get(url).header("Accept", "text/event-stream")
        } else {
            let init = serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "plugboard", "version": env!("CARGO_PKG_VERSION")}
                }
            });
            self.post
                .post(url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .body(init.to_string())
        };
        // Only the status and headers matter; an SSE body would never end, so read none of it.
        let response = request.send().await.map_err(|e| http_error(url, &e))?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        Ok(Reply {
            status,
            www_authenticate: header("www-authenticate"),
            session_id: header("mcp-session-id"),
            body: vec![],
        })
    }

    /// End a session that the probe opened by accident (the server did not need a token).
    pub async fn delete_session(&self, url: &str, session_id: &str) {
        let _ = self
            .post
            .delete(url)
            .header("Mcp-Session-Id", session_id)
            .send()
            .await;
    }
}

/// The `oauth2` crate's requests, sent with the POST client (no redirects, bounded answers,
/// errors that name the host only). Keeps the status of the last answer, which the crate's
/// errors for an answer it cannot read do not carry.
pub(crate) struct GrantTransport {
    post: reqwest::Client,
    last_status: AtomicU16,
}

impl GrantTransport {
    pub fn new(http: &Http) -> GrantTransport {
        GrantTransport {
            post: http.post.clone(),
            last_status: AtomicU16::new(0),
        }
    }

    /// The HTTP status of the last answer, if one came.
    pub fn last_status(&self) -> Option<u16> {
        Some(self.last_status.load(Ordering::Relaxed)).filter(|s| *s != 0)
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for GrantTransport {
    type Error = OAuthError;
    type Future =
        Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, OAuthError>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let url = request.uri().to_string();
            let request = reqwest::Request::try_from(request).map_err(|_| {
                OAuthError::Http(format!("cannot build a request to {}", display_url(&url)))
            })?;
            let builder = reqwest::RequestBuilder::from_parts(self.post.clone(), request);
            let reply = send(builder, &url).await?;
            self.last_status.store(reply.status, Ordering::Relaxed);
            oauth2::http::Response::builder()
                .status(reply.status)
                .body(reply.body)
                .map_err(|_| {
                    OAuthError::Http(format!(
                        "{} answered with HTTP status {}",
                        display_url(&url),
                        reply.status
                    ))
                })
        })
    }
}

/// `Basic base64(urlencode(id):urlencode(secret))`, as RFC 6749 §2.3.1 asks.
fn basic_header(client_id: &str, secret: &Sensitive<String>) -> String {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let raw = format!("{}:{}", encode(client_id), encode(secret.expose()));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

async fn send(request: reqwest::RequestBuilder, url: &str) -> Result<Reply, OAuthError> {
    let mut response = request.send().await.map_err(|e| http_error(url, &e))?;
    let status = response.status().as_u16();
    let www_authenticate = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(OAuthError::Http(format!(
                "{} answered with more than {} KiB; refusing to read it",
                display_url(url),
                MAX_BODY / 1024
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Reply {
        status,
        www_authenticate,
        session_id: None,
        body,
    })
}

fn http_error(url: &str, err: &reqwest::Error) -> OAuthError {
    let what = if err.is_timeout() {
        "timed out".to_string()
    } else if err.is_connect() {
        "connection failed".to_string()
    } else {
        // reqwest's text names the URL; ours does too, without its query.
        let mut source: &dyn std::error::Error = err;
        while let Some(next) = source.source() {
            source = next;
        }
        source.to_string()
    };
    OAuthError::Http(format!("could not reach {}: {what}", display_url(url)))
}

/// A URL for messages: scheme, host, port and path, never the query (which may carry a code).
pub(crate) fn display_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            let _ = u.set_password(None);
            let _ = u.set_username("");
            u.to_string()
        }
        Err(_) => "the server".to_string(),
    }
}

/// Current Unix time in milliseconds.
pub(crate) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Current Unix time in seconds.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_header_encodes_the_parts() {
        let h = basic_header("a b", &Sensitive::new("p:w".into()));
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(h.strip_prefix("Basic ").unwrap())
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "a+b:p%3Aw");
    }

    #[test]
    fn display_url_drops_query_and_userinfo() {
        assert_eq!(
            display_url("https://u:p@as.example/token?code=abc#x"),
            "https://as.example/token"
        );
    }
}
