//! Section `sandbox`: what the sandbox adds to a server's start. The same servers (the MCP
//! fixture, server-everything, the Python SDK server) installed twice, one sandboxed (how
//! `plugboard add` leaves it) and one with `--no-sandbox`, each tested with `plugboard test
//! NAME`, interleaved; the unsandboxed row is the floor of its pair.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::command::Cmd;
use crate::options::Options;
use crate::paths::{self, Paths};
use crate::rounds::interleave;
use crate::row::Row;

pub fn measure(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let home = paths.home("sandbox-home");
    let fixture = paths::arg(&paths.fixture);
    let everything = paths::arg(&paths.everything);
    let python = paths::arg(&paths.python);
    let python_server = paths::arg(&paths.python_server);
    let subjects: Vec<(&str, Vec<String>, &'static str)> = vec![
        ("mcp-fixture", vec![fixture], "check_credentials"),
        (
            "server-everything",
            vec!["node".into(), everything, "stdio".into()],
            "get-sum",
        ),
        (
            "python-sdk-2.3 (modern)",
            vec![python, python_server, "stdio".into()],
            "shout",
        ),
    ];
    let mut cmds = vec![];
    let mut labels = vec![];
    for (i, (subject, command, expect)) in subjects.iter().enumerate() {
        for (boxed, client) in [
            (false, "plugboard test (no sandbox)"),
            (true, "plugboard test (sandboxed)"),
        ] {
            let name = format!("s{i}-{}", if boxed { "boxed" } else { "plain" });
            add(paths, &home, &name, command, boxed)?;
            let cmd = Cmd::new(&paths.plugboard, &["test", "--json", &name], expect)
                .env("PLUGBOARD_HOME", &home);
            labels.push((subject.to_string(), client));
            cmds.push((format!("sandbox {subject} {client}"), cmd));
        }
    }
    eprintln!(
        "[bench] sandbox: {} commands, {} warm-up + {} timed rounds",
        cmds.len(),
        options.warmup,
        options.runs
    );
    let samples = interleave(&cmds, options.warmup, options.runs)?;
    for ((subject, client), samples) in labels.into_iter().zip(samples) {
        rows.push(Row {
            cpu: samples.cpu,
            ..Row::times("sandbox", subject, client, samples.wall, "")
        });
    }
    Ok(())
}

/// `plugboard add NAME --stdio [--no-sandbox] -- COMMAND…` into `home`.
fn add(
    paths: &Paths,
    home: &Path,
    name: &str,
    command: &[String],
    boxed: bool,
) -> Result<(), String> {
    let mut args = vec!["add", name, "--stdio", "--no-test"];
    if !boxed {
        args.push("--no-sandbox");
    }
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    let out = Command::new(&paths.plugboard)
        .args(&args)
        .env("PLUGBOARD_HOME", home)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "plugboard add {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
