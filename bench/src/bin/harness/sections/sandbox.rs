//! Section `sandbox`: what the sandbox adds to a server's start. The same servers (the MCP
//! fixture, server-everything, the Python SDK server) installed twice, one sandboxed (how
//! `plugboard add` leaves it) and one with `--no-sandbox`, each tested with `plugboard test
//! NAME`, interleaved; the unsandboxed row is the floor of its pair.

use crate::command::Cmd;
use crate::options::Options;
use crate::paths::{self, Paths};
use crate::rounds::rows_of;
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
    let mut labelled = vec![];
    for (i, (subject, command, expect)) in subjects.iter().enumerate() {
        for (boxed, client) in [
            (false, "plugboard test (no sandbox)"),
            (true, "plugboard test (sandboxed)"),
        ] {
            let name = format!("s{i}-{}", if boxed { "boxed" } else { "plain" });
            let mut args = vec!["add", name.as_str(), "--stdio", "--no-test"];
            if !boxed {
                args.push("--no-sandbox");
            }
            args.push("--");
            args.extend(command.iter().map(String::as_str));
            paths::plugboard_in(paths, &home, &args)?;
            let cmd = Cmd::new(&paths.plugboard, &["test", "--json", &name], expect)
                .env("PLUGBOARD_HOME", &home);
            let label = format!("sandbox {subject} {client}");
            labelled.push(((subject.to_string(), client.to_owned()), (label, cmd)));
        }
    }
    eprintln!(
        "[bench] sandbox: {} commands, {} warm-up + {} timed rounds",
        labelled.len(),
        options.warmup,
        options.runs
    );
    rows_of("sandbox", labelled, options.warmup, options.runs, rows)
}
