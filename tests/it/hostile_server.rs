//! A server is outside input: one that lists more tools than anyone can use is cut off with a
//! warning, not followed into hundreds of MiB.

use serde_json::Value;

use crate::run_stdio::add_fixture;
use crate::support::{Home, stdout};

#[test]
fn a_server_listing_too_many_tools_is_cut_off_with_a_warning() {
    let home = Home::new();
    add_fixture(
        &home,
        "many",
        &["--tools", "12000", "--page-size", "2500"],
        None,
    );
    let out = home.run(&["test", "many", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["ok"], true, "{result}");
    let tools = result["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 5000, "tools kept");
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("tools/list was cut off at 5000 items"),
        "{warnings}"
    );
}

/// The pid a fixture's `detached-grandchild` printed in `text`.
fn detached_pid(text: &str) -> u32 {
    text.lines()
        .find_map(|l| l.split("DETACHED_PID=").nth(1))
        .and_then(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no DETACHED_PID in: {text}"))
}

/// Whether `pid` is gone (or a zombie) within a few seconds.
fn gone(pid: u32) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(5) {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    false
}

/// A server that starts a grandchild in a session of its own (out of its process group, as a
/// daemon does) leaves nothing behind after `plugboard test` or `plugboard run`.
#[test]
fn a_detached_grandchild_does_not_outlive_test_or_run() {
    let home = Home::new();
    add_fixture(
        &home,
        "daemon",
        &["--misbehave", "detached-grandchild"],
        None,
    );
    let out = home.run(&["test", "daemon", "--json"]);
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let pid = detached_pid(result["stderr_tail"].as_str().unwrap_or_default());
    assert!(
        gone(pid),
        "the detached grandchild {pid} outlived `plugboard test`"
    );

    let out = home.run_with_stdin(
        &["run", "daemon"],
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
    );
    let pid = detached_pid(&crate::support::stderr(&out));
    assert!(
        gone(pid),
        "the detached grandchild {pid} outlived `plugboard run`"
    );
}
