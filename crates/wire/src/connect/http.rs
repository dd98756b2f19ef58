//! Streamable HTTP through rmcp's reqwest client transport, over a `reqwest::Client` of our
//! own: the resolved server's headers on every request (a headers helper's as of that
//! request), same-origin 307/308 redirects only,
//! and every failed POST reported to the [`Monitor`] with its status, `WWW-Authenticate`
//! challenge or network cause, so a failure can be explained precisely.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use url::Url;

use super::header_source::HeaderSource;
use super::{ConnectError, HttpFault, MAX_MESSAGE, Monitor, NetKind};
use crate::secrets::Sensitive;

/// Most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// The error a redirect to another origin ends in.
#[derive(Debug, thiserror::Error)]
#[error("the server redirected to another origin ({to})")]
pub struct CrossOriginRedirect {
    pub from: String,
    pub to: String,
}

/// A client that sends `headers` on every request and follows only same-origin 307/308
/// redirects (a 301/302/303 would turn a POST into a GET; another origin would receive the
/// credentials).
pub fn build_client(
    headers: &[(String, Sensitive<String>)],
    monitor: Arc<Monitor>,
) -> Result<reqwest::Client, ConnectError> {
    build_client_with(headers, monitor, false)
}

/// [`build_client`] for requests to `url` only. For a plain `http://` URL that no TLS proxy
/// sits in front of, the client gets an empty root store instead of the platform's: loading
/// the system certificates costs milliseconds, and redirects never leave the origin (so
/// never switch to `https`). Should TLS happen anyway, verification fails; it never passes.
pub fn build_client_for(
    url: &Url,
    headers: &[(String, Sensitive<String>)],
    monitor: Arc<Monitor>,
) -> Result<reqwest::Client, ConnectError> {
    build_client_with(headers, monitor, needs_no_tls(url))
}

/// Whether requests to `url` can never need TLS: a plain `http://` URL, and no proxy set that
/// would be reached over `https://`.
fn needs_no_tls(url: &Url) -> bool {
    let tls_proxy = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"]
        .iter()
        .any(|name| {
            [name.to_string(), name.to_lowercase()].iter().any(|n| {
                std::env::var(n).is_ok_and(|v| {
                    let v = v.trim().to_ascii_lowercase();
                    v.contains("://") && !v.starts_with("http://")
                }) || std::env::var_os(n).is_some_and(|v| v.to_str().is_none())
            })
        });
    url.scheme() == "http" && !tls_proxy
}

fn build_client_with(
    headers: &[(String, Sensitive<String>)],
    monitor: Arc<Monitor>,
    no_tls: bool,
) -> Result<reqwest::Client, ConnectError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ConnectError::Http(HttpFault::Other {
                detail: format!("`{name}` is not a valid HTTP header name"),
            })
        })?;
        let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
            ConnectError::Http(HttpFault::Other {
                detail: format!("the value of header `{name}` is not a valid HTTP header value"),
            })
        })?;
        value.set_sensitive(true);
        map.append(name, value);
    }
    let monitor_for_connects = monitor.clone();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let Some(original) = attempt.previous().first().cloned() else {
            return attempt.stop();
        };
        if original.origin() != attempt.url().origin() {
            let fault = HttpFault::CrossOriginRedirect {
                from: original.to_string(),
                to: attempt.url().to_string(),
            };
            monitor.record_http(fault);
            let to = attempt.url().to_string();
            return attempt.error(CrossOriginRedirect {
                from: original.to_string(),
                to,
            });
        }
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        if !keeps_body {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    let mut builder = crate::tls::http_client_builder()
        .default_headers(map)
        .connector_layer(ObserveConnects(monitor_for_connects))
        .redirect(policy)
        // Connections are kept alive and reused (reqwest's pool): a test's requests, made one
        // after the other, then need one TCP connection instead of one each (BENCHMARKS.md).
        .user_agent(concat!("plugboard/", env!("CARGO_PKG_VERSION")));
    if no_tls {
        builder = builder.tls_certs_only(std::iter::empty());
    }
    builder.build().map_err(|e| {
        ConnectError::Http(HttpFault::Other {
            detail: format!("cannot build the HTTP client: {e}"),
        })
    })
}

/// Tells the [`Monitor`] when a connection to the host is made (TCP, and TLS where it is
/// used). No connection is opened before the first request, so this is how a request that
/// gets no answer is told apart from a host that never accepted the connection.
#[derive(Clone)]
struct ObserveConnects(Arc<Monitor>);

impl<S> tower_layer::Layer<S> for ObserveConnects {
    type Service = ObservedConnector<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ObservedConnector {
            inner,
            monitor: self.0.clone(),
        }
    }
}

/// reqwest's connector, reporting each connection it makes.
#[derive(Clone)]
struct ObservedConnector<S> {
    inner: S,
    monitor: Arc<Monitor>,
}

impl<S, R> tower_service::Service<R> for ObservedConnector<S>
where
    S: tower_service::Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let monitor = self.monitor.clone();
        let connecting = self.inner.call(request);
        Box::pin(async move {
            let connection = connecting.await?;
            monitor.record_connected();
            Ok(connection)
        })
    }
}

/// `host:port` of a URL, for messages.
pub fn target_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Why a request got no HTTP answer, from a reqwest error.
pub fn network_fault(err: &reqwest::Error) -> HttpFault {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut chain = vec![];
    let mut refused = false;
    while let Some(current) = source {
        if let Some(redirect) = current.downcast_ref::<CrossOriginRedirect>() {
            return HttpFault::CrossOriginRedirect {
                from: redirect.from.clone(),
                to: redirect.to.clone(),
            };
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            refused = true;
        }
        let text = current.to_string();
        if !chain.iter().any(|c: &String| c.contains(&text)) {
            chain.push(text);
        }
        source = current.source();
    }
    let mut detail = chain.join(": ");
    let lower = detail.to_lowercase();
    let target = err.url().map(target_of).unwrap_or_default();
    let kind = if refused || lower.contains("connection refused") {
        NetKind::Refused
    } else if err.is_timeout() {
        NetKind::Timeout
    } else if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
    {
        // The resolver's own words ("Name or service not known"), not the layers around them.
        if let Some(cause) = chain.last() {
            detail = cause.clone();
        }
        NetKind::Dns
    } else if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("ssl")
    {
        NetKind::Tls
    } else if err.is_redirect() {
        return HttpFault::Other { detail };
    } else {
        NetKind::Other
    };
    HttpFault::Network {
        kind,
        target,
        detail,
    }
}

/// The fault behind a failed streamable HTTP request.
pub fn shttp_fault(err: &StreamableHttpError<reqwest::Error>) -> HttpFault {
    match err {
        StreamableHttpError::AuthRequired(auth) => HttpFault::Status {
            method: "POST",
            status: 401,
            www_authenticate: Some(auth.www_authenticate_header.clone()),
            location: None,
            body: String::new(),
        },
        StreamableHttpError::InsufficientScope(scope) => HttpFault::Status {
            method: "POST",
            status: 403,
            www_authenticate: Some(scope.www_authenticate_header.clone()),
            location: None,
            body: String::new(),
        },
        StreamableHttpError::HttpStatus(status) => HttpFault::Status {
            method: "POST",
            status: status.status,
            www_authenticate: None,
            location: None,
            body: String::new(),
        },
        StreamableHttpError::SessionExpired => HttpFault::Status {
            method: "POST",
            status: 404,
            www_authenticate: None,
            location: None,
            body: "the session expired".into(),
        },
        StreamableHttpError::UnexpectedServerResponse(text) => match parse_status_text(text) {
            Some((status, body)) => HttpFault::Status {
                method: "POST",
                status,
                www_authenticate: None,
                location: None,
                body,
            },
            None => HttpFault::Protocol {
                detail: text.to_string(),
            },
        },
        StreamableHttpError::UnexpectedContentType(content_type) => HttpFault::ContentType {
            content_type: content_type.clone(),
        },
        StreamableHttpError::ResponseBodyTooLarge { max_size } => {
            HttpFault::TooLarge { limit: *max_size }
        }
        StreamableHttpError::Deserialize(e) => HttpFault::Protocol {
            detail: e.to_string(),
        },
        StreamableHttpError::Sse(e) => {
            let text = e.to_string();
            if text.contains("maximum size") {
                HttpFault::TooLarge { limit: MAX_MESSAGE }
            } else {
                HttpFault::Protocol { detail: text }
            }
        }
        StreamableHttpError::Client(e) => match e.status() {
            Some(status) => HttpFault::Status {
                method: "POST",
                status: status.as_u16(),
                www_authenticate: None,
                location: None,
                body: String::new(),
            },
            None => network_fault(e),
        },
        other => HttpFault::Other {
            detail: other.to_string(),
        },
    }
}

/// `"HTTP 404 Not Found: body"` → `(404, "body")`.
fn parse_status_text(text: &str) -> Option<(u16, String)> {
    let rest = text.strip_prefix("HTTP ")?;
    let code: u16 = rest.get(..3)?.parse().ok()?;
    let body = rest.split_once(": ").map(|(_, b)| b.trim()).unwrap_or("");
    Some((code, super::truncate_chars(body, 300)))
}

/// The three requests of one of our streamable HTTP clients. [`Limited`] makes such a client
/// the one rmcp's transport takes: whichever form of a request rmcp uses, it arrives here with
/// our limits (`MAX_MESSAGE` for a response body and for an SSE event, unless rmcp passes its
/// own).
pub trait HttpRequests: Clone + Send + Sync + 'static {
    fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<
        Output = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>,
    > + Send
    + '_;

    fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<reqwest::Error>>> + Send + '_;

    fn stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<SseStream, StreamableHttpError<reqwest::Error>>> + Send + '_;
}

/// An open SSE stream of a streamable HTTP server.
pub type SseStream = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

/// An [`HttpRequests`] client as rmcp's streamable HTTP transport takes it.
#[derive(Clone)]
pub struct Limited<C>(pub C);

impl<C: HttpRequests> StreamableHttpClient for Limited<C> {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let limits = limits();
        (self.0)
            .post(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = limits();
        limits.max_sse_event_size = max_sse_event_size;
        (self.0)
            .post(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        (self.0)
            .post(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        (self.0)
            .delete(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        (self.0)
            .stream(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                MAX_MESSAGE,
            )
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        (self.0)
            .stream(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

fn limits() -> StreamableHttpResponseLimits {
    let mut limits = StreamableHttpResponseLimits::default();
    limits.max_sse_event_size = MAX_MESSAGE;
    limits.max_json_response_size = MAX_MESSAGE;
    limits
}

/// The transport configuration for `url`, with our message size limits.
pub fn transport_config(url: &Url) -> StreamableHttpClientTransportConfig {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
    config.max_sse_event_size = MAX_MESSAGE;
    config.max_json_response_size = MAX_MESSAGE;
    config
}

/// rmcp's reqwest client with every POST failure reported to a [`Monitor`].
#[derive(Clone)]
pub struct ObservedClient {
    inner: reqwest::Client,
    monitor: Arc<Monitor>,
    /// Whether the standalone GET stream (no `Last-Event-ID`: not the resumption of a
    /// response) is opened; when not, rmcp hears that the server has none and goes on.
    standalone_stream: bool,
    /// The server's headers helper: each request carries its headers of the moment, and a
    /// POST refused (401/403) with headers kept from before it is sent once more with new ones.
    helper: Option<Arc<dyn HeaderSource>>,
}

/// Whether a POST was refused for its credentials.
fn refused<T>(result: &Result<T, StreamableHttpError<reqwest::Error>>) -> bool {
    matches!(result, Err(err) if matches!(
        shttp_fault(err),
        HttpFault::Status { status: 401 | 403, .. }
    ))
}

/// Add `headers` (a headers helper's) to a request's custom headers, replacing those of the same
/// name, marked sensitive. Names or values HTTP does not allow are left out (a helper's output
/// was checked when it was read).
pub fn add_headers(
    custom: &mut HashMap<HeaderName, HeaderValue>,
    headers: super::header_source::Headers,
) {
    for (name, value) in headers {
        let (Ok(name), Ok(mut value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value.expose()),
        ) else {
            continue;
        };
        value.set_sensitive(true);
        custom.insert(name, value);
    }
}

impl ObservedClient {
    /// `custom` with the headers helper's headers of the moment (when the server has one).
    async fn with_helper_headers(
        &self,
        mut custom: HashMap<HeaderName, HeaderValue>,
    ) -> Result<HashMap<HeaderName, HeaderValue>, StreamableHttpError<reqwest::Error>> {
        let Some(helper) = &self.helper else {
            return Ok(custom);
        };
        let headers = helper.current().await.map_err(|detail| {
            StreamableHttpError::UnexpectedServerResponse(
                format!("no request was sent: {detail}").into(),
            )
        })?;
        add_headers(&mut custom, headers);
        Ok(custom)
    }

    async fn post_once(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let custom_headers = self.with_helper_headers(custom_headers).await?;
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
    }

    fn observe<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        if let Err(err) = &result {
            let fault = shttp_fault(err);
            // A cross-origin redirect was recorded by the redirect policy with more detail.
            if !matches!(
                (&fault, self.monitor.snapshot().http),
                (
                    HttpFault::Other { .. },
                    Some(HttpFault::CrossOriginRedirect { .. })
                )
            ) {
                self.monitor.record_http(fault);
            }
        }
        result
    }
}

impl HttpRequests for ObservedClient {
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let Some(helper) = self.helper.clone() else {
            let result = self
                .post_once(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await;
            return self.observe(result);
        };
        let sent = std::time::Instant::now();
        let result = self
            .post_once(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
            .await;
        let result = if refused(&result) && helper.expire_if_got_before(sent) {
            self.post_once(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
        } else {
            result
        };
        self.observe(result)
    }

    async fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let custom_headers = self.with_helper_headers(custom_headers).await?;
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<reqwest::Error>> {
        if !self.standalone_stream && last_event_id.is_none() {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        let custom_headers = self.with_helper_headers(custom_headers).await?;
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// A streamable HTTP transport, ready for the handshake.
#[derive(Clone)]
pub struct Shttp {
    client: ObservedClient,
    config: StreamableHttpClientTransportConfig,
}

impl Shttp {
    pub fn new(client: reqwest::Client, url: &Url, monitor: Arc<Monitor>) -> Self {
        let mut config = transport_config(url);
        config.reinit_on_expired_session = false;
        Shttp {
            client: ObservedClient {
                inner: client,
                monitor,
                standalone_stream: true,
                helper: None,
            },
            config,
        }
    }

    /// Requests ask `helper` (the server's headers helper, if any) for their headers.
    pub fn with_helper(mut self, helper: Option<Arc<dyn HeaderSource>>) -> Self {
        self.client.helper = helper;
        self
    }

    /// See [`super::Connection::without_standalone_stream`].
    pub fn without_standalone_stream(&mut self) {
        self.client.standalone_stream = false;
    }

    pub fn into_transport(self) -> StreamableHttpClientTransport<Limited<ObservedClient>> {
        StreamableHttpClientTransport::with_client(Limited(self.client), self.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text_is_parsed() {
        assert_eq!(
            parse_status_text("HTTP 405 Method Not Allowed: method not allowed"),
            Some((405, "method not allowed".to_owned()))
        );
        assert_eq!(
            parse_status_text("HTTP 500 Internal Server Error: "),
            Some((500, String::new()))
        );
        assert_eq!(parse_status_text("something else"), None);
    }

    #[test]
    fn only_plain_http_skips_the_root_certificates() {
        let https = Url::parse("https://example.com/mcp").unwrap();
        assert!(!needs_no_tls(&https));
        let proxy_set = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some() || std::env::var_os(v.to_lowercase()).is_some());
        if !proxy_set {
            assert!(needs_no_tls(&Url::parse("http://127.0.0.1:9/mcp").unwrap()));
        }
    }
}
