//! The results file (target/bench/results.json by default): the machine, every row with its
//! samples and medians, and the ratios.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::options::Options;
use crate::report::ratios::Ratio;
use crate::rounds::noisy_rounds;
use crate::row::Row;

/// The machine the benchmark runs on: CPU, memory, kernel, OS, load, node and rustc versions.
pub fn describe_machine() -> Value {
    let run = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_default();
    json!({
        "nproc": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "cpu": cpu,
        "free_h": run("free", &["-h"]),
        "kernel": run("uname", &["-r"]),
        "os": run("sh", &["-c", ". /etc/os-release && echo \"$PRETTY_NAME\""]),
        "loadavg": loadavg(),
        "node": run("node", &["--version"]),
        "rustc": run("rustc", &["--version"]),
    })
}

/// The results, `machine` being [`describe_machine`] from before the first section.
pub fn results(rows: &[Row], ratios: &[Ratio], options: &Options, machine: Value) -> Value {
    json!({
        "machine": machine,
        "loadavg_after": loadavg(),
        "noisy_rounds": noisy_rounds(),
        "runs": options.runs,
        "warmup": options.warmup,
        "rows": rows.iter().map(row).collect::<Vec<_>>(),
        "ratios": ratios.iter().map(|r| json!({
            "section": r.section, "subject": r.subject, "name": r.name, "value": r.value,
        })).collect::<Vec<_>>(),
    })
}

/// Write `results` to `path` (pretty-printed), creating its directory.
pub fn write(path: &Path, results: &Value) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(
        path,
        serde_json::to_string_pretty(results).unwrap_or_default(),
    )
}

fn row(r: &Row) -> Value {
    let ms = r.sorted_ms();
    // divan rows hold fastest, median, slowest, not samples
    let catalog = r.section == "catalog" && ms.len() == 3;
    let mib = r.sorted_mib();
    json!({
        "section": r.section,
        "subject": r.subject,
        "client": r.client,
        "median_ms": if catalog { Some(ms[1]) } else { r.median_ms() },
        "min_ms": ms.first(),
        "max_ms": ms.last(),
        "mib": match (r.median_mib(), mib.first(), mib.last()) {
            (Some(median), Some(min), Some(max)) => {
                json!({"median": median, "min": min, "max": max, "samples": r.mib})
            }
            _ => Value::Null,
        },
        "cpu_median_ms": r.cpu_median_ms(),
        "cpu_samples_ms": r.cpu.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>(),
        "samples_ms": if catalog { vec![] } else { r.samples.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>() },
        "note": r.note,
    })
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_owned()
}
