//! The environment a stdio server starts with, and finding its command.
//!
//! A server gets a small, sane base environment (PATH, HOME, USER, locale, temp dir, proxies,
//! the TLS trust and package-index settings that runtimes need to reach their registries, and
//! on Windows the variables programs cannot run without) plus its own configured env on top,
//! never the whole environment of Plugboard: a desktop app's environment is full of
//! unrelated (and sometimes secret) variables. Commands are looked up on PATH and, when that
//! fails, on the user's login-shell PATH, because a desktop app launched from a menu usually
//! lacks the PATH entries (nvm, Homebrew, ~/.local/bin) that the user's terminal has.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// Variables passed from Plugboard's environment to every stdio server, when set.
#[cfg(unix)]
pub const BASE_VARS: &[&str] = &[
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
    // TLS trust: `uvx` and `npx` fetch packages over TLS, and a machine whose trust comes from
    // these (a corporate proxy's CA) fails every first launch without them.
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// Prefixes of variables also passed through: package-index, proxy and cache settings of pip,
/// uv and npm (`PIP_INDEX_URL`, `UV_INDEX_URL`, `npm_config_registry`, …), never their
/// credentials (see [`index_setting`]).
pub const BASE_PREFIXES: &[&str] = &["PIP_", "UV_", "npm_config_", "NPM_CONFIG_"];

/// Words in a package-index variable's name that make it a credential (`UV_INDEX_1_PASSWORD`,
/// `npm_config__authToken`, `npm_config_//host/:_auth`, `PIP_CLIENT_CERT` is a path and passes).
const CREDENTIAL_WORDS: &[&str] = &["PASSWORD", "TOKEN", "AUTH", "SECRET", "USERNAME", "_KEY"];

/// What a package-index variable passes on to a server: `None` for a credential (the server,
/// not only its runner, would see it: the runner starts the server with its own environment),
/// and an index URL without the user and password it may carry
/// (`PIP_INDEX_URL=https://user:pw@host/simple` passes as `https://host/simple`). A private
/// index's credentials belong in the runner's own configuration (`~/.npmrc`, `pip.conf`, a
/// keyring provider, `~/.netrc`), which Plugboard leaves alone.
pub fn index_setting(name: &str, value: OsString) -> Option<OsString> {
    let upper = name.to_ascii_uppercase();
    if CREDENTIAL_WORDS.iter().any(|w| upper.contains(w)) {
        return None;
    }
    let Some(text) = value.to_str() else {
        return Some(value);
    };
    // Index variables may hold several URLs separated by spaces (pip's extra index URLs).
    let cleaned: Vec<String> = text.split(' ').map(without_userinfo).collect();
    Some(OsString::from(cleaned.join(" ")))
}

/// `scheme://user:pw@host/…` without `user:pw@`; anything else unchanged.
fn without_userinfo(word: &str) -> String {
    let Some((scheme, rest)) = word.split_once("://") else {
        return word.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => word.to_owned(),
    }
}

/// Variables passed from Plugboard's environment to every stdio server, when set.
#[cfg(windows)]
pub const BASE_VARS: &[&str] = &[
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "TEMP",
    "TMP",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

#[cfg(unix)]
const PATH_SEP: char = ':';
#[cfg(windows)]
const PATH_SEP: char = ';';

/// How long the login shell may take to print its PATH.
pub const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(3);
const PATH_MARKER: &str = "__PLUGBOARD_PATH__=";

/// The base environment for a stdio server: [`BASE_VARS`] from this process plus `PATH`,
/// which joins this process's PATH, the login shell's PATH (when it was needed to find the
/// command) and the directory of the resolved command.
pub fn base_env(command_dir: Option<&Path>, use_login_path: bool) -> Vec<(String, OsString)> {
    let mut env: Vec<(String, OsString)> = BASE_VARS
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|v| ((*name).to_owned(), v)))
        .collect();
    env.extend(std::env::vars_os().filter_map(|(k, v)| {
        let k = k.into_string().ok()?;
        if !BASE_PREFIXES
            .iter()
            .any(|p| k.starts_with(p) && k.len() > p.len())
        {
            return None;
        }
        let v = index_setting(&k, v)?;
        Some((k, v))
    }));
    let mut dirs: Vec<PathBuf> = vec![];
    if let Some(dir) = command_dir {
        dirs.push(dir.to_path_buf());
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    if use_login_path && let Some(login) = login_shell_path() {
        dirs.extend(std::env::split_paths(login));
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| !d.as_os_str().is_empty() && seen.insert(d.clone()));
    if let Ok(joined) = std::env::join_paths(&dirs) {
        env.push(("PATH".to_owned(), joined));
    }
    env
}

/// Where `command` was found, and whether finding it needed the login shell's PATH.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCommand {
    pub path: PathBuf,
    pub via_login_shell: bool,
}

/// Why a command could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// Not on any PATH searched (or, for a path, no such file).
    NotFound { checked_login_shell: bool },
    /// It exists but cannot be executed.
    NotExecutable(PathBuf),
}

/// Find `command`: a path (absolute, or relative to `cwd`) is checked as is; a bare name is
/// looked up on `env_path` (the server's own PATH, when its config sets one), then on this
/// process's PATH, then on the login shell's PATH.
pub fn find_command(
    command: &str,
    cwd: Option<&Path>,
    env_path: Option<&str>,
) -> Result<FoundCommand, LookupError> {
    let has_separator = command.contains('/') || (cfg!(windows) && command.contains('\\'));
    if has_separator {
        let mut path = PathBuf::from(command);
        if path.is_relative()
            && let Some(cwd) = cwd
        {
            path = cwd.join(path);
        }
        return match check_executable(&path) {
            Some(Ok(found)) => Ok(FoundCommand {
                path: found,
                via_login_shell: false,
            }),
            Some(Err(())) => Err(LookupError::NotExecutable(path)),
            None => Err(LookupError::NotFound {
                checked_login_shell: false,
            }),
        };
    }
    let mut not_executable = None;
    let own = env_path
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    if let Some(path) = own {
        match search(command, &path) {
            Ok(found) => {
                return Ok(FoundCommand {
                    path: found,
                    via_login_shell: false,
                });
            }
            Err(bad) => not_executable = not_executable.or(bad),
        }
    }
    if let Some(login) = login_shell_path() {
        match search(command, &OsString::from(login)) {
            Ok(found) => {
                return Ok(FoundCommand {
                    path: found,
                    via_login_shell: true,
                });
            }
            Err(bad) => not_executable = not_executable.or(bad),
        }
    }
    match not_executable {
        Some(path) => Err(LookupError::NotExecutable(path)),
        None => Err(LookupError::NotFound {
            checked_login_shell: true,
        }),
    }
}

/// The first executable `name` in the directories of `path`; on failure, a file that exists
/// but is not executable, if one was seen.
fn search(name: &str, path: &OsString) -> Result<PathBuf, Option<PathBuf>> {
    let mut not_executable = None;
    for dir in std::env::split_paths(path) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        for candidate in candidates(&dir, name) {
            match check_executable(&candidate) {
                Some(Ok(found)) => return Ok(found),
                Some(Err(())) => not_executable = not_executable.or(Some(candidate)),
                None => {}
            }
        }
    }
    Err(not_executable)
}

#[cfg(unix)]
fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    vec![dir.join(name)]
}

#[cfg(windows)]
fn candidates(dir: &Path, name: &str) -> Vec<PathBuf> {
    let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    let mut out = vec![];
    if Path::new(name).extension().is_some() {
        out.push(dir.join(name));
    }
    for ext in exts.split(';').filter(|e| !e.is_empty()) {
        out.push(dir.join(format!("{name}{ext}")));
    }
    out
}

/// `None`: no such file; `Some(Ok)`: an executable file; `Some(Err)`: exists, cannot run.
fn check_executable(path: &Path) -> Option<Result<PathBuf, ()>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(Err(()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Some(Err(()));
        }
    }
    Some(Ok(path.to_path_buf()))
}

/// The PATH of the user's login shell (`$SHELL -lc`), asked once per process and cached.
/// `None` when there is no shell, it fails, or it takes longer than [`LOGIN_SHELL_TIMEOUT`].
pub fn login_shell_path() -> Option<&'static str> {
    static CACHE: OnceLock<Option<String>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            #[cfg(unix)]
            {
                let shell = std::env::var_os("SHELL")
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "/bin/sh".into());
                query_login_shell_path(Path::new(&shell), LOGIN_SHELL_TIMEOUT)
            }
            #[cfg(not(unix))]
            {
                None
            }
        })
        .as_deref()
}

/// Run `shell -lc` to print its PATH after a marker (profiles may print other text), with a
/// timeout; the shell runs in its own process group, which is killed on timeout.
#[cfg(unix)]
pub fn query_login_shell_path(shell: &Path, timeout: Duration) -> Option<String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    let mut child = Command::new(shell)
        .arg("-lc")
        .arg(format!("printf '\\n{PATH_MARKER}%s\\n' \"$PATH\""))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let pid = child.id() as i32;
    let mut stdout = child.stdout.take()?;
    // Read on a thread so a shell that never exits cannot block us past the timeout.
    // A daemon started by a profile could keep the pipe open forever, so the result comes
    // over a channel with a timeout rather than from `join`.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.by_ref().take(1 << 20).read_to_end(&mut out);
        let _ = tx.send(out);
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => break None,
        }
    };
    // Whatever happened, nothing of the shell's group may outlive this call.
    // SAFETY: killpg on the group we created for the shell; no memory is involved.
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
    if status.is_none() {
        let _ = child.wait();
    }
    let out = rx.recv_timeout(Duration::from_millis(200)).ok()?;
    let text = String::from_utf8_lossy(&out);
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix(PATH_MARKER))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
}

/// Whether `dir` is in the PATH list `path`.
pub fn path_contains(path: &str, dir: &Path) -> bool {
    path.split(PATH_SEP).any(|d| Path::new(d) == dir)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn login_shell_path_skips_profile_noise() {
        let dir = tempfile::tempdir().unwrap();
        // A fake "shell" that prints a motd, then runs the command it was given.
        let shell = script(
            dir.path(),
            "fakesh",
            "echo 'Welcome to the machine'\nPATH=/opt/custom/bin:/usr/bin\nshift\nexec /bin/sh -c \"$1\"",
        );
        let path = query_login_shell_path(&shell, Duration::from_secs(3)).unwrap();
        assert_eq!(path, "/opt/custom/bin:/usr/bin");
    }

    #[test]
    fn login_shell_that_hangs_is_killed_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let shell = script(dir.path(), "slowsh", "sleep 30");
        let started = Instant::now();
        assert_eq!(
            query_login_shell_path(&shell, Duration::from_millis(300)),
            None
        );
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn commands_are_found_on_a_given_path_and_must_be_executable() {
        let dir = tempfile::tempdir().unwrap();
        let tool = script(dir.path(), "my-tool", "true");
        let path = dir.path().to_str().unwrap();
        let found = find_command("my-tool", None, Some(path)).unwrap();
        assert_eq!(found.path, tool);
        assert!(!found.via_login_shell);

        std::fs::write(dir.path().join("plain"), "x").unwrap();
        let by_path = find_command("./plain", Some(dir.path()), None);
        assert!(matches!(by_path, Err(LookupError::NotExecutable(_))));
        let missing = find_command("/nonexistent/bin/thing", None, None);
        assert!(matches!(missing, Err(LookupError::NotFound { .. })));
    }

    #[test]
    fn base_env_is_small_and_has_the_command_dir_on_path() {
        let env = base_env(Some(Path::new("/opt/odd/bin")), false);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(names.iter().all(|n| *n == "PATH"
            || BASE_VARS.contains(n)
            || BASE_PREFIXES.iter().any(|p| n.starts_with(p))));
        // What runtimes need to reach their package indexes comes along when it is set.
        for name in ["SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "PIP_CERT"] {
            if std::env::var_os(name).is_some() {
                assert!(names.contains(&name), "{name} is passed through");
            }
        }
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .unwrap()
            .1
            .to_str()
            .unwrap()
            .to_owned();
        assert!(path.starts_with("/opt/odd/bin"));
        assert!(path_contains(&path, Path::new("/opt/odd/bin")));
    }
}
