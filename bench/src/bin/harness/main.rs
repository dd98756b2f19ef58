//! `harness`: the timing harness behind `bench/run`. Everything that is compared runs in this
//! one invocation, interleaved round by round (the order rotates each round), so machine noise
//! hits every client alike. Prints one table (median, min, max, ratios) and writes the same as
//! JSON.
//!
//!   harness [--root DIR] [--runs N] [--warmup N] [--only stdio,http,sandbox,health,gateway,gateway-start,catalog,registry,launches,app,size]
//!           [--out FILE] [--variant NAME=PATH]... [--clients floor,plugboard,...]
//!           [--servers mcp-fixture,server-everything] [--app PATH]
//!
//! `--variant` adds another plugboard binary (say, the build before a change) as client
//! `plugboard@NAME`, interleaved with the others: how before/after numbers are measured.
//! `--app` starts that app binary in the app section (say, `/usr/bin/plugboard-app` of the
//! installed package) instead of the one built in target.
//!
//! It expects what bench/run builds and installs: target/release/plugboard (cargo build --release -p plugboard),
//! target/release/mcp-fixture,
//! target/bench-tools/release/floor, bench/node_modules (MCP Inspector, mcp-hub), tests/peers
//! (server-everything), .tools/peers-venv (the Python SDK) and .tools/bench-venv (FastMCP).
//!
//! The modules: `options` (the command line), `paths` (what it runs), `process` and `command`
//! (timing one command), `rounds` (interleaving, quiet machine), `clients` and `servers` (the
//! MCP clients compared and the servers they talk to), `sections` (one module per measured
//! section), `row` (a measured thing) and `report` (ratios, the table, the JSON).

mod clients;
mod command;
mod options;
mod paths;
mod process;
mod report;
mod rounds;
mod row;
mod sections;
mod servers;

use std::process::ExitCode;

use options::Options;
use paths::Paths;

fn main() -> ExitCode {
    let options = match Options::from_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("harness: {e}");
            return ExitCode::from(2);
        }
    };
    let machine = report::json::describe_machine();
    let paths = match Paths::prepare(&options.root) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("harness: {e}");
            return ExitCode::from(2);
        }
    };
    let (rows, mut failed) = sections::measure_wanted(&paths, &options);
    let ratios = report::ratios::ratios(&rows);
    println!();
    report::table::print(&rows, &ratios);
    let json = report::json::results(&rows, &ratios, &options, machine);
    match report::json::write(&options.out, &json) {
        Ok(()) => eprintln!("[bench] wrote {}", options.out.display()),
        Err(e) => {
            eprintln!("[bench] cannot write {}: {e}", options.out.display());
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
