//! One command line to time: spawned, watched (killed after [`COMMAND_LIMIT`]), reaped with its
//! CPU time, and checked (exit code, a word its output must contain).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::process::{self, Watchdog};

/// Longest any single measured command may run before it is killed (and the run fails).
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// A command line to time, and a word its standard output must contain on success.
#[derive(Clone)]
pub struct Cmd {
    pub program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    expect: &'static str,
    /// Exit codes counted as success (`plugboard health` exits 1 when some servers fail).
    pub ok_codes: Vec<i32>,
}

/// One run of a [`Cmd`].
pub struct Timing {
    /// From spawn to reaped exit.
    pub wall: Duration,
    /// User + system time of the process and its reaped children.
    pub cpu: Duration,
    /// Empty unless the run was checked.
    pub stdout: String,
}

impl Cmd {
    pub fn new(program: impl Into<PathBuf>, args: &[&str], expect: &'static str) -> Cmd {
        Cmd {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: vec![],
            expect,
            ok_codes: vec![0],
        }
    }

    pub fn env(mut self, key: &str, value: impl AsRef<Path>) -> Cmd {
        self.env
            .push((key.to_owned(), value.as_ref().display().to_string()));
        self
    }

    fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Run once. With `check`, stdout and stderr are captured and stdout must contain
    /// `expect`; otherwise both go to /dev/null. Either way the exit code must be an ok one.
    pub fn measure(&self, check: bool) -> Result<Timing, String> {
        let output = || if check { Stdio::piped() } else { Stdio::null() };
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(output())
            .stderr(output());
        let started = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: {e}", self.display()))?;
        let watchdog = Watchdog::arm(child.id(), COMMAND_LIMIT);
        let (stdout, stderr) = if check {
            read_output(&mut child)
        } else {
            Default::default()
        };
        let exit = process::reap(&child).map_err(|e| e.to_string())?;
        let wall = started.elapsed();
        if watchdog.disarm() {
            return Err(format!(
                "{} ran longer than {COMMAND_LIMIT:?}",
                self.display()
            ));
        }
        if !self.ok_codes.contains(&exit.code) {
            return Err(format!(
                "{} exited with code {}\nstdout: {}\nstderr: {}",
                self.display(),
                exit.code,
                tail(&stdout, 800),
                tail(&stderr, 800)
            ));
        }
        if check && !stdout.contains(self.expect) {
            return Err(format!(
                "{}: stdout lacks `{}`\nstdout: {}\nstderr: {}",
                self.display(),
                self.expect,
                tail(&stdout, 800),
                tail(&stderr, 800)
            ));
        }
        Ok(Timing {
            wall,
            cpu: exit.cpu,
            stdout,
        })
    }
}

/// All of a child's piped stdout and stderr (read side by side, so neither pipe fills up).
fn read_output(child: &mut Child) -> (String, String) {
    let mut err_pipe = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err_pipe.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    let _ = child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout);
    (stdout, reader.join().unwrap_or_default())
}

/// The last `max` bytes of `text` (fewer, to start on a character).
pub fn tail(text: &str, max: usize) -> &str {
    let start = text.len().saturating_sub(max);
    let start = (start..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    &text[start..]
}
