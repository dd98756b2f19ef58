//! A stdio server's process: spawned in its own process group with a small environment, its
//! stderr kept in a bounded ring buffer, its exit watched, and closed so that nothing survives
//! it (grandchildren included): close stdin, wait briefly, SIGTERM the group, wait, SIGKILL
//! the group. Dropping a [`ChildProcess`] without closing it kills the group at once.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};

use super::{ExitInfo, Monitor};

/// How much of the server's stderr is kept (the last bytes).
pub const STDERR_CAP: usize = 64 * 1024;
/// After stdin is closed, how long a well-behaved server gets to exit on its own.
pub const GRACE_AFTER_STDIN: Duration = Duration::from_millis(300);
/// After SIGTERM, how long the group gets before SIGKILL.
pub const GRACE_AFTER_TERM: Duration = Duration::from_millis(500);

/// The last [`STDERR_CAP`] bytes a process wrote to stderr.
#[derive(Default)]
pub struct StderrBuffer {
    bytes: Mutex<VecDeque<u8>>,
    /// Whether older bytes were dropped, so that the first line kept may be a piece of one
    /// (and of a secret in it, cut where the redactor no longer knows it).
    cut: std::sync::atomic::AtomicBool,
}

impl StderrBuffer {
    fn push(&self, chunk: &[u8]) {
        use std::sync::atomic::Ordering;
        let mut bytes = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        if chunk.len() >= STDERR_CAP {
            self.cut.store(true, Ordering::Relaxed);
            bytes.clear();
            bytes.extend(&chunk[chunk.len() - STDERR_CAP..]);
            return;
        }
        let overflow = (bytes.len() + chunk.len()).saturating_sub(STDERR_CAP);
        if overflow > 0 {
            self.cut.store(true, Ordering::Relaxed);
        }
        bytes.drain(..overflow);
        bytes.extend(chunk);
    }

    /// Whether nothing was written at all.
    pub fn is_empty(&self) -> bool {
        self.bytes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// The last `max_lines` lines (lossy UTF-8, trailing blank lines dropped).
    pub fn tail(&self, max_lines: usize) -> String {
        let bytes = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let mut text = text.as_str();
        if self.cut.load(std::sync::atomic::Ordering::Relaxed) {
            // The first line is a piece of a longer one: dropped whole.
            text = text.split_once('\n').map_or("", |(_, rest)| rest);
        }
        let lines: Vec<&str> = text.trim_end().lines().collect();
        let start = lines.len().saturating_sub(max_lines);
        lines[start..].join("\n")
    }
}

/// The parts of a freshly spawned server that the transport needs.
pub struct Spawned {
    pub process: ChildProcess,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

/// A running stdio server process (the leader of its own process group).
pub struct ChildProcess {
    pid: u32,
    stderr: Arc<StderrBuffer>,
    stderr_done: watch::Receiver<bool>,
    exit: watch::Receiver<Option<ExitInfo>>,
    kill: Option<oneshot::Sender<()>>,
    guard: GroupGuard,
    /// What the kernel enforces on it, when it was started in a sandbox.
    sandbox: Option<plugboard_sandbox::Enforcement>,
}

/// Kills the whole process group when dropped while armed.
struct GroupGuard {
    pgid: Option<u32>,
}

impl GroupGuard {
    fn kill(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, signal);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill(Signal::Kill);
    }
}

#[derive(Clone, Copy, Debug)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(pgid: u32, signal: Signal) {
    let sig = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: plain syscall on the process group this module created for the child.
    unsafe {
        libc::killpg(pgid as libc::pid_t, sig);
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: u32, _signal: Signal) {}

/// Whether any process of the group still exists (zombies included).
#[cfg(unix)]
fn group_alive(pgid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::killpg(pgid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn group_alive(_pgid: u32) -> bool {
    false
}

/// Spawn `program` with exactly `env` (nothing inherited), in `cwd`, in a new process group,
/// with stdin/stdout piped and stderr captured, inside `sandbox` when there is one.
pub fn spawn(
    program: &Path,
    args: &[String],
    env: &[(String, OsString)],
    cwd: Option<&Path>,
    sandbox: Option<&plugboard_sandbox::Plan>,
    monitor: Arc<Monitor>,
) -> std::io::Result<Spawned> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    {
        // CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW
        cmd.creation_flags(0x0000_0200 | 0x0800_0000);
    }
    // Kept until the spawn returns: the child binds itself to its ruleset before exec.
    let prepared = sandbox.map(plugboard_sandbox::prepare).transpose()?;
    #[cfg(target_os = "linux")]
    // SAFETY: the hooks make only async-signal-safe system calls.
    unsafe {
        // The server never possesses the passphrase `plugboard secrets unlock` holds.
        cmd.pre_exec(|| {
            plugboard_base::kernel_keyring::leave_user_keyring();
            Ok(())
        });
        if let Some(prepared) = &prepared {
            cmd.pre_exec(prepared.child_setup());
        }
    }
    let mut child = cmd.spawn()?;
    let sandbox = prepared.map(|p| p.enforcement);
    let pid = child.id().unwrap_or(0);
    let guard = GroupGuard {
        pgid: (cfg!(unix) && pid != 0).then_some(pid),
    };
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");

    let buffer = Arc::new(StderrBuffer::default());
    let (stderr_tx, stderr_done) = watch::channel(false);
    {
        let buffer = buffer.clone();
        tokio::spawn(async move {
            let mut chunk = vec![0u8; 8192];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buffer.push(&chunk[..n]),
                }
            }
            let _ = stderr_tx.send(true);
        });
    }

    let (exit_tx, exit) = watch::channel(None);
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = kill_rx => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        let info = match status {
            Ok(status) => ExitInfo::from_status(status),
            Err(_) => ExitInfo::Unknown,
        };
        monitor.record_exit(info.clone());
        let _ = exit_tx.send(Some(info));
    });

    Ok(Spawned {
        process: ChildProcess {
            pid,
            stderr: buffer,
            stderr_done,
            exit,
            kill: Some(kill_tx),
            guard,
            sandbox,
        },
        stdin,
        stdout,
    })
}

impl ChildProcess {
    /// The process id (and process group id) of the server.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// What the kernel enforces on the process, when it was started in a sandbox.
    pub fn sandbox(&self) -> Option<&plugboard_sandbox::Enforcement> {
        self.sandbox.as_ref()
    }

    /// What the process wrote to stderr so far.
    pub fn stderr_buffer(&self) -> Arc<StderrBuffer> {
        self.stderr.clone()
    }

    /// How the process ended, if it has.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.exit.borrow().clone()
    }

    /// Wait up to `limit` for the process to end.
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<ExitInfo> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(info)) => info.clone(),
            _ => self.exit_info(),
        }
    }

    /// The last `max_lines` lines of stderr, after giving the reader a moment to catch up
    /// when the process has ended.
    pub async fn stderr_tail(&mut self, max_lines: usize) -> String {
        if self.exit_info().is_some() {
            let mut done = self.stderr_done.clone();
            let _ = tokio::time::timeout(Duration::from_millis(200), done.wait_for(|d| *d)).await;
        }
        self.stderr.tail(max_lines)
    }

    /// Stop the server and everything it started. The caller has closed stdin already (or
    /// the server ignores it): wait up to [`GRACE_AFTER_STDIN`] for a clean exit, SIGTERM the
    /// group, wait up to [`GRACE_AFTER_TERM`], SIGKILL the group.
    pub async fn shutdown(&mut self) {
        self.wait_exit(GRACE_AFTER_STDIN).await;
        let pgid = self.guard.pgid;
        let alive = |exited: bool| match pgid {
            Some(pgid) => group_alive(pgid),
            None => !exited,
        };
        if alive(self.exit_info().is_some()) {
            self.guard.kill(Signal::Term);
            let deadline = tokio::time::Instant::now() + GRACE_AFTER_TERM;
            loop {
                let exited = self.exit_info().is_some();
                if !alive(exited) || tokio::time::Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        if alive(self.exit_info().is_some()) {
            self.guard.kill(Signal::Kill);
        }
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
        self.wait_exit(Duration::from_millis(500)).await;
        // The group is gone (or only unreaped zombies of another parent are left): from here
        // on its id may be reused, so the drop guard must not signal it any more.
        if self.exit_info().is_some() {
            self.guard.pgid = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_buffer_keeps_the_last_bytes_and_lines() {
        let buffer = StderrBuffer::default();
        for i in 0..10_000 {
            buffer.push(format!("line {i}\n").as_bytes());
        }
        let tail = buffer.tail(3);
        assert_eq!(tail, "line 9997\nline 9998\nline 9999");
        assert!(buffer.bytes.lock().unwrap().len() <= STDERR_CAP);
        buffer.push(&vec![b'x'; STDERR_CAP * 2]);
        assert_eq!(buffer.bytes.lock().unwrap().len(), STDERR_CAP);
    }

    #[test]
    fn a_line_cut_by_the_ring_is_not_shown() {
        let buffer = StderrBuffer::default();
        buffer.push(b"secret=abcdefghijklmnopqrstuvwxyz\n");
        assert!(buffer.tail(5).starts_with("secret="));
        // 34 + filler + 5 bytes: the ring keeps from byte 20 on, inside the secret's line.
        let mut filler = vec![b'.'; STDERR_CAP - 20];
        filler.push(b'\n');
        buffer.push(&filler);
        buffer.push(b"last\n");
        let tail = buffer.tail(5);
        assert!(tail.ends_with("\nlast"), "{}", &tail[tail.len() - 10..]);
        assert!(tail.starts_with("..."), "the cut line was shown");
        assert!(
            !tail.contains("stuvwxyz"),
            "a piece of the secret was shown"
        );
    }
}
