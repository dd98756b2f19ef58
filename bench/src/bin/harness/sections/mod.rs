//! The measured sections, one module each, run in a fixed order (those `--only` names); a
//! section that fails is reported and the others still run.

mod app;
mod catalog;
mod connection;
mod gateway;
mod health;
mod mcp_hub;
mod registry;
mod sandbox;
mod size;

use std::process::{Command, Output, Stdio};

use crate::options::Options;
use crate::paths::Paths;
use crate::row::Row;

/// A section: measures and appends its rows.
type Section = fn(&Paths, &Options, &mut Vec<Row>) -> Result<(), String>;

const SECTIONS: [(&str, Section); 10] = [
    ("stdio", connection::measure_stdio),
    ("http", connection::measure_http),
    ("sandbox", sandbox::measure),
    ("health", health::measure),
    ("gateway", gateway::measure),
    ("gateway-start", gateway::measure_start),
    ("catalog", catalog::measure),
    ("registry", registry::measure),
    ("app", app::measure),
    ("size", size::measure),
];

/// The rows of every wanted section, and whether any of them failed.
pub fn measure_wanted(paths: &Paths, options: &Options) -> (Vec<Row>, bool) {
    let mut rows = vec![];
    let mut failed = false;
    for (name, measure) in SECTIONS {
        if !options.wants_section(name) {
            continue;
        }
        if let Err(e) = measure(paths, options, &mut rows) {
            eprintln!("[bench] {name} FAILED: {e}");
            failed = true;
        }
    }
    (rows, failed)
}

/// `cargo bench --quiet --bench NAME` in the repository, its output captured.
fn cargo_bench(paths: &Paths, name: &str) -> Result<Output, String> {
    Command::new("cargo")
        .args(["bench", "--quiet", "--bench", name])
        .current_dir(&paths.root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cargo bench: {e}"))
}
