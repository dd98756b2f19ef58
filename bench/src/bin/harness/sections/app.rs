//! Section `app`: the desktop app through bench/app-probe (under Xvfb). Cold start to the UI's
//! `marketplace-ready` mark (process start → the marketplace's first render with catalog data,
//! from the app's startup trace) and to the window being mapped; memory (PSS and RSS summed
//! over the app and its WebKit processes) after the marketplace is ready and after 50 installed
//! servers are shown; the same memory of a hello-world Tauri app (the floor); and the app with
//! 50,000 registry servers in its marketplace: cold start, scrolling, memory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::registry::timed_sync;
use crate::options::Options;
use crate::paths::Paths;
use crate::rounds::wait_for_quiet;
use crate::row::Row;
use crate::servers::start_registry;

const SECTION: &str = "app";
const APP: &str = "plugboard-app";
const FLOOR_APP: &str = "floor-app";
const SHARED_PAGES_NOTE: &str = "shared pages counted once per process";

pub fn measure(paths: &Paths, options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    if !ui_sets_a_mark(&paths.root) {
        return Err(
            "the UI sets no first-render mark (performance.mark(\"marketplace-ready\"))".into(),
        );
    }
    let (app, build) = app_binary(paths, options)?;
    require_x_tools()?;
    cold_starts(paths, &app, &build, options.runs, rows)?;
    let floor = floor_app_binary(paths, &build)?;
    floor_app_memory(paths, &floor, &build, options.runs, rows)?;
    large_market(paths, &app, &build, options.runs, rows)
}

/// The app binary to start and its build (`release` or `debug`): `--app`, else the release
/// build in target, else the debug one.
fn app_binary(paths: &Paths, options: &Options) -> Result<(PathBuf, String), String> {
    match &options.app {
        // An installed app (say /usr/bin/plugboard-app) is a release build; the floor app of
        // that build is looked for under target/<build>.
        Some(app) if app.exists() => {
            let debug = app.components().any(|c| c.as_os_str() == "debug");
            Ok((app.clone(), if debug { "debug" } else { "release" }.to_owned()))
        }
        Some(app) => Err(format!("no app binary at {}", app.display())),
        None => ["release", "debug"]
            .iter()
            .map(|b| (paths.root.join(format!("target/{b}/plugboard-app")), b.to_string()))
            .find(|(p, _)| p.exists())
            .ok_or("no app binary (target/{release,debug}/plugboard-app): build it with `scripts/build-ui && cargo build --release -p plugboard-app`".into()),
    }
}

/// The hello-world Tauri app of the same build, in the app's target dir.
fn floor_app_binary(paths: &Paths, build: &str) -> Result<PathBuf, String> {
    let floor = paths
        .root
        .join(format!("target/{build}/plugboard-floor-app"));
    if !floor.exists() {
        return Err(format!(
            "{} is missing: build it with `cargo build --manifest-path bench/floor-app/Cargo.toml --target-dir target`",
            floor.display()
        ));
    }
    Ok(floor)
}

fn require_x_tools() -> Result<(), String> {
    for tool in ["xvfb-run", "xwininfo"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!(
                "{tool} is missing (apt-get install xvfb x11-utils, or scripts/app-setup)"
            ));
        }
    }
    Ok(())
}

/// Whether the UI sets a mark the probe can wait for.
fn ui_sets_a_mark(root: &Path) -> bool {
    Command::new("grep")
        .args([
            "-rlE",
            "performance\\.mark\\(|__PLUGBOARD_READY|data-ready",
            "ui/src",
        ])
        .current_dir(root)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false)
}

/// One run of bench/app-probe on `bin` (with `env`): the JSON line it prints last, which must
/// say `"ok": true`.
fn probe(paths: &Paths, bin: &Path, env: &[(&str, String)]) -> Result<Value, String> {
    let out = Command::new(&paths.app_probe)
        .arg(bin)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("bench/app-probe: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    let v: Value =
        serde_json::from_str(line).map_err(|e| format!("bench/app-probe printed {text:?}: {e}"))?;
    if v["ok"] != true {
        return Err(format!("bench/app-probe: {}", v["error"]));
    }
    Ok(v)
}

/// `runs` probes of `bin` (with `env`), after one that only warms the page cache.
fn timed_probes(
    paths: &Paths,
    bin: &Path,
    env: &[(&str, String)],
    runs: usize,
) -> Result<Vec<Value>, String> {
    let mut probes = vec![];
    for i in 0..runs + 1 {
        wait_for_quiet();
        let v = probe(paths, bin, env)?;
        if i > 0 {
            probes.push(v);
        }
    }
    Ok(probes)
}

/// A probe's `key`, in ms, as a duration.
fn ms(v: &Value, key: &str) -> Duration {
    Duration::from_secs_f64(v[key].as_f64().unwrap_or(0.0) / 1e3)
}

/// A probe's `key`, in KiB, in MiB.
fn mib(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0) / 1024.0
}

/// A probe's string `key` ("" when absent).
fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or("").to_owned()
}

/// `key` of each probe.
fn each<T>(probes: &[Value], key: &str, of: fn(&Value, &str) -> T) -> Vec<T> {
    probes.iter().map(|v| of(v, key)).collect()
}

/// The app as it starts for a user: the catalog in its marketplace, 50 servers installed.
fn cold_starts(
    paths: &Paths,
    app: &Path,
    build: &str,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    eprintln!("[bench] app: {runs} cold starts of the {build} build under Xvfb");
    let probes = timed_probes(paths, app, &[], runs)?;
    // What the notes say comes from the last probe.
    let last = probes.last().cloned().unwrap_or(Value::Null);
    let (cards, servers) = (
        last["cards"].as_u64().unwrap_or(0),
        last["installed"].as_u64().unwrap_or(0),
    );
    let processes = if probes.is_empty() {
        String::new()
    } else {
        format!("{} processes: {}", last["processes"], text(&last, "names"))
    };
    let per_process = text(&last, "per_process");
    let web = text(&last, "web");
    rows.push(Row::times(
        SECTION,
        format!("cold start → marketplace-ready ({build})"),
        APP,
        each(&probes, "ready_ms", ms),
        format!(
            "process start (/proc) → the UI's mark after the first render of {cards} catalog cards; {servers} servers installed"
        ),
    ));
    rows.push(Row::times(
        SECTION,
        format!("cold start → window mapped ({build})"),
        APP,
        each(&probes, "window_ms", ms),
        "spawn → xwininfo sees the window",
    ));
    rows.push(Row::times(
        SECTION,
        format!("installed page: switch → {servers} cards rendered ({build})"),
        APP,
        each(&probes, "installed_render_ms", ms),
        "the UI's installed-ready mark; includes one IPC round trip and timer slack",
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory after marketplace-ready, PSS sum ({build})"),
        APP,
        each(&probes, "pss_kib", mib),
        format!("3 s after the mark; {processes}"),
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory after marketplace-ready, RSS sum ({build})"),
        APP,
        each(&probes, "rss_kib", mib),
        SHARED_PAGES_NOTE,
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory with {servers} installed servers shown, PSS sum ({build})"),
        APP,
        each(&probes, "installed_pss_kib", mib),
        "3 s after the installed-ready mark",
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory with {servers} installed servers shown, RSS sum ({build})"),
        APP,
        each(&probes, "installed_rss_kib", mib),
        format!(
            "{SHARED_PAGES_NOTE}; per process at marketplace-ready: {per_process}; web process by mapping: {web}"
        ),
    ));
    Ok(())
}

/// The floor: memory of a hello-world Tauri window built the same way.
fn floor_app_memory(
    paths: &Paths,
    floor: &Path,
    build: &str,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    eprintln!("[bench] app: {runs} starts of the floor app ({build})");
    let probes = timed_probes(paths, floor, &[("MODE", "floor".into())], runs)?;
    let last = probes.last().cloned().unwrap_or(Value::Null);
    rows.push(Row::sizes(
        SECTION,
        format!("memory of a hello-world Tauri app, PSS sum ({build})"),
        FLOOR_APP,
        each(&probes, "pss_kib", mib),
        format!(
            "3 s after its window is mapped; per process: {}; web process by mapping: {}",
            text(&last, "per_process"),
            text(&last, "web")
        ),
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory of a hello-world Tauri app, RSS sum ({build})"),
        FLOOR_APP,
        each(&probes, "rss_kib", mib),
        SHARED_PAGES_NOTE,
    ));
    Ok(())
}

/// The app with a registry of 50,000 servers (synced once into a cache its home gets a copy
/// of) in its marketplace: cold start, scrolling (ten jumps through the list, each until the
/// cards in view are rendered) and memory.
fn large_market(
    paths: &Paths,
    app: &Path,
    build: &str,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let (_registry, url) = start_registry(paths, &["--generate", "50000"])?;
    let home = paths.home("market-50000");
    timed_sync(paths, &home, &url, &["--full"])?;
    let cache = std::fs::read_dir(home.join("registry"))
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .ok_or("no registry cache was written")?;
    eprintln!("[bench] app: {runs} starts of the app with 50,000 registry servers ({build})");
    let env = [
        ("MODE", "market".into()),
        ("MARKET_CACHE", cache.display().to_string()),
        ("MARKET_URL", url.clone()),
    ];
    let probes = timed_probes(paths, app, &env, runs)?;
    let last = probes.last().cloned().unwrap_or(Value::Null);
    rows.push(Row::times(
        SECTION,
        format!("cold start → marketplace-ready, 50,000 entries ({build})"),
        APP,
        each(&probes, "ready_ms", ms),
        "the first page of cards rendered; the listing is loaded and searched in the core",
    ));
    rows.push(Row::times(
        SECTION,
        format!("scroll through 50,000 entries: median jump ({build})"),
        APP,
        each(&probes, "scroll_median_ms", ms),
        "ten jumps top to bottom; each until every card in view is rendered",
    ));
    rows.push(Row::times(
        SECTION,
        format!("scroll through 50,000 entries: slowest jump ({build})"),
        APP,
        each(&probes, "scroll_max_ms", ms),
        "",
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory with 50,000 entries, PSS sum ({build})"),
        APP,
        each(&probes, "pss_kib", mib),
        format!(
            "3 s after marketplace-ready; per process: {}; web process by mapping: {}",
            text(&last, "per_process"),
            text(&last, "web")
        ),
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory with 50,000 entries, RSS sum ({build})"),
        APP,
        each(&probes, "rss_kib", mib),
        SHARED_PAGES_NOTE,
    ));
    rows.push(Row::sizes(
        SECTION,
        format!("memory with 50,000 entries after scrolling, PSS sum ({build})"),
        APP,
        each(&probes, "scrolled_pss_kib", mib),
        "3 s after the scroll tour",
    ));
    Ok(())
}
