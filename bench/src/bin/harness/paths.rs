//! Where the harness finds what bench/run built and installed (the plugboard binary, the
//! fixtures, the floor client, the peers), and the scratch directory for throwaway homes.

use std::path::{Path, PathBuf};

pub struct Paths {
    pub root: PathBuf,
    pub plugboard: PathBuf,
    pub fixture: PathBuf,
    pub registry_fixture: PathBuf,
    pub floor: PathBuf,
    pub inspector: PathBuf,
    /// mcp-hub's command line program (run with node).
    pub mcp_hub: PathBuf,
    pub python: PathBuf,
    pub python_client: PathBuf,
    pub python_server: PathBuf,
    pub everything: PathBuf,
    pub app_probe: PathBuf,
    pub scratch: PathBuf,
}

impl Paths {
    /// The paths under `root`, once the prerequisites every run needs are there, with an empty
    /// scratch directory.
    pub fn prepare(root: &Path) -> Result<Paths, String> {
        let paths = Paths::under(root);
        paths.require_built()?;
        let _ = std::fs::remove_dir_all(&paths.scratch);
        std::fs::create_dir_all(&paths.scratch).map_err(|e| e.to_string())?;
        Ok(paths)
    }

    fn under(root: &Path) -> Paths {
        Paths {
            root: root.to_path_buf(),
            plugboard: root.join("target/release/plugboard"),
            fixture: root.join("target/release/mcp-fixture"),
            registry_fixture: root.join("target/release/registry-fixture"),
            floor: root.join("target/bench-tools/release/floor"),
            inspector: root.join("bench/node_modules/.bin/mcp-inspector"),
            mcp_hub: root.join("bench/node_modules/mcp-hub/dist/cli.js"),
            python: root.join(".tools/peers-venv/bin/python"),
            python_client: root.join("bench/python_client.py"),
            python_server: root.join("tests/peers/python_server.py"),
            everything: root.join(
                "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ),
            app_probe: root.join("bench/app-probe"),
            scratch: root.join("target/bench/scratch"),
        }
    }

    fn require_built(&self) -> Result<(), String> {
        for p in [
            &self.plugboard,
            &self.fixture,
            &self.floor,
            &self.inspector,
            &self.mcp_hub,
            &self.python,
            &self.everything,
        ] {
            if !p.exists() {
                return Err(format!("{} is missing: run bench/run", p.display()));
            }
        }
        Ok(())
    }

    /// A fresh, empty Plugboard home (nothing of the user's is read or written).
    pub fn home(&self, name: &str) -> PathBuf {
        let dir = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }
}

/// `path` as a command-line argument.
pub fn arg(path: &Path) -> String {
    path.display().to_string()
}

/// `plugboard ARGS…` with `PLUGBOARD_HOME` = `home`, which must succeed (set-up steps).
pub fn plugboard_in(paths: &Paths, home: &Path, args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new(&paths.plugboard)
        .args(args)
        .env("PLUGBOARD_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "plugboard {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
