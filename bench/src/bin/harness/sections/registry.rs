//! Section `registry`: registry sync from the local registry fixture, the real snapshot (1,108
//! servers) and a 50,000-server registry generated from it, each a full pull into an empty
//! cache (time and peak memory), then incremental syncs of 100 changed rows; and the
//! marketplace's search over 50,000 entries (`cargo bench --bench market`): the first search
//! (index build) and each keystroke's p50 / p99.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cargo_bench;
use crate::command::tail;
use crate::options::Options;
use crate::paths::Paths;
use crate::process;
use crate::rounds::wait_for_quiet;
use crate::row::Row;
use crate::servers::{post, start_registry};

const SECTION: &str = "registry";
const CLIENT: &str = "plugboard";
const PEAK_RSS_NOTE: &str = "ru_maxrss of the plugboard process";

pub fn measure(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let (_snapshot, snapshot_url) = start_registry(paths, &[])?;
    let (_generated, generated_url) = start_registry(paths, &["--generate", "50000"])?;
    for (label, url, runs) in [
        ("snapshot, 1,108 servers", &snapshot_url, options.runs),
        (
            "generated, 50,000 servers",
            &generated_url,
            options.runs.clamp(1, 5),
        ),
    ] {
        full_syncs(paths, label, url, runs, rows)?;
    }
    incremental_syncs(paths, &generated_url, options.runs, rows)?;
    market_search(paths, rows)
}

/// One sync's wall time and the peak RSS (MiB) of the plugboard process.
pub struct Sync {
    pub wall: Duration,
    pub peak_mib: f64,
}

/// `plugboard registry sync --json ARGS` in `home` against the registry at `url`.
pub fn timed_sync(paths: &Paths, home: &Path, url: &str, args: &[&str]) -> Result<Sync, String> {
    let mut all = vec!["registry", "sync", "--json"];
    all.extend(args);
    let started = Instant::now();
    let mut child = Command::new(&paths.plugboard)
        .args(&all)
        .env("PLUGBOARD_HOME", home)
        .env("PLUGBOARD_REGISTRY_URL", url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
    let exit = process::reap(&child).map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    if exit.code != 0 || !out.contains("\"ok\": true") {
        return Err(format!(
            "registry sync failed ({}): {}",
            exit.code,
            tail(&out, 600)
        ));
    }
    Ok(Sync {
        wall,
        peak_mib: exit.peak_rss_kib as f64 / 1024.0,
    })
}

/// `runs` full syncs (after one untimed) of the registry at `url`, each into an empty cache.
fn full_syncs(
    paths: &Paths,
    label: &str,
    url: &str,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    eprintln!("[bench] registry: {runs} full syncs of the {label}");
    let (mut times, mut peaks) = (vec![], vec![]);
    for i in 0..runs + 1 {
        wait_for_quiet();
        let home = paths.home("registry-sync");
        let sync = timed_sync(paths, &home, url, &["--full"])?;
        if i > 0 {
            times.push(sync.wall);
            peaks.push(sync.peak_mib);
        }
    }
    rows.push(Row::times(
        SECTION,
        format!("full sync, {label}: time"),
        CLIENT,
        times,
        "empty cache → every latest row, 100 per page, written to the cache",
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("full sync, {label}: peak memory (RSS)"),
        CLIENT,
        peaks,
        PEAK_RSS_NOTE,
    ));
    Ok(())
}

/// `runs` incremental syncs of a synced cache of the 50,000-server registry at `url`, each after
/// 100 of its servers got a new version.
fn incremental_syncs(
    paths: &Paths,
    url: &str,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    eprintln!("[bench] registry: {runs} incremental syncs of 100 changed rows (50,000 servers)");
    let home = paths.home("registry-incremental");
    timed_sync(paths, &home, url, &["--full"])?;
    let (mut times, mut peaks) = (vec![], vec![]);
    for _ in 0..runs {
        post(url, "/fixture/touch", "{\"count\": 100}")?;
        wait_for_quiet();
        let sync = timed_sync(paths, &home, url, &[])?;
        times.push(sync.wall);
        peaks.push(sync.peak_mib);
    }
    rows.push(Row::times(
        SECTION,
        "incremental sync, 100 changed of 50,000: time",
        CLIENT,
        times,
        "updated_since → 100 new versions, merged into the cache",
    ));
    rows.push(Row::sizes(
        SECTION,
        "incremental sync, 100 changed of 50,000: peak memory (RSS)",
        CLIENT,
        peaks,
        PEAK_RSS_NOTE,
    ));
    Ok(())
}

/// `cargo bench --bench market`: loading the cached listing and searching it, from the JSON
/// line the bench prints last.
fn market_search(paths: &Paths, rows: &mut Vec<Row>) -> Result<(), String> {
    eprintln!("[bench] registry: cargo bench --bench market (search over 50,000 entries)");
    let out = cargo_bench(paths, "market")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: Value = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or(format!(
            "no JSON from the market bench:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ))?;
    let ms = |key: &str| Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e3);
    let us = |key: &str| Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e6);
    let items = v["items"].as_u64().unwrap_or(0);
    rows.push(Row::times(
        SECTION,
        format!("load the cached listing ({} servers)", v["servers"]),
        CLIENT,
        vec![ms("load_ms")],
        "the JSON Lines cache → brief records in memory",
    ));
    rows.push(Row::times(
        SECTION,
        format!("first search over {items} entries (index build)"),
        CLIENT,
        vec![ms("first_search_ms")],
        "market built, then `database`: builds the word index",
    ));
    rows.push(Row::times(
        SECTION,
        format!("keystroke search over {items} entries: p50"),
        CLIENT,
        vec![us("p50_us")],
        format!(
            "{} keystroke queries × 10 (every prefix of 40 words, word pairs)",
            v["queries"]
        ),
    ));
    rows.push(Row::times(
        SECTION,
        format!("keystroke search over {items} entries: p99"),
        CLIENT,
        vec![us("p99_us")],
        format!("max {:.0} µs", v["max_us"].as_f64().unwrap_or(0.0)),
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("market of {items} entries: peak memory (RSS)"),
        CLIENT,
        vec![v["peak_rss_mib"].as_f64().unwrap_or(0.0)],
        "the whole bench process (generation included)",
    ));
    Ok(())
}
