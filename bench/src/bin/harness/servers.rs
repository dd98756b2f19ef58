//! Servers the harness starts in the background for a section (the MCP fixture, server-everything
//! and the Python SDK server over streamable HTTP, the registry fixture), killed when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::command::tail;
use crate::paths::Paths;

/// A server the harness started, killed (by its pid) when dropped.
pub struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The MCP fixture over streamable HTTP (with `extra` arguments) and its endpoint.
pub fn start_fixture_http(paths: &Paths, extra: &[&str]) -> Result<(Background, String), String> {
    let mut command = Command::new(&paths.fixture);
    command
        .args(["--transport", "http", "--port", "0"])
        .args(extra)
        .stdin(Stdio::null());
    let (server, port) = start_printing_port(command, "mcp-fixture")?;
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// server-everything over streamable HTTP and its endpoint.
pub fn start_everything_http(paths: &Paths) -> Result<(Background, String), String> {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(&paths.everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null());
    let server = start_on_port(command, port, Duration::from_secs(30), "server-everything")?;
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// The Python SDK's server over streamable HTTP and its endpoint.
pub fn start_python_http(paths: &Paths) -> Result<(Background, String), String> {
    let port = free_port();
    let mut command = Command::new(&paths.python);
    command
        .arg(&paths.python_server)
        .args(["streamable-http", &port.to_string()])
        .stdin(Stdio::null());
    let server = start_on_port(command, port, Duration::from_secs(60), "python server")?;
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// A registry fixture (`target/release/registry-fixture ARGS`) and its base URL. Its stdin
/// stays open: it exits when that closes.
pub fn start_registry(paths: &Paths, args: &[&str]) -> Result<(Background, String), String> {
    let mut command = Command::new(&paths.registry_fixture);
    command.args(args).stdin(Stdio::piped());
    let (server, port) = start_printing_port(command, "registry-fixture")?;
    Ok((server, format!("http://127.0.0.1:{port}")))
}

/// `POST path body` to a fixture at `url`, which must answer 200.
pub fn post(url: &str, path: &str, body: &str) -> Result<(), String> {
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
    let server = Background(child);
    let port = line
        .trim()
        .strip_prefix("PORT=")
        .ok_or(format!("{what} printed {line:?}"))?
        .to_owned();
    Ok((server, port))
}

/// Start `command` (its output discarded), told to listen on `port`, and wait until it does.
fn start_on_port(
    mut command: Command,
    port: u16,
    limit: Duration,
    what: &str,
) -> Result<Background, String> {
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{what}: {e}"))?;
    let server = Background(child);
    wait_for_port(port, limit)?;
    Ok(server)
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
