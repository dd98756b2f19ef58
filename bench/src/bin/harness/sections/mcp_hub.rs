//! mcp-hub (npm), a peer of the gateway section: started on a free loopback port with a config
//! of servers (the `mcpServers` format FastMCP's proxy reads too), its files kept in the
//! scratch directory, reached on its unified endpoint (`/mcp`), which speaks the HTTP+SSE
//! transport of MCP 2024-11-05, and stopped with SIGTERM (it closes its servers). At start it
//! fetches a marketplace catalog from the web; here that fails at once and it goes on without.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::paths::{self, Paths};

pub struct McpHub {
    child: Child,
    /// Its unified endpoint.
    pub url: String,
    /// When it was launched.
    pub launched: Instant,
}

impl McpHub {
    /// Launch mcp-hub in front of the servers of `config`; it is ready once its endpoint lists
    /// their tools ([`McpHub::listed`]).
    pub fn launch(paths: &Paths, config: &Path) -> Result<McpHub, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let files = paths.scratch.join(format!("mcp-hub-{port}"));
        let launched = Instant::now();
        let child = Command::new("node")
            .arg(&paths.mcp_hub)
            .args(["--port", &port.to_string(), "--config"])
            .arg(config)
            .env("XDG_STATE_HOME", files.join("state"))
            .env("XDG_DATA_HOME", files.join("data"))
            .env("XDG_CONFIG_HOME", files.join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("node {}: {e}", paths::arg(&paths.mcp_hub)))?;
        Ok(McpHub {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            launched,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The time from its launch until the floor client, trying every 10 ms, is listed at least
    /// `expected` tools on its endpoint (within `limit`); how many it was listed last, else.
    pub fn listed(
        &self,
        floor: &Path,
        expected: usize,
        limit: Duration,
    ) -> Result<Duration, String> {
        let mut last = String::from("no answer");
        while self.launched.elapsed() < limit {
            let out = Command::new(floor)
                .args(["--times", "0", "sse", &self.url])
                .stdin(Stdio::null())
                .output()
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                let report: serde_json::Value =
                    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
                let listed = report["tools"].as_array().map_or(0, Vec::len);
                if listed >= expected {
                    return Ok(self.launched.elapsed());
                }
                last = format!("listed {listed} of {expected} tools");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!("mcp-hub: {last} within {} s", limit.as_secs()))
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        // SIGTERM, so that it closes its servers; SIGKILL if it has not within 10 s.
        unsafe { kill(self.child.id() as i32, 15) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}
