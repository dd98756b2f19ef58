//! What can run on this machine: whether the program an option launches (`npx`, `uvx`,
//! `docker`, `dnx`, …) is found on PATH or on the login shell's PATH, and whether the Docker
//! daemon answers. The form engine asks it to pick the default option (one that can run here)
//! and to say why the others cannot, with the doctor's fix; answers are cached for the process
//! ([`SystemRuntimes::refresh`] forgets them, e.g. after the user installed Docker).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::connect::env::find_command;

/// How long `docker info` may take.
const DOCKER_TIMEOUT: Duration = Duration::from_secs(4);

/// Why an option cannot be used here, and what fixes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unavailable {
    /// Stable: `runtime.missing`, `runtime.docker_daemon`, `unsupported`.
    pub code: String,
    pub reason: String,
    /// What to do (the doctor's fix); empty when nothing can be done here.
    pub fix: String,
}

/// A runtime a command needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    /// What people call it ("Node.js").
    pub label: &'static str,
    /// The program whose version is checked.
    pub program: &'static str,
    pub install: &'static str,
    /// The oldest major.minor that MCP servers commonly support.
    pub minimum: Option<(u32, u32)>,
}

const NODE: Runtime = Runtime {
    label: "Node.js",
    program: "node",
    install: "install Node.js 18 or newer (https://nodejs.org, or nvm/fnm/volta), which also \
              provides npx",
    minimum: Some((18, 0)),
};
const PYTHON: Runtime = Runtime {
    label: "Python",
    program: "python3",
    install: "install Python 3.10 or newer (https://www.python.org, or your package manager)",
    minimum: Some((3, 10)),
};
const UV: Runtime = Runtime {
    label: "uv",
    program: "uv",
    install: "install uv, which provides uvx (https://docs.astral.sh/uv/getting-started/installation/)",
    minimum: None,
};
const DOTNET: Runtime = Runtime {
    label: ".NET",
    program: "dotnet",
    install: "install the .NET 10 SDK (https://dotnet.microsoft.com/download), which provides dnx",
    minimum: Some((10, 0)),
};
const BUN: Runtime = Runtime {
    label: "Bun",
    program: "bun",
    install: "install Bun (https://bun.sh), which provides bunx",
    minimum: None,
};
const DOCKER: Runtime = Runtime {
    label: "Docker",
    program: "docker",
    install: "install Docker (Docker Desktop, or Docker Engine on Linux)",
    minimum: None,
};

/// The runtime behind a program name (`npx` → Node.js), if it is a known one.
pub fn runtime_of(program: &str) -> Option<Runtime> {
    let base = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program)
        .trim_end_matches(".exe")
        .trim_end_matches(".cmd");
    Some(match base {
        "node" | "npx" | "npm" | "pnpm" | "pnpx" | "yarn" => NODE,
        "uv" | "uvx" => UV,
        "docker" | "podman" => DOCKER,
        "dnx" | "dotnet" => DOTNET,
        "bun" | "bunx" => BUN,
        b if b == "python" || b.starts_with("python3") || b == "pip" || b == "pip3" => PYTHON,
        _ => return None,
    })
}

/// Answers "is this program here" and "is Docker running".
pub trait RuntimeCheck: Send + Sync {
    fn found(&self, program: &str) -> bool;
    fn docker_running(&self) -> bool;
}

/// The real machine, asked once per program and process.
#[derive(Default)]
pub struct SystemRuntimes {
    programs: Mutex<HashMap<String, bool>>,
    docker: Mutex<Option<bool>>,
}

/// The machine's runtimes (one cache per process).
pub fn system() -> &'static SystemRuntimes {
    static SYSTEM: OnceLock<SystemRuntimes> = OnceLock::new();
    SYSTEM.get_or_init(SystemRuntimes::default)
}

impl SystemRuntimes {
    /// Forget every answer: the next questions look again.
    pub fn refresh(&self) {
        self.programs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        *self.docker.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl RuntimeCheck for SystemRuntimes {
    fn found(&self, program: &str) -> bool {
        let mut programs = self.programs.lock().unwrap_or_else(|p| p.into_inner());
        *programs
            .entry(program.to_owned())
            .or_insert_with(|| find_command(program, None, None).is_ok())
    }

    fn docker_running(&self) -> bool {
        let mut docker = self.docker.lock().unwrap_or_else(|p| p.into_inner());
        *docker.get_or_insert_with(|| self.found("docker") && docker_answers())
    }
}

/// `docker info` succeeds within [`DOCKER_TIMEOUT`].
fn docker_answers() -> bool {
    let Ok(found) = find_command("docker", None, None) else {
        return false;
    };
    let Ok(mut child) = std::process::Command::new(found.path)
        .args(["info", "--format", "{{.ServerVersion}}"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return false;
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if started.elapsed() < DOCKER_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// A fixed answer, for tests: these programs exist, Docker runs or not.
pub struct FixedRuntimes {
    pub programs: Vec<String>,
    pub docker: bool,
}

impl FixedRuntimes {
    /// Every program present and Docker running.
    pub fn everything() -> FixedRuntimes {
        FixedRuntimes {
            programs: vec!["*".into()],
            docker: true,
        }
    }

    /// Nothing at all.
    pub fn nothing() -> FixedRuntimes {
        FixedRuntimes {
            programs: vec![],
            docker: false,
        }
    }
}

impl RuntimeCheck for FixedRuntimes {
    fn found(&self, program: &str) -> bool {
        self.programs.iter().any(|p| p == "*" || p == program)
    }
    fn docker_running(&self) -> bool {
        self.docker
    }
}

/// The runtime's name for people ("Node.js"), if the program is a known runner.
pub fn runtime_label(program: &str) -> Option<&'static str> {
    runtime_of(program).map(|r| r.label)
}

/// Why `program` cannot run here, with the doctor's fix; `None` when it can.
pub fn availability(program: &str, check: &dyn RuntimeCheck) -> Option<Unavailable> {
    let runtime = runtime_of(program);
    if !check.found(program) {
        let (reason, fix) = match &runtime {
            Some(rt) => (
                format!("needs {} (`{program}` is not installed here)", rt.label),
                format!("{}; then check with `plugboard doctor`", rt.install),
            ),
            None => (
                format!("`{program}` is not installed here"),
                format!(
                    "install `{program}` (or put it on PATH); then check with `plugboard doctor`"
                ),
            ),
        };
        return Some(Unavailable {
            code: "runtime.missing".into(),
            reason,
            fix,
        });
    }
    let docker = matches!(runtime, Some(rt) if rt.program == "docker");
    if docker && program == "docker" && !check.docker_running() {
        return Some(Unavailable {
            code: "runtime.docker_daemon".into(),
            reason: "needs Docker running (the Docker daemon does not answer)".into(),
            fix: "start Docker (Docker Desktop, or `sudo systemctl start docker`) and make sure \
                  your user may use it (the `docker` group on Linux)"
                .into(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_runtimes_say_why_and_how_to_fix() {
        let none = FixedRuntimes::nothing();
        let why = availability("uvx", &none).unwrap();
        assert_eq!(why.code, "runtime.missing");
        assert!(why.reason.contains("uv"), "{why:?}");
        assert!(why.fix.contains("docs.astral.sh"), "{why:?}");
        let docker_stopped = FixedRuntimes {
            programs: vec!["docker".into()],
            docker: false,
        };
        assert_eq!(
            availability("docker", &docker_stopped).unwrap().code,
            "runtime.docker_daemon"
        );
        assert_eq!(availability("npx", &FixedRuntimes::everything()), None);
        assert!(availability("my-tool", &none).unwrap().fix.contains("PATH"));
    }
}
