//! The stdio relay of `plugboard run`: spawn the server in its own process group with its
//! resolved environment (secrets included), copy the client's side (stdin/stdout through the
//! tool filter, [`super::client_io`]) → child and child → client byte for byte (or, for a
//! client of the other protocol era than the server's known one, through the bridge's era
//! translation), pass its stderr on line by line (redacted), forward SIGINT/SIGTERM/SIGHUP to
//! its group, and make sure nothing of the group outlives the relay.
//!
//! Ending: when our stdin closes, the child's stdin is closed and it gets [`STDIN_GRACE`] to
//! exit on its own, then SIGTERM, then SIGKILL (each to the whole group). A forwarded signal
//! gets [`SIGNAL_GRACE`] before SIGKILL. When the child has exited, whatever is left of its
//! group (grandchildren) is terminated too. On Linux the child also gets `PR_SET_PDEATHSIG`,
//! so it is killed even when `plugboard run` itself is killed with SIGKILL; and on Unix a tiny
//! watchdog (`/bin/sh`, in a group of its own, reading a pipe only we hold) terminates the rest
//! of the group when that pipe closes because `plugboard run` died without cleaning up.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::client_io::RelaySide;
use super::translate::{ServerSide, Translator};
use super::{RunError, bridge, diag, exit_code};
use crate::connect::handshake::{Handshake, HandshakeError, Wire};
use crate::connect::{Era, MAX_MESSAGE};
use crate::redact::Redactor;
use crate::resolve::StdioTarget;

/// After our stdin closed, how long the server gets to exit before SIGTERM.
pub const STDIN_GRACE: Duration = Duration::from_secs(2);
/// After SIGTERM (ours or a forwarded signal), how long before SIGKILL.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(3);
/// The longest stderr line passed on whole; longer ones are cut into pieces.
const MAX_STDERR_LINE: usize = 16 * 1024;

/// Where to cut an overlong stderr line: after its last space or tab, so that a secret (which
/// holds none) is redacted whole rather than in two pieces; a line with no space in its second
/// half is cut at the end, and what the two pieces of a secret cut there share with it is caught
/// by the redactor's fragment rule.
fn line_cut(pending: &[u8]) -> usize {
    pending
        .iter()
        .rposition(|b| *b == b' ' || *b == b'\t')
        .filter(|at| *at >= pending.len() / 2)
        .map_or(pending.len(), |at| at + 1)
}

#[cfg(unix)]
fn signal_group(pgid: u32, signal: i32) {
    // SAFETY: a plain syscall on the process group created for the child.
    unsafe {
        libc::killpg(pgid as libc::pid_t, signal);
    }
}

#[cfg(unix)]
fn group_alive(pgid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::killpg(pgid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn signal_group(_pgid: u32, _signal: i32) {}

#[cfg(not(unix))]
fn group_alive(_pgid: u32) -> bool {
    false
}

#[cfg(unix)]
const SIGTERM: i32 = libc::SIGTERM;
#[cfg(unix)]
const SIGKILL: i32 = libc::SIGKILL;
#[cfg(not(unix))]
const SIGTERM: i32 = 15;
#[cfg(not(unix))]
const SIGKILL: i32 = 9;

/// What happened that the main loop reacts to.
enum Event {
    StdinClosed,
    StdoutBroken,
    Signal(i32),
}

/// How the client's messages reach the server.
enum Mode {
    /// Byte for byte; these bytes (the first line, already read) go first.
    Bytes(Vec<u8>),
    /// Through the era translation; this was the client's first message.
    Translate(serde_json::Value),
}

/// Read the client's first line and decide: a client of the era the server is known to speak
/// gets the byte relay (its line goes first), one of the other era the translating relay.
async fn first_message<R>(stdin: &mut BufReader<R>, server_era: Era) -> Mode
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut line = Vec::new();
    let read = (&mut *stdin)
        .take(MAX_MESSAGE as u64 + 1)
        .read_until(b'\n', &mut line)
        .await;
    if read.is_err() || line.len() > MAX_MESSAGE {
        return Mode::Bytes(line);
    }
    match serde_json::from_slice::<serde_json::Value>(line.trim_ascii()) {
        Ok(first) if first.is_object() && bridge::client_hello(&first).era != server_era => {
            Mode::Translate(first)
        }
        _ => Mode::Bytes(line),
    }
}

/// The client → child and child → client, byte for byte (`first` before the rest of the
/// client's input), until the child's stdout ends.
async fn byte_relay(
    mut stdin: BufReader<DuplexStream>,
    mut out: DuplexStream,
    first: Vec<u8>,
    mut child_stdin: tokio::process::ChildStdin,
    mut child_stdout: tokio::process::ChildStdout,
    events_tx: mpsc::Sender<Event>,
) {
    // stdin → child. On EOF (or a write error: the child closed its stdin) report it.
    let (stdin_data_tx, mut stdin_data) = mpsc::channel::<Vec<u8>>(16);
    {
        let events_tx = events_tx.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            if !first.is_empty() && stdin_data_tx.send(first).await.is_err() {
                return;
            }
            loop {
                match stdin.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if stdin_data_tx.send(buf[..n].to_vec()).await.is_err() {
                            break;
                        }
                    }
                }
            }
            drop(stdin_data_tx);
            let _ = events_tx.send(Event::StdinClosed).await;
        });
    }
    tokio::spawn(async move {
        let mut pipe = Some(&mut child_stdin);
        while let Some(chunk) = stdin_data.recv().await {
            let Some(open) = pipe.as_mut() else {
                continue;
            };
            if open.write_all(&chunk).await.is_err() || open.flush().await.is_err() {
                // The server closed its stdin; keep draining ours.
                pipe = None;
            }
        }
        // Our stdin ended: close the server's.
        drop(child_stdin);
    });

    // child → client, byte for byte, flushed as it comes.
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match child_stdout.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.write_all(&buf[..n]).await.is_err() || out.flush().await.is_err() {
                    let _ = events_tx.send(Event::StdoutBroken).await;
                    break;
                }
            }
        }
    }
    let _ = out.flush().await;
}

/// The server's stdin and stdout.
struct ChildIo {
    stdin: tokio::process::ChildStdin,
    stdout: tokio::process::ChildStdout,
}

/// The translating relay: the handshake with the server in its era (with the client's
/// identity), then the bridge's relay over the server's stdio, until one side ends; then the
/// main loop hears `StdinClosed`.
async fn translating_relay(
    name: &str,
    stdin: BufReader<DuplexStream>,
    mut out: DuplexStream,
    first: serde_json::Value,
    child: ChildIo,
    server_era: Era,
    redactor: &Redactor,
    events_tx: mpsc::Sender<Event>,
) {
    let (tx, incoming) = mpsc::channel(64);
    bridge::spawn_line_reader(stdin, tx);
    let monitor = crate::connect::Monitor::new();
    let mut transport = crate::connect::stdio::StdioTransport::new(
        child.stdin,
        child.stdout,
        MAX_MESSAGE,
        monitor.clone(),
    );
    let hello = bridge::client_hello(&first);
    let watch = transport.stdin_handle();
    let mut steps = |_| {};
    let shake = Handshake {
        transport: &mut transport,
        hello: &hello.config,
        wire: Wire::Stdio(&watch),
        steps: &mut steps,
        legacy_version: hello.legacy_version.clone(),
    };
    let negotiated = match server_era {
        // Over stdio a wrong remembered era is probed again on the same process.
        Era::Legacy => shake.legacy(true).await.map_err(|e| {
            e.err().unwrap_or(HandshakeError::Closed {
                during: "initialize",
            })
        }),
        _ => shake.probe(Some(server_era)).await,
    };
    match negotiated {
        Ok(negotiated) => {
            let server = ServerSide {
                era: negotiated.era,
                version: negotiated.protocol_version.to_string(),
                info: serde_json::to_value(&negotiated.peer_info).unwrap_or_default(),
            };
            let translator = Translator::new(hello.era, server, &hello.json);
            let transport = crate::connect::handshake::Handshaken(transport);
            bridge::relay(
                name, transport, translator, first, incoming, monitor, redactor, false, out,
            )
            .await;
        }
        Err(err) => {
            let detail = redactor.redact(&err.to_string());
            diag(redactor, name, &detail);
            if let Some(id) = first.get("id").filter(|_| first.get("method").is_some()) {
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32603,
                    "message": format!("plugboard could not reach the server: {detail}"),
                }});
                let _ = out.write_all(format!("{answer}\n").as_bytes()).await;
                let _ = out.flush().await;
            }
        }
    }
    let _ = events_tx.send(Event::StdinClosed).await;
}

/// Relay `target` on the client's side (this process's stdio, through the tool filter) until
/// it exits; returns its exit code. `known` is
/// the server's era from its last test: a client of the other era is carried across (the
/// translating relay); otherwise (the same era, or not known) the bytes pass as they are.
pub async fn relay(
    name: &str,
    target: &StdioTarget,
    redactor: Redactor,
    known: Option<Era>,
    client: RelaySide,
) -> Result<i32, RunError> {
    let mut cmd = Command::new(&target.program);
    cmd.args(&target.args)
        .env_clear()
        .envs(target.child_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &target.cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    // Kept until the spawn returns: the child binds itself to its ruleset before exec.
    let sandbox = target
        .sandbox
        .as_ref()
        .map(plugboard_sandbox::prepare)
        .transpose()
        .map_err(|e| RunError::Spawn {
            command: target.command.clone(),
            detail: redactor.redact(&e.to_string()),
        })?;
    #[cfg(target_os = "linux")]
    // SAFETY: only async-signal-safe calls (prctl, getppid, keyctl, landlock) between fork and
    // exec.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            plugboard_base::kernel_keyring::leave_user_keyring();
            Ok(())
        });
        if let Some(sandbox) = &sandbox {
            cmd.pre_exec(sandbox.child_setup());
        }
    }
    // Our handlers are in place before the server starts: a signal that arrives as soon as it
    // runs is forwarded, not the default death of this process (the server would then die of
    // PR_SET_PDEATHSIG's SIGKILL instead of the signal it was sent).
    #[cfg(unix)]
    let signals: Vec<(i32, tokio::signal::unix::Signal)> = {
        use tokio::signal::unix::{SignalKind, signal};
        [
            SignalKind::interrupt(),
            SignalKind::terminate(),
            SignalKind::hangup(),
        ]
        .into_iter()
        .filter_map(|kind| Some((kind.as_raw_value(), signal(kind).ok()?)))
        .collect()
    };
    let mut child = cmd.spawn().map_err(|e| RunError::Spawn {
        command: target.command.clone(),
        detail: redactor.redact(&e.to_string()),
    })?;
    let pgid = child.id().unwrap_or(0);
    let mut watchdog = start_watchdog(pgid);
    let child_stdin = child.stdin.take().expect("stdin is piped");
    let child_stdout = child.stdout.take().expect("stdout is piped");
    let mut child_stderr = child.stderr.take().expect("stderr is piped");

    let (events_tx, mut events) = mpsc::channel::<Event>(8);

    // The data path, a task of its own (so signals and the child's exit are heard while the
    // client's first line is awaited): bytes as they come, or (a client of one era, a server
    // known to speak the other) a translating relay. It ends when the child's stdout does.
    let stdout_task = {
        let events_tx = events_tx.clone();
        let redactor = redactor.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            let RelaySide { input, output } = client;
            let mut stdin = BufReader::with_capacity(64 * 1024, input);
            let mode = match known {
                Some(server_era) => first_message(&mut stdin, server_era).await,
                None => Mode::Bytes(vec![]),
            };
            match mode {
                Mode::Bytes(first) => {
                    byte_relay(stdin, output, first, child_stdin, child_stdout, events_tx).await
                }
                Mode::Translate(first) => {
                    let server_era = known.expect("translation needs the server's era");
                    let io = ChildIo {
                        stdin: child_stdin,
                        stdout: child_stdout,
                    };
                    translating_relay(
                        &name, stdin, output, first, io, server_era, &redactor, events_tx,
                    )
                    .await
                }
            }
        })
    };

    // child stderr → our stderr, line by line, redacted.
    let stderr_task = {
        let redactor = redactor.clone();
        tokio::spawn(async move {
            let mut err = tokio::io::stderr();
            let mut pending: Vec<u8> = vec![];
            let mut buf = vec![0u8; 8192];
            loop {
                let n = match child_stderr.read(&mut buf).await {
                    Ok(0) | Err(_) => 0,
                    Ok(n) => n,
                };
                if n == 0 {
                    if !pending.is_empty() {
                        let text = redactor.redact(&String::from_utf8_lossy(&pending));
                        let _ = err.write_all(format!("{text}\n").as_bytes()).await;
                    }
                    break;
                }
                pending.extend_from_slice(&buf[..n]);
                while let Some(pos) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=pos).collect();
                    let text = redactor.redact(&String::from_utf8_lossy(&line));
                    let _ = err.write_all(text.as_bytes()).await;
                }
                if pending.len() > MAX_STDERR_LINE {
                    let piece: Vec<u8> = pending.drain(..line_cut(&pending)).collect();
                    let text = redactor.redact(&String::from_utf8_lossy(&piece));
                    let _ = err.write_all(format!("{text}\n").as_bytes()).await;
                }
            }
            let _ = err.flush().await;
        })
    };

    #[cfg(unix)]
    for (raw, mut stream) in signals {
        let events_tx = events_tx.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if events_tx.send(Event::Signal(raw)).await.is_err() {
                    break;
                }
            }
        });
    }
    drop(events_tx);

    // The escalation plan: at `term_at` SIGTERM the group, at `kill_at` SIGKILL it.
    let mut term_at: Option<Instant> = None;
    let mut kill_at: Option<Instant> = None;
    let far = || Instant::now() + Duration::from_secs(3600 * 24);
    let status = loop {
        let term_deadline = term_at.unwrap_or_else(far);
        let kill_deadline = kill_at.unwrap_or_else(far);
        tokio::select! {
            status = child.wait() => break status,
            Some(event) = events.recv() => match event {
                Event::StdinClosed => {
                    if term_at.is_none() && kill_at.is_none() {
                        term_at = Some(Instant::now() + STDIN_GRACE);
                    }
                }
                Event::StdoutBroken => {
                    diag(&redactor, name, "the client closed standard output; stopping the server");
                    signal_group(pgid, SIGTERM);
                    term_at = None;
                    kill_at.get_or_insert(Instant::now() + SIGNAL_GRACE);
                }
                Event::Signal(sig) => {
                    signal_group(pgid, sig);
                    term_at = None;
                    kill_at.get_or_insert(Instant::now() + SIGNAL_GRACE);
                }
            },
            _ = tokio::time::sleep_until(term_deadline), if term_at.is_some() => {
                signal_group(pgid, SIGTERM);
                term_at = None;
                kill_at = Some(Instant::now() + SIGNAL_GRACE);
            }
            _ = tokio::time::sleep_until(kill_deadline), if kill_at.is_some() => {
                signal_group(pgid, SIGKILL);
                kill_at = None;
            }
        }
    };
    let code = match status {
        Ok(status) => exit_code(status),
        Err(e) => {
            diag(
                &redactor,
                name,
                &format!("could not wait for the server: {e}"),
            );
            1
        }
    };

    // The server is gone. Let its last output through, then end whatever it left behind
    // (grandchildren holding the pipes open), then finish the copies.
    let mut stdout_task = stdout_task;
    if tokio::time::timeout(Duration::from_millis(200), &mut stdout_task)
        .await
        .is_err()
    {
        end_group(pgid).await;
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut stdout_task).await;
    } else {
        end_group(pgid).await;
    }
    stdout_task.abort();
    let _ = tokio::time::timeout(Duration::from_millis(500), stderr_task).await;
    // We cleaned up ourselves: the watchdog must not signal a group id that may be reused.
    if let Some(dog) = watchdog.as_mut() {
        let _ = dog.kill().await;
    }
    Ok(code)
}

/// A watchdog for the group `pgid`: `/bin/sh` in its own process group, blocked reading a pipe
/// whose other end only this process holds. When this process dies, the pipe closes and the
/// watchdog sends the group SIGTERM, then SIGKILL. `None` when it cannot be started (the
/// parent-death signal still covers the server itself).
#[cfg(unix)]
fn start_watchdog(pgid: u32) -> Option<tokio::process::Child> {
    if pgid == 0 {
        return None;
    }
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("read _ignored; kill -TERM -$1 2>/dev/null; sleep 1; kill -KILL -$1 2>/dev/null")
        .arg("plugboard-run-watchdog")
        .arg(pgid.to_string())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(false);
    cmd.spawn().ok()
}

#[cfg(not(unix))]
fn start_watchdog(_pgid: u32) -> Option<tokio::process::Child> {
    None
}

/// SIGTERM what is left of the group, then SIGKILL it after a short wait.
async fn end_group(pgid: u32) {
    if pgid == 0 || !group_alive(pgid) {
        return;
    }
    signal_group(pgid, SIGTERM);
    let deadline = Instant::now() + Duration::from_millis(500);
    while group_alive(pgid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if group_alive(pgid) {
        signal_group(pgid, SIGKILL);
    }
}
