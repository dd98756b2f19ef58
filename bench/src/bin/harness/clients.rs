//! The MCP clients compared in the connection sections (the floor client, `plugboard test` and
//! its `--variant`s, the MCP Inspector CLI, the Python SDK) as command lines for one server.

use crate::command::Cmd;
use crate::options::Options;
use crate::paths::{self, Paths};

/// Where a server is: the command that starts it over stdio, or its streamable HTTP URL.
pub enum Target {
    Stdio(Vec<String>),
    Url(String),
}

/// The command line of each kind of client for one server.
struct ClientCmds {
    floor: Cmd,
    plugboard: Cmd,
    inspector: Cmd,
    python: Cmd,
}

/// The clients (named) against `target`, less those `--clients` leaves out. A modern
/// (2026-07-28) server gets the floor of its era, and neither the MCP Inspector nor the Python
/// client script (both speak `initialize` only).
pub fn clients(
    paths: &Paths,
    options: &Options,
    target: &Target,
    expect: &'static str,
    modern: bool,
) -> Vec<(String, Cmd)> {
    let home = paths.home("plugboard-home");
    let catalog = paths.scratch.join("inspector-catalog.json");
    let era: &[&str] = if modern { &["--era", "modern"] } else { &[] };
    let cmds = match target {
        Target::Stdio(command) => stdio_cmds(paths, command, era, expect),
        Target::Url(url) => http_cmds(paths, url, era, expect),
    };
    let plugboard = cmds.plugboard.env("PLUGBOARD_HOME", &home);
    let mut all = vec![
        ("floor".to_owned(), cmds.floor),
        ("plugboard".to_owned(), plugboard.clone()),
    ];
    for (name, path) in &options.variants {
        let mut variant = plugboard.clone();
        variant.program = path.clone();
        all.push((format!("plugboard@{name}"), variant));
    }
    if !modern {
        all.push((
            "inspector".into(),
            cmds.inspector.env("MCP_CATALOG_PATH", &catalog),
        ));
        all.push(("python-sdk".into(), cmds.python));
    }
    all.retain(|(name, _)| options.wants_client(name));
    all
}

fn stdio_cmds(paths: &Paths, command: &[String], era: &[&str], expect: &'static str) -> ClientCmds {
    let server: Vec<&str> = command.iter().map(String::as_str).collect();
    let mut floor = era.to_vec();
    floor.extend(["stdio", "--"]);
    floor.extend(&server);
    let mut plugboard = vec!["test", "--json", "--stdio", "--"];
    plugboard.extend(&server);
    let mut inspector = vec!["--cli"];
    inspector.extend(&server);
    inspector.extend(["--method", "tools/list"]);
    let client = paths::arg(&paths.python_client);
    let mut python = vec![client.as_str(), "stdio"];
    python.extend(&server);
    ClientCmds {
        floor: Cmd::new(&paths.floor, &floor, expect),
        plugboard: Cmd::new(&paths.plugboard, &plugboard, expect),
        inspector: Cmd::new(&paths.inspector, &inspector, expect),
        python: Cmd::new(&paths.python, &python, expect),
    }
}

fn http_cmds(paths: &Paths, url: &str, era: &[&str], expect: &'static str) -> ClientCmds {
    let client = paths::arg(&paths.python_client);
    let mut floor = era.to_vec();
    floor.extend(["http", url]);
    ClientCmds {
        floor: Cmd::new(&paths.floor, &floor, expect),
        plugboard: Cmd::new(&paths.plugboard, &["test", "--json", "--url", url], expect),
        inspector: Cmd::new(
            &paths.inspector,
            &[
                "--cli",
                url,
                "--transport",
                "http",
                "--method",
                "tools/list",
            ],
            expect,
        ),
        python: Cmd::new(&paths.python, &[client.as_str(), "http", url], expect),
    }
}
