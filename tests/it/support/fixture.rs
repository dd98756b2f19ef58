//! Fixture MCP servers for the probe tests: the `mcp-fixture` binary (built on first use),
//! HTTP/SSE instances on ephemeral loopback ports that are killed when their guard drops, and
//! checks that no process of a test is left behind.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The `mcp-fixture` binary next to the test binary's target dir, built once per test run
/// (`cargo build -p mcp-fixture`, a no-op when it is up to date).
pub fn fixture_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test exe");
        // target/debug/deps/it-xxxx → target/debug
        let dir = exe
            .parent()
            .and_then(|p| p.parent())
            .expect("target dir")
            .to_path_buf();
        let bin = dir.join(format!("mcp-fixture{}", std::env::consts::EXE_SUFFIX));
        if std::env::var_os("PLUGBOARD_SKIP_FIXTURE_BUILD").is_none() || !bin.exists() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--quiet", "-p", "mcp-fixture"])
                .current_dir(super::repo_root())
                .status()
                .expect("run cargo build -p mcp-fixture");
            assert!(status.success(), "cargo build -p mcp-fixture failed");
        }
        assert!(bin.exists(), "{} is missing", bin.display());
        bin
    })
    .clone()
}

/// A unique marker to put on a fixture's command line (`--name <marker>`), so a test can
/// find every process it started.
pub fn marker(test: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "pbtest-{test}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether `pid` is gone: no such process, or only a zombie left (which holds no resources
/// and whose parent is not us).
#[cfg(target_os = "linux")]
pub fn pid_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            // The state follows the `(comm)` field, which may contain spaces.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            matches!(state, Some("Z" | "X"))
        }
    }
}

/// Wait up to `limit` for `pid` to be gone.
pub fn wait_gone(pid: u32, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        if pid_gone(pid) {
            return true;
        }
        if started.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Live (non-zombie) processes whose command line contains `marker`.
#[cfg(target_os = "linux")]
pub fn live_with_marker(marker: &str) -> Vec<u32> {
    let mut found = vec![];
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if super::contains_bytes(&cmdline, marker.as_bytes()) && !pid_gone(pid) {
            found.push(pid);
        }
    }
    found
}

/// Assert that no live process carries `marker` (waiting briefly for stragglers to die).
#[track_caller]
pub fn assert_no_process_left(marker: &str) {
    let started = Instant::now();
    loop {
        let live = live_with_marker(marker);
        if live.is_empty() {
            return;
        }
        if started.elapsed() > Duration::from_secs(2) {
            panic!("processes left behind with marker {marker}: {live:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An HTTP or SSE fixture server on an ephemeral loopback port, killed on drop.
pub struct HttpFixture {
    child: Child,
    pub port: u16,
    pub marker: String,
    /// Where the fixture's stderr goes (it logs one `mcp-fixture: METHOD URI` line per
    /// request), kept for [`HttpFixture::requests`].
    log: tempfile::NamedTempFile,
}

impl HttpFixture {
    /// Start `mcp-fixture --transport <transport> --port 0 <args>` and wait for `PORT=`.
    pub fn start(transport: &str, args: &[&str]) -> HttpFixture {
        Self::start_with_env(transport, args, &[])
    }

    pub fn start_with_env(transport: &str, args: &[&str], env: &[(&str, &str)]) -> HttpFixture {
        let marker = marker(transport);
        let log = tempfile::NamedTempFile::new().expect("fixture log");
        let mut child = Command::new(fixture_bin())
            .args(["--transport", transport, "--port", "0", "--name", &marker])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log.reopen().expect("fixture log"))
            .spawn()
            .expect("spawn mcp-fixture");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            while let Some(Ok(line)) = lines.next() {
                if let Some(port) = line.strip_prefix("PORT=") {
                    let _ = tx.send(port.trim().parse::<u16>().ok());
                    break;
                }
            }
            // Keep draining so the fixture never blocks on a full pipe.
            for _ in lines {}
        });
        let port = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Some(port)) => port,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mcp-fixture did not print PORT=");
            }
        };
        HttpFixture {
            child,
            port,
            marker,
            log,
        }
    }

    /// The requests served so far, as `METHOD URI` (from the fixture's log).
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(self.log.path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("mcp-fixture: "))
            // `METHOD URI`: the start-up line ("serving http on …") has more words.
            .filter(|l| l.split(' ').count() == 2)
            .map(str::to_owned)
            .collect()
    }

    /// The client addresses requests came from: one per connection.
    pub fn connections(&self) -> std::collections::BTreeSet<String> {
        std::fs::read_to_string(self.log.path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("mcp-fixture: peer "))
            .map(str::to_owned)
            .collect()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port on which nothing listens (bound, then closed).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

/// A stdio server config that runs the fixture with `--name <marker>` plus `args`.
pub fn stdio_config(
    marker: &str,
    args: &[&str],
    timeout_secs: u64,
) -> plugboard::config::ServerConfig {
    let mut all = vec!["--name".to_owned(), marker.to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let mut server =
        plugboard::config::ServerConfig::stdio(fixture_bin().to_string_lossy().into_owned(), all);
    server.timeout = Some(timeout_secs);
    server
}

/// A remote server config for `url`.
pub fn remote_config(
    transport: plugboard::config::TransportKind,
    url: &str,
    timeout_secs: u64,
) -> plugboard::config::ServerConfig {
    let mut server = plugboard::config::ServerConfig::remote(transport, url);
    server.timeout = Some(timeout_secs);
    server
}

/// The outcome of one probe run: the result, its JSON text, how long it took, and the stages
/// the progress callback saw.
pub struct Probed {
    pub result: plugboard::probe::TestResult,
    pub json: String,
    pub elapsed: Duration,
    pub events: Vec<plugboard::probe::StageEvent>,
}

impl Probed {
    pub fn kind(&self) -> Option<&'static str> {
        self.result.error_kind.map(|k| k.as_str())
    }

    /// Assert the error kind, showing the whole result when it differs.
    #[track_caller]
    pub fn assert_kind(&self, kind: &str) {
        assert_eq!(self.kind(), Some(kind), "result:\n{}", self.pretty());
    }

    #[track_caller]
    pub fn assert_ok(&self) {
        assert!(self.result.ok, "expected success:\n{}", self.pretty());
    }

    pub fn pretty(&self) -> String {
        serde_json::to_string_pretty(&self.result).unwrap_or_default()
    }

    pub fn stage_names(&self) -> Vec<&'static str> {
        self.result.stages.iter().map(|s| s.name.as_str()).collect()
    }
}

/// Resolve and test `server` (named `name`) against `secrets`.
pub async fn probe(
    name: &str,
    server: &plugboard::config::ServerConfig,
    secrets: &plugboard::secrets::MemoryStore,
    credential_probe: Option<plugboard::catalog::CredentialProbe>,
) -> Probed {
    let started = Instant::now();
    let mut events = vec![];
    let options = plugboard::probe::TestOptions {
        probe: credential_probe,
        ..Default::default()
    };
    let result =
        plugboard::probe::test_config(name, server, secrets, &options, |e| events.push(e)).await;
    let elapsed = started.elapsed();
    let json = serde_json::to_string(&result).expect("result serializes");
    if std::env::var_os("PLUGBOARD_SHOW_RESULTS").is_some() {
        let mut shown = serde_json::to_value(&result).expect("result serializes");
        if let Some(tools) = shown.get_mut("tools").and_then(|t| t.as_array_mut()) {
            tools.truncate(2);
        }
        eprintln!(
            "--- {name} ({elapsed:?}):\n{}",
            serde_json::to_string_pretty(&shown).unwrap()
        );
    }
    Probed {
        result,
        json,
        elapsed,
        events,
    }
}

/// The catalog-style probe for the fixture's `check_credentials` tool.
pub fn check_credentials_probe() -> plugboard::catalog::CredentialProbe {
    plugboard::catalog::CredentialProbe {
        tool: "check_credentials".into(),
        arguments: serde_json::json!({}),
        auth_error: Some(plugboard::catalog::AuthErrorMatch {
            pointer: "/error".into(),
            values: vec!["invalid_auth".into()],
        }),
    }
}

/// A memory store with `pairs` in namespace `ns`.
pub fn store_with(ns: &str, pairs: &[(&str, &str)]) -> plugboard::secrets::MemoryStore {
    use plugboard::secrets::{SecretKey, SecretStore, Sensitive};
    let store = plugboard::secrets::MemoryStore::new();
    for (k, v) in pairs {
        store
            .set(&SecretKey::new(ns, *k), &Sensitive::new((*v).to_owned()))
            .expect("memory store");
    }
    store
}
