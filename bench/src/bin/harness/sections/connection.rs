//! Sections `stdio` and `http`: test-connection overhead, every client against the same
//! servers (the MCP fixture, legacy and modern, server-everything, the Python SDK server), all
//! interleaved.

use crate::clients::{Target, clients};
use crate::options::Options;
use crate::paths::{self, Paths};
use crate::rounds::rows_of;
use crate::row::Row;
use crate::servers::{start_everything_http, start_fixture_http, start_python_http};

/// One server of a connection section.
struct Subject {
    name: String,
    target: Target,
    /// A tool it must list.
    expect: &'static str,
    /// Whether it speaks the modern (2026-07-28) era.
    modern: bool,
}

impl Subject {
    fn new(name: &str, target: Target, expect: &'static str, modern: bool) -> Subject {
        Subject {
            name: name.to_owned(),
            target,
            expect,
            modern,
        }
    }
}

/// Each server started by each client over stdio.
pub fn measure_stdio(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let fixture = paths::arg(&paths.fixture);
    let python = paths::arg(&paths.python);
    let python_server = paths::arg(&paths.python_server);
    let everything = paths::arg(&paths.everything);
    let subjects = vec![
        Subject::new(
            "mcp-fixture",
            Target::Stdio(vec![fixture.clone()]),
            "check_credentials",
            false,
        ),
        Subject::new(
            "mcp-fixture (modern)",
            Target::Stdio(vec![fixture, "--era".into(), "modern".into()]),
            "check_credentials",
            true,
        ),
        Subject::new(
            "server-everything",
            Target::Stdio(vec!["node".into(), everything, "stdio".into()]),
            "get-sum",
            false,
        ),
        Subject::new(
            "python-sdk-2.3 (modern)",
            Target::Stdio(vec![python, python_server, "stdio".into()]),
            "shout",
            true,
        ),
    ];
    measure_subjects("stdio", subjects, paths, options, rows)
}

/// Each server, started once, reached by each client over streamable HTTP.
pub fn measure_http(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let (_fixture, fixture_url) = start_fixture_http(paths, &[])?;
    let (_modern, modern_url) = start_fixture_http(paths, &["--era", "modern"])?;
    let (_everything, everything_url) = start_everything_http(paths)?;
    let (_python, python_url) = start_python_http(paths)?;
    let subjects = vec![
        Subject::new(
            "mcp-fixture",
            Target::Url(fixture_url),
            "check_credentials",
            false,
        ),
        Subject::new(
            "mcp-fixture (modern)",
            Target::Url(modern_url),
            "check_credentials",
            true,
        ),
        Subject::new(
            "server-everything",
            Target::Url(everything_url),
            "get-sum",
            false,
        ),
        Subject::new(
            "python-sdk-2.3 (modern)",
            Target::Url(python_url),
            "shout",
            true,
        ),
    ];
    measure_subjects("http", subjects, paths, options, rows)
}

/// Every client against every subject `--servers` keeps, interleaved: a row each.
fn measure_subjects(
    section: &'static str,
    subjects: Vec<Subject>,
    paths: &Paths,
    options: &Options,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let subjects: Vec<Subject> = subjects
        .into_iter()
        .filter(|s| options.wants_server(&s.name))
        .collect();
    let mut labelled = vec![];
    for subject in &subjects {
        let Subject {
            name,
            target,
            expect,
            modern,
        } = subject;
        for (client, cmd) in clients(paths, options, target, expect, *modern) {
            let label = format!("{section} {name} {client}");
            labelled.push(((name.clone(), client), (label, cmd)));
        }
    }
    eprintln!(
        "[bench] {section}: {} commands ({} servers), {} warm-up + {} timed rounds",
        labelled.len(),
        subjects.len(),
        options.warmup,
        options.runs
    );
    rows_of(section, labelled, options.warmup, options.runs, rows)
}
