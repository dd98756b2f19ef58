//! Real registry launches, plain and pinned, for bench/run's `launches` section: a random
//! sample of the snapshot's PyPI and npm servers that need no input (no required environment
//! variable or argument), each built by the form engine twice — dependencies unpinned (`uvx
//! pkg==V`, `npx -y pkg@V`) and pinned to a day after the version's publication (uv
//! `--exclude-newer`, npm `--before` where npm's registry allows it) — and tested for real to
//! a tool list. Failures are classified the way the doctor classifies them
//! (`plugboard::deps::rot::classify`, else the test's error kind). Prints one JSON document.
//!
//!   cargo bench --bench launches -- [--sample N] [--seed S] [--parallel P] [--timeout SECS]
//!
//! Needs `uvx` on PATH (scripts/setup puts it in .tools/uv-venv/bin) and the npm and PyPI
//! registries reachable.

#[path = "support/snapshot.rs"]
mod snapshot;

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use plugboard::catalog::Catalog;
use plugboard::checks::test_prepared;
use plugboard::deps::rot::classify;
use plugboard::form::FormInput;
use plugboard::form::engine::{build, form};
use plugboard::form::server_json::{Pinning, blueprint};
use plugboard::registry::RegistryRow;
use plugboard::registry::model::Package;
use plugboard::runtimes::system;
use serde_json::{Value, json};

/// A package that can start with no input at all.
fn needs_nothing(p: &Package) -> bool {
    let required = |i: &plugboard::registry::model::Input| {
        i.is_required && i.value.is_none() && i.default.is_none()
    };
    p.transport.kind == "stdio"
        && p.version.as_deref().is_some_and(|v| v != "latest")
        && !p.environment_variables.iter().any(|e| required(&e.input))
        && !p
            .package_arguments
            .iter()
            .chain(&p.runtime_arguments)
            .any(|a| required(&a.input))
}

/// A small deterministic shuffle (xorshift), so a seed names a sample.
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed.max(1);
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        items.swap(i, (state % (i as u64 + 1)) as usize);
    }
}

struct Outcome {
    ok: bool,
    tools: usize,
    class: String,
    evidence: String,
}

async fn run(
    row: &RegistryRow,
    pinned: bool,
    timeout: Duration,
    catalog: &Catalog,
) -> Option<(Outcome, Vec<String>)> {
    let npm = |id: &str, v: &str, date: &str| plugboard::deps::npm_before_allowed(id, v, date);
    let pinning = Pinning {
        enabled: pinned,
        npm: Some(&npm),
    };
    let bp = blueprint(row, "https://registry.modelcontextprotocol.io", &pinning);
    let option = bp
        .options
        .iter()
        .find(|o| o.id == "npm" || o.id == "pypi")?;
    if pinned && option.pin.is_none() {
        return Some((
            Outcome {
                ok: false,
                tools: 0,
                class: "pin_not_possible".into(),
                evidence: option.notes.join("; "),
            },
            vec![],
        ));
    }
    let spec = form(&bp, Some(&option.id), system()).ok()?;
    let prepared = build(&bp, &spec, &FormInput::default(), "bench").ok()?;
    let args = prepared.config.args.clone();
    let result = test_prepared(&prepared, catalog, Some(timeout), |_| {}).await;
    let class = if result.ok {
        "ok".to_owned()
    } else {
        match classify(
            result.stderr_tail.as_deref().unwrap_or(""),
            result.error.as_deref().unwrap_or(""),
        ) {
            Some(rot) => rot.kind.code().to_owned(),
            None => format!(
                "probe.{}",
                result.error_kind.map(|k| k.as_str()).unwrap_or("unknown")
            ),
        }
    };
    let evidence = classify(
        result.stderr_tail.as_deref().unwrap_or(""),
        result.error.as_deref().unwrap_or(""),
    )
    .map(|r| r.evidence)
    .or_else(|| result.error.clone())
    .unwrap_or_default();
    Some((
        Outcome {
            ok: result.ok,
            tools: result.tools.len(),
            class,
            evidence: evidence.chars().take(200).collect(),
        },
        args,
    ))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut sample, mut seed, mut parallel, mut timeout) = (30usize, 16u64, 3usize, 90u64);
    while let Some(arg) = args.next() {
        let mut next = || args.next().and_then(|v| v.parse::<u64>().ok());
        match arg.as_str() {
            "--sample" => sample = next().unwrap_or(30) as usize,
            "--seed" => seed = next().unwrap_or(16),
            "--parallel" => parallel = next().unwrap_or(3) as usize,
            "--timeout" => timeout = next().unwrap_or(90),
            _ => {}
        }
    }
    let rows = snapshot::latest_rows();
    let mut picked: Vec<(String, &RegistryRow)> = vec![];
    for kind in ["pypi", "npm"] {
        let mut candidates: Vec<&RegistryRow> = rows
            .iter()
            .filter(|r| {
                r.server
                    .packages
                    .first()
                    .is_some_and(|p| p.registry_type == kind && needs_nothing(p))
            })
            .collect();
        candidates.sort_by(|a, b| a.server.name.cmp(&b.server.name));
        shuffle(&mut candidates, seed);
        picked.extend(
            candidates
                .into_iter()
                .take(sample)
                .map(|r| (kind.to_owned(), r)),
        );
    }
    let catalog = Catalog::load(None).expect("catalog");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let timeout = Duration::from_secs(timeout);
    let results: Vec<Value> = rt.block_on(async {
        futures::stream::iter(picked.iter())
            .map(|(kind, row)| {
                let catalog = &catalog;
                async move {
                    let plain = run(row, false, timeout, catalog).await;
                    let pinned = run(row, true, timeout, catalog).await;
                    eprintln!(
                        "{kind:5} {:60} plain {:24} pinned {}",
                        row.server.name,
                        plain.as_ref().map_or("-", |(o, _)| o.class.as_str()),
                        pinned.as_ref().map_or("-", |(o, _)| o.class.as_str())
                    );
                    let view = |o: &Option<(Outcome, Vec<String>)>| match o {
                        Some((o, args)) => json!({"ok": o.ok, "tools": o.tools, "class": o.class, "evidence": o.evidence, "args": args}),
                        None => json!(null),
                    };
                    json!({"kind": kind, "name": row.server.name, "version": row.server.version,
                           "published_at": row.meta.official.published_at, "plain": view(&plain), "pinned": view(&pinned)})
                }
            })
            .buffer_unordered(parallel)
            .collect()
            .await
    });
    let mut totals: BTreeMap<String, Value> = BTreeMap::new();
    for kind in ["pypi", "npm"] {
        let of_kind: Vec<&Value> = results.iter().filter(|r| r["kind"] == kind).collect();
        let count = |f: &dyn Fn(&Value) -> bool| of_kind.iter().filter(|r| f(r)).count();
        let ok = |v: &Value| v["ok"] == true;
        let mut plain_failures: BTreeMap<String, usize> = BTreeMap::new();
        let mut pinned_failures: BTreeMap<String, usize> = BTreeMap::new();
        for r in &of_kind {
            if !ok(&r["plain"]) {
                *plain_failures
                    .entry(
                        r["plain"]["class"]
                            .as_str()
                            .unwrap_or("not built")
                            .to_owned(),
                    )
                    .or_default() += 1;
            }
            if !ok(&r["pinned"]) {
                *pinned_failures
                    .entry(
                        r["pinned"]["class"]
                            .as_str()
                            .unwrap_or("not built")
                            .to_owned(),
                    )
                    .or_default() += 1;
            }
        }
        totals.insert(
            kind.to_owned(),
            json!({
                "sampled": of_kind.len(),
                "plain_ok": count(&|r| ok(&r["plain"])),
                "pinned_ok": count(&|r| ok(&r["pinned"])),
                "only_pinned_ok": count(&|r| ok(&r["pinned"]) && !ok(&r["plain"])),
                "only_plain_ok": count(&|r| ok(&r["plain"]) && !ok(&r["pinned"])),
                "either_ok": count(&|r| ok(&r["plain"]) || ok(&r["pinned"])),
                "plain_failures": plain_failures,
                "pinned_failures": pinned_failures,
            }),
        );
    }
    println!(
        "{}",
        json!({"seed": seed, "sample_per_kind": sample, "totals": totals, "servers": results})
    );
}
