//! Section `gateway`: what `plugboard serve` costs and saves, against a direct connection,
//! FastMCP's proxy (PyPI) and mcp-hub (npm), given the same MCP fixture servers:
//! - `call, stdio` / `call, http`: the time of one `tools/call` (echo) on a session that has
//!   listed its tools, made by the floor client straight to the fixture, through `plugboard
//!   serve` (stdio, and `--http`), through `plugboard run` (the relay a client launches per
//!   server without the gateway), through FastMCP's proxy and (over HTTP+SSE, its only
//!   transport for clients) through mcp-hub; sessions interleaved round by round;
//! - `calls, 20 servers, 8 in flight`: sustained calls across servers: 1,000 echo calls kept 8
//!   at a time, round robin over the 20 servers' echo tools, through the gateway and FastMCP's
//!   proxy, against the floor sending them the same way to one fixture; the row is the time per
//!   call (the inverse of calls per second);
//! - `memory, N servers`: the resident memory of the process in front of 1, 20 and 50 servers
//!   once they are listed (their servers not counted), against 20 `plugboard run` relays and
//!   the same through FastMCP's proxy and mcp-hub;
//! - (section `gateway-start`) `first list, 20 servers, one hanging`: from launch to the merged `tools/list` with 19
//!   fixtures and one server that never answers, against one fixture's own launch-to-list and
//!   the gateway's list of the 19 alone (mcp-hub: from its launch until its endpoint lists the
//!   19);
//! - `call, stdio, server-everything` and `first list, real servers, one hanging`: the same with
//!   server-everything (npm) and the Python SDK 2.3 server (PyPI) as members, against each
//!   server reached directly.
//!
//! The members were tested once after they were added (as an install does), so the gateway
//! knows how long each takes to start; the hanging one never passed a test.
//!
//! The home's secrets are in the encrypted file (the gateway's HTTP token lives there), opened
//! with a passphrase from the environment. The calls kept 8 in flight are not measured through
//! mcp-hub (the floor client keeps calls in flight over stdio only).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::mcp_hub::McpHub;
use crate::options::Options;
use crate::paths::{self, Paths};
use crate::row::Row;

const SECTION: &str = "gateway";
const PASSPHRASE: &str = "bench gateway passphrase";
/// Calls per session in the call rows.
const CALLS: usize = 200;

pub fn measure(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let home = paths.home("gateway-home");
    let setup = Setup::new(paths, &home)?;
    calls_over_stdio(&setup, options, rows)?;
    calls_over_http(&setup, options, rows)?;
    calls_to_everything(&setup, options, rows)?;
    calls_under_load(&setup, options, rows)?;
    memory(&setup, options, rows)?;
    Ok(())
}

/// Section `gateway-start`: the first merged lists (of this module's rows, the ones that
/// depend on how the gateway waits for servers that are still starting).
pub fn measure_start(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let home = paths.home("gateway-home");
    let setup = Setup::new(paths, &home)?;
    first_list(&setup, options, rows)?;
    first_list_of_real_servers(&setup, options, rows)
}

/// A home with 50 fixture servers and the profiles of the rows, and the FastMCP configs.
struct Setup<'a> {
    paths: &'a Paths,
    home: PathBuf,
    fastmcp: PathBuf,
}

impl<'a> Setup<'a> {
    fn new(paths: &'a Paths, home: &Path) -> Result<Setup<'a>, String> {
        let setup = Setup {
            paths,
            home: home.to_path_buf(),
            fastmcp: paths.root.join(".tools/bench-venv/bin/python"),
        };
        if !setup.fastmcp.exists() {
            return Err(format!(
                "{} is missing: run bench/run",
                setup.fastmcp.display()
            ));
        }
        setup.plugboard(&["secrets", "use", "file"])?;
        let fixture = paths::arg(&paths.fixture);
        let mut servers = json!({});
        for n in 1..=50 {
            let name = format!("fix{n}");
            setup.plugboard(&["add", &name, "--no-test", "--stdio", "--", &fixture])?;
            servers[&name] = json!({"command": fixture, "args": []});
        }
        setup.plugboard(&["add", "hang", "--no-test", "--stdio", "--", "sleep", "600"])?;
        let everything = setup.everything();
        let python = setup.python_server();
        for (name, command) in [("everything", &everything), ("pysdk", &python)] {
            let mut args = vec!["add", name, "--no-test", "--stdio", "--"];
            args.extend(command.iter().map(String::as_str));
            setup.plugboard(&args)?;
        }
        // Tested once, as an install tests a server (the hanging one never passes).
        let tested: Vec<String> = (1..=20)
            .map(|n| format!("fix{n}"))
            .chain(["everything".into(), "pysdk".into()])
            .collect();
        for name in &tested {
            setup.plugboard(&["test", name])?;
        }
        for (profile, count) in [("p1", 1), ("p20", 20), ("p50", 50)] {
            setup.profile(
                profile,
                &(1..=count).map(|n| format!("fix{n}")).collect::<Vec<_>>(),
            )?;
            setup.fastmcp_config(profile, &servers, count, false)?;
        }
        let mut hanging: Vec<String> = (1..=19).map(|n| format!("fix{n}")).collect();
        hanging.push("hang".into());
        setup.profile("phang", &hanging)?;
        hanging.pop();
        setup.profile("p19", &hanging)?;
        servers["hang"] = json!({"command": "sleep", "args": ["600"]});
        setup.fastmcp_config("phang", &servers, 19, true)?;
        let real = ["everything", "pysdk", "hang"].map(String::from);
        setup.profile("preal", &real)?;
        setup.profile("preal-healthy", &real[..2])?;
        setup.profile("peverything", &real[..1])?;
        let command = |argv: &[String]| json!({"command": argv[0], "args": argv[1..]});
        let config = json!({"mcpServers": {
            "everything": command(&everything),
            "pysdk": command(&python),
            "hang": servers["hang"],
        }});
        std::fs::write(setup.fastmcp_path("preal"), config.to_string())
            .map_err(|e| e.to_string())?;
        Ok(setup)
    }

    /// server-everything's command line over stdio.
    fn everything(&self) -> Vec<String> {
        vec![
            "node".into(),
            paths::arg(&self.paths.everything),
            "stdio".into(),
        ]
    }

    /// The Python SDK server's command line over stdio.
    fn python_server(&self) -> Vec<String> {
        vec![
            paths::arg(&self.paths.python),
            paths::arg(&self.paths.python_server),
            "stdio".into(),
        ]
    }

    fn plugboard(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new(&self.paths.plugboard)
            .args(args)
            .env("PLUGBOARD_HOME", &self.home)
            .env("PLUGBOARD_SECRETS_PASSPHRASE", PASSPHRASE)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "plugboard {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn profile(&self, name: &str, servers: &[String]) -> Result<(), String> {
        let mut args = vec!["profile", "create", name];
        for server in servers {
            args.extend(["--server", server.as_str()]);
        }
        self.plugboard(&args).map(drop)
    }

    /// `fastmcp-PROFILE.json`: the first `count` fixtures (and the hanging server).
    fn fastmcp_config(
        &self,
        profile: &str,
        servers: &Value,
        count: usize,
        hang: bool,
    ) -> Result<(), String> {
        let mut chosen = json!({});
        for n in 1..=count {
            let name = format!("fix{n}");
            chosen[&name] = servers[&name].clone();
        }
        if hang {
            chosen["hang"] = servers["hang"].clone();
        }
        let config = json!({"mcpServers": chosen});
        std::fs::write(self.fastmcp_path(profile), config.to_string()).map_err(|e| e.to_string())
    }

    fn fastmcp_path(&self, profile: &str) -> PathBuf {
        self.home.join(format!("fastmcp-{profile}.json"))
    }

    /// The floor client's arguments that launch each client in front of `profile` over stdio.
    fn stdio_launchers(&self, profile: &str) -> Vec<(&'static str, Vec<String>)> {
        vec![
            (
                "plugboard serve",
                self.over_stdio(&["serve", "--profile", profile]),
            ),
            (
                "fastmcp proxy",
                self.launch(vec![
                    paths::arg(&self.fastmcp),
                    paths::arg(&self.paths.root.join("bench/fastmcp_proxy.py")),
                    paths::arg(&self.fastmcp_path(profile)),
                ]),
            ),
        ]
    }

    /// The floor client's arguments that launch `plugboard ARGS` in this home over stdio.
    fn over_stdio(&self, args: &[&str]) -> Vec<String> {
        let mut command = vec![paths::arg(&self.paths.plugboard)];
        command.extend(args.iter().map(|a| a.to_string()));
        self.launch(command)
    }

    /// The floor client's arguments that launch `command` over stdio with this home's
    /// environment.
    fn launch(&self, command: Vec<String>) -> Vec<String> {
        let mut args = vec![
            "--env".to_owned(),
            format!("PLUGBOARD_HOME={}", self.home.display()),
            "--env".into(),
            format!("PLUGBOARD_SECRETS_PASSPHRASE={PASSPHRASE}"),
            "stdio".into(),
            "--".into(),
        ];
        args.extend(command);
        args
    }

    /// `floor ARGS`, its JSON report.
    fn floor(&self, args: &[String], limit: Duration) -> Result<Value, String> {
        let mut child = Command::new(&self.paths.floor)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let out = wait_at_most(&mut child, limit)?;
        if !out.status.success() {
            return Err(format!(
                "floor {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("floor's report: {e}"))
    }
}

/// Wait for `child` at most `limit` (then kill it and say so); its output.
fn wait_at_most(child: &mut Child, limit: Duration) -> Result<std::process::Output, String> {
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer within {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut stdout = vec![];
    let mut stderr = vec![];
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::Read::read_to_end(&mut out, &mut stdout);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_end(&mut err, &mut stderr);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    Ok(std::process::Output {
        status,
        stdout,
        stderr,
    })
}

/// The floor's options that time `CALLS` echo calls to `tool`.
fn timed_calls(tool: &str) -> Vec<String> {
    [
        "--call",
        tool,
        "--arguments",
        r#"{"message":"bench"}"#,
        "--times",
        &CALLS.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Run each client's session once per round (the order turning each round), warm-up rounds
/// dropped; the samples `read` takes from each report, per client.
fn interleaved(
    subject: &str,
    clients: &[(&'static str, Vec<String>)],
    setup: &Setup,
    options: &Options,
    limit: Duration,
    read: impl Fn(&Value) -> Result<Vec<Duration>, String>,
) -> Result<Vec<Vec<Duration>>, String> {
    let mut samples: Vec<Vec<Duration>> = vec![vec![]; clients.len()];
    for round in 0..options.warmup + options.runs {
        for k in 0..clients.len() {
            let i = (k + round) % clients.len();
            let report = setup
                .floor(&clients[i].1, limit)
                .map_err(|e| format!("{subject}, {}: {e}", clients[i].0))?;
            if round >= options.warmup {
                samples[i].extend(read(&report)?);
            }
        }
    }
    Ok(samples)
}

/// The interleaved sessions of `clients`; a row per client of the per-call times.
fn interleaved_calls(
    subject: &str,
    clients: Vec<(&'static str, Vec<String>)>,
    setup: &Setup,
    options: &Options,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let samples = interleaved(
        subject,
        &clients,
        setup,
        options,
        Duration::from_secs(120),
        |report| {
            let calls = report["call_us"].as_array().cloned().unwrap_or_default();
            Ok(calls
                .iter()
                .filter_map(Value::as_u64)
                .map(Duration::from_micros)
                .collect())
        },
    )?;
    for ((client, _), samples) in clients.into_iter().zip(samples) {
        rows.push(Row::times(
            SECTION,
            subject,
            client,
            samples,
            format!("{CALLS} calls a session"),
        ));
    }
    Ok(())
}

fn calls_over_stdio(setup: &Setup, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let mut floor = timed_calls("echo");
    floor.extend([
        "stdio".into(),
        "--".into(),
        paths::arg(&setup.paths.fixture),
    ]);
    let mut clients = vec![("floor", floor)];
    for (client, launch) in setup.stdio_launchers("p1") {
        // FastMCP names the tools of a single server as they are.
        let tool = if client == "fastmcp proxy" {
            "echo"
        } else {
            "fix1__echo"
        };
        let mut args = timed_calls(tool);
        args.extend(launch);
        clients.push((client, args));
    }
    // The relay a client launches per server without the gateway.
    let mut relay = timed_calls("echo");
    relay.extend(setup.over_stdio(&["run", "fix1"]));
    clients.push(("plugboard run", relay));
    eprintln!("[bench] gateway: calls over stdio");
    interleaved_calls("call, stdio", clients, setup, options, rows)
}

/// Calls kept in flight at once in the load row, and how many a session makes.
const IN_FLIGHT: usize = 8;
const LOAD_CALLS: usize = 1_000;

fn calls_under_load(setup: &Setup, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    eprintln!("[bench] gateway: calls across 20 servers, {IN_FLIGHT} in flight");
    let subject = format!("calls, 20 servers, {IN_FLIGHT} in flight");
    let load = |launch: Vec<String>| {
        let mut args: Vec<String> = [
            "--call",
            "echo",
            "--arguments",
            r#"{"message":"bench"}"#,
            "--times",
            &LOAD_CALLS.to_string(),
            "--in-flight",
            &IN_FLIGHT.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(launch);
        args
    };
    let mut clients = vec![(
        "floor (one fixture)",
        load(vec![
            "stdio".into(),
            "--".into(),
            paths::arg(&setup.paths.fixture),
        ]),
    )];
    for (client, launch) in setup.stdio_launchers("p20") {
        clients.push((client, load(launch)));
    }
    let samples = interleaved(
        &subject,
        &clients,
        setup,
        options,
        Duration::from_secs(300),
        |report| {
            let total = report["burst_us"].as_u64().ok_or("no burst_us")?;
            Ok(vec![Duration::from_secs_f64(
                total as f64 / 1e6 / LOAD_CALLS as f64,
            )])
        },
    )?;
    for ((client, _), samples) in clients.into_iter().zip(samples) {
        rows.push(Row::times(
            SECTION,
            &subject,
            client,
            samples,
            format!("{LOAD_CALLS} calls a session; time per call = 1 / calls per second"),
        ));
    }
    Ok(())
}

fn calls_over_http(setup: &Setup, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let (_fixture, fixture_url) = crate::servers::start_fixture_http(setup.paths, &[])?;
    let headers = setup.plugboard(&["serve", "--profile", "p1", "--print-headers"])?;
    let headers: Value = serde_json::from_str(headers.trim()).map_err(|e| e.to_string())?;
    let authorization = format!(
        "Authorization: {}",
        headers["Authorization"].as_str().unwrap_or_default()
    );
    let gateway = HttpGateway::start(setup, "p1")?;
    let hub = McpHub::launch(setup.paths, &setup.fastmcp_path("p1"))?;
    hub.listed(&setup.paths.floor, 3, Duration::from_secs(60))?;
    let mut floor = timed_calls("echo");
    floor.extend(["http".into(), fixture_url]);
    let mut served = timed_calls("fix1__echo");
    served.extend([
        "--header".into(),
        authorization,
        "http".into(),
        gateway.url.clone(),
    ]);
    let mut hub_calls = timed_calls("fix1__echo");
    hub_calls.extend(["sse".into(), hub.url.clone()]);
    eprintln!("[bench] gateway: calls over streamable HTTP (and HTTP+SSE to mcp-hub)");
    interleaved_calls(
        "call, http",
        vec![
            ("floor", floor),
            ("plugboard serve --http", served),
            ("mcp-hub (HTTP+SSE)", hub_calls),
        ],
        setup,
        options,
        rows,
    )
}

/// `plugboard serve --http 127.0.0.1:0`, stopped when dropped.
struct HttpGateway {
    child: Child,
    url: String,
}

impl HttpGateway {
    fn start(setup: &Setup, profile: &str) -> Result<HttpGateway, String> {
        let mut child = Command::new(&setup.paths.plugboard)
            .args(["serve", "--profile", profile, "--http", "127.0.0.1:0"])
            .env("PLUGBOARD_HOME", &setup.home)
            .env("PLUGBOARD_SECRETS_PASSPHRASE", PASSPHRASE)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
        let mut line = String::new();
        loop {
            line.clear();
            if stderr.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("plugboard serve --http ended before listening".into());
            }
            if let Some(at) = line.find("http://") {
                let url = line[at..].split_whitespace().next().unwrap_or_default();
                let url = url.to_owned();
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return Ok(HttpGateway { child, url });
            }
        }
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        // SIGTERM, so that it closes its servers.
        unsafe { kill(self.child.id() as i32, 15) };
        let _ = self.child.wait();
    }
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

/// The resident memory of the process in front of the servers, once they are listed.
fn memory(setup: &Setup, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    eprintln!("[bench] gateway: memory");
    let rounds = options.runs.clamp(1, 5);
    for (profile, count) in [("p1", 1), ("p20", 20), ("p50", 50)] {
        let subject = format!("memory, {count} server(s)");
        for (client, launch) in setup.stdio_launchers(profile) {
            let mut args = vec!["--rss".to_owned()];
            args.extend(launch);
            let mut mib = vec![];
            for _ in 0..rounds {
                let report = setup
                    .floor(&args, Duration::from_secs(120))
                    .map_err(|e| format!("{subject}, {client}: {e}"))?;
                let listed = report["tools"].as_array().map_or(0, Vec::len);
                if listed < count * 3 {
                    return Err(format!("{subject}, {client}: {listed} tools listed"));
                }
                mib.push(kib_to_mib(&report["rss_kib"]));
            }
            rows.push(Row::sizes(
                SECTION,
                &subject,
                client,
                mib,
                "its servers not counted",
            ));
        }
    }
    // mcp-hub: its node process once its endpoint lists every server's tools.
    for (profile, count) in [("p1", 1), ("p20", 20), ("p50", 50)] {
        let subject = format!("memory, {count} server(s)");
        let mut mib = vec![];
        for _ in 0..rounds {
            let hub = McpHub::launch(setup.paths, &setup.fastmcp_path(profile))?;
            hub.listed(&setup.paths.floor, count * 3, Duration::from_secs(120))
                .map_err(|e| format!("{subject}: {e}"))?;
            mib.push(kib_to_mib(&json!(rss_kib(hub.pid()))));
        }
        rows.push(Row::sizes(
            SECTION,
            &subject,
            "mcp-hub",
            mib,
            "its servers not counted",
        ));
    }
    // 20 relays, one per server, as clients launch them without the gateway.
    let mut mib = vec![];
    for _ in 0..rounds {
        let mut total = 0.0;
        for n in 1..=20 {
            let mut args = vec!["--rss".to_owned()];
            args.extend(setup.over_stdio(&["run", &format!("fix{n}")]));
            let report = setup.floor(&args, Duration::from_secs(60))?;
            total += kib_to_mib(&report["rss_kib"]);
        }
        mib.push(total);
    }
    rows.push(Row::sizes(
        SECTION,
        "memory, 20 server(s)",
        "plugboard run ×20",
        mib,
        "the sum of 20 relays, their servers not counted",
    ));
    Ok(())
}

/// The resident memory of process `pid`, in KiB (0 when it cannot be read).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

fn kib_to_mib(kib: &Value) -> f64 {
    kib.as_f64().unwrap_or(0.0) / 1024.0
}

/// Launch to the merged list with one server that never answers, against one fixture alone.
fn first_list(setup: &Setup, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    eprintln!("[bench] gateway: first list with a hanging server");
    let subject = "first list, 20 servers, one hanging";
    let alone = vec![
        "--times".to_owned(),
        "0".into(),
        "stdio".into(),
        "--".into(),
        paths::arg(&setup.paths.fixture),
    ];
    let mut clients = vec![("floor (one fixture)", alone, 3)];
    let mut healthy = vec!["--times".to_owned(), "0".into()];
    healthy.extend(setup.over_stdio(&["serve", "--profile", "p19"]));
    clients.push(("plugboard serve (the 19 alone)", healthy, 19 * 3));
    for (client, launch) in setup.stdio_launchers("phang") {
        let mut args = vec!["--times".to_owned(), "0".into()];
        args.extend(launch);
        clients.push((client, args, 19 * 3));
    }
    first_list_rows(setup, options, subject, clients, rows)?;
    hub_first_list(setup, options, subject, "phang", 19 * 3, rows);
    Ok(())
}

/// A row of mcp-hub's launch-to-list times in front of the servers of `profile`'s config,
/// noted when it gave no list of `expected` tools.
fn hub_first_list(
    setup: &Setup,
    options: &Options,
    subject: &str,
    profile: &str,
    expected: usize,
    rows: &mut Vec<Row>,
) {
    let mut samples = vec![];
    let mut note = String::new();
    for _ in 0..options.runs.clamp(1, 5) {
        let listed = McpHub::launch(setup.paths, &setup.fastmcp_path(profile))
            .and_then(|hub| hub.listed(&setup.paths.floor, expected, Duration::from_secs(60)));
        match listed {
            Ok(time) => samples.push(time),
            Err(e) => {
                note = e;
                break;
            }
        }
    }
    rows.push(Row::times(SECTION, subject, "mcp-hub", samples, note));
}

/// Launch to the merged list of server-everything and the Python SDK server with one server
/// that never answers, against each of the two reached directly.
fn first_list_of_real_servers(
    setup: &Setup,
    options: &Options,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    eprintln!("[bench] gateway: first list of real servers with a hanging one");
    let subject = "first list, real servers, one hanging";
    let direct = |command: Vec<String>| {
        let mut args = vec![
            "--times".to_owned(),
            "0".into(),
            "stdio".into(),
            "--".into(),
        ];
        args.extend(command);
        args
    };
    // server-everything lists 13 tools (and more to a client that declares sampling, roots or
    // elicitation; the floor client declares none), the Python SDK server 3.
    let mut clients = vec![
        ("floor (server-everything)", direct(setup.everything()), 10),
        (
            "floor (Python SDK server)",
            direct(setup.python_server()),
            3,
        ),
    ];
    let mut healthy = vec!["--times".to_owned(), "0".into()];
    healthy.extend(setup.over_stdio(&["serve", "--profile", "preal-healthy"]));
    clients.push(("plugboard serve (the healthy alone)", healthy, 13));
    for (client, launch) in setup.stdio_launchers("preal") {
        let mut args = vec!["--times".to_owned(), "0".into()];
        args.extend(launch);
        clients.push((client, args, 13));
    }
    first_list_rows(setup, options, subject, clients, rows)?;
    hub_first_list(setup, options, subject, "preal", 13, rows);
    Ok(())
}

/// A row per client of its launch-to-list times, noted when it listed fewer tools than
/// `expected` or gave no list.
fn first_list_rows(
    setup: &Setup,
    options: &Options,
    subject: &str,
    clients: Vec<(&'static str, Vec<String>, usize)>,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let rounds = options.runs.clamp(1, 5);
    for (client, args, expected) in clients {
        let mut samples = vec![];
        let mut note = String::new();
        for _ in 0..rounds {
            match setup.floor(&args, Duration::from_secs(60)) {
                Ok(report) => {
                    let listed = report["tools"].as_array().map_or(0, Vec::len);
                    if listed < expected {
                        note = format!("listed {listed} of {expected} tools");
                    }
                    let ms = report["list_ms"].as_f64().unwrap_or(0.0);
                    samples.push(Duration::from_secs_f64(ms / 1e3));
                }
                Err(e) => {
                    note = e;
                    break;
                }
            }
        }
        rows.push(Row::times(SECTION, subject, client, samples, note));
    }
    Ok(())
}

/// One `tools/call` (echo) to server-everything: directly, through the gateway and through
/// the relay, interleaved.
fn calls_to_everything(
    setup: &Setup,
    options: &Options,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let mut floor = timed_calls("echo");
    floor.extend(["stdio".into(), "--".into()]);
    floor.extend(setup.everything());
    let mut served = timed_calls("everything__echo");
    served.extend(setup.over_stdio(&["serve", "--profile", "peverything"]));
    let mut relay = timed_calls("echo");
    relay.extend(setup.over_stdio(&["run", "everything"]));
    eprintln!("[bench] gateway: calls to server-everything over stdio");
    interleaved_calls(
        "call, stdio, server-everything",
        vec![
            ("floor", floor),
            ("plugboard serve", served),
            ("plugboard run", relay),
        ],
        setup,
        options,
        rows,
    )
}
