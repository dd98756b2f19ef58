//! Section `health`: `plugboard health` over 100 configured fixture servers (fast,
//! slow-starting and hanging, each with its own timeout), at the default and at full
//! parallelism, next to the slowest single probe and the sum of all single probes.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::command::Cmd;
use crate::options::Options;
use crate::paths::{self, Paths};
use crate::rounds::interleave;
use crate::row::Row;

const FAST: usize = 70;
const SLOW: usize = 20;
const HANGING: usize = 10;
const HANG_TIMEOUT_S: u64 = 2;
/// `plugboard health`'s parallelism without `--parallel`.
const DEFAULT_PARALLELISM: &str = "16";
const SUBJECT: &str = "100 servers";

pub fn measure(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let home = paths.home("health-home");
    let names = add_servers(paths, &home)?;
    let cmds = vec![
        ("health default".to_owned(), health(paths, &home, None)),
        (
            "health --parallel 100".to_owned(),
            health(paths, &home, Some("100")),
        ),
    ];
    eprintln!(
        "[bench] health: {} servers ({FAST} fast, {SLOW} slow-start 100–1050 ms, {HANGING} never \
         answering with a {HANG_TIMEOUT_S} s timeout)",
        names.len()
    );
    check_verdicts(&cmds[0].1)?;
    let samples = interleave(&cmds, options.warmup.min(1), options.runs)?;
    for ((label, _), samples) in cmds.iter().zip(samples) {
        let note = if label == "health default" {
            format!("parallelism {DEFAULT_PARALLELISM}")
        } else {
            String::new()
        };
        rows.push(Row {
            cpu: samples.cpu,
            ..Row::times(
                "health",
                SUBJECT,
                format!("plugboard {label}"),
                samples.wall,
                note,
            )
        });
    }
    eprintln!("[bench] health: each server alone, sequentially (the sum)");
    let singles = single_probes(paths, &home, &names)?;
    let (slowest_name, slowest) = singles
        .iter()
        .max_by_key(|(_, d)| *d)
        .cloned()
        .expect("100 servers");
    let sum: Duration = singles.iter().map(|(_, d)| *d).sum();
    rows.push(Row::times(
        "health",
        SUBJECT,
        "slowest single probe",
        vec![slowest],
        format!("`plugboard test {slowest_name}`, once"),
    ));
    rows.push(Row::times(
        "health",
        SUBJECT,
        "sum of single probes",
        vec![sum],
        "each `plugboard test NAME` once, sequentially",
    ));
    Ok(())
}

/// Server `i` of the 100: its name, the fixture's extra arguments, its timeout (s).
fn server_spec(i: usize) -> (String, Vec<String>, u64) {
    if i < FAST {
        (format!("fast-{i:02}"), vec![], 30)
    } else if i < FAST + SLOW {
        // slow starts spread over 100..1050 ms
        let ms = 100 + 50 * (i - FAST);
        (
            format!("slow-{ms:04}ms"),
            vec!["--misbehave".into(), format!("slow-start={ms}")],
            30,
        )
    } else {
        (
            format!("hang-{:02}", i - FAST - SLOW),
            vec!["--misbehave".into(), "never-answer".into()],
            HANG_TIMEOUT_S,
        )
    }
}

/// `plugboard add` every server into `home`; their names.
fn add_servers(paths: &Paths, home: &Path) -> Result<Vec<String>, String> {
    let fixture = paths::arg(&paths.fixture);
    let mut names = vec![];
    for i in 0..FAST + SLOW + HANGING {
        let (name, extra, timeout) = server_spec(i);
        let timeout = timeout.to_string();
        let mut args = vec![
            "add",
            name.as_str(),
            "--stdio",
            "--no-test",
            "--timeout",
            timeout.as_str(),
            "--",
            fixture.as_str(),
        ];
        args.extend(extra.iter().map(String::as_str));
        paths::plugboard_in(paths, home, &args)?;
        names.push(name);
    }
    Ok(names)
}

/// `plugboard health --json [--parallel N]` in `home`.
fn health(paths: &Paths, home: &Path, parallel: Option<&str>) -> Cmd {
    let mut args = vec!["health", "--json"];
    if let Some(p) = parallel {
        args.extend(["--parallel", p]);
    }
    let mut cmd = Cmd::new(&paths.plugboard, &args, "\"hang-09\"").env("PLUGBOARD_HOME", home);
    cmd.ok_codes = vec![1]; // the hanging servers fail, as they should
    cmd
}

/// Run `health` once: every fast and slow server must be ok, every hanging one a timeout.
fn check_verdicts(health: &Cmd) -> Result<(), String> {
    let out = health
        .measure(true)
        .map_err(|e| format!("health: {e}"))?
        .stdout;
    let verdicts: Value = serde_json::from_str(&out).map_err(|e| format!("health JSON: {e}"))?;
    let verdicts = verdicts.as_array().cloned().unwrap_or_default();
    let ok = verdicts.iter().filter(|r| r["ok"] == true).count();
    let timeouts = verdicts
        .iter()
        .filter(|r| r["error_kind"] == "timeout")
        .count();
    if ok != FAST + SLOW || timeouts != HANGING {
        return Err(format!(
            "health: expected {} ok and {HANGING} timeouts, got {ok} ok and {timeouts} timeouts",
            FAST + SLOW
        ));
    }
    Ok(())
}

/// Every server alone, one after the other (`plugboard test NAME`): each one's wall time.
fn single_probes(
    paths: &Paths,
    home: &Path,
    names: &[String],
) -> Result<Vec<(String, Duration)>, String> {
    let mut singles = vec![];
    for name in names {
        let mut cmd = Cmd::new(&paths.plugboard, &["test", name, "--json"], "\"ok\"")
            .env("PLUGBOARD_HOME", home);
        cmd.ok_codes = vec![0, 1];
        singles.push((name.clone(), cmd.measure(false)?.wall));
    }
    Ok(singles)
}
