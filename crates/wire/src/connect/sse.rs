//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp no longer ships, written on
//! rmcp's [`Transport`] trait: GET the URL as an event stream, wait for the `endpoint` event,
//! resolve it against the URL (same origin only), POST every message there, and read the
//! answers from `message` events. Events are size-capped; faults go to the [`Monitor`].

use std::sync::Arc;

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use url::Url;

use super::header_source::HeaderSource;
use super::http::{network_fault, target_of};
use super::{ConnectError, HttpFault, MAX_MESSAGE, Monitor};

/// One server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; `message` when absent.
    pub event: String,
    pub data: String,
}

/// Why the event stream could not be read further.
#[derive(Debug, PartialEq, Eq)]
pub enum ParseError {
    TooLarge(usize),
}

/// An incremental `text/event-stream` parser that never buffers more than `max` bytes for
/// one event.
pub struct EventParser {
    max: usize,
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    size: usize,
    last_was_cr: bool,
}

impl EventParser {
    pub fn new(max: usize) -> Self {
        EventParser {
            max,
            line: vec![],
            event: String::new(),
            data: String::new(),
            has_data: false,
            size: 0,
            last_was_cr: false,
        }
    }

    /// Feed bytes; complete events are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) -> Result<(), ParseError> {
        for &b in bytes {
            if b == b'\n' && self.last_was_cr {
                self.last_was_cr = false;
                continue;
            }
            self.last_was_cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                let line = std::mem::take(&mut self.line);
                self.line_done(&line, out);
                continue;
            }
            self.line.push(b);
            self.size += 1;
            if self.size > self.max {
                return Err(ParseError::TooLarge(self.max));
            }
        }
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Event>) {
        if line.is_empty() {
            if self.has_data {
                let event = if self.event.is_empty() {
                    "message".to_owned()
                } else {
                    std::mem::take(&mut self.event)
                };
                out.push(Event {
                    event,
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            self.size = 0;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*text, ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }
}

/// Errors of the SSE transport's `send`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseTransportError {
    #[error("HTTP {status} from the message endpoint")]
    Status { status: u16 },
    #[error("the request to the message endpoint failed: {0}")]
    Request(String),
    #[error("cannot encode the message: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The client side of a legacy SSE connection.
pub struct SseTransport {
    client: reqwest::Client,
    endpoint: Url,
    monitor: Arc<Monitor>,
    /// The server's headers helper: each POST carries its headers of the moment, and one
    /// refused (401/403) with headers kept from before it is sent once more with new ones.
    helper: Option<Arc<dyn HeaderSource>>,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

fn status_fault(method: &'static str, response: &reqwest::Response, body: String) -> HttpFault {
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    HttpFault::Status {
        method,
        status: response.status().as_u16(),
        www_authenticate: header(reqwest::header::WWW_AUTHENTICATE),
        location: header(reqwest::header::LOCATION),
        body,
    }
}

async fn body_excerpt(response: reqwest::Response) -> String {
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(Ok(chunk)) = stream.next().await {
        body.extend_from_slice(&chunk);
        if body.len() > 4096 {
            break;
        }
    }
    super::truncate_chars(String::from_utf8_lossy(&body).trim(), 300)
}

impl SseTransport {
    /// GET `url` as an event stream and wait for the `endpoint` event.
    pub async fn connect(
        client: reqwest::Client,
        url: Url,
        monitor: Arc<Monitor>,
    ) -> Result<SseTransport, ConnectError> {
        let fail = |fault: HttpFault| {
            monitor.record_http(fault.clone());
            ConnectError::Http(fault)
        };
        let response = client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header(reqwest::header::CACHE_CONTROL, "no-cache")
            .send()
            .await
            .map_err(|e| fail(network_fault(&e)))?;
        if !response.status().is_success() {
            let fault = status_fault("GET", &response, String::new());
            let body = body_excerpt(response).await;
            let fault = match fault {
                HttpFault::Status {
                    method,
                    status,
                    www_authenticate,
                    location,
                    ..
                } => HttpFault::Status {
                    method,
                    status,
                    www_authenticate,
                    location,
                    body,
                },
                other => other,
            };
            return Err(fail(fault));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if !content_type.as_deref().is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        }) {
            return Err(fail(HttpFault::ContentType { content_type }));
        }
        monitor.record_stream_opened();
        let mut stream = response.bytes_stream();
        let mut parser = EventParser::new(MAX_MESSAGE);
        let mut events: Vec<Event> = vec![];
        let endpoint = 'found: loop {
            if let Some(pos) = events.iter().position(|e| e.event == "endpoint") {
                let data = events[pos].data.trim().to_owned();
                events.drain(..=pos);
                break 'found data;
            }
            match stream.next().await {
                Some(Ok(chunk)) => {
                    if let Err(ParseError::TooLarge(limit)) = parser.feed(&chunk, &mut events) {
                        monitor.record_oversized(limit);
                        return Err(fail(HttpFault::TooLarge { limit }));
                    }
                }
                Some(Err(e)) => return Err(fail(network_fault(&e))),
                None => {
                    return Err(ConnectError::Sse(format!(
                        "the event stream at {url} ended before it sent the `endpoint` event; \
                         this does not look like a legacy MCP SSE server"
                    )));
                }
            }
        };
        let endpoint = url.join(&endpoint).map_err(|e| {
            ConnectError::Sse(format!(
                "the `endpoint` event names `{endpoint}`, which is not a valid URL ({e})"
            ))
        })?;
        if endpoint.origin() != url.origin() {
            return Err(ConnectError::Sse(format!(
                "the `endpoint` event names another origin ({}) than the server's ({}); \
                 Plugboard only posts messages to the server's own origin",
                target_of(&endpoint),
                target_of(&url)
            )));
        }

        let (tx, rx) = mpsc::channel(32);
        let reader_monitor = monitor.clone();
        let reader = tokio::spawn(async move {
            let monitor = reader_monitor;
            let mut pending: std::collections::VecDeque<Event> = events.into();
            loop {
                while let Some(event) = pending.pop_front() {
                    if event.event != "message" {
                        continue;
                    }
                    match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&event.data) {
                        Ok(message) => {
                            monitor.record_message();
                            if tx.send(message).await.is_err() {
                                return;
                            }
                        }
                        Err(err) => {
                            if serde_json::from_str::<serde_json::Value>(&event.data).is_ok() {
                                monitor.record_invalid_message(&event.data, &err);
                            } else {
                                monitor.record_noise(&event.data);
                            }
                        }
                    }
                }
                let mut fresh = vec![];
                match stream.next().await {
                    Some(Ok(chunk)) => {
                        if let Err(ParseError::TooLarge(limit)) = parser.feed(&chunk, &mut fresh) {
                            monitor.record_oversized(limit);
                            return;
                        }
                        pending.extend(fresh);
                    }
                    Some(Err(_)) | None => {
                        monitor.record_stream_closed();
                        return;
                    }
                }
            }
        });
        Ok(SseTransport {
            client,
            endpoint,
            monitor,
            helper: None,
            rx,
            reader,
        })
    }

    /// Messages are posted with `helper`'s headers of the moment (the server's headers helper,
    /// if any; the stream itself was opened with the headers of then).
    pub fn with_helper(mut self, helper: Option<Arc<dyn HeaderSource>>) -> Self {
        self.helper = helper;
        self
    }

    /// The URL messages are posted to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        let monitor = self.monitor.clone();
        let helper = self.helper.clone();
        async move {
            let body = serde_json::to_vec(&item)?;
            let post = |body: Vec<u8>| {
                let (client, endpoint, monitor, helper) = (
                    client.clone(),
                    endpoint.clone(),
                    monitor.clone(),
                    helper.clone(),
                );
                async move {
                    let mut request = client
                        .post(endpoint)
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(body);
                    if let Some(helper) = &helper {
                        for (name, value) in
                            helper.current().await.map_err(SseTransportError::Request)?
                        {
                            request = request.header(name, value.expose().as_str());
                        }
                    }
                    request.send().await.map_err(|e| {
                        monitor.record_http(network_fault(&e));
                        SseTransportError::Request(e.to_string())
                    })
                }
            };
            let sent = std::time::Instant::now();
            let mut response = post(body.clone()).await?;
            if matches!(response.status().as_u16(), 401 | 403)
                && helper
                    .as_ref()
                    .is_some_and(|helper| helper.expire_if_got_before(sent))
            {
                response = post(body).await?;
            }
            let status = response.status();
            if status.is_success() {
                return Ok(());
            }
            let fault = status_fault("POST", &response, String::new());
            let body = body_excerpt(response).await;
            if let HttpFault::Status {
                method,
                status,
                www_authenticate,
                location,
                ..
            } = fault
            {
                monitor.record_http(HttpFault::Status {
                    method,
                    status,
                    www_authenticate,
                    location,
                    body,
                });
            }
            Err(SseTransportError::Status {
                status: status.as_u16(),
            })
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.rx.close();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_parsed_across_chunks_and_line_endings() {
        let mut parser = EventParser::new(1024);
        let mut out = vec![];
        parser
            .feed(
                b": comment\r\nevent: endpoint\r\ndata: /messages?s",
                &mut out,
            )
            .unwrap();
        assert!(out.is_empty());
        parser
            .feed(b"=1\r\n\r\ndata: {\"a\":1}\n", &mut out)
            .unwrap();
        parser.feed(b"data: x\n\n", &mut out).unwrap();
        assert_eq!(
            out,
            vec![
                Event {
                    event: "endpoint".into(),
                    data: "/messages?s=1".into()
                },
                Event {
                    event: "message".into(),
                    data: "{\"a\":1}\nx".into()
                },
            ]
        );
    }

    #[test]
    fn oversized_events_are_refused() {
        let mut parser = EventParser::new(16);
        let mut out = vec![];
        assert_eq!(
            parser.feed(b"data: 0123456789abcdef\n\n", &mut out),
            Err(ParseError::TooLarge(16))
        );
    }
}
