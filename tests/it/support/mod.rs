//! Helpers shared by the integration tests: a temp Plugboard home, running the CLI, and the
//! keyring session check.

#![allow(dead_code)]

pub mod bundles;
pub mod fixture;
pub mod peers;
pub mod registry;
pub mod sessions;
pub mod snapshot;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `plugboard` binary under test.
pub fn plugboard_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_plugboard"))
}

/// The workspace root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A temporary `PLUGBOARD_HOME` with a helper to run the CLI in it.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_path(&self) -> PathBuf {
        self.path().join("mcp_config.json")
    }

    /// A `plugboard` command with `PLUGBOARD_HOME` set to this home and no stray secrets from
    /// the environment.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(plugboard_bin());
        cmd.args(args)
            .env("PLUGBOARD_HOME", self.path())
            .env_remove("PLUGBOARD_CATALOG_DIR")
            .env_remove("PLUGBOARD_REGISTRY_URL")
            .stdin(Stdio::null());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("PLUGBOARD_SECRET_") {
                cmd.env_remove(key);
            }
        }
        cmd
    }

    /// Run `plugboard args...` with `stdin` piped in.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        output_with_stdin(self.cmd(args), stdin)
    }

    /// Run `plugboard args...`.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run plugboard")
    }

    /// Every byte of every file under this home.
    pub fn all_file_bytes(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = vec![];
        let mut stack = vec![self.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    out.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        out
    }
}

/// Run `cmd` (a [`Home::cmd`] with more set) with `stdin` piped in; its output.
pub fn output_with_stdin(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn plugboard");
    // A command that refuses before it reads its input closes the pipe: not an error here.
    match child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
    child.wait_with_output().expect("wait plugboard")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Assert the exit code, showing the output when it differs.
#[track_caller]
pub fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code\nstdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
}

/// Fail with a clear message unless a Secret Service is reachable in this session. The test
/// command (`scripts/test`) runs the tests inside a private D-Bus session with gnome-keyring.
#[track_caller]
pub fn require_keyring() {
    let store = plugboard::secrets::KeyringStore::open();
    let checked = store.and_then(|s| plugboard::secrets::SecretStore::check(&s));
    if let Err(err) = checked {
        panic!(
            "this test needs a working Secret Service ({err}). Run the tests with scripts/test, \
             which starts gnome-keyring in a private D-Bus session."
        );
    }
}

/// Whether `needle` occurs anywhere in `haystack`.
pub fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}
