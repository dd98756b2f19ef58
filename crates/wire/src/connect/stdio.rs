//! The stdio transport: newline-delimited JSON-RPC over a child's stdin/stdout, as an rmcp
//! [`Transport`]. Unlike rmcp's own child-process transport it keeps what the test needs to
//! tell the truth: lines that are not JSON (a server logging to stdout) are remembered, a
//! message larger than the cap ends the stream instead of exhausting memory, and the end of
//! stdout is recorded.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
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
        let reader = tokio::spawn(read_messages(stdout, max_message, monitor, tx));
        StdioTransport {
            stdin: Arc::new(Mutex::new(Some(stdin))),
            rx,
            reader,
        }
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
}
