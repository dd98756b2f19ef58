//! The stdio transport: newline-delimited JSON-RPC over a child's stdin/stdout, as an rmcp
//! [`Transport`]. Unlike rmcp's own child-process transport it keeps what the test needs to
//! tell the truth: lines that are not JSON (a server logging to stdout) are remembered, a
//! message larger than the cap ends the stream instead of exhausting memory, and the end of
//! stdout is recorded.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{EmptyResult, JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, mpsc};

use super::Monitor;

/// Default cap on one message from the server.
pub const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// The client side of a stdio connection.
pub struct StdioTransport {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
    raw: RawAnswers,
}

/// Methods whose answers a [`RawAnswers`] keeps as JSON: the requests a session passes on
/// and reads as JSON anyway.
const RAW_METHODS: [&str; 3] = ["tools/call", "resources/read", "prompts/get"];

/// The answers to a session's calls as the server sent them. Once [`RawAnswers::keep`] is
/// on, the result of each `tools/call`, `resources/read` and `prompts/get` request is read
/// once, into JSON, and kept here for [`RawAnswers::take`]; rmcp gets an empty result in its
/// place. The one who turns it on must take every such answer by its request's id (or
/// [`RawAnswers::forget`] it): a gateway passes a call's result on as JSON, so reading it
/// into rmcp's typed messages first (an untagged enum of twenty results, each a buffered
/// attempt) and back was most of the time it spent on a call.
#[derive(Clone, Default)]
pub struct RawAnswers(Arc<std::sync::Mutex<RawState>>);

#[derive(Default)]
struct RawState {
    on: bool,
    wanted: HashSet<RequestId>,
    kept: HashMap<RequestId, Value>,
}

impl RawAnswers {
    /// Keep the answers of calls from now on.
    pub fn keep(&self) {
        self.state().on = true;
    }

    /// The result of request `id` as the server sent it, when it was kept.
    pub fn take(&self, id: &RequestId) -> Option<Value> {
        let mut state = self.state();
        state.wanted.remove(id);
        state.kept.remove(id)
    }

    /// Nothing is kept for request `id` (given up before its answer came).
    pub fn forget(&self, id: &RequestId) {
        self.take(id);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RawState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Note a request being sent, when its answer is to be kept.
    fn sending(&self, message: &TxJsonRpcMessage<RoleClient>) {
        let JsonRpcMessage::Request(request) = message else {
            return;
        };
        let mut state = self.state();
        if state.on && RAW_METHODS.contains(&request.request.method()) {
            state.wanted.insert(request.id.clone());
        }
    }

    /// A line read from the server: the answer to a wanted request is kept (and rmcp gets an
    /// empty result for it); anything else is given back to be read as usual.
    fn received<'a>(&self, text: &'a [u8]) -> Received<'a> {
        {
            let state = self.state();
            if state.wanted.is_empty() {
                return Received::Other(text);
            }
        }
        let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(text) else {
            return Received::Other(text);
        };
        let id = match message.get("id") {
            Some(Value::Number(n)) => n.as_i64().map(RequestId::Number),
            Some(Value::String(s)) => Some(RequestId::String(s.as_str().into())),
            _ => None,
        };
        let mut state = self.state();
        match id {
            Some(id)
                if message.get("result").is_some_and(Value::is_object)
                    && !message.contains_key("method")
                    && !message.contains_key("error")
                    && state.wanted.remove(&id) =>
            {
                let result = message.remove("result").unwrap_or_default();
                state.kept.insert(id.clone(), result);
                Received::Kept(JsonRpcMessage::response(
                    ServerResult::EmptyResult(EmptyResult {}),
                    id,
                ))
            }
            _ => Received::Other(text),
        }
    }
}

/// What became of a line from the server.
enum Received<'a> {
    /// The answer to a wanted request, kept; rmcp gets this in its place.
    Kept(RxJsonRpcMessage<RoleClient>),
    /// Anything else, to read as usual.
    Other(&'a [u8]),
}

impl StdioTransport {
    /// Talk over `stdin`/`stdout`, reporting what is seen on stdout to `monitor`.
    pub fn new(
        stdin: ChildStdin,
        stdout: impl AsyncRead + Send + Unpin + 'static,
        max_message: usize,
        monitor: Arc<Monitor>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(32);
        let raw = RawAnswers::default();
        let reader = tokio::spawn(read_messages(stdout, max_message, monitor, raw.clone(), tx));
        StdioTransport {
            stdin: Arc::new(Mutex::new(Some(stdin))),
            rx,
            reader,
            raw,
        }
    }

    /// The handle that keeps this connection's call answers as JSON (off until asked).
    pub fn raw_answers(&self) -> RawAnswers {
        self.raw.clone()
    }

    /// A handle that can close stdin later, after the transport has moved into rmcp.
    pub fn stdin_handle(&self) -> StdinHandle {
        StdinHandle(self.stdin.clone())
    }
}

/// Closes the server's stdin (the polite way to ask a stdio server to exit).
#[derive(Clone)]
pub struct StdinHandle(Arc<Mutex<Option<ChildStdin>>>);

impl StdinHandle {
    /// Bytes written to the server's stdin that it has not read yet; `None` when that cannot
    /// be told (stdin closed or being written to, or not Linux). The era probe uses it to tell
    /// a server that is still starting from one that read the probe and ignored it.
    pub fn unread(&self) -> Option<usize> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use std::os::fd::AsRawFd;
            let guard = self.0.try_lock().ok()?;
            let fd = guard.as_ref()?.as_raw_fd();
            let mut pending: libc::c_int = 0;
            // SAFETY: FIONREAD writes one int; on Linux it counts the unread bytes of a pipe
            // from either end.
            let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut pending) };
            (rc == 0).then_some(pending.max(0) as usize)
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            None
        }
    }

    pub async fn close(&self) {
        if let Some(mut stdin) = self.0.lock().await.take() {
            let _ = stdin.shutdown().await;
        }
    }
}

/// The server's stdin as the era probe watches it (whether the server has read the probe); it
/// cannot tell whether the server wrote anything, so only the pipe decides.
impl super::handshake::Watch for StdinHandle {
    fn unread(&self) -> Option<usize> {
        StdinHandle::unread(self)
    }

    fn spoke(&self) -> bool {
        false
    }
}

/// Outcome of reading one line with a size cap.
enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Read one `\n`-terminated line into `buf`, never holding more than `max` bytes.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if buf.len() + take > max.saturating_add(1) {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&available[..take]);
        reader.consume(take);
        if done {
            return Ok(Line::Complete);
        }
    }
}

async fn read_messages(
    stdout: impl AsyncRead + Unpin,
    max_message: usize,
    monitor: Arc<Monitor>,
    raw: RawAnswers,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    // A longer line grows `line`, not this buffer; a bigger buffer is zeroed up front, which
    // costs a short test more than the extra reads of a long answer.
    let mut reader = BufReader::with_capacity(8 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        match read_line(&mut reader, &mut line, max_message).await {
            Ok(Line::Complete) => {}
            Ok(Line::TooLong) => {
                monitor.record_oversized(max_message);
                return;
            }
            Ok(Line::Eof) | Err(_) => {
                monitor.record_stream_closed();
                return;
            }
        }
        let text = trim_ascii(&line);
        if text.is_empty() {
            continue;
        }
        let text = match raw.received(text) {
            Received::Kept(message) => {
                monitor.record_message();
                if tx.send(message).await.is_err() {
                    return;
                }
                continue;
            }
            Received::Other(text) => text,
        };
        match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text) {
            Ok(message) => {
                monitor.record_message();
                if tx.send(message).await.is_err() {
                    return;
                }
            }
            Err(err) => {
                if serde_json::from_slice::<serde_json::Value>(text).is_ok() {
                    monitor.record_invalid_message(&String::from_utf8_lossy(text), &err);
                } else {
                    monitor.record_noise(&String::from_utf8_lossy(text));
                }
            }
        }
    }
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        self.raw.sending(&item);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut guard = stdin.lock().await;
            let Some(stdin) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's stdin is closed",
                ));
            };
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(mut stdin) = self.stdin.lock().await.take() {
            let _ = stdin.shutdown().await;
        }
        self.rx.close();
        Ok(())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_capped() {
        let data = format!("{}\nshort\n", "x".repeat(100));
        let mut reader = BufReader::with_capacity(16, data.as_bytes());
        let mut buf = vec![];
        assert!(matches!(
            read_line(&mut reader, &mut buf, 50).await.unwrap(),
            Line::TooLong
        ));
        let data = "short\nlast";
        let mut reader = BufReader::with_capacity(4, data.as_bytes());
        assert!(matches!(
            read_line(&mut reader, &mut buf, 50).await.unwrap(),
            Line::Complete
        ));
        assert_eq!(buf, b"short\n");
        assert!(matches!(
            read_line(&mut reader, &mut buf, 50).await.unwrap(),
            Line::Complete
        ));
        assert_eq!(buf, b"last");
        assert!(matches!(
            read_line(&mut reader, &mut buf, 50).await.unwrap(),
            Line::Eof
        ));
    }

    fn call(id: i64, method: &str) -> TxJsonRpcMessage<RoleClient> {
        serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": method,
            "params": {"name": "echo", "uri": "x://y", "arguments": {}}
        }))
        .unwrap()
    }

    fn is_kept(received: &Received<'_>) -> bool {
        matches!(received, Received::Kept(JsonRpcMessage::Response(r))
            if matches!(r.result, ServerResult::EmptyResult(_)))
    }

    #[test]
    fn answers_to_calls_are_kept_as_json_only_when_asked_and_only_theirs() {
        let raw = RawAnswers::default();
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"extra":1}}"#;
        // Off: nothing is noted or kept.
        raw.sending(&call(1, "tools/call"));
        assert!(!is_kept(&raw.received(answer)));
        assert_eq!(raw.take(&RequestId::Number(1)), None);

        raw.keep();
        raw.sending(&call(1, "tools/call"));
        raw.sending(&call(2, "tools/list"));
        raw.sending(&call(3, "resources/read"));
        // The answer to a call is kept whole (fields rmcp's types would drop included).
        assert!(is_kept(&raw.received(answer)));
        assert_eq!(
            raw.take(&RequestId::Number(1)),
            Some(serde_json::json!({"content": [{"type": "text", "text": "hi"}], "extra": 1}))
        );
        // A list is read as usual; so is an error, a request of the server with the same id,
        // a line that is not JSON, a result that is not an object (rmcp refuses it as
        // before), and an answer with an id no call has.
        let list = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
        assert!(!is_kept(&raw.received(list)));
        let error = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#;
        assert!(!is_kept(&raw.received(error)));
        let request = br#"{"jsonrpc":"2.0","id":3,"method":"roots/list","result":{}}"#;
        assert!(!is_kept(&raw.received(request)));
        assert!(!is_kept(&raw.received(b"not json")));
        let not_an_object = br#"{"jsonrpc":"2.0","id":3,"result":5}"#;
        assert!(!is_kept(&raw.received(not_an_object)));
        let stranger = br#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
        assert!(!is_kept(&raw.received(stranger)));
        // A call given up: its late answer is not kept.
        raw.forget(&RequestId::Number(3));
        let late = br#"{"jsonrpc":"2.0","id":3,"result":{"contents":[]}}"#;
        assert!(!is_kept(&raw.received(late)));
        assert_eq!(raw.state().kept.len(), 0);
        assert_eq!(raw.state().wanted.len(), 0);
    }
}
