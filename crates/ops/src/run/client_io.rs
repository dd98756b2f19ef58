//! The client's side of `plugboard run`: this process's stdin and stdout, with the
//! [`ToolFilter`] between them and the relay (the stdio relay or the remote bridge), which
//! reads and writes a pair of in-process pipes ([`RelaySide`]) instead.
//!
//! - stdin → relay: cut into lines (one JSON-RPC message each), every line handed to
//!   [`ToolFilter::from_client`]; what it forwards goes on to the relay byte for byte, what it
//!   answers goes back to the client. When stdin ends, the relay's input ends.
//! - relay → stdout: cut into lines, each through [`ToolFilter::from_server`]; messages of our
//!   own (refusals, `notifications/tools/list_changed`) are written between lines, never into
//!   one. When stdout breaks, the relay's output breaks too, so it stops as before.
//! - The server's tool state is watched ([`WATCH_EVERY`]: the config file and the pin file,
//!   by modification time) and put in force as soon as it changes, with a notice to the client.
//! - The session's record ([`super::sessions`]: the client's name, whether it is told of tool
//!   changes) is kept up to date while it runs and removed at the end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::sessions::{self, SessionRecord};
use super::tool_filter::{ToolFilter, ToolRules};
use crate::config::{CONFIG_FILE, ConfigStore};
use crate::connect::MAX_MESSAGE;
use crate::pinning::PinStore;

/// How often the config and pin files are looked at for a change of tool state.
pub const WATCH_EVERY: Duration = Duration::from_millis(400);
/// The in-process pipes' buffer.
const PIPE: usize = 256 * 1024;

/// The relay's ends: it reads the client's messages from `input` and writes the server's to
/// `output`, as it would stdin and stdout.
pub struct RelaySide {
    pub input: DuplexStream,
    pub output: DuplexStream,
}

/// The running client side; [`ClientIo::finish`] after the relay returned.
pub struct ClientIo {
    output: JoinHandle<()>,
    others: Vec<JoinHandle<()>>,
    config_dir: PathBuf,
}

/// The tool rules of server `name` as its files say now (`None` when they cannot be read: the
/// rules in force stay).
pub fn load_rules(config_dir: &Path, name: &str) -> Option<ToolRules> {
    let server = ConfigStore::new(config_dir).load().ok()?.server(name).ok();
    rules_for(config_dir, name, server.as_ref())
}

/// The tool rules of server `name` whose config entry is `server` (`None`: it is gone).
pub fn rules_for(
    config_dir: &Path,
    name: &str,
    server: Option<&crate::config::ServerConfig>,
) -> Option<ToolRules> {
    let review = crate::tools::review(config_dir, name).ok()?;
    Some(match server {
        Some(server) => ToolRules {
            policy: server.tools.clone(),
            review,
            server_enabled: server.enabled,
            keep_controls: server.keep_control_characters,
        },
        // Removed (or renamed) while a client is connected: nothing to offer it.
        None => ToolRules::default(),
    })
}

/// Cuts a byte stream into lines. A line longer than [`MAX_MESSAGE`] is passed on in pieces,
/// unfiltered (no JSON-RPC message that long is one the filter rewrites).
#[derive(Default)]
struct Lines {
    pending: Vec<u8>,
    oversized: bool,
}

/// A piece of the stream: a whole line (without its newline) or raw bytes to pass as they are.
enum Piece {
    Line(Vec<u8>),
    Raw(Vec<u8>),
}

impl Lines {
    fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Piece>) {
        while let Some(at) = bytes.iter().position(|b| *b == b'\n') {
            self.pending.extend_from_slice(&bytes[..at]);
            let line = std::mem::take(&mut self.pending);
            if std::mem::take(&mut self.oversized) {
                let mut raw = line;
                raw.push(b'\n');
                out.push(Piece::Raw(raw));
            } else {
                out.push(Piece::Line(line));
            }
            bytes = &bytes[at + 1..];
        }
        self.pending.extend_from_slice(bytes);
        if self.pending.len() > MAX_MESSAGE {
            self.oversized = true;
            out.push(Piece::Raw(std::mem::take(&mut self.pending)));
        }
    }

    fn at_boundary(&self) -> bool {
        self.pending.is_empty() && !self.oversized
    }

    fn finish(&mut self) -> Option<Vec<u8>> {
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }
}

/// Keeps this session's record in `sessions/` up to date with what the filter knows.
struct SessionFile {
    config_dir: PathBuf,
    server: String,
    written: Option<(Option<String>, bool)>,
}

impl SessionFile {
    fn update(&mut self, filter: &ToolFilter) {
        let now = filter.client();
        if self.written.as_ref() == Some(&now) {
            return;
        }
        sessions::write(
            &self.config_dir,
            &SessionRecord {
                server: self.server.clone(),
                pid: std::process::id(),
                client: now.0.clone(),
                told: now.1,
            },
        );
        self.written = Some(now);
    }
}

fn with_newline(bytes: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(bytes.len() + 1);
    line.extend_from_slice(bytes);
    line.push(b'\n');
    line
}

impl ClientIo {
    /// Start the client side for server `name` (its files in `config_dir`) with `filter`.
    pub fn start(filter: Arc<ToolFilter>, config_dir: &Path, name: &str) -> (ClientIo, RelaySide) {
        let (mut to_relay, relay_input) = tokio::io::duplex(PIPE);
        let (relay_output, mut from_relay) = tokio::io::duplex(PIPE);
        let (ours_tx, mut ours) = mpsc::unbounded_channel::<Vec<u8>>();

        // stdin → filter → relay.
        let mut session = SessionFile {
            config_dir: config_dir.to_path_buf(),
            server: name.to_string(),
            written: None,
        };
        session.update(&filter);
        let stdin_task = {
            let filter = filter.clone();
            let ours_tx = ours_tx.clone();
            tokio::spawn(async move {
                let mut stdin = crate::own_stdio::stdin();
                let mut buf = vec![0u8; 64 * 1024];
                let mut lines = Lines::default();
                let mut pieces = vec![];
                'read: loop {
                    let n = match stdin.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    lines.push(&buf[..n], &mut pieces);
                    for piece in pieces.drain(..) {
                        let bytes = match piece {
                            Piece::Raw(raw) => raw,
                            Piece::Line(line) => {
                                let verdict = filter.from_client(&line);
                                session.update(&filter);
                                if let Some(answer) = verdict.answer {
                                    let _ = ours_tx.send(with_newline(&answer));
                                }
                                match verdict.forward {
                                    Some(forward) => with_newline(&forward),
                                    None => continue,
                                }
                            }
                        };
                        if to_relay.write_all(&bytes).await.is_err() {
                            break 'read;
                        }
                    }
                }
                if let Some(rest) = lines.finish() {
                    let _ = to_relay.write_all(&rest).await;
                }
                let _ = to_relay.shutdown().await;
            })
        };

        // relay → filter → stdout, with our own messages between lines.
        let output = {
            let filter = filter.clone();
            tokio::spawn(async move {
                let mut stdout = crate::own_stdio::stdout();
                let mut buf = vec![0u8; 64 * 1024];
                let mut lines = Lines::default();
                let mut pieces = vec![];
                let mut queued: Vec<Vec<u8>> = vec![];
                loop {
                    let mut out: Vec<u8> = vec![];
                    tokio::select! {
                        read = from_relay.read(&mut buf) => {
                            let n = match read {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            lines.push(&buf[..n], &mut pieces);
                            for piece in pieces.drain(..) {
                                match piece {
                                    Piece::Raw(raw) => out.extend_from_slice(&raw),
                                    Piece::Line(line) => {
                                        out.extend_from_slice(&filter.from_server(&line));
                                        out.push(b'\n');
                                    }
                                }
                            }
                        }
                        Some(message) = ours.recv() => queued.push(message),
                    }
                    if lines.at_boundary() {
                        for message in queued.drain(..) {
                            out.extend_from_slice(&message);
                        }
                    }
                    if !out.is_empty()
                        && (stdout.write_all(&out).await.is_err() || stdout.flush().await.is_err())
                    {
                        // Dropping `from_relay` makes the relay's writes fail: it stops.
                        return;
                    }
                }
                let mut out = lines.finish().unwrap_or_default();
                while let Ok(message) = ours.try_recv() {
                    queued.push(message);
                }
                if out.is_empty() {
                    for message in queued {
                        out.extend_from_slice(&message);
                    }
                }
                let _ = stdout.write_all(&out).await;
                let _ = stdout.flush().await;
            })
        };

        let watch_task = tokio::spawn(watch(
            filter,
            config_dir.to_path_buf(),
            name.to_string(),
            ours_tx,
        ));
        (
            ClientIo {
                output,
                others: vec![stdin_task, watch_task],
                config_dir: config_dir.to_path_buf(),
            },
            RelaySide {
                input: relay_input,
                output: relay_output,
            },
        )
    }

    /// After the relay returned (and so dropped its ends): let the last of its output reach
    /// stdout, then stop.
    pub async fn finish(self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.output).await;
        for task in self.others {
            task.abort();
        }
        sessions::remove(&self.config_dir, std::process::id());
    }
}

/// The modification stamp of a file (`None` when it does not exist).
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Watch the config and pin files of `name`; put changed rules in force and send the client
/// the notices the filter returns.
async fn watch(
    filter: Arc<ToolFilter>,
    config_dir: PathBuf,
    name: String,
    notices: mpsc::UnboundedSender<Vec<u8>>,
) {
    let files = [
        config_dir.join(CONFIG_FILE),
        PinStore::in_config_dir(&config_dir).path(&name),
    ];
    let stamps = |files: &[PathBuf]| files.iter().map(|f| stamp(f)).collect::<Vec<_>>();
    let mut seen = stamps(&files);
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let now = stamps(&files);
        if now == seen {
            continue;
        }
        seen = now;
        let Some(rules) = load_rules(&config_dir, &name) else {
            continue;
        };
        for notice in filter.reload(rules) {
            if notices.send(with_newline(&notice)).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_at_newlines_and_long_ones_pass_raw() {
        let mut lines = Lines::default();
        let mut out = vec![];
        lines.push(b"{\"a\":1}\n{\"b\"", &mut out);
        assert!(matches!(&out[..], [Piece::Line(l)] if l == b"{\"a\":1}"));
        assert!(!lines.at_boundary());
        out.clear();
        lines.push(b":2}\r\n", &mut out);
        assert!(matches!(&out[..], [Piece::Line(l)] if l == b"{\"b\":2}\r"));
        assert!(lines.at_boundary());
        out.clear();
        lines.push(&vec![b'x'; MAX_MESSAGE + 1], &mut out);
        lines.push(b"yz\nnext\n", &mut out);
        let kinds: Vec<bool> = out.iter().map(|p| matches!(p, Piece::Raw(_))).collect();
        assert_eq!(kinds, [true, true, false]);
        assert_eq!(lines.finish(), None);
    }
}
