//! `harness`: the timing harness behind `bench/run`. Everything that is compared runs in this
//! one invocation, interleaved round by round (the order rotates each round), so machine noise
//! hits every client alike. Prints one table (median, min, max, ratios) and writes the same as
//! JSON.
//!
//!   harness [--root DIR] [--runs N] [--warmup N] [--only stdio,http,health,catalog,registry,launches,app,size]
//!           [--out FILE] [--variant NAME=PATH]... [--clients floor,plugboard,...]
//!           [--servers mcp-fixture,server-everything] [--app PATH]
//!
//! `--variant` adds another plugboard binary (say, the build before a change) as client
//! `plugboard@NAME`, interleaved with the others: how before/after numbers are measured.
//! `--app` starts that app binary in the app section (say, `/usr/bin/plugboard-app` of the
//! installed package) instead of the one built in src-tauri/target.
//!
//! It expects what bench/run builds and installs: target/cli/plugboard (scripts/build-cli),
//! target/release/mcp-fixture,
//! target/bench-tools/release/floor, bench/node_modules (MCP Inspector), tests/peers
//! (server-everything) and .tools/peers-venv (the Python SDK).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
    fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
}

#[repr(C)]
#[derive(Default)]
struct Timeval {
    sec: i64,
    usec: i64,
}

/// `struct rusage` of Linux on 64-bit targets.
#[repr(C)]
#[derive(Default)]
struct Rusage {
    utime: Timeval,
    stime: Timeval,
    rest: [i64; 14],
}

/// Reap `child`: its exit code (-1 for a signal) and the CPU time (user + system) it and the
/// children it reaped used.
fn reap(child: &Child) -> std::io::Result<(i32, Duration)> {
    reap_with_rss(child).map(|(code, cpu, _)| (code, cpu))
}

/// [`reap`], plus the peak resident set size (KiB) of the child (or of its largest reaped
/// descendant).
fn reap_with_rss(child: &Child) -> std::io::Result<(i32, Duration, i64)> {
    let mut status = 0;
    let mut usage = Rusage::default();
    loop {
        // SAFETY: our own child, reaped exactly once here (std's `wait` is never called).
        let rc = unsafe { wait4(child.id() as i32, &mut status, 0, &mut usage) };
        if rc >= 0 {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let code = if status & 0x7f == 0 {
        (status >> 8) & 0xff
    } else {
        -1
    };
    let cpu = Duration::from_micros(
        (usage.utime.sec * 1_000_000
            + usage.utime.usec
            + usage.stime.sec * 1_000_000
            + usage.stime.usec) as u64,
    );
    // `ru_maxrss`, the first field after the two times.
    Ok((code, cpu, usage.rest[0]))
}

/// Timed rounds that started while the machine was still busy after waiting.
static NOISY_ROUNDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Longest any single measured command may run before it is killed (and the run fails).
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

struct Options {
    root: PathBuf,
    runs: usize,
    warmup: usize,
    only: Option<Vec<String>>,
    out: PathBuf,
    /// Extra plugboard binaries (`NAME=PATH`), measured as client `plugboard@NAME`.
    variants: Vec<(String, PathBuf)>,
    clients: Option<Vec<String>>,
    servers: Option<Vec<String>>,
    /// The app binary the app section starts (default: the release build, else the debug one).
    app: Option<PathBuf>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        root: std::env::current_dir().map_err(|e| e.to_string())?,
        runs: 10,
        warmup: 2,
        only: None,
        out: PathBuf::new(),
        variants: vec![],
        clients: None,
        servers: None,
        app: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--root" => options.root = PathBuf::from(value()?),
            "--runs" => options.runs = value()?.parse().map_err(|_| "--runs: a number")?,
            "--warmup" => options.warmup = value()?.parse().map_err(|_| "--warmup: a number")?,
            "--only" => options.only = Some(value()?.split(',').map(str::to_owned).collect()),
            "--out" => options.out = PathBuf::from(value()?),
            "--variant" => {
                let v = value()?;
                let (name, path) = v.split_once('=').ok_or("--variant NAME=PATH")?;
                options
                    .variants
                    .push((name.to_owned(), PathBuf::from(path)));
            }
            "--clients" => options.clients = Some(value()?.split(',').map(str::to_owned).collect()),
            "--servers" => options.servers = Some(value()?.split(',').map(str::to_owned).collect()),
            "--app" => options.app = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if options.out.as_os_str().is_empty() {
        options.out = options.root.join("target/bench/results.json");
    }
    Ok(options)
}

impl Options {
    fn wants(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == section))
    }
}

// ------------------------------------------------------------------ measuring commands

/// A command line to time, and a word its standard output must contain on success.
#[derive(Clone)]
struct Cmd {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    expect: &'static str,
    /// Exit codes counted as success (`plugboard health` exits 1 when some servers fail).
    ok_codes: Vec<i32>,
}

impl Cmd {
    fn new(program: impl Into<PathBuf>, args: &[&str], expect: &'static str) -> Cmd {
        Cmd {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: vec![],
            expect,
            ok_codes: vec![0],
        }
    }

    fn env(mut self, key: &str, value: impl AsRef<Path>) -> Cmd {
        self.env
            .push((key.to_owned(), value.as_ref().display().to_string()));
        self
    }

    fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Run once; the wall time from spawn to reaped exit. With `check`, stdout is captured and
    /// must contain `expect`; otherwise it goes to /dev/null.
    fn time(&self, check: bool) -> Result<(Duration, String), String> {
        self.measure(check).map(|(wall, _, out)| (wall, out))
    }

    /// Like [`Cmd::time`], plus the CPU time of the process and its reaped children.
    fn measure(&self, check: bool) -> Result<(Duration, Duration, String), String> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(if check { Stdio::piped() } else { Stdio::null() })
            .stderr(if check { Stdio::piped() } else { Stdio::null() });
        let started = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: {e}", self.display()))?;
        let watchdog = Watchdog::arm(child.id(), COMMAND_LIMIT);
        let mut stdout = String::new();
        let mut stderr = String::new();
        if check {
            let mut err_pipe = child.stderr.take().expect("piped");
            let reader = std::thread::spawn(move || {
                let mut text = String::new();
                let _ = err_pipe.read_to_string(&mut text);
                text
            });
            let _ = child
                .stdout
                .take()
                .expect("piped")
                .read_to_string(&mut stdout);
            stderr = reader.join().unwrap_or_default();
        }
        let (code, cpu) = reap(&child).map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        let killed = watchdog.disarm();
        if killed {
            return Err(format!(
                "{} ran longer than {COMMAND_LIMIT:?}",
                self.display()
            ));
        }
        if !self.ok_codes.contains(&code) {
            return Err(format!(
                "{} exited with code {code}\nstdout: {}\nstderr: {}",
                self.display(),
                tail(&stdout, 800),
                tail(&stderr, 800)
            ));
        }
        if check && !stdout.contains(self.expect) {
            return Err(format!(
                "{}: stdout lacks `{}`\nstdout: {}\nstderr: {}",
                self.display(),
                self.expect,
                tail(&stdout, 800),
                tail(&stderr, 800)
            ));
        }
        Ok((elapsed, cpu, stdout))
    }
}

fn tail(text: &str, max: usize) -> &str {
    let start = text.len().saturating_sub(max);
    let start = (start..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    &text[start..]
}

/// Kills a process that runs past its limit.
struct Watchdog {
    cancel: mpsc::Sender<()>,
    fired: mpsc::Receiver<bool>,
}

impl Watchdog {
    fn arm(pid: u32, limit: Duration) -> Watchdog {
        let (cancel, cancelled) = mpsc::channel::<()>();
        let (fire, fired) = mpsc::channel();
        std::thread::spawn(move || {
            let timed_out = matches!(
                cancelled.recv_timeout(limit),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            if timed_out {
                // SAFETY: the harness's own, not yet reaped child.
                unsafe {
                    kill(pid as i32, 9);
                }
            }
            let _ = fire.send(timed_out);
        });
        Watchdog { cancel, fired }
    }

    fn disarm(self) -> bool {
        let _ = self.cancel.send(());
        self.fired.recv().unwrap_or(false)
    }
}

/// One measured thing with its samples.
struct Row {
    section: &'static str,
    subject: String,
    client: String,
    samples: Vec<Duration>,
    /// CPU time (user + system) of each sample, where measured.
    cpu: Vec<Duration>,
    /// Rows that are not times: sizes in MiB.
    mib: Vec<f64>,
    note: String,
}

impl Row {
    fn cpu_median_ms(&self) -> Option<f64> {
        let mut ms: Vec<f64> = self.cpu.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        match ms.len() {
            0 => None,
            n if n % 2 == 1 => Some(ms[n / 2]),
            n => Some((ms[n / 2 - 1] + ms[n / 2]) / 2.0),
        }
    }

    fn sorted_ms(&self) -> Vec<f64> {
        let mut ms: Vec<f64> = self.samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        ms
    }

    fn median_ms(&self) -> Option<f64> {
        let ms = self.sorted_ms();
        match ms.len() {
            0 => None,
            n if n % 2 == 1 => Some(ms[n / 2]),
            n => Some((ms[n / 2 - 1] + ms[n / 2]) / 2.0),
        }
    }
}

/// Run every command of `cmds` `warmup + runs` times, interleaved: each round runs each
/// command once, starting one further along the list each round. Warm-up rounds check the
/// output and are not counted.
type Samples = (Vec<Duration>, Vec<Duration>);

/// Share of CPU time (0..1) that was busy over `window`, from /proc/stat.
fn cpu_busy(window: Duration) -> f64 {
    fn read() -> Option<(u64, u64)> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let line = text.lines().next()?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
        Some((v.iter().sum(), idle))
    }
    let (Some((t0, i0)), _) = (read(), std::thread::sleep(window)) else {
        return 0.0;
    };
    let Some((t1, i1)) = read() else { return 0.0 };
    let total = t1.saturating_sub(t0).max(1);
    1.0 - i1.saturating_sub(i0) as f64 / total as f64
}

/// Before a round: wait (up to 2 minutes) until the machine is quiet, so other people's
/// builds do not land in the samples. Returns false when it never got quiet.
fn wait_for_quiet() -> bool {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut warned = false;
    while Instant::now() < deadline {
        let busy = cpu_busy(Duration::from_millis(150));
        if busy < QUIET_BUSY {
            return true;
        }
        if !warned {
            eprint!(" [waiting for a quiet machine: {:.0}% busy]", busy * 100.0);
            warned = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// CPU share (over both cores) above which the machine counts as busy.
const QUIET_BUSY: f64 = 0.15;

fn interleave(cmds: &[(String, Cmd)], warmup: usize, runs: usize) -> Result<Vec<Samples>, String> {
    let mut samples: Vec<Samples> = vec![(vec![], vec![]); cmds.len()];
    for round in 0..warmup + runs {
        let check = round < warmup.max(1);
        if round >= warmup && !wait_for_quiet() {
            NOISY_ROUNDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        for k in 0..cmds.len() {
            let i = (round + k) % cmds.len();
            let (label, cmd) = &cmds[i];
            let (elapsed, cpu, _) = cmd.measure(check).map_err(|e| format!("{label}: {e}"))?;
            if round >= warmup {
                samples[i].0.push(elapsed);
                samples[i].1.push(cpu);
            }
        }
        eprint!("\r  round {}/{}", round + 1, warmup + runs);
    }
    eprintln!();
    Ok(samples)
}

// ------------------------------------------------------------------ servers

struct Paths {
    root: PathBuf,
    plugboard: PathBuf,
    fixture: PathBuf,
    floor: PathBuf,
    inspector: PathBuf,
    python: PathBuf,
    python_client: PathBuf,
    python_server: PathBuf,
    everything: PathBuf,
    scratch: PathBuf,
}

impl Paths {
    fn new(root: &Path) -> Result<Paths, String> {
        let paths = Paths {
            root: root.to_path_buf(),
            plugboard: root.join("target/cli/plugboard"),
            fixture: root.join("target/release/mcp-fixture"),
            floor: root.join("target/bench-tools/release/floor"),
            inspector: root.join("bench/node_modules/.bin/mcp-inspector"),
            python: root.join(".tools/peers-venv/bin/python"),
            python_client: root.join("bench/python_client.py"),
            python_server: root.join("tests/peers/python_server.py"),
            everything: root.join(
                "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ),
            scratch: root.join("target/bench/scratch"),
        };
        for p in [
            &paths.plugboard,
            &paths.fixture,
            &paths.floor,
            &paths.inspector,
            &paths.python,
            &paths.everything,
        ] {
            if !p.exists() {
                return Err(format!("{} is missing: run bench/run", p.display()));
            }
        }
        let _ = std::fs::remove_dir_all(&paths.scratch);
        std::fs::create_dir_all(&paths.scratch).map_err(|e| e.to_string())?;
        Ok(paths)
    }

    fn s(p: &Path) -> String {
        p.display().to_string()
    }

    /// A fresh, empty Plugboard home (nothing of the user's is read or written).
    fn home(&self, name: &str) -> PathBuf {
        let dir = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }
}

/// The four clients against one server, given as a stdio command or an HTTP URL. A modern
/// (2026-07-28) server gets the floor of its era, and neither the MCP Inspector nor the Python
/// client script (both speak `initialize` only).
fn clients(
    paths: &Paths,
    options: &Options,
    target: &Target,
    expect: &'static str,
    modern: bool,
) -> Vec<(String, Cmd)> {
    let home = paths.home("plugboard-home");
    let catalog = paths.scratch.join("inspector-catalog.json");
    let era: &[&str] = if modern { &["--era", "modern"] } else { &[] };
    let (floor, plugboard, inspector, python) = match target {
        Target::Stdio(command) => {
            let c: Vec<&str> = command.iter().map(String::as_str).collect();
            let mut floor = era.to_vec();
            floor.extend(["stdio", "--"]);
            floor.extend(&c);
            let mut plugboard = vec!["test", "--json", "--stdio", "--"];
            plugboard.extend(&c);
            let mut inspector = vec!["--cli"];
            inspector.extend(&c);
            inspector.extend(["--method", "tools/list"]);
            let client = Paths::s(&paths.python_client);
            let mut python = vec![client.as_str(), "stdio"];
            python.extend(&c);
            (
                Cmd::new(&paths.floor, &floor, expect),
                Cmd::new(&paths.plugboard, &plugboard, expect),
                Cmd::new(&paths.inspector, &inspector, expect),
                Cmd::new(&paths.python, &python, expect),
            )
        }
        Target::Url(url) => {
            let client = Paths::s(&paths.python_client);
            let mut floor = era.to_vec();
            floor.extend(["http", url.as_str()]);
            (
                Cmd::new(&paths.floor, &floor, expect),
                Cmd::new(&paths.plugboard, &["test", "--json", "--url", url], expect),
                Cmd::new(
                    &paths.inspector,
                    &[
                        "--cli",
                        url,
                        "--transport",
                        "http",
                        "--method",
                        "tools/list",
                    ],
                    expect,
                ),
                Cmd::new(&paths.python, &[client.as_str(), "http", url], expect),
            )
        }
    };
    let plugboard = plugboard.env("PLUGBOARD_HOME", &home);
    let mut all = vec![
        ("floor".to_owned(), floor),
        ("plugboard".to_owned(), plugboard.clone()),
    ];
    for (name, path) in &options.variants {
        let mut variant = plugboard.clone();
        variant.program = path.clone();
        all.push((format!("plugboard@{name}"), variant));
    }
    if !modern {
        all.push((
            "inspector".into(),
            inspector.env("MCP_CATALOG_PATH", &catalog),
        ));
        all.push(("python-sdk".into(), python));
    }
    all.retain(|(name, _)| {
        options.clients.as_ref().is_none_or(|keep| {
            keep.iter()
                .any(|k| k == name || (k == "plugboard" && name.starts_with("plugboard@")))
        })
    });
    all
}

enum Target {
    Stdio(Vec<String>),
    Url(String),
}

/// A server the harness started, killed (by its pid) when dropped.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn wait_for_port(port: u16, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("nothing listens on port {port} after {limit:?}"))
}

/// Start `command` (stdout piped) and read the `PORT=<n>` line it prints once it listens.
fn start_printing_port(mut command: Command, what: &str) -> Result<(Background, String), String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{what}: {e}"))?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let bg = Background(child);
    let port = line
        .trim()
        .strip_prefix("PORT=")
        .ok_or(format!("{what} printed {line:?}"))?
        .to_owned();
    Ok((bg, port))
}

fn start_fixture_http(paths: &Paths, extra: &[&str]) -> Result<(Background, String), String> {
    let mut command = Command::new(&paths.fixture);
    command
        .args(["--transport", "http", "--port", "0"])
        .args(extra)
        .stdin(Stdio::null());
    let (bg, port) = start_printing_port(command, "mcp-fixture")?;
    Ok((bg, format!("http://127.0.0.1:{port}/mcp")))
}

fn start_everything_http(paths: &Paths) -> Result<(Background, String), String> {
    let port = free_port();
    let child = Command::new("node")
        .arg(&paths.everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("server-everything: {e}"))?;
    let bg = Background(child);
    wait_for_port(port, Duration::from_secs(30))?;
    Ok((bg, format!("http://127.0.0.1:{port}/mcp")))
}

fn start_python_http(paths: &Paths) -> Result<(Background, String), String> {
    let port = free_port();
    let child = Command::new(&paths.python)
        .arg(&paths.python_server)
        .args(["streamable-http", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("python server: {e}"))?;
    let bg = Background(child);
    wait_for_port(port, Duration::from_secs(60))?;
    Ok((bg, format!("http://127.0.0.1:{port}/mcp")))
}

// ------------------------------------------------------------------ sections

/// A registry fixture (`target/release/registry-fixture ARGS`) and its base URL. Its stdin
/// stays open: it exits when that closes.
fn start_registry(paths: &Paths, args: &[&str]) -> Result<(Background, String), String> {
    let mut command = Command::new(paths.root.join("target/release/registry-fixture"));
    command.args(args).stdin(Stdio::piped());
    let (bg, port) = start_printing_port(command, "registry-fixture")?;
    Ok((bg, format!("http://127.0.0.1:{port}")))
}

/// `POST path body` to a fixture at `url`.
fn post(url: &str, path: &str, body: &str) -> Result<(), String> {
    use std::io::Write;
    let addr = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    if answer.starts_with("HTTP/1.1 200") {
        Ok(())
    } else {
        Err(format!("POST {path}: {}", tail(&answer, 200)))
    }
}

/// `plugboard registry sync` (with `args`) in `home` against `url`: wall time and peak RSS.
fn timed_sync(
    paths: &Paths,
    home: &Path,
    url: &str,
    args: &[&str],
) -> Result<(Duration, f64), String> {
    let mut all = vec!["registry", "sync", "--json"];
    all.extend(args);
    let started = Instant::now();
    let mut child = Command::new(&paths.plugboard)
        .args(&all)
        .env("PLUGBOARD_HOME", home)
        .env("PLUGBOARD_REGISTRY_URL", url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
    let (code, _, rss) = reap_with_rss(&child).map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    if code != 0 || !out.contains("\"ok\": true") {
        return Err(format!(
            "registry sync failed ({code}): {}",
            tail(&out, 600)
        ));
    }
    Ok((wall, rss as f64 / 1024.0))
}

/// Registry sync from the local registry fixture: the real snapshot (1,108 servers) and a
/// 50,000-server registry generated from it, each a full pull into an empty cache (time and
/// peak memory), then incremental syncs of 100 changed rows; and the marketplace's search over
/// 50,000 entries (`cargo bench --bench market`): the first search (index build) and each
/// keystroke's p50 / p99.
fn registry_section(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let (_snapshot, snapshot_url) = start_registry(paths, &[])?;
    let (_generated, generated_url) = start_registry(paths, &["--generate", "50000"])?;
    let row = |subject: String, samples: Vec<Duration>, mib: Vec<f64>, note: String| Row {
        section: "registry",
        subject,
        client: "plugboard".into(),
        samples,
        cpu: vec![],
        mib,
        note,
    };
    for (label, url, runs) in [
        ("snapshot, 1,108 servers", &snapshot_url, options.runs),
        (
            "generated, 50,000 servers",
            &generated_url,
            options.runs.clamp(1, 5),
        ),
    ] {
        eprintln!("[bench] registry: {runs} full syncs of the {label}");
        let (mut times, mut peaks) = (vec![], vec![]);
        for i in 0..runs + 1 {
            wait_for_quiet();
            let home = paths.home("registry-sync");
            let (wall, peak) = timed_sync(paths, &home, url, &["--full"])?;
            if i > 0 {
                times.push(wall);
                peaks.push(peak);
            }
        }
        rows.push(row(
            format!("full sync, {label}: time"),
            times,
            vec![],
            "empty cache → every latest row, 100 per page, written to the cache".into(),
        ));
        rows.push(row(
            format!("full sync, {label}: peak memory (RSS)"),
            vec![],
            peaks,
            "ru_maxrss of the plugboard process".into(),
        ));
    }
    eprintln!(
        "[bench] registry: {} incremental syncs of 100 changed rows (50,000 servers)",
        options.runs
    );
    let home = paths.home("registry-incremental");
    timed_sync(paths, &home, &generated_url, &["--full"])?;
    let (mut times, mut peaks) = (vec![], vec![]);
    for _ in 0..options.runs {
        post(&generated_url, "/fixture/touch", "{\"count\": 100}")?;
        wait_for_quiet();
        let (wall, peak) = timed_sync(paths, &home, &generated_url, &[])?;
        times.push(wall);
        peaks.push(peak);
    }
    rows.push(row(
        "incremental sync, 100 changed of 50,000: time".into(),
        times,
        vec![],
        "updated_since → 100 new versions, merged into the cache".into(),
    ));
    rows.push(row(
        "incremental sync, 100 changed of 50,000: peak memory (RSS)".into(),
        vec![],
        peaks,
        "ru_maxrss of the plugboard process".into(),
    ));

    eprintln!("[bench] registry: cargo bench --bench market (search over 50,000 entries)");
    let out = Command::new("cargo")
        .args(["bench", "--quiet", "--bench", "market"])
        .current_dir(&paths.root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cargo bench: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: Value = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or(format!(
            "no JSON from the market bench:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ))?;
    let ms = |key: &str| Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e3);
    let us = |key: &str| Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e6);
    let items = v["items"].as_u64().unwrap_or(0);
    rows.push(row(
        format!("load the cached listing ({} servers)", v["servers"]),
        vec![ms("load_ms")],
        vec![],
        "the JSON Lines cache → brief records in memory".into(),
    ));
    rows.push(row(
        format!("first search over {items} entries (index build)"),
        vec![ms("first_search_ms")],
        vec![],
        "market built, then `database`: builds the word index".into(),
    ));
    rows.push(row(
        format!("keystroke search over {items} entries: p50"),
        vec![us("p50_us")],
        vec![],
        format!(
            "{} keystroke queries × 10 (every prefix of 40 words, word pairs)",
            v["queries"]
        ),
    ));
    rows.push(row(
        format!("keystroke search over {items} entries: p99"),
        vec![us("p99_us")],
        vec![],
        format!("max {:.0} µs", v["max_us"].as_f64().unwrap_or(0.0)),
    ));
    rows.push(row(
        format!("market of {items} entries: peak memory (RSS)"),
        vec![],
        vec![v["peak_rss_mib"].as_f64().unwrap_or(0.0)],
        "the whole bench process (generation included)".into(),
    ));
    Ok(())
}

/// One server of a connection section: its name, where it is, a tool it must list, and
/// whether it speaks the modern era.
type Subject = (String, Target, &'static str, bool);

fn connection_section(
    section: &'static str,
    subjects: Vec<Subject>,
    paths: &Paths,
    options: &Options,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let mut cmds = vec![];
    let mut labels = vec![];
    let subjects: Vec<_> = subjects
        .into_iter()
        .filter(|(s, _, _, _)| {
            options.servers.as_ref().is_none_or(|keep| {
                keep.iter()
                    .any(|k| s == k || s.split(' ').next() == Some(k.as_str()))
            })
        })
        .collect();
    for (subject, target, expect, modern) in &subjects {
        for (client, cmd) in clients(paths, options, target, expect, *modern) {
            labels.push((subject.clone(), client.clone()));
            cmds.push((format!("{section} {subject} {client}"), cmd));
        }
    }
    eprintln!(
        "[bench] {section}: {} commands ({} servers), {} warm-up + {} timed rounds",
        cmds.len(),
        subjects.len(),
        options.warmup,
        options.runs
    );
    let samples = interleave(&cmds, options.warmup, options.runs)?;
    for ((subject, client), (samples, cpu)) in labels.into_iter().zip(samples) {
        rows.push(Row {
            section,
            subject,
            client,
            samples,
            cpu,
            mib: vec![],
            note: String::new(),
        });
    }
    Ok(())
}

fn stdio_section(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let fixture = Paths::s(&paths.fixture);
    let python = Paths::s(&paths.python);
    let python_server = Paths::s(&paths.python_server);
    let subjects = vec![
        (
            "mcp-fixture".to_owned(),
            Target::Stdio(vec![fixture.clone()]),
            "check_credentials",
            false,
        ),
        (
            "mcp-fixture (modern)".to_owned(),
            Target::Stdio(vec![fixture, "--era".into(), "modern".into()]),
            "check_credentials",
            true,
        ),
        (
            "server-everything".to_owned(),
            Target::Stdio(vec![
                "node".into(),
                Paths::s(&paths.everything),
                "stdio".into(),
            ]),
            "get-sum",
            false,
        ),
        (
            "python-sdk-2.3 (modern)".to_owned(),
            Target::Stdio(vec![python, python_server, "stdio".into()]),
            "shout",
            true,
        ),
    ];
    connection_section("stdio", subjects, paths, options, rows)
}

fn http_section(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let (_fixture, fixture_url) = start_fixture_http(paths, &[])?;
    let (_modern, modern_url) = start_fixture_http(paths, &["--era", "modern"])?;
    let (_everything, everything_url) = start_everything_http(paths)?;
    let (_python, python_url) = start_python_http(paths)?;
    let subjects = vec![
        (
            "mcp-fixture".to_owned(),
            Target::Url(fixture_url),
            "check_credentials",
            false,
        ),
        (
            "mcp-fixture (modern)".to_owned(),
            Target::Url(modern_url),
            "check_credentials",
            true,
        ),
        (
            "server-everything".to_owned(),
            Target::Url(everything_url),
            "get-sum",
            false,
        ),
        (
            "python-sdk-2.3 (modern)".to_owned(),
            Target::Url(python_url),
            "shout",
            true,
        ),
    ];
    connection_section("http", subjects, paths, options, rows)
}

/// 100 configured fixture servers: fast, slow-starting and hanging (each with its own timeout).
fn health_section(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    const FAST: usize = 70;
    const SLOW: usize = 20;
    const HANGING: usize = 10;
    const HANG_TIMEOUT_S: u64 = 2;
    let home = paths.home("health-home");
    let fixture = Paths::s(&paths.fixture);
    let mut names = vec![];
    for i in 0..FAST + SLOW + HANGING {
        let (name, extra, timeout): (String, Vec<String>, u64) = if i < FAST {
            (format!("fast-{i:02}"), vec![], 30)
        } else if i < FAST + SLOW {
            // slow starts spread over 100..1050 ms
            let ms = 100 + 50 * (i - FAST);
            (
                format!("slow-{ms:04}ms"),
                vec!["--misbehave".into(), format!("slow-start={ms}")],
                30,
            )
        } else {
            (
                format!("hang-{:02}", i - FAST - SLOW),
                vec!["--misbehave".into(), "never-answer".into()],
                HANG_TIMEOUT_S,
            )
        };
        let timeout = timeout.to_string();
        let mut args = vec![
            "add",
            name.as_str(),
            "--stdio",
            "--no-test",
            "--timeout",
            timeout.as_str(),
            "--",
            fixture.as_str(),
        ];
        args.extend(extra.iter().map(String::as_str));
        let out = Command::new(&paths.plugboard)
            .args(&args)
            .env("PLUGBOARD_HOME", &home)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "plugboard add {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        names.push(name);
    }
    let health = |parallel: Option<&str>| {
        let mut args = vec!["health", "--json"];
        if let Some(p) = parallel {
            args.extend(["--parallel", p]);
        }
        let mut cmd = Cmd::new(&paths.plugboard, &args, "\"hang-09\"").env("PLUGBOARD_HOME", &home);
        cmd.ok_codes = vec![1]; // the hanging servers fail, as they should
        cmd
    };
    let cmds = vec![
        ("health default".to_owned(), health(None)),
        ("health --parallel 100".to_owned(), health(Some("100"))),
    ];
    eprintln!(
        "[bench] health: {} servers ({FAST} fast, {SLOW} slow-start 100–1050 ms, {HANGING} never \
         answering with a {HANG_TIMEOUT_S} s timeout)",
        names.len()
    );
    // Check the verdicts once: every fast and slow server ok, every hanging one a timeout.
    let (_, out) = cmds[0].1.time(true).map_err(|e| format!("health: {e}"))?;
    let verdicts: Value = serde_json::from_str(&out).map_err(|e| format!("health JSON: {e}"))?;
    let verdicts = verdicts.as_array().cloned().unwrap_or_default();
    let ok = verdicts.iter().filter(|r| r["ok"] == true).count();
    let timeouts = verdicts
        .iter()
        .filter(|r| r["error_kind"] == "timeout")
        .count();
    if ok != FAST + SLOW || timeouts != HANGING {
        return Err(format!(
            "health: expected {} ok and {HANGING} timeouts, got {ok} ok and {timeouts} timeouts",
            FAST + SLOW
        ));
    }
    let runs = options.runs;
    let samples = interleave(&cmds, options.warmup.min(1), runs)?;
    let default_parallelism = "16";
    for ((label, _), (samples, cpu)) in cmds.iter().zip(samples) {
        rows.push(Row {
            section: "health",
            subject: "100 servers".into(),
            client: format!("plugboard {label}"),
            samples,
            cpu,
            mib: vec![],
            note: if label == "health default" {
                format!("parallelism {default_parallelism}")
            } else {
                String::new()
            },
        });
    }
    // Every server alone, one after the other: the slowest single probe, and the sum.
    eprintln!("[bench] health: each server alone, sequentially (the sum)");
    let mut singles = vec![];
    for name in &names {
        let mut cmd = Cmd::new(&paths.plugboard, &["test", name, "--json"], "\"ok\"")
            .env("PLUGBOARD_HOME", &home);
        cmd.ok_codes = vec![0, 1];
        let (elapsed, _) = cmd.time(false)?;
        singles.push((name.clone(), elapsed));
    }
    let (slowest_name, slowest) = singles
        .iter()
        .max_by_key(|(_, d)| *d)
        .cloned()
        .expect("100 servers");
    let sum: Duration = singles.iter().map(|(_, d)| *d).sum();
    rows.push(Row {
        section: "health",
        subject: "100 servers".into(),
        client: "slowest single probe".into(),
        samples: vec![slowest],
        cpu: vec![],
        mib: vec![],
        note: format!("`plugboard test {slowest_name}`, once"),
    });
    rows.push(Row {
        section: "health",
        subject: "100 servers".into(),
        client: "sum of single probes".into(),
        samples: vec![sum],
        cpu: vec![],
        mib: vec![],
        note: "each `plugboard test NAME` once, sequentially".into(),
    });
    Ok(())
}

/// The divan benchmark of catalog load and search (benches/catalog.rs), run through cargo.
fn catalog_section(paths: &Paths, rows: &mut Vec<Row>) -> Result<(), String> {
    eprintln!("[bench] catalog: cargo bench --bench catalog");
    let out = Command::new("cargo")
        .args(["bench", "--quiet", "--bench", "catalog"])
        .current_dir(&paths.root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cargo bench: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "cargo bench --bench catalog failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let parsed = parse_divan(&text);
    if parsed.is_empty() {
        return Err(format!("no results in the divan output:\n{text}"));
    }
    for (name, fastest, slowest, median, samples) in parsed {
        rows.push(Row {
            section: "catalog",
            subject: name,
            client: "Catalog (divan)".into(),
            samples: vec![],
            cpu: vec![],
            mib: vec![],
            note: format!("{samples} samples"),
        });
        let row = rows.last_mut().expect("pushed");
        row.samples = vec![fastest, median, slowest];
    }
    Ok(())
}

/// Rows of divan's table: (path, fastest, slowest, median, samples). Group rows without
/// numbers give their name as a prefix to the rows below them.
fn parse_divan(text: &str) -> Vec<(String, Duration, Duration, Duration, u64)> {
    let mut out = vec![];
    let mut stack: Vec<(usize, String)> = vec![];
    for line in text.lines() {
        // The tree drawing before a name (`│  ├─ `) gives the depth; the columns follow it.
        let is_tree = |c: char| matches!(c, ' ' | '├' | '╰' | '─' | '│');
        let Some((body_start, _)) = line.char_indices().find(|(_, c)| !is_tree(*c)) else {
            continue;
        };
        let depth = line[..body_start].chars().count();
        if line.contains("fastest") {
            stack.clear();
            continue;
        }
        let cols: Vec<&str> = line[body_start..].split('│').collect();
        let words: Vec<&str> = cols[0].split_whitespace().collect();
        // A row with numbers: the name (empty for an empty-string argument), then `fastest`.
        let numeric = cols.len() >= 6 && words.len() >= 2;
        let name_words = if numeric {
            &words[..words.len() - 2]
        } else {
            &words[..]
        };
        let name = match name_words.join(" ") {
            name if name.is_empty() && numeric => "(empty)".to_owned(),
            name => name,
        };
        if name.is_empty() {
            continue;
        }
        while stack.last().is_some_and(|(d, _)| *d >= depth) {
            stack.pop();
        }
        if numeric {
            let value = |s: &str| parse_duration(s.split_whitespace().collect::<Vec<_>>());
            let fastest = parse_duration(words[words.len() - 2..].to_vec());
            let (Some(fastest), Some(slowest), Some(median)) =
                (fastest, value(cols[1]), value(cols[2]))
            else {
                continue;
            };
            let samples = cols[4].trim().parse().unwrap_or(0);
            let path = stack
                .iter()
                .map(|(_, n)| n.as_str())
                .chain(std::iter::once(name.as_str()))
                .collect::<Vec<_>>()
                .join(" / ");
            out.push((path, fastest, slowest, median, samples));
        } else {
            stack.push((depth, name));
        }
    }
    out
}

fn parse_duration(words: Vec<&str>) -> Option<Duration> {
    let [value, unit] = words[..] else {
        return None;
    };
    let value: f64 = value.parse().ok()?;
    let ns = match unit {
        "ns" => value,
        "µs" | "us" => value * 1e3,
        "ms" => value * 1e6,
        "s" => value * 1e9,
        _ => return None,
    };
    Some(Duration::from_nanos(ns.round() as u64))
}

fn size_section(paths: &Paths, rows: &mut Vec<Row>) {
    let bytes = std::fs::metadata(&paths.plugboard)
        .map(|m| m.len())
        .unwrap_or(0);
    rows.push(Row {
        section: "size",
        subject: "plugboard binary".into(),
        client: "release build".into(),
        samples: vec![],
        cpu: vec![],
        mib: vec![bytes as f64 / 1024.0 / 1024.0],
        note: format!("{bytes} bytes, target/cli/plugboard"),
    });
}

/// The desktop app through bench/app-probe (under Xvfb): cold start to the UI's
/// `marketplace-ready` mark (process start → the marketplace's first render with catalog data,
/// from the app's startup trace) and to the window being mapped; memory (PSS and RSS summed over
/// the app and its WebKit processes) after the marketplace is ready and after 50 installed
/// servers are shown.
fn app_section(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    if !ui_sets_a_mark(&paths.root) {
        return Err(
            "the UI sets no first-render mark (performance.mark(\"marketplace-ready\"))".into(),
        );
    }
    let (bin, build) = match &options.app {
        // An installed app (say /usr/bin/plugboard-app) is a release build; the floor app of
        // that build is looked for under src-tauri/target/<build>.
        Some(app) if app.exists() => {
            let debug = app.components().any(|c| c.as_os_str() == "debug");
            (app.clone(), if debug { "debug" } else { "release" }.to_owned())
        }
        Some(app) => return Err(format!("no app binary at {}", app.display())),
        None => ["release", "debug"]
            .iter()
            .map(|b| (paths.root.join(format!("src-tauri/target/{b}/plugboard-app")), b.to_string()))
            .find(|(p, _)| p.exists())
            .ok_or("no app binary (src-tauri/target/{release,debug}/plugboard-app): build it with `scripts/build-app`")?,
    };
    for tool in ["xvfb-run", "xwininfo"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!(
                "{tool} is missing (apt-get install xvfb x11-utils, or scripts/app-setup)"
            ));
        }
    }
    let runs = options.runs;
    eprintln!("[bench] app: {runs} cold starts of the {build} build under Xvfb");
    let ms = |v: &Value, key: &str| Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e3);
    let mib = |v: &Value, key: &str| v[key].as_f64().unwrap_or(0.0) / 1024.0;
    let (mut ready, mut window, mut render) = (vec![], vec![], vec![]);
    let (mut rss, mut pss, mut installed_rss, mut installed_pss) = (vec![], vec![], vec![], vec![]);
    let mut processes = String::new();
    let mut per_process = String::new();
    let mut web = String::new();
    let mut shown = (0, 0);
    for i in 0..runs + 1 {
        wait_for_quiet();
        let out = Command::new(paths.root.join("bench/app-probe"))
            .arg(&bin)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("bench/app-probe: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .unwrap_or("");
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("bench/app-probe printed {text:?}: {e}"))?;
        if v["ok"] != true {
            return Err(format!("bench/app-probe: {}", v["error"]));
        }
        if i == 0 {
            continue; // the first start warms the page cache
        }
        ready.push(ms(&v, "ready_ms"));
        window.push(ms(&v, "window_ms"));
        render.push(ms(&v, "installed_render_ms"));
        rss.push(mib(&v, "rss_kib"));
        pss.push(mib(&v, "pss_kib"));
        installed_rss.push(mib(&v, "installed_rss_kib"));
        installed_pss.push(mib(&v, "installed_pss_kib"));
        shown = (
            v["cards"].as_u64().unwrap_or(0),
            v["installed"].as_u64().unwrap_or(0),
        );
        processes = format!(
            "{} processes: {}",
            v["processes"],
            v["names"].as_str().unwrap_or("")
        );
        per_process = v["per_process"].as_str().unwrap_or("").to_owned();
        web = v["web"].as_str().unwrap_or("").to_owned();
    }
    let (cards, servers) = shown;
    let row = |subject: String, samples: Vec<Duration>, mib: Vec<f64>, note: String| Row {
        section: "app",
        subject,
        client: "plugboard-app".into(),
        samples,
        cpu: vec![],
        mib,
        note,
    };
    rows.push(row(
        format!("cold start → marketplace-ready ({build})"),
        ready,
        vec![],
        format!(
            "process start (/proc) → the UI's mark after the first render of {cards} catalog cards; {servers} servers installed"
        ),
    ));
    rows.push(row(
        format!("cold start → window mapped ({build})"),
        window,
        vec![],
        "spawn → xwininfo sees the window".into(),
    ));
    rows.push(row(
        format!("installed page: switch → {servers} cards rendered ({build})"),
        render,
        vec![],
        "the UI's installed-ready mark; includes one IPC round trip and timer slack".into(),
    ));
    let settle = "3 s after";
    rows.push(row(
        format!("memory after marketplace-ready, PSS sum ({build})"),
        vec![],
        pss,
        format!("{settle} the mark; {processes}"),
    ));
    rows.push(row(
        format!("memory after marketplace-ready, RSS sum ({build})"),
        vec![],
        rss,
        "shared pages counted once per process".into(),
    ));
    rows.push(row(
        format!("memory with {servers} installed servers shown, PSS sum ({build})"),
        vec![],
        installed_pss,
        format!("{settle} the installed-ready mark"),
    ));
    rows.push(row(
        format!("memory with {servers} installed servers shown, RSS sum ({build})"),
        vec![],
        installed_rss,
        "shared pages counted once per process".into(),
    ));
    rows.last_mut().expect("pushed").note = format!(
        "shared pages counted once per process; per process at marketplace-ready: {per_process}; web process by mapping: {web}"
    );
    floor_and_market(paths, options, &bin, &build, rows)
}

fn probe_json(paths: &Paths, bin: &Path, env: &[(&str, String)]) -> Result<Value, String> {
    let out = Command::new(paths.root.join("bench/app-probe"))
        .arg(bin)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("bench/app-probe: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    let v: Value =
        serde_json::from_str(line).map_err(|e| format!("bench/app-probe printed {text:?}: {e}"))?;
    if v["ok"] != true {
        return Err(format!("bench/app-probe: {}", v["error"]));
    }
    Ok(v)
}

/// The floor (a hello-world Tauri window built the same way, in the same target dir) and the
/// app with 50,000 registry servers in its marketplace: memory of all processes, cold start,
/// and scrolling (ten jumps through the list, each until the cards in view are rendered).
fn floor_and_market(
    paths: &Paths,
    options: &Options,
    app: &Path,
    build: &str,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let floor = paths
        .root
        .join(format!("src-tauri/target/{build}/plugboard-floor-app"));
    if !floor.exists() {
        return Err(format!(
            "{} is missing: build it with `cargo build --manifest-path bench/floor-app/Cargo.toml --target-dir src-tauri/target`",
            floor.display()
        ));
    }
    let runs = options.runs;
    let mib = |v: &Value, key: &str| v[key].as_f64().unwrap_or(0.0) / 1024.0;
    let ms = |v: &Value, key: &str| Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e3);
    let row =
        |subject: String, client: &str, samples: Vec<Duration>, mib: Vec<f64>, note: String| Row {
            section: "app",
            subject,
            client: client.into(),
            samples,
            cpu: vec![],
            mib,
            note,
        };
    eprintln!("[bench] app: {runs} starts of the floor app ({build})");
    let (mut pss, mut rss, mut per, mut web) = (vec![], vec![], String::new(), String::new());
    for i in 0..runs + 1 {
        wait_for_quiet();
        let v = probe_json(paths, &floor, &[("MODE", "floor".into())])?;
        if i == 0 {
            continue;
        }
        pss.push(mib(&v, "pss_kib"));
        rss.push(mib(&v, "rss_kib"));
        per = v["per_process"].as_str().unwrap_or("").to_owned();
        web = v["web"].as_str().unwrap_or("").to_owned();
    }
    rows.push(row(
        format!("memory of a hello-world Tauri app, PSS sum ({build})"),
        "floor-app",
        vec![],
        pss,
        format!(
            "3 s after its window is mapped; per process: {per}; web process by mapping: {web}"
        ),
    ));
    rows.push(row(
        format!("memory of a hello-world Tauri app, RSS sum ({build})"),
        "floor-app",
        vec![],
        rss,
        "shared pages counted once per process".into(),
    ));

    // A registry of 50,000 servers, synced once into a cache the app's home gets a copy of.
    let (_registry, url) = start_registry(paths, &["--generate", "50000"])?;
    let home = paths.home("market-50000");
    timed_sync(paths, &home, &url, &["--full"])?;
    let cache = std::fs::read_dir(home.join("registry"))
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .ok_or("no registry cache was written")?;
    eprintln!("[bench] app: {runs} starts of the app with 50,000 registry servers ({build})");
    let (mut ready, mut pss, mut rss, mut scroll_median, mut scroll_max, mut scrolled_pss) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut per = String::new();
    let mut web = String::new();
    for i in 0..runs + 1 {
        wait_for_quiet();
        let v = probe_json(
            paths,
            app,
            &[
                ("MODE", "market".into()),
                ("MARKET_CACHE", cache.display().to_string()),
                ("MARKET_URL", url.clone()),
            ],
        )?;
        if i == 0 {
            continue;
        }
        ready.push(ms(&v, "ready_ms"));
        pss.push(mib(&v, "pss_kib"));
        rss.push(mib(&v, "rss_kib"));
        scroll_median.push(ms(&v, "scroll_median_ms"));
        scroll_max.push(ms(&v, "scroll_max_ms"));
        scrolled_pss.push(mib(&v, "scrolled_pss_kib"));
        per = v["per_process"].as_str().unwrap_or("").to_owned();
        web = v["web"].as_str().unwrap_or("").to_owned();
    }
    rows.push(row(
        format!("cold start → marketplace-ready, 50,000 entries ({build})"),
        "plugboard-app",
        ready,
        vec![],
        "the first page of cards rendered; the listing is loaded and searched in the core".into(),
    ));
    rows.push(row(
        format!("scroll through 50,000 entries: median jump ({build})"),
        "plugboard-app",
        scroll_median,
        vec![],
        "ten jumps top to bottom; each until every card in view is rendered".into(),
    ));
    rows.push(row(
        format!("scroll through 50,000 entries: slowest jump ({build})"),
        "plugboard-app",
        scroll_max,
        vec![],
        String::new(),
    ));
    rows.push(row(
        format!("memory with 50,000 entries, PSS sum ({build})"),
        "plugboard-app",
        vec![],
        pss,
        format!("3 s after marketplace-ready; per process: {per}; web process by mapping: {web}"),
    ));
    rows.push(row(
        format!("memory with 50,000 entries, RSS sum ({build})"),
        "plugboard-app",
        vec![],
        rss,
        "shared pages counted once per process".into(),
    ));
    rows.push(row(
        format!("memory with 50,000 entries after scrolling, PSS sum ({build})"),
        "plugboard-app",
        vec![],
        scrolled_pss,
        "3 s after the scroll tour".into(),
    ));
    Ok(())
}

fn ui_sets_a_mark(root: &Path) -> bool {
    std::process::Command::new("grep")
        .args([
            "-rlE",
            "performance\\.mark\\(|__PLUGBOARD_READY|data-ready",
            "ui/src",
        ])
        .current_dir(root)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false)
}

// ------------------------------------------------------------------ report

/// The median of sorted values.
fn median_of(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn fmt_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 0.1 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.2} µs", ms * 1000.0)
    }
}

struct Ratio {
    section: &'static str,
    subject: String,
    name: String,
    value: f64,
}

fn ratios(rows: &[Row]) -> Vec<Ratio> {
    let mut medians: BTreeMap<(&str, &str, &str), f64> = BTreeMap::new();
    let mut cpus: BTreeMap<(&str, &str, &str), f64> = BTreeMap::new();
    for row in rows {
        if let Some(m) = row.median_ms() {
            medians.insert((row.section, &row.subject, &row.client), m);
        }
        if let Some(m) = row.cpu_median_ms() {
            cpus.insert((row.section, &row.subject, &row.client), m);
        }
    }
    let mut out = vec![];
    for row in rows {
        if !matches!(row.section, "stdio" | "http") || !row.client.starts_with("plugboard") {
            continue;
        }
        let Some(mine) = row.median_ms() else {
            continue;
        };
        if let (Some(cpu), Some(floor)) = (
            row.cpu_median_ms(),
            cpus.get(&(row.section, row.subject.as_str(), "floor")),
        ) {
            out.push(Ratio {
                section: row.section,
                subject: row.subject.clone(),
                name: format!("{} / floor (CPU time)", row.client),
                value: cpu / floor,
            });
        }
        for other in ["floor", "inspector", "python-sdk"] {
            if let Some(theirs) = medians.get(&(row.section, row.subject.as_str(), other)) {
                out.push(Ratio {
                    section: row.section,
                    subject: row.subject.clone(),
                    name: format!("{} / {other}", row.client),
                    value: mine / theirs,
                });
            }
        }
    }
    // The app's memory against the floor's (PSS, medians of the runs).
    let median_mib = |row: &Row| {
        let mut m = row.mib.clone();
        m.sort_by(f64::total_cmp);
        (!m.is_empty()).then(|| median_of(&m))
    };
    if let Some(floor) = rows
        .iter()
        .find(|r| r.client == "floor-app" && r.subject.contains("PSS"))
        .and_then(median_mib)
    {
        for row in rows.iter().filter(|r| {
            r.section == "app" && r.client == "plugboard-app" && r.subject.contains("PSS")
        }) {
            if let Some(mine) = median_mib(row) {
                out.push(Ratio {
                    section: "app",
                    subject: row.subject.clone(),
                    name: "app / hello-world floor (PSS)".into(),
                    value: mine / floor,
                });
            }
        }
    }
    let health = |client: &str| medians.get(&("health", "100 servers", client)).copied();
    if let Some(h) = health("plugboard health default") {
        for (name, other) in [
            ("health / slowest single probe", "slowest single probe"),
            ("health / sum of single probes", "sum of single probes"),
        ] {
            if let Some(o) = health(other) {
                out.push(Ratio {
                    section: "health",
                    subject: "100 servers".into(),
                    name: name.into(),
                    value: h / o,
                });
            }
        }
    }
    out
}

fn print_table(rows: &[Row], ratios: &[Ratio]) {
    let mut lines = vec![[
        "section".to_owned(),
        "subject".to_owned(),
        "client / case".to_owned(),
        "median".to_owned(),
        "min".to_owned(),
        "max".to_owned(),
        "cpu".to_owned(),
        "n".to_owned(),
        "note".to_owned(),
    ]];
    for row in rows {
        let ms = row.sorted_ms();
        let mut mib = row.mib.clone();
        mib.sort_by(f64::total_cmp);
        let (median, min, max) = match (row.section, row.median_ms()) {
            _ if !mib.is_empty() => (
                format!("{:.1} MiB", median_of(&mib)),
                format!("{:.1} MiB", mib[0]),
                format!("{:.1} MiB", mib[mib.len() - 1]),
            ),
            // divan rows hold fastest, median, slowest
            ("catalog", _) if ms.len() == 3 => (fmt_ms(ms[1]), fmt_ms(ms[0]), fmt_ms(ms[2])),
            (_, Some(m)) => (fmt_ms(m), fmt_ms(ms[0]), fmt_ms(ms[ms.len() - 1])),
            (_, None) => ("—".into(), "—".into(), "—".into()),
        };
        let n = if row.section == "catalog" || ms.len() + mib.len() <= 1 {
            String::new()
        } else {
            (ms.len() + mib.len()).to_string()
        };
        lines.push([
            row.section.to_owned(),
            row.subject.clone(),
            row.client.clone(),
            median,
            min,
            max,
            row.cpu_median_ms().map(fmt_ms).unwrap_or_default(),
            n,
            row.note.clone(),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, line) in lines.iter().enumerate() {
        let mut out = String::new();
        for (c, cell) in line.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if (3..8).contains(&c) {
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                if c < 8 {
                    out.push_str(&" ".repeat(pad));
                }
            }
            if c < 8 {
                out.push_str("  ");
            }
        }
        println!("{}", out.trim_end());
        if i == 0 {
            println!("{}", "-".repeat(widths.iter().sum::<usize>() + 16));
        }
    }
    let noisy = NOISY_ROUNDS.load(std::sync::atomic::Ordering::Relaxed);
    if noisy > 0 {
        println!("\nnote: {noisy} timed round(s) started while other processes kept the CPU busy");
    }
    if ratios.is_empty() {
        return;
    }
    // One line per plugboard build and server: its ratios to each other client.
    println!();
    println!("ratios of medians (wall time; \"CPU\": user + system time, the server's included)");
    let columns = [
        "/ floor",
        "/ floor (CPU time)",
        "/ inspector",
        "/ python-sdk",
    ];
    let mut keyed: Vec<(String, String, String)> = vec![];
    for r in ratios {
        if !columns.iter().any(|c| r.name.ends_with(&format!(" {c}"))) {
            continue;
        }
        if let Some((client, _)) = r.name.split_once(" / ") {
            let key = (r.section.to_owned(), r.subject.clone(), client.to_owned());
            if !keyed.contains(&key) {
                keyed.push(key);
            }
        }
    }
    let width = keyed.iter().map(|k| k.2.len()).max().unwrap_or(9).max(9);
    println!(
        "  {:<7} {:<18} {:<width$}  {:>8}  {:>8}  {:>11}  {:>11}",
        "section", "subject", "client", "/ floor", "CPU", "/ inspector", "/ python-sdk"
    );
    for (section, subject, client) in &keyed {
        let cell = |column: &str| {
            ratios
                .iter()
                .find(|r| {
                    r.section == section
                        && &r.subject == subject
                        && r.name == format!("{client} {column}")
                })
                .map(|r| format!("{:.2}×", r.value))
                .unwrap_or_default()
        };
        println!(
            "  {:<7} {:<18} {:<width$}  {:>8}  {:>8}  {:>11}  {:>11}",
            section,
            subject,
            client,
            cell(columns[0]),
            cell(columns[1]),
            cell(columns[2]),
            cell(columns[3])
        );
    }
    for r in ratios.iter().filter(|r| {
        !r.name.contains(" / floor")
            && !r.name.contains(" / inspector")
            && !r.name.contains(" / python-sdk")
    }) {
        println!(
            "  {:<7} {:<18} {} {:.2}×",
            r.section, r.subject, r.name, r.value
        );
    }
}

fn machine() -> Value {
    let run = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_default();
    json!({
        "nproc": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "cpu": cpu,
        "free_h": run("free", &["-h"]),
        "kernel": run("uname", &["-r"]),
        "os": run("sh", &["-c", ". /etc/os-release && echo \"$PRETTY_NAME\""]),
        "loadavg": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        "node": run("node", &["--version"]),
        "rustc": run("rustc", &["--version"]),
    })
}

fn to_json(rows: &[Row], ratios: &[Ratio], options: &Options, started: Value) -> Value {
    json!({
        "machine": started,
        "loadavg_after": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        "noisy_rounds": NOISY_ROUNDS.load(std::sync::atomic::Ordering::Relaxed),
        "runs": options.runs,
        "warmup": options.warmup,
        "rows": rows.iter().map(|r| {
            let ms = r.sorted_ms();
            let catalog = r.section == "catalog" && ms.len() == 3;
            json!({
                "section": r.section,
                "subject": r.subject,
                "client": r.client,
                "median_ms": if catalog { Some(ms[1]) } else { r.median_ms() },
                "min_ms": ms.first(),
                "max_ms": ms.last(),
                "mib": if r.mib.is_empty() { Value::Null } else {
                    let mut m = r.mib.clone();
                    m.sort_by(f64::total_cmp);
                    json!({"median": median_of(&m), "min": m[0], "max": m[m.len() - 1], "samples": r.mib})
                },
                "cpu_median_ms": r.cpu_median_ms(),
                "cpu_samples_ms": r.cpu.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>(),
                "samples_ms": if catalog { vec![] } else { r.samples.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>() },
                "note": r.note,
            })
        }).collect::<Vec<_>>(),
        "ratios": ratios.iter().map(|r| json!({
            "section": r.section, "subject": r.subject, "name": r.name, "value": r.value,
        })).collect::<Vec<_>>(),
    })
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("harness: {e}");
            return ExitCode::from(2);
        }
    };
    let machine = machine();
    let paths = match Paths::new(&options.root) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("harness: {e}");
            return ExitCode::from(2);
        }
    };
    let mut rows = vec![];
    let mut failed = false;
    let mut section =
        |name: &str, rows: &mut Vec<Row>, f: &dyn Fn(&mut Vec<Row>) -> Result<(), String>| {
            if options.wants(name)
                && let Err(e) = f(rows)
            {
                eprintln!("[bench] {name} FAILED: {e}");
                failed = true;
            }
        };
    section("stdio", &mut rows, &|rows| {
        stdio_section(&paths, &options, rows)
    });
    section("http", &mut rows, &|rows| {
        http_section(&paths, &options, rows)
    });
    section("health", &mut rows, &|rows| {
        health_section(&paths, &options, rows)
    });
    section("catalog", &mut rows, &|rows| catalog_section(&paths, rows));
    section("registry", &mut rows, &|rows| {
        registry_section(&paths, &options, rows)
    });
    section("app", &mut rows, &|rows| {
        app_section(&paths, &options, rows)
    });
    section("size", &mut rows, &|rows| {
        size_section(&paths, rows);
        Ok(())
    });
    let ratios = ratios(&rows);
    println!();
    print_table(&rows, &ratios);
    let json = to_json(&rows, &ratios, &options, machine);
    if let Some(dir) = options.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(
        &options.out,
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    ) {
        Ok(()) => eprintln!("[bench] wrote {}", options.out.display()),
        Err(e) => {
            eprintln!("[bench] cannot write {}: {e}", options.out.display());
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divan_tables_are_parsed_with_group_paths() {
        let text = "\
Timer precision: 20 ns
catalog              fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ index_10k         3.365 ms      │ 5.514 ms      │ 3.79 ms       │ 3.828 ms      │ 100     │ 100
├─ load_embedded     247.1 µs      │ 7.977 ms      │ 251 µs        │ 332.6 µs      │ 100     │ 100
╰─ search_10k                      │               │               │               │         │
   ├─ data           787.7 µs      │ 1.002 ms      │ 825.2 µs      │ 832.6 µs      │ 100     │ 100
   ╰─ google sheets  667.9 µs      │ 1.239 ms      │ 676.2 µs      │ 689.6 µs      │ 100     │ 100
";
        let rows = parse_divan(text);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "index_10k",
                "load_embedded",
                "search_10k / data",
                "search_10k / google sheets"
            ]
        );
        assert_eq!(rows[1].1, Duration::from_nanos(247_100));
        assert_eq!(rows[1].3, Duration::from_nanos(251_000));
        assert_eq!(rows[3].2, Duration::from_nanos(1_239_000));
        assert_eq!(rows[3].4, 100);
    }
}
