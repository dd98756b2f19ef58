//! `floor`: the smallest MCP client that does the requests `plugboard test` does, used as the
//! floor that every client in `bench/run` is compared with.
//!
//!   floor [--era modern] stdio -- CMD [ARG...]
//!       spawn, initialize, notifications/initialized, tools/list (all pages), resources/list
//!       and prompts/list when declared, close stdin, wait up to 300 ms for the exit, else
//!       SIGKILL; the server gets the small environment Plugboard gives one
//!   floor [--era modern] http URL
//!       the same over streamable HTTP (raw HTTP/1.1 on one keep-alive connection), then
//!       DELETE the session
//!
//! Measuring a connection instead (the gateway section of `bench/run`), options before the
//! transport: `--call TOOL [--arguments JSON] [--times N]` makes N sequential `tools/call`s
//! after the listing and times each; `--rss` reads the stdio child's resident memory after the
//! listing; `--header 'Name: value'` (HTTP) and `--env NAME=VALUE` (stdio) add to what is sent.
//! With `--in-flight K` (stdio) the N calls go, K at a time, round robin to every listed tool
//! whose name ends with TOOL (`echo`: `fix1__echo`, `fix2__echo`, …), a new one as soon as one
//! is answered, and `burst_us` is the time from the first sent to the last answered.
//! It then prints one JSON object: `{"tools", "list_ms", "call_us": [...], "burst_us", "rss_kib"}`.
//!
//!   floor sse URL
//!       the same over the HTTP+SSE transport of MCP 2024-11-05 (a GET stream the server
//!       answers on, each message POSTed to the endpoint the stream names first), for servers
//!       that speak no streamable HTTP
//!
//! With `--era modern` (MCP 2026-07-28) the handshake is `server/discover` instead of
//! `initialize` + `notifications/initialized`, every request carries the modern `_meta`, and
//! over HTTP the `MCP-Protocol-Version` and `Mcp-Method` headers; there is no session to end.
//!
//! It prints the tool names as a JSON array and exits 0, or prints an error and exits 1.
//! No async runtime, no TLS, no MCP SDK: std, a pipe or a socket, and serde_json.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const PROTOCOL: &str = "2025-11-25";
const MODERN_PROTOCOL: &str = "2026-07-28";
const GRACE_AFTER_STDIN: Duration = Duration::from_millis(300);
/// Passed to the server from this environment (as Plugboard does on Unix), plus PATH.
const BASE_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TERM",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// What to measure after the listing, when asked.
#[derive(Default)]
struct Measure {
    tool: Option<String>,
    arguments: Value,
    times: usize,
    rss: bool,
    in_flight: Option<usize>,
    headers: Vec<String>,
    env: Vec<(String, String)>,
}

/// What a measured connection gave.
#[derive(Default)]
struct Measured {
    tools: Vec<String>,
    list_ms: f64,
    call_us: Vec<u64>,
    burst_us: Option<u64>,
    rss_kib: Option<u64>,
}

impl Measure {
    /// Take the measuring options from the front of `args`.
    fn from_args(args: &mut Vec<String>) -> Result<Option<Measure>, String> {
        let mut measure = Measure {
            arguments: json!({}),
            times: 1,
            ..Measure::default()
        };
        let mut any = false;
        loop {
            let value = |args: &Vec<String>| {
                args.get(1)
                    .cloned()
                    .ok_or_else(|| format!("{} needs a value", args[0]))
            };
            match args.first().map(String::as_str) {
                Some("--call") => measure.tool = Some(value(args)?),
                Some("--arguments") => {
                    measure.arguments =
                        serde_json::from_str(&value(args)?).map_err(|e| e.to_string())?
                }
                Some("--times") => {
                    measure.times = value(args)?.parse().map_err(|_| "--times needs a number")?
                }
                Some("--in-flight") => {
                    let k: usize = value(args)?
                        .parse()
                        .map_err(|_| "--in-flight needs a number")?;
                    measure.in_flight = Some(k.max(1));
                }
                Some("--header") => measure.headers.push(value(args)?),
                Some("--env") => {
                    let pair = value(args)?;
                    let (k, v) = pair.split_once('=').ok_or("--env needs NAME=VALUE")?;
                    measure.env.push((k.to_owned(), v.to_owned()));
                }
                Some("--rss") => {
                    measure.rss = true;
                    args.remove(0);
                    any = true;
                    continue;
                }
                _ => break,
            }
            args.drain(..2);
            any = true;
        }
        Ok(any.then_some(measure))
    }

    /// The timed calls, on a session that has listed its tools (ids from `first_id`).
    fn calls(&self, rpc: &mut impl Rpc, first_id: u64, era: Era) -> Result<Vec<u64>, String> {
        let Some(tool) = &self.tool else {
            return Ok(vec![]);
        };
        let mut call_us = Vec::with_capacity(self.times);
        for n in 0..self.times {
            let mut params = json!({"name": tool, "arguments": self.arguments});
            if era == Era::Modern {
                params["_meta"] = modern_meta();
            }
            let started = std::time::Instant::now();
            let result = rpc.call(first_id + n as u64, "tools/call", params)?;
            call_us.push(started.elapsed().as_micros() as u64);
            if result["isError"] == json!(true) {
                return Err(format!("{tool} failed: {result}"));
            }
        }
        Ok(call_us)
    }
}

/// `--in-flight`: the calls, K at a time, round robin over the listed tools ending with the
/// tool's name, on a stdio session that has listed them; the time from the first request sent
/// to the last answer.
fn burst(
    measure: &Measure,
    in_flight: usize,
    io: &mut Pipes,
    listed: &[String],
    era: Era,
) -> Result<u64, String> {
    let suffix = measure.tool.as_deref().ok_or("--in-flight needs --call")?;
    let targets: Vec<&String> = listed.iter().filter(|t| t.ends_with(suffix)).collect();
    if targets.is_empty() {
        return Err(format!("no listed tool ends with {suffix}"));
    }
    let request_n = |n: usize| {
        let mut params =
            json!({"name": targets[n % targets.len()], "arguments": measure.arguments});
        if era == Era::Modern {
            params["_meta"] = modern_meta();
        }
        request(10_000 + n as u64, "tools/call", params)
    };
    let started = std::time::Instant::now();
    let mut sent = 0;
    while sent < measure.times.min(in_flight) {
        io.send(&request_n(sent))?;
        sent += 1;
    }
    let mut answered = 0;
    while answered < measure.times {
        io.line.clear();
        if io
            .stdout
            .read_line(&mut io.line)
            .map_err(|e| format!("read: {e}"))?
            == 0
        {
            return Err("the server closed stdout during the calls".into());
        }
        let Ok(message) = serde_json::from_str::<Value>(&io.line) else {
            continue;
        };
        if message.get("method").is_some() || message["id"].as_u64().is_none_or(|id| id < 10_000) {
            continue;
        }
        if message["result"]["isError"] == json!(true) || message.get("error").is_some() {
            return Err(format!("a call failed: {message}"));
        }
        answered += 1;
        if sent < measure.times {
            io.send(&request_n(sent))?;
            sent += 1;
        }
    }
    Ok(started.elapsed().as_micros() as u64)
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The protocol era a session speaks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let measure = match Measure::from_args(&mut args) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("floor: {e}");
            return ExitCode::from(2);
        }
    };
    let era = match args.first().map(String::as_str) {
        Some("--era") if args.get(1).is_some_and(|e| e == "modern") => {
            args.drain(..2);
            Era::Modern
        }
        _ => Era::Legacy,
    };
    let outcome = match args.first().map(String::as_str) {
        Some("stdio") => {
            let rest = match args.get(1).map(String::as_str) {
                Some("--") => &args[2..],
                _ => &args[1..],
            };
            stdio(rest, era, measure.as_ref())
        }
        Some("http") if args.len() == 2 => http(&args[1], era, measure.as_ref()),
        Some("sse") if args.len() == 2 && era == Era::Legacy => sse(&args[1], measure.as_ref()),
        _ => Err(
            "usage: floor [--era modern] stdio -- CMD [ARG...] | floor [--era modern] http URL \
             | floor sse URL"
                .to_owned(),
        ),
    };
    match outcome {
        Ok(measured) if measure.is_some() => {
            println!(
                "{}",
                json!({"tools": measured.tools, "list_ms": measured.list_ms,
                       "call_us": measured.call_us, "burst_us": measured.burst_us,
                       "rss_kib": measured.rss_kib})
            );
            ExitCode::SUCCESS
        }
        Ok(measured) => {
            println!("{}", Value::from(measured.tools));
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("floor: {err}");
            ExitCode::FAILURE
        }
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "floor", "version": "0"}
    })
}

/// One JSON-RPC round trip: `send` delivers a request, the answer's `result` comes back.
trait Rpc {
    fn call(&mut self, id: u64, method: &str, params: Value) -> Result<Value, String>;
    fn notify(&mut self, method: &str) -> Result<(), String>;
}

/// The modern `_meta` every request of a modern session carries.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The whole session after connecting: the same requests as `plugboard test`.
fn session(rpc: &mut impl Rpc, era: Era) -> Result<Vec<String>, String> {
    let init = match era {
        Era::Legacy => {
            let init = rpc.call(1, "initialize", initialize_params())?;
            rpc.notify("notifications/initialized")?;
            init
        }
        Era::Modern => rpc.call(1, "server/discover", json!({"_meta": modern_meta()}))?,
    };
    let mut id = 2;
    let tools = list_all(rpc, &mut id, "tools/list", "tools", era)?;
    let caps = &init["capabilities"];
    if caps.get("resources").is_some_and(|c| !c.is_null()) {
        list_all(rpc, &mut id, "resources/list", "resources", era)?;
    }
    if caps.get("prompts").is_some_and(|c| !c.is_null()) {
        list_all(rpc, &mut id, "prompts/list", "prompts", era)?;
    }
    Ok(tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect())
}

fn list_all(
    rpc: &mut impl Rpc,
    id: &mut u64,
    method: &str,
    key: &str,
    era: Era,
) -> Result<Vec<Value>, String> {
    let mut items = vec![];
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let mut params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        if era == Era::Modern {
            params["_meta"] = modern_meta();
        }
        let result = rpc.call(*id, method, params)?;
        *id += 1;
        if let Some(page) = result[key].as_array() {
            items.extend(page.iter().cloned());
        }
        match result["nextCursor"].as_str().filter(|c| !c.is_empty()) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    Ok(items)
}

fn answer(message: Value, id: u64) -> Option<Result<Value, String>> {
    if message["id"].as_u64() != Some(id) {
        return None;
    }
    Some(match message.get("result") {
        Some(result) => Ok(result.clone()),
        None => Err(format!("error answer: {}", message["error"])),
    })
}

// ---------------------------------------------------------------- stdio

struct Pipes {
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
}

impl Pipes {
    fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut bytes = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        self.stdin
            .write_all(&bytes)
            .map_err(|e| format!("write: {e}"))
    }
}

impl Rpc for Pipes {
    fn call(&mut self, id: u64, method: &str, params: Value) -> Result<Value, String> {
        self.send(&request(id, method, params))?;
        loop {
            self.line.clear();
            let n = self
                .stdout
                .read_line(&mut self.line)
                .map_err(|e| format!("read: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the server closed stdout before answering {method}"
                ));
            }
            if let Ok(message) = serde_json::from_str::<Value>(&self.line)
                && let Some(result) = answer(message, id)
            {
                return result;
            }
        }
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

fn stdio(command: &[String], era: Era, measure: Option<&Measure>) -> Result<Measured, String> {
    let (program, args) = command.split_first().ok_or("no command given")?;
    let started = std::time::Instant::now();
    // The same small environment `plugboard test` gives a server (its connect::env base
    // variables), so that both start the same server: a runtime reading, say,
    // NODE_EXTRA_CA_CERTS from a full environment would otherwise start slower for one of them.
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(
            BASE_VARS
                .iter()
                .filter_map(|k| std::env::var_os(k).map(|v| (k, v))),
        )
        .envs(measure.iter().flat_map(|m| &m.env).map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawn {program}: {e}"))?;
    let mut io = Pipes {
        stdin: child.stdin.take().expect("piped"),
        stdout: BufReader::new(child.stdout.take().expect("piped")),
        line: String::new(),
    };
    let pid = child.id();
    let outcome = session(&mut io, era).and_then(|tools| {
        let mut measured = Measured {
            tools,
            list_ms: started.elapsed().as_secs_f64() * 1e3,
            ..Measured::default()
        };
        if let Some(measure) = measure {
            if measure.rss {
                measured.rss_kib = rss_kib(pid);
            }
            match measure.in_flight {
                Some(k) => {
                    measured.burst_us = Some(burst(measure, k, &mut io, &measured.tools, era)?)
                }
                None => measured.call_us = measure.calls(&mut io, 1_000, era)?,
            }
        }
        Ok(measured)
    });
    // Close: EOF on stdin, a short wait for the exit, then SIGKILL.
    drop(io);
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    if rx.recv_timeout(GRACE_AFTER_STDIN).is_err() {
        // SAFETY: plain syscall on our own child, which has not been reaped yet.
        unsafe {
            kill(pid, 9);
        }
        let _ = rx.recv();
    }
    outcome
}

// ---------------------------------------------------------------- streamable HTTP

struct Http {
    addr: String,
    path: String,
    conn: Option<BufReader<TcpStream>>,
    session: Option<String>,
    protocol: Option<String>,
    era: Era,
    /// Headers added to every request (`Name: value`).
    headers: Vec<String>,
}

/// How a response body is delimited.
enum Framing {
    Length(usize),
    Chunked { left: usize, done: bool },
    Close,
}

/// A response body read straight from the connection (borrowed for one answer, or owned for
/// an event stream that stays open).
struct Body<C> {
    conn: C,
    framing: Framing,
}

impl<C: BufRead> Read for Body<C> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.framing {
            Framing::Length(left) => {
                let max = buf.len().min(*left);
                if max == 0 {
                    return Ok(0);
                }
                let n = self.conn.read(&mut buf[..max])?;
                *left -= n;
                Ok(n)
            }
            Framing::Close => self.conn.read(buf),
            Framing::Chunked { left, done } => {
                if *done {
                    return Ok(0);
                }
                if *left == 0 {
                    let mut line = String::new();
                    self.conn.read_line(&mut line)?;
                    let size = line.trim().split(';').next().unwrap_or("");
                    let size = usize::from_str_radix(size, 16).map_err(std::io::Error::other)?;
                    if size == 0 {
                        // trailers, then the empty line
                        loop {
                            line.clear();
                            if self.conn.read_line(&mut line)? == 0 || line.trim().is_empty() {
                                break;
                            }
                        }
                        *done = true;
                        return Ok(0);
                    }
                    *left = size;
                }
                let max = buf.len().min(*left);
                let n = self.conn.read(&mut buf[..max])?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                *left -= n;
                if *left == 0 {
                    let mut crlf = [0u8; 2];
                    self.conn.read_exact(&mut crlf)?;
                }
                Ok(n)
            }
        }
    }
}

impl<C> Body<C> {
    fn finished(&self) -> bool {
        match self.framing {
            Framing::Length(left) => left == 0,
            Framing::Chunked { done, .. } => done,
            Framing::Close => false,
        }
    }
}

/// What an HTTP answer's status line and headers say.
struct Head {
    status: u16,
    length: Option<usize>,
    chunked: bool,
    close: bool,
    event_stream: bool,
    session: Option<String>,
}

/// Read an answer's status line and headers from `conn`.
fn read_head(conn: &mut impl BufRead) -> Result<Head, String> {
    let mut line = String::new();
    conn.read_line(&mut line)
        .map_err(|e| format!("read: {e}"))?;
    let mut head = Head {
        status: line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP answer: {line:?}"))?,
        length: None,
        chunked: false,
        close: false,
        event_stream: false,
        session: None,
    };
    loop {
        line.clear();
        conn.read_line(&mut line)
            .map_err(|e| format!("read: {e}"))?;
        let header = line.trim_end();
        if header.is_empty() {
            return Ok(head);
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => head.length = value.parse().ok(),
            "transfer-encoding" => head.chunked = value.eq_ignore_ascii_case("chunked"),
            "connection" => head.close = value.eq_ignore_ascii_case("close"),
            "content-type" => head.event_stream = value.starts_with("text/event-stream"),
            "mcp-session-id" => head.session = Some(value.to_owned()),
            _ => {}
        }
    }
}

impl Http {
    fn connection(&mut self) -> Result<&mut BufReader<TcpStream>, String> {
        if self.conn.is_none() {
            let stream = TcpStream::connect(&self.addr)
                .map_err(|e| format!("connect {}: {e}", self.addr))?;
            stream.set_nodelay(true).ok();
            self.conn = Some(BufReader::new(stream));
        }
        Ok(self.conn.as_mut().expect("just set"))
    }

    /// Send one request; the answer with `id` (if any) comes back.
    fn exchange(
        &mut self,
        method: &str,
        body: Option<&Value>,
        id: Option<u64>,
    ) -> Result<Option<Value>, String> {
        let mcp_method = body
            .and_then(|b| b.get("method"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let payload = match body {
            Some(b) => serde_json::to_vec(b).map_err(|e| e.to_string())?,
            None => vec![],
        };
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n",
            self.path, self.addr
        );
        if body.is_some() {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                payload.len()
            ));
        }
        if let Some(session) = &self.session {
            head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        if let Some(protocol) = &self.protocol {
            head.push_str(&format!("MCP-Protocol-Version: {protocol}\r\n"));
        }
        for header in &self.headers {
            head.push_str(&format!("{header}\r\n"));
        }
        if self.era == Era::Modern
            && let Some(m) = &mcp_method
        {
            head.push_str(&format!("Mcp-Method: {m}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&payload);
        let conn = self.connection()?;
        conn.get_mut()
            .write_all(&bytes)
            .map_err(|e| format!("send: {e}"))?;

        let Head {
            status,
            length,
            chunked,
            close,
            event_stream,
            session,
        } = read_head(conn)?;
        if session.is_some() {
            self.session = session;
        }
        let framing = if chunked {
            Framing::Chunked {
                left: 0,
                done: false,
            }
        } else if let Some(n) = length {
            Framing::Length(n)
        } else if status == 202 || status == 204 || method == "DELETE" && status < 300 {
            Framing::Length(0)
        } else {
            Framing::Close
        };
        let conn = self.conn.as_mut().expect("connected");
        let mut body = Body { conn, framing };
        if !(200..300).contains(&status) {
            let mut text = String::new();
            let _ = body.read_to_string(&mut text);
            self.conn = None;
            return Err(format!("HTTP {status} to {method}: {text}"));
        }
        let mut found = None;
        let mut reusable = true;
        if event_stream {
            // Server-sent events: stop at the answer; the rest of the stream is not waited for.
            let mut events = BufReader::new(&mut body);
            let mut data = String::new();
            let mut line = String::new();
            loop {
                line.clear();
                if events
                    .read_line(&mut line)
                    .map_err(|e| format!("read: {e}"))?
                    == 0
                {
                    break;
                }
                let l = line.trim_end_matches(['\r', '\n']);
                if l.is_empty() {
                    if let (Ok(message), Some(id)) = (serde_json::from_str::<Value>(&data), id)
                        && let Some(result) = answer(message, id)
                    {
                        found = Some(result?);
                        break;
                    }
                    data.clear();
                } else if let Some(d) = l.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            reusable = events.buffer().is_empty() && body.finished();
        } else {
            let mut text = Vec::new();
            body.read_to_end(&mut text)
                .map_err(|e| format!("read: {e}"))?;
            if let (Some(id), false) = (id, text.is_empty()) {
                let message: Value =
                    serde_json::from_slice(&text).map_err(|e| format!("bad JSON: {e}"))?;
                found = answer(message, id).transpose()?;
            }
            reusable &= body.finished();
        }
        if close || !reusable {
            self.conn = None;
        }
        if id.is_some() && found.is_none() {
            return Err(format!("no answer to request {}", id.unwrap_or(0)));
        }
        Ok(found)
    }
}

impl Rpc for Http {
    fn call(&mut self, id: u64, method: &str, params: Value) -> Result<Value, String> {
        let result = self
            .exchange("POST", Some(&request(id, method, params)), Some(id))?
            .expect("checked");
        if method == "initialize" {
            self.protocol = result["protocolVersion"].as_str().map(str::to_owned);
        }
        Ok(result)
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        self.exchange(
            "POST",
            Some(&json!({"jsonrpc": "2.0", "method": method})),
            None,
        )
        .map(|_| ())
    }
}

/// The `host:port` and the path of an `http://` URL.
fn address_and_path(url: &str) -> Result<(&str, &str), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// URLs (the floor speaks no TLS)")?;
    Ok(match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    })
}

fn http(url: &str, era: Era, measure: Option<&Measure>) -> Result<Measured, String> {
    let started = std::time::Instant::now();
    let (addr, path) = address_and_path(url)?;
    let mut client = Http {
        addr: addr.to_owned(),
        path: path.to_owned(),
        conn: None,
        session: None,
        protocol: (era == Era::Modern).then(|| MODERN_PROTOCOL.to_owned()),
        era,
        headers: measure.map(|m| m.headers.clone()).unwrap_or_default(),
    };
    let tools = session(&mut client, era)?;
    let mut measured = Measured {
        tools,
        list_ms: started.elapsed().as_secs_f64() * 1e3,
        ..Measured::default()
    };
    if let Some(measure) = measure {
        measured.call_us = measure.calls(&mut client, 1_000, era)?;
    }
    if client.session.is_some() {
        // End the session, as a polite client does; its answer does not matter.
        let _ = client.exchange("DELETE", None, None);
    }
    Ok(measured)
}

// ---------------------------------------------------------------- HTTP+SSE (2024-11-05)

/// A session on the HTTP+SSE transport: the server answers on one event stream (GET), each
/// message goes in a POST to the endpoint the stream names in its first event.
struct Sse {
    post: Http,
    events: BufReader<Body<BufReader<TcpStream>>>,
}

impl Sse {
    fn connect(addr: &str, path: &str) -> Result<Sse, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_nodelay(true).ok();
        let mut conn = BufReader::new(stream);
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
        conn.get_mut()
            .write_all(request.as_bytes())
            .map_err(|e| format!("send: {e}"))?;
        let head = read_head(&mut conn)?;
        if head.status != 200 {
            return Err(format!("GET {path}: HTTP {}", head.status));
        }
        let framing = if head.chunked {
            Framing::Chunked {
                left: 0,
                done: false,
            }
        } else {
            Framing::Close
        };
        let mut sse = Sse {
            post: Http {
                addr: addr.to_owned(),
                path: String::new(),
                conn: None,
                session: None,
                protocol: None,
                era: Era::Legacy,
                headers: vec![],
            },
            events: BufReader::new(Body { conn, framing }),
        };
        let (event, endpoint) = sse.next_event()?;
        if event != "endpoint" {
            return Err(format!("the stream began with `{event}`, not its endpoint"));
        }
        // A path, or a whole URL on the same server.
        sse.post.path = match endpoint.strip_prefix("http://") {
            Some(rest) => rest[rest.find('/').unwrap_or(rest.len())..].to_owned(),
            None => endpoint,
        };
        Ok(sse)
    }

    /// The next event on the stream: its name (`message` unless it says) and its data.
    fn next_event(&mut self) -> Result<(String, String), String> {
        let (mut event, mut data) = (String::new(), String::new());
        let mut line = String::new();
        loop {
            line.clear();
            if self
                .events
                .read_line(&mut line)
                .map_err(|e| format!("read: {e}"))?
                == 0
            {
                return Err("the event stream ended".into());
            }
            let l = line.trim_end_matches(['\r', '\n']);
            if l.is_empty() {
                if !data.is_empty() || !event.is_empty() {
                    if event.is_empty() {
                        event = "message".into();
                    }
                    return Ok((event, data));
                }
            } else if let Some(name) = l.strip_prefix("event:") {
                event = name.trim().to_owned();
            } else if let Some(d) = l.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        }
    }
}

impl Rpc for Sse {
    fn call(&mut self, id: u64, method: &str, params: Value) -> Result<Value, String> {
        self.post
            .exchange("POST", Some(&request(id, method, params)), None)?;
        loop {
            let (event, data) = self.next_event()?;
            if event != "message" {
                continue;
            }
            if let Ok(message) = serde_json::from_str::<Value>(&data)
                && let Some(result) = answer(message, id)
            {
                return result;
            }
        }
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        self.post
            .exchange(
                "POST",
                Some(&json!({"jsonrpc": "2.0", "method": method})),
                None,
            )
            .map(|_| ())
    }
}

fn sse(url: &str, measure: Option<&Measure>) -> Result<Measured, String> {
    let started = std::time::Instant::now();
    let (addr, path) = address_and_path(url)?;
    let mut client = Sse::connect(addr, path)?;
    let tools = session(&mut client, Era::Legacy)?;
    let mut measured = Measured {
        tools,
        list_ms: started.elapsed().as_secs_f64() * 1e3,
        ..Measured::default()
    };
    if let Some(measure) = measure {
        measured.call_us = measure.calls(&mut client, 1_000, Era::Legacy)?;
    }
    Ok(measured)
}
