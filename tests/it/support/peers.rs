//! Third-party MCP servers for the interoperability tests: `@modelcontextprotocol/server-everything`
//! (from `tests/peers/node_modules`, run with node) and a server on the official Python SDK
//! (`.tools/peers-venv`, 2.3) and its 1.x line (`.tools/peers-venv-1x`). `scripts/setup`
//! installs them.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::repo_root;

/// `node` and the path of server-everything's entry point.
pub fn everything_command() -> (String, PathBuf) {
    let script = repo_root()
        .join("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "{} is missing: run scripts/setup (or scripts/test), which installs the test peers",
        script.display()
    );
    ("node".into(), script)
}

/// The Python interpreter of the peers' virtualenv and our SDK server script.
pub fn python_command() -> (PathBuf, PathBuf) {
    let python = repo_root().join(".tools/peers-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup (or scripts/test), which creates it with the mcp SDK",
        python.display()
    );
    (python, repo_root().join("tests/peers/python_server.py"))
}

/// The Python interpreter of the 1.x SDK's virtualenv and our 1.x server script.
pub fn python_v1_command() -> (PathBuf, PathBuf) {
    let python = repo_root().join(".tools/peers-venv-1x/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup (or scripts/test), which creates it with mcp==1.12.4",
        python.display()
    );
    (python, repo_root().join("tests/peers/python_server_v1.py"))
}

/// A free loopback port (bound, then released for the server to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A background server process, killed (by its pid) when dropped.
pub struct Background {
    child: Child,
    pub port: u16,
}

impl Background {
    /// Start `command` and wait until something listens on `port`.
    pub fn start(mut command: Command, port: u16) -> Background {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start peer server");
        let mut server = Background { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the peer server exited early: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the peer server did not listen on {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
