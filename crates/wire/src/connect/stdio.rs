//! The stdio transport: newline-delimited JSON-RPC over a child's stdin/stdout, as an rmcp
//! [`Transport`]. Unlike rmcp's own child-process transport it keeps what the test needs to
//! tell the truth: lines that are not JSON (a server logging to stdout) are remembered, a
//! message larger than the cap ends the stream instead of exhausting memory, and the end of
//! stdout is recorded.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, mpsc, oneshot};

use super::Monitor;

/// Default cap on one message from the server.
pub const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// The client side of a stdio connection.
pub struct StdioTransport {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
    direct: DirectCalls,
}

/// Calls sent straight to the server, past rmcp's service: a session that passes its calls'
/// answers on as JSON (a gateway's) writes each `tools/call`, `resources/read` and
/// `prompts/get` request itself, under an id of its own (`plugboard-N`, which rmcp's numeric
/// ids never are), and the line that answers it goes from the reader to the waiting call,
/// read once into JSON. Through rmcp a call went from the caller to rmcp's service task, to a
/// task of its own that wrote it, and its answer from the reader to the service, which read it
/// into its typed messages (an untagged enum of twenty results, each a buffered attempt), to
/// the caller, which turned it back into JSON: most of the time a gateway spent on a call.
/// Everything else (the server's requests and notifications, lists, cancellations) still goes
/// through rmcp on the same pipes.
#[derive(Clone)]
pub struct DirectCalls(Arc<DirectState>);

struct DirectState {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    monitor: Arc<Monitor>,
    waiting: std::sync::Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    /// The calls awaiting their answer, by id.
    calls: HashMap<String, oneshot::Sender<DirectAnswer>>,
    /// The server's output ended: no answer comes any more.
    closed: bool,
}

/// The server's answer to a direct call.
#[derive(Debug, PartialEq)]
pub enum DirectAnswer {
    /// The `result`, when it is a JSON object.
    Result(Value),
    /// The JSON-RPC `error` object.
    Error(Value),
    /// A `result` that is not an object (no MCP result is one).
    NotAnObject,
}

/// The prefix of a direct call's id.
const DIRECT_ID: &str = "plugboard-";

impl DirectCalls {
    fn new(stdin: Arc<Mutex<Option<ChildStdin>>>, monitor: Arc<Monitor>) -> Self {
        DirectCalls(Arc::new(DirectState {
            stdin,
            monitor,
            waiting: std::sync::Mutex::default(),
        }))
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.0.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh id for a call; its answer is awaited from now on (until [`Self::forget`]).
    pub fn open(&self) -> Result<(RequestId, oneshot::Receiver<DirectAnswer>), std::io::Error> {
        let mut waiting = self.waiting();
        if waiting.closed {
            return Err(closed());
        }
        waiting.next += 1;
        let id = format!("{DIRECT_ID}{}", waiting.next);
        let (tx, rx) = oneshot::channel();
        waiting.calls.insert(id.clone(), tx);
        Ok((RequestId::String(id.into()), rx))
    }

    /// Write `request` as `id` (from [`Self::open`]) to the server.
    pub async fn send(&self, id: RequestId, request: ClientRequest) -> Result<(), std::io::Error> {
        let message: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::request(request, id.clone());
        let mut bytes = serde_json::to_vec(&message).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        // Not written (an error, or given up while writing): no answer is awaited.
        let mut unsent = Unsent(self, Some(id));
        let mut guard = self.0.stdin.lock().await;
        let Some(stdin) = guard.as_mut() else {
            return Err(closed());
        };
        stdin.write_all(&bytes).await?;
        stdin.flush().await?;
        unsent.1 = None;
        Ok(())
    }

    /// No answer is awaited for `id` any more (the call was given up).
    pub fn forget(&self, id: &RequestId) {
        if let RequestId::String(id) = id {
            self.waiting().calls.remove(id.as_ref());
        }
    }

    /// The server's output ended: every waiting call learns it (its answer's sender is dropped).
    fn close(&self) {
        let mut waiting = self.waiting();
        waiting.closed = true;
        waiting.calls.clear();
    }

    /// A line from the server: the answer to a waiting call goes to it (`true`); anything else
    /// is left to be read as usual (`false`).
    fn received(&self, text: &[u8]) -> bool {
        if self.waiting().calls.is_empty() {
            return false;
        }
        let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(text) else {
            return false;
        };
        let Some(Value::String(id)) = message.remove("id") else {
            return false;
        };
        if message.contains_key("method") {
            return false;
        }
        let answer = match (message.remove("result"), message.remove("error")) {
            (Some(result @ Value::Object(_)), None) => DirectAnswer::Result(result),
            (Some(_), None) => DirectAnswer::NotAnObject,
            (None, Some(error)) => DirectAnswer::Error(error),
            _ => return false,
        };
        let Some(waiter) = self.waiting().calls.remove(id.as_str()) else {
            return false;
        };
        self.0.monitor.record_message();
        let _ = waiter.send(answer);
        true
    }
}

/// Forgets the call it holds when dropped: one whose request was not written.
struct Unsent<'a>(&'a DirectCalls, Option<RequestId>);

impl Drop for Unsent<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.1.take() {
            self.0.forget(&id);
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "the server's stdin is closed",
    )
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
        let stdin = Arc::new(Mutex::new(Some(stdin)));
        let direct = DirectCalls::new(stdin.clone(), monitor.clone());
        let reader = tokio::spawn(read_messages(
            stdout,
            max_message,
            monitor,
            direct.clone(),
            tx,
        ));
        StdioTransport {
            stdin,
            rx,
            reader,
            direct,
        }
    }

    /// The handle that sends calls straight to this server (see [`DirectCalls`]).
    pub fn direct_calls(&self) -> DirectCalls {
        self.direct.clone()
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
    direct: DirectCalls,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
) {
    read_lines(stdout, max_message, &monitor, &direct, tx).await;
    direct.close();
}

async fn read_lines(
    stdout: impl AsyncRead + Unpin,
    max_message: usize,
    monitor: &Monitor,
    direct: &DirectCalls,
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
        if direct.received(text) {
            continue;
        }
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

    /// A `DirectCalls` on a pipe that is never read (nothing is sent in these tests).
    async fn direct() -> (DirectCalls, tokio::process::Child) {
        let mut child = tokio::process::Command::new("sleep")
            .arg("60")
            .stdin(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        (DirectCalls::new(stdin, Monitor::new()), child)
    }

    #[tokio::test]
    async fn only_the_answers_to_waiting_direct_calls_are_taken() {
        let (direct, _child) = direct().await;
        let answer = br#"{"jsonrpc":"2.0","id":"plugboard-1","result":{"content":[],"extra":1}}"#;
        // Nothing waits: every line is read as usual.
        assert!(!direct.received(answer));

        let (id, mut first) = direct.open().unwrap();
        assert_eq!(id, RequestId::String("plugboard-1".into()));
        let (_, mut second) = direct.open().unwrap();
        let (third_id, mut third) = direct.open().unwrap();
        // Lines that are not the answer to a waiting call: rmcp's numeric ids, a request or a
        // notification of the server, an id no call has, a line that is not JSON.
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#[..],
            br#"{"jsonrpc":"2.0","id":"plugboard-1","method":"roots/list"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":"plugboard-9","result":{}}"#,
            b"not json",
        ] {
            assert!(!direct.received(line), "{}", String::from_utf8_lossy(line));
        }
        // The answer is taken whole (fields rmcp's types would drop included), once.
        assert!(direct.received(answer));
        assert_eq!(
            first.try_recv().unwrap(),
            DirectAnswer::Result(serde_json::json!({"content": [], "extra": 1}))
        );
        assert!(!direct.received(answer));
        // An error, and a result that is not an object.
        assert!(direct.received(
            br#"{"jsonrpc":"2.0","id":"plugboard-2","error":{"code":-32042,"message":"no"}}"#
        ));
        assert_eq!(
            second.try_recv().unwrap(),
            DirectAnswer::Error(serde_json::json!({"code": -32042, "message": "no"}))
        );
        // A call given up: its late answer is left alone.
        direct.forget(&third_id);
        assert!(!direct.received(br#"{"jsonrpc":"2.0","id":"plugboard-3","result":5}"#));
        assert!(third.try_recv().is_err());
        // The server's output ends: a waiting call hears it, a new one cannot start.
        let (_, mut fourth) = direct.open().unwrap();
        direct.close();
        assert!(matches!(
            fourth.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        assert_eq!(
            direct.open().unwrap_err().kind(),
            std::io::ErrorKind::NotConnected
        );
    }
}
