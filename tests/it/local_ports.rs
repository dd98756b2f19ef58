//! A server Plugboard starts locally and reaches over HTTP is reached on a port any local program
//! could take. One that took it first, or one that listens there outside the started process
//! group, never gets the server's credentials.

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fixture::fixture_bin;
use crate::support::{Home, stdout};

/// Write a locally started streamable-HTTP server `name` on `port` whose launch is `command`,
/// with a bearer token in its headers.
fn local_server(home: &Home, name: &str, port: u16, command: &str, args: &[String]) {
    let config = json!({"version": 1, "servers": {name: {
        "type": "shttp",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"Authorization": "Bearer tok-for-the-real-server-only"},
        "launch": {"command": command, "args": args},
    }}});
    std::fs::write(
        home.config_path(),
        serde_json::to_vec_pretty(&config).unwrap(),
    )
    .unwrap();
}

/// Whatever reached `listener` within a moment (it is nonblocking).
fn received(listener: &TcpListener) -> String {
    std::thread::sleep(Duration::from_millis(200));
    let mut seen = String::new();
    while let Ok((mut stream, _)) = listener.accept() {
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut buf = [0u8; 4096];
        if let Ok(n) = stream.read(&mut buf) {
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        seen.push_str("<connection>");
    }
    seen
}

#[test]
fn a_port_taken_before_the_start_is_refused() {
    let home = Home::new();
    let squatter = TcpListener::bind("127.0.0.1:0").unwrap();
    squatter.set_nonblocking(true).unwrap();
    let port = squatter.local_addr().unwrap().port();
    let fixture = fixture_bin();
    let args = ["--transport", "http", "--port", &port.to_string()].map(String::from);
    local_server(&home, "squatted", port, fixture.to_str().unwrap(), &args);
    let out = home.run(&["test", "squatted", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(error.contains("already listens"), "{result}");
    assert_eq!(received(&squatter), "", "the squatter was contacted");
}

#[test]
fn a_listener_outside_the_started_process_group_is_refused() {
    let home = Home::new();
    let port = crate::support::peers::free_port();
    // The launch starts a listener in a session of its own (so not in the group Plugboard
    // started), as a program racing for the port would be.
    let script = format!(
        "setsid python3 -c 'import socket,time; s=socket.socket(); \
         s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\",{port})); \
         s.listen(); time.sleep(8)' & sleep 8"
    );
    local_server(&home, "raced", port, "sh", &["-c".into(), script]);
    let out = home.run(&["test", "raced", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("is not the one Plugboard started"),
        "{result}"
    );
}

#[test]
fn the_real_server_on_its_own_port_still_works() {
    let home = Home::new();
    let port = crate::support::peers::free_port();
    let fixture = fixture_bin();
    let args = ["--transport", "http", "--port", &port.to_string()].map(String::from);
    local_server(&home, "own", port, fixture.to_str().unwrap(), &args);
    let out = home.run(&["test", "own", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], true, "{result}");
}
