//! Servers that Plugboard runs on this machine but speaks to over HTTP: a registry package
//! whose transport is streamable HTTP or SSE at a loopback URL (`http://127.0.0.1:{port}/mcp`).
//! Before a test (or `plugboard run`) connects, [`LocalServer::start`] starts its process (own
//! process group, the stdio base environment, secrets substituted in memory) and waits until
//! its port accepts connections; [`LocalServer::stop`] ends the whole group afterwards. A
//! process that exits or never listens fails the start with its stderr, classified.
//!
//! The port is the seam: a program that listens there first would be handed the server's
//! credentials. A port already taken before the start is refused, and on Linux the listener
//! that answers must belong to the started process group (a container runtime's own proxy
//! process, which Plugboard cannot see into, is the exception).

use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use crate::config::ServerConfig;
use crate::connect::Monitor;
use crate::connect::process::{ChildProcess, spawn};
use crate::probe::{ErrorKind, Failure, Stage, StageReport, TestResult};
use crate::redact::Redactor;
use crate::resolve::resolve_launch;
use crate::secrets::SecretStore;

/// How long a started package may take to listen (a first `npx`/`uvx` run downloads it).
pub const START_TIMEOUT: Duration = Duration::from_secs(90);

/// Why a local server could not be started, with its stderr.
#[derive(Debug)]
pub struct StartError {
    pub failure: Failure,
    pub stderr: String,
}

impl From<Failure> for StartError {
    fn from(failure: Failure) -> Self {
        StartError {
            failure,
            stderr: String::new(),
        }
    }
}

/// A started local server.
pub struct LocalServer {
    process: ChildProcess,
    /// Held open: some servers exit when their stdin closes.
    stdin: Option<tokio::process::ChildStdin>,
    redactor: Redactor,
}

fn host_port(server: &ServerConfig) -> Option<(String, u16)> {
    let url = url::Url::parse(server.url.as_deref()?).ok()?;
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let host = if host.eq_ignore_ascii_case("localhost") {
        "127.0.0.1".to_owned()
    } else {
        host
    };
    Some((host, url.port_or_known_default()?))
}

/// Whether something already listens on `host:port` (binding it fails: in use).
fn port_taken(host: &str, port: u16) -> bool {
    matches!(
        std::net::TcpListener::bind((host, port)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse
    )
}

/// `docker`/`podman`: the port is published by the runtime's own process, not the group's.
fn container_runtime(command: &str) -> bool {
    let base = std::path::Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    matches!(base, "docker" | "podman")
}

/// Whether the socket listening on `port` belongs to a process of the group `pgid` (Linux:
/// the listening socket's inode in `/proc/net/tcp*`, held open by a member of the group).
/// Elsewhere, where this cannot be seen, `true`.
fn listener_in_group(port: u16, pgid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let inodes = listening_inodes(port);
        if inodes.is_empty() {
            return false;
        }
        group_members(pgid).into_iter().any(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                .filter_map(|link| {
                    let text = link.to_str()?;
                    text.strip_prefix("socket:[")?
                        .strip_suffix(']')?
                        .parse::<u64>()
                        .ok()
                })
                .any(|inode| inodes.contains(&inode))
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (port, pgid);
        true
    }
}

/// The inodes of the sockets listening on `port` (IPv4 and IPv6).
#[cfg(target_os = "linux")]
fn listening_inodes(port: u16) -> Vec<u64> {
    const LISTEN: &str = "0A";
    let mut inodes = vec![];
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if *state == LISTEN
                && local_port == Some(port)
                && let Ok(inode) = inode.parse()
            {
                inodes.push(inode);
            }
        }
    }
    inodes
}

/// The processes of group `pgid`.
#[cfg(target_os = "linux")]
fn group_members(pgid: u32) -> Vec<u32> {
    crate::connect::proc_table::processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid)
        .map(|p| p.pid)
        .collect()
}

impl LocalServer {
    /// Start the local process of `server` and wait (at most `limit`) for its port.
    pub async fn start(
        name: &str,
        server: &ServerConfig,
        secrets: &dyn SecretStore,
        limit: Duration,
    ) -> Result<LocalServer, StartError> {
        let (mut target, redactor) =
            resolve_launch(name, server, secrets).map_err(|e| StartError::from(e.failure()))?;
        let (host, port) = host_port(server).ok_or_else(|| {
            StartError::from(Failure::new(
                ErrorKind::Config,
                format!("`{name}` has no local URL with a port to wait for"),
                format!("fix its URL with `plugboard edit {name} --url http://127.0.0.1:PORT/mcp`"),
            ))
        })?;
        if port_taken(&host, port) {
            return Err(StartError::from(Failure::new(
                ErrorKind::Config,
                format!(
                    "another program already listens on {host}:{port}, where `{name}` should; \
                     Plugboard did not start `{name}` and sent nothing there"
                ),
                format!(
                    "stop the program that holds port {port}, or give `{name}` another port \
                     (reinstall it with another port setting)"
                ),
            )));
        }
        if let Some(plan) = &mut target.sandbox {
            plan.listen = Some(port);
        }
        let env = target.child_env();
        let spawned = spawn(
            &target.program,
            &target.args,
            &env,
            target.cwd.as_deref(),
            target.sandbox.as_ref(),
            Monitor::new(),
        )
        .map_err(|e| {
            StartError::from(Failure::new(
                ErrorKind::Spawn,
                format!("`{}` could not be started: {e}", target.command),
                "check the command with `plugboard doctor`",
            ))
        })?;
        let mut stdout = spawned.stdout;
        // Its stdout is not the protocol here: read and drop it so the process never blocks.
        tokio::spawn(async move {
            let mut sink = vec![0u8; 8192];
            while matches!(stdout.read(&mut sink).await, Ok(n) if n > 0) {}
        });
        let mut local = LocalServer {
            process: spawned.process,
            stdin: Some(spawned.stdin),
            redactor,
        };
        let started = Instant::now();
        loop {
            if let Some(exit) = local.process.exit_info() {
                let tail = local.stderr_tail().await;
                local.stop().await;
                return Err(StartError {
                    failure: Failure::new(
                        ErrorKind::Exited,
                        format!(
                            "`{}` {} before it listened on port {port}",
                            target.command,
                            exit.describe()
                        ),
                        "read its stderr below; `plugboard doctor` explains the usual causes",
                    ),
                    stderr: tail,
                });
            }
            let connect = tokio::net::TcpStream::connect((host.as_str(), port));
            if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(500), connect).await {
                if container_runtime(&target.command) || listener_in_group(port, local.pid()) {
                    return Ok(local);
                }
                local.stop().await;
                return Err(StartError::from(Failure::new(
                    ErrorKind::Config,
                    format!(
                        "the program listening on {host}:{port} is not the one Plugboard \
                         started for `{name}`; nothing was sent to it"
                    ),
                    format!("find and stop the program that holds port {port}, then test again"),
                )));
            }
            if started.elapsed() >= limit {
                let tail = local.stderr_tail().await;
                local.stop().await;
                return Err(StartError {
                    failure: Failure::new(
                        ErrorKind::Timeout,
                        format!(
                            "`{}` did not listen on {host}:{port} within {} s",
                            target.command,
                            limit.as_secs()
                        ),
                        "check that its port setting and its URL agree, or allow it more time with `--timeout`",
                    ),
                    stderr: tail,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Its stderr so far, redacted.
    pub async fn stderr_tail(&mut self) -> String {
        let tail = self.process.stderr_tail(40).await;
        self.redactor.redact(&tail)
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Stop it and everything it started.
    pub async fn stop(mut self) {
        self.stdin.take();
        self.process.shutdown().await;
    }
}

/// Test `server` after starting its local process (when it has one): the test's result, with
/// the process's stderr when the test failed without one of its own.
pub async fn test_with_local<F, Fut>(
    name: &str,
    server: &ServerConfig,
    secrets: &dyn SecretStore,
    timeout: Option<Duration>,
    test: F,
) -> TestResult
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = TestResult>,
{
    if server.launch.is_none() {
        return test().await;
    }
    let started = Instant::now();
    let limit = timeout.unwrap_or(START_TIMEOUT).min(START_TIMEOUT);
    match LocalServer::start(name, server, secrets, limit).await {
        Err(StartError { failure, stderr }) => {
            let mut result = TestResult::failed(
                server.transport,
                failure,
                vec![StageReport {
                    name: Stage::Connect,
                    ok: false,
                    ms: started.elapsed().as_millis() as u64,
                }],
            );
            if !stderr.is_empty() {
                result.stderr_tail = Some(stderr);
            }
            result
        }
        Ok(mut local) => {
            let mut result = test().await;
            if !result.ok && result.stderr_tail.is_none() {
                let tail = local.stderr_tail().await;
                if !tail.is_empty() {
                    result.stderr_tail = Some(tail);
                }
            }
            local.stop().await;
            result
        }
    }
}
