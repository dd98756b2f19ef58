//! A stdio server's command and runtime: found on this process's PATH or only on the login
//! shell's (which apps launched from the desktop do not get), the runtime it needs (`node`,
//! Python, `uv`, `docker` and its daemon, a script's `#!` interpreter) and its version.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Finding;
use crate::config::{ConfigValue, ServerConfig};
use crate::connect::env::{FoundCommand, LookupError, find_command, login_shell_path};
use crate::resolve::command_not_found_hint;
use crate::runtimes::{Runtime, runtime_of};

/// How long `--version` and `docker info` may take.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// The interpreter a script's `#!` line names (`#!/usr/bin/env node` → `node`).
pub fn shebang_interpreter(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    let line = text.strip_prefix("#!")?.lines().next()?.trim().to_owned();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if Path::new(first).file_name().and_then(|n| n.to_str()) == Some("env") {
        words.find(|w| !w.starts_with('-')).map(str::to_owned)
    } else {
        Some(first.to_owned())
    }
}

fn server_path(server: &ServerConfig) -> Option<String> {
    match server.env.get("PATH") {
        Some(ConfigValue::Plain(path)) => Some(path.clone()),
        _ => None,
    }
}

/// Check the command of stdio server `server`; `false` when running it is pointless.
pub async fn check(server: &ServerConfig, out: &mut Vec<Finding>) -> bool {
    let Some(command) = server.command.as_deref() else {
        out.push(Finding::error(
            "config.no_command",
            "this stdio server has no command",
            "add the command to the server's config",
        ));
        return false;
    };
    let cwd = server.cwd.as_deref().map(Path::new);
    let own_path = server_path(server);
    let found = find_command(command, cwd, own_path.as_deref());
    let runtime = runtime_of(command);
    match found {
        Err(LookupError::NotFound {
            checked_login_shell,
        }) => {
            match runtime {
                Some(rt) => out.push(Finding::error(
                    "runtime.missing",
                    format!(
                        "`{command}` ({}) is not installed: it is not on PATH{}",
                        rt.label,
                        if checked_login_shell {
                            " nor on your login shell's PATH"
                        } else {
                            ""
                        }
                    ),
                    format!("{}; then run `plugboard doctor` again", rt.install),
                )),
                None => out.push(Finding::error(
                    "command.not_found",
                    format!(
                        "the command `{command}` was not found{}",
                        if checked_login_shell {
                            " on PATH or on your login shell's PATH"
                        } else {
                            ""
                        }
                    ),
                    command_not_found_hint(command, checked_login_shell),
                )),
            }
            false
        }
        Err(LookupError::NotExecutable(path)) => {
            out.push(Finding::error(
                "command.not_executable",
                format!("`{}` exists but is not executable", path.display()),
                format!(
                    "make it executable (`chmod +x {}`) or fix the command",
                    path.display()
                ),
            ));
            false
        }
        Ok(found) => {
            login_shell_findings(command, cwd, &found, out);
            let interpreter = shebang_interpreter(&found.path);
            let needed = runtime.or_else(|| interpreter.as_deref().and_then(runtime_of));
            let mut proceed = true;
            if let Some(interpreter) = &interpreter
                && !interpreter_found(interpreter, cwd)
            {
                let install = runtime_of(interpreter)
                    .map(|r| r.install.to_owned())
                    .unwrap_or_else(|| {
                        format!("install `{interpreter}` or fix the script's first line")
                    });
                out.push(Finding::error(
                    "runtime.missing",
                    format!(
                        "`{}` is a script for `{interpreter}` (its `#!` line), which is not installed \
                         or not on PATH",
                        found.path.display()
                    ),
                    install,
                ));
                proceed = false;
            }
            if let Some(rt) = needed
                && proceed
            {
                proceed = check_runtime(&rt, &found, out).await;
            }
            proceed
        }
    }
}

fn interpreter_found(interpreter: &str, cwd: Option<&Path>) -> bool {
    find_command(interpreter, cwd, None).is_ok()
}

fn login_shell_findings(
    command: &str,
    cwd: Option<&Path>,
    found: &FoundCommand,
    out: &mut Vec<Finding>,
) {
    let dir = found
        .path
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    if found.via_login_shell {
        out.push(Finding::warning(
            "command.login_shell_only",
            format!(
                "`{command}` is found only on your login shell's PATH (as {}), not on this \
                 process's PATH: an app launched from the desktop (and MCP clients started that \
                 way) would miss it",
                found.path.display()
            ),
            format!(
                "use the absolute path `{}` as the command, or add `{dir}` to the PATH of your \
                 desktop session (e.g. ~/.profile or ~/.config/environment.d on Linux, \
                 `launchctl setenv` on macOS)",
                found.path.display()
            ),
        ));
        return;
    }
    if command.contains('/') {
        return;
    }
    if let Some(login) = login_shell_path()
        && let Ok(in_login) = find_command(command, cwd, Some(login))
        && in_login.path != found.path
    {
        out.push(Finding::info(
            "command.path_differs",
            format!(
                "`{command}` resolves to {} here but to {} in your login shell; a terminal and \
                 the desktop may run different versions",
                found.path.display(),
                in_login.path.display()
            ),
        ));
    }
}

/// Run `program args` with a timeout; `None` when it cannot run, fails or times out.
pub async fn run_quick(program: &Path, args: &[&str], timeout: Duration) -> Option<String> {
    let child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let out = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Some(if text.is_empty() {
        String::from_utf8_lossy(&out.stderr).trim().to_owned()
    } else {
        text
    })
}

/// `major.minor` of the first version-looking word of `text` ("v20.11.1" → (20, 11)).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let re = regex::Regex::new(r"([0-9]+)\.([0-9]+)").ok()?;
    let caps = re.captures(text)?;
    Some((caps[1].parse().ok()?, caps[2].parse().ok()?))
}

async fn check_runtime(rt: &Runtime, command: &FoundCommand, out: &mut Vec<Finding>) -> bool {
    // The runtime program next to the command first (an nvm bin dir holds node and npx).
    let beside: Option<PathBuf> = command
        .path
        .parent()
        .map(|d| d.join(rt.program))
        .filter(|p| p.is_file());
    let program = match beside {
        Some(path) => path,
        None => match find_command(rt.program, None, None) {
            Ok(found) => found.path,
            Err(_) if rt.program == "python3" => command.path.clone(),
            Err(_) => {
                out.push(Finding::error(
                    "runtime.missing",
                    format!(
                        "`{}` needs {}, but `{}` is not on PATH or on your login shell's PATH",
                        command.path.display(),
                        rt.label,
                        rt.program
                    ),
                    rt.install,
                ));
                return false;
            }
        },
    };
    match run_quick(&program, &["--version"], VERSION_TIMEOUT).await {
        None => {
            out.push(Finding::warning(
                "runtime.broken",
                format!(
                    "`{} --version` failed or took longer than {} s",
                    program.display(),
                    VERSION_TIMEOUT.as_secs()
                ),
                format!("check the {} installation: {}", rt.label, rt.install),
            ));
        }
        Some(version) => {
            let line = version.lines().next().unwrap_or("").to_owned();
            match (rt.minimum, parse_version(&line)) {
                (Some(min), Some(have)) if have < min => out.push(Finding::warning(
                    "runtime.version",
                    format!(
                        "{} {line} ({}) is older than {}.{}, which MCP servers commonly need",
                        rt.label,
                        program.display(),
                        min.0,
                        min.1
                    ),
                    rt.install,
                )),
                _ => out.push(Finding::info(
                    "runtime.version",
                    format!("{}: {line} ({})", rt.label, program.display()),
                )),
            }
        }
    }
    if rt.program == "docker"
        && run_quick(
            &program,
            &["info", "--format", "{{.ServerVersion}}"],
            VERSION_TIMEOUT,
        )
        .await
        .is_none()
    {
        out.push(Finding::error(
            "runtime.docker_daemon",
            format!(
                "the Docker daemon does not answer `docker info` within {} s",
                VERSION_TIMEOUT.as_secs()
            ),
            "start Docker (Docker Desktop, or `sudo systemctl start docker`) and make sure your \
             user may use it (the `docker` group on Linux)",
        ));
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_and_versions() {
        assert_eq!(runtime_of("npx").unwrap().program, "node");
        assert_eq!(runtime_of("/usr/bin/python3.12").unwrap().label, "Python");
        assert_eq!(runtime_of("uvx").unwrap().program, "uv");
        assert!(runtime_of("my-server").is_none());
        assert_eq!(parse_version("v20.11.1"), Some((20, 11)));
        assert_eq!(parse_version("Python 3.9.2"), Some((3, 9)));
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s");
        std::fs::write(&script, "#!/usr/bin/env -S node --foo\n").unwrap();
        assert_eq!(shebang_interpreter(&script).as_deref(), Some("node"));
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(shebang_interpreter(&script).as_deref(), Some("/bin/sh"));
    }
}
