//! The registry fixture (`fixtures/registry-fixture`: the real snapshot served through the
//! registry API, plus rows tests add), on an ephemeral loopback port, stopped when dropped; and
//! `uv` from `.tools/uv-venv` for PyPI launches.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The `registry-fixture` binary, built once per test run.
pub fn registry_fixture_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test exe");
        let dir = exe
            .parent()
            .and_then(|p| p.parent())
            .expect("target dir")
            .to_path_buf();
        let bin = dir.join(format!("registry-fixture{}", std::env::consts::EXE_SUFFIX));
        if std::env::var_os("PLUGBOARD_SKIP_FIXTURE_BUILD").is_none() || !bin.exists() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--quiet", "-p", "registry-fixture"])
                .current_dir(super::repo_root())
                .status()
                .expect("run cargo build -p registry-fixture");
            assert!(status.success(), "cargo build -p registry-fixture failed");
        }
        assert!(bin.exists(), "{} is missing", bin.display());
        bin
    })
    .clone()
}

/// A running registry fixture.
pub struct RegistryFixture {
    child: Child,
    pub port: u16,
}

impl RegistryFixture {
    pub fn start(args: &[&str]) -> RegistryFixture {
        let mut child = Command::new(registry_fixture_bin())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn registry-fixture");
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
            for _ in lines {}
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(port)) => RegistryFixture { child, port },
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("registry-fixture did not print PORT=");
            }
        }
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn request(&self, method: &str, path: &str, body: &str) -> String {
        let mut stream =
            std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect to the fixture");
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        assert!(
            head.starts_with("HTTP/1.1 200"),
            "{method} {path}: {head}\n{body}"
        );
        body.to_owned()
    }

    /// `POST path` with a JSON body; the answer's body.
    pub fn post(&self, path: &str, body: &serde_json::Value) -> serde_json::Value {
        serde_json::from_str(&self.request("POST", path, &body.to_string())).expect("JSON answer")
    }

    /// `GET /fixture/stats`.
    pub fn stats(&self) -> serde_json::Value {
        serde_json::from_str(&self.request("GET", "/fixture/stats", "")).expect("JSON answer")
    }
}

impl Drop for RegistryFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The directory holding `uv` and `uvx` (`.tools/uv-venv/bin`, made by scripts/setup).
pub fn uv_bin_dir() -> PathBuf {
    let dir = super::repo_root().join(".tools/uv-venv/bin");
    assert!(
        dir.join("uvx").exists(),
        "{} is missing: run scripts/setup, which installs uv from PyPI into .tools/uv-venv",
        dir.join("uvx").display()
    );
    dir
}

/// PATH with `uvx` first.
pub fn path_with_uv() -> String {
    format!(
        "{}:{}",
        uv_bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
