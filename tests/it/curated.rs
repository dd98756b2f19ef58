//! The curated catalog's package launches, for real: every one names an exact version and a
//! dependency date (so what starts today starts next year), an old install whose dependencies
//! moved on is mended by the doctor's own fix, and — in `scripts/test`, which may download —
//! every curated stdio entry that needs no credential is installed and started from npm or
//! PyPI, and one started with a fake credential reaches its credential check.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::registry::path_with_uv;
use crate::support::{Home, assert_code, repo_root, stdout};

/// Launches that cannot be pinned from a package index: fetched from a git repository.
const FROM_GIT: &[&str] = &["quickbooks"];

fn catalog_options() -> Vec<(String, Value)> {
    let mut options = vec![];
    for entry in std::fs::read_dir(repo_root().join("catalog")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json")
            || path.file_name().unwrap() == "catalog.schema.json"
        {
            continue;
        }
        let entry: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for option in entry["options"].as_array().unwrap() {
            options.push((entry["id"].as_str().unwrap().to_owned(), option.clone()));
        }
    }
    options.sort_by(|a, b| (&a.0, a.1["id"].as_str()).cmp(&(&b.0, b.1["id"].as_str())));
    options
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_curated_package_launch_names_a_version_and_a_dependency_date() {
    let mut checked = 0;
    for (id, option) in catalog_options() {
        let transport = &option["transport"];
        let command = transport["command"].as_str().unwrap_or("");
        if !matches!(command, "npx" | "uvx") {
            continue;
        }
        let args = strings(&transport["args"]);
        if FROM_GIT.contains(&id.as_str()) {
            assert!(
                args.iter().any(|a| a.starts_with("github:")),
                "{id}: {args:?}"
            );
            continue;
        }
        let package = plugboard::doctor::deps::launched_package(command, &args);
        assert!(
            package
                .as_ref()
                .is_some_and(|(_, version)| !version.is_empty()
                    && version != "latest"
                    && version.chars().next().unwrap().is_ascii_digit()),
            "{id}/{}: `{command} {}` names no exact version",
            option["id"],
            args.join(" ")
        );
        let date = plugboard::deps::rot::pinned_date(&args);
        assert!(
            date.is_some_and(|d| plugboard::registry::time::parse_rfc3339(d).is_some()),
            "{id}/{}: `{command} {}` names no dependency date",
            option["id"],
            args.join(" ")
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} package launches");
}

fn install(home: &Home, args: &[&str], stdin: &str) -> (Output, Value) {
    let mut cmd = home.cmd(args);
    cmd.env("PATH", path_with_uv());
    let out = crate::support::output_with_stdin(cmd, stdin);
    let value = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
    (out, value)
}

/// The test an install made: the install's `test`, or the failed test itself (nothing saved).
fn test_of(install: &Value) -> &Value {
    if install["test"].is_object() {
        &install["test"]
    } else {
        install
    }
}

/// An install of SQLite from before the catalog pinned its dependencies (the same version,
/// its dependencies' newest releases) fails as users met it; the doctor names the cause and
/// a fix that is a real command, and after that command it starts.
#[test]
fn an_unpinned_sqlite_install_is_mended_by_the_doctors_fix() {
    let home = Home::new();
    let db = home.path().join("data.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| install(&home, args, "").0;
    let set = format!("db_path={db}");
    assert_code(&run(&["install", "sqlite", "--set", &set, "--no-test"]), 0);
    assert_code(&run(&["edit", "sqlite", "--unpin-dependencies"]), 0);
    let out = run(&["test", "sqlite", "--json"]);
    assert_code(&out, 1);
    let out = run(&["doctor", "sqlite", "--json"]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let findings = report["servers"][0]["findings"].as_array().unwrap();
    let rot = findings
        .iter()
        .find(|f| f["code"] == "deps.moved_on")
        .unwrap_or_else(|| panic!("{report}"));
    let fix = rot["fix"].as_str().unwrap();
    assert!(
        fix.contains("`plugboard edit sqlite --pin-dependencies`")
            && fix.contains("--exclude-newer 2025-04-26T08:27:29Z mcp-server-sqlite==2025.4.25"),
        "{fix}"
    );
    assert_code(&run(&["edit", "sqlite", "--pin-dependencies"]), 0);
    let out = run(&["test", "sqlite", "--json"]);
    assert_code(&out, 0);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "read_query"),
        "{result}"
    );
}

/// What to fill in for a required field of a curated entry that needs no credential.
fn sample(kind: &str, scratch: &Path) -> String {
    match kind {
        "folder" | "folders" => scratch.display().to_string(),
        "file" => scratch.join("sample.db").display().to_string(),
        other => panic!("no sample for a required `{other}` field"),
    }
}

/// A curated option to start: its entry, its id, and its required fields' keys and kinds.
struct Job {
    id: String,
    option: String,
    fields: Vec<(String, String)>,
}

/// Install (which tests first) every curated stdio entry that needs no credential, from npm
/// and PyPI as a user would; and one with a fake credential must get through start and
/// listing to its credential check. It downloads packages, so a plain `cargo test` skips it;
/// `scripts/test` (the README's test command, which CI runs) includes it, so a broken curated
/// launch fails the run before a user meets it.
#[test]
#[ignore = "downloads every curated package; scripts/test runs it (--include-ignored)"]
fn every_curated_entry_that_needs_no_credential_starts() {
    let mut jobs: Vec<Job> = vec![];
    for (id, option) in catalog_options() {
        let transport = &option["transport"];
        let command = transport["command"].as_str().unwrap_or("");
        if !matches!(command, "npx" | "uvx") || FROM_GIT.contains(&id.as_str()) {
            continue;
        }
        let required: Vec<&Value> = ["env_fields", "arg_fields"]
            .iter()
            .flat_map(|k| transport[*k].as_array().into_iter().flatten())
            .filter(|f| f["required"] == true)
            .collect();
        if required
            .iter()
            .any(|f| f["kind"] == "password" || f["secret"] == true)
        {
            continue;
        }
        let fields = required
            .iter()
            .map(|f| {
                let kind = f["kind"].as_str().unwrap_or("text");
                (f["key"].as_str().unwrap().to_owned(), kind.to_owned())
            })
            .collect();
        let option = option["id"].as_str().unwrap().to_owned();
        jobs.push(Job { id, option, fields });
    }
    assert!(jobs.len() >= 12, "only {} entries to start", jobs.len());
    let failures = std::sync::Mutex::new(vec![]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let at = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(Job { id, option, fields }) = jobs.get(at) else {
                        break;
                    };
                    let home = Home::new();
                    let scratch = home.path().join("scratch");
                    std::fs::create_dir_all(&scratch).unwrap();
                    let git = std::process::Command::new("git")
                        .args(["init", "-q"])
                        .current_dir(&scratch)
                        .output()
                        .unwrap();
                    assert_code(&git, 0);
                    let mut args: Vec<String> = ["install", id, "--option", option, "--json"]
                        .map(String::from)
                        .to_vec();
                    for (key, kind) in fields {
                        args.push("--set".to_owned());
                        args.push(format!("{key}={}", sample(kind, &scratch)));
                    }
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let started = std::time::Instant::now();
                    let (out, result) = install(&home, &args, "");
                    let test = test_of(&result);
                    let tools = test["tools"].as_array().map_or(0, Vec::len);
                    eprintln!(
                        "curated {id}/{option}: exit {:?}, {tools} tools, {:.1} s",
                        out.status.code(),
                        started.elapsed().as_secs_f64()
                    );
                    if out.status.code() != Some(0) || test["ok"] != true {
                        failures.lock().unwrap().push(format!(
                            "{id}/{option}: {} {}",
                            test["error"], test["stderr_tail"]
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "curated entries that do not start:\n{}",
        failures.join("\n")
    );

    // A fake credential: started, listed, and its credential check made.
    let home = Home::new();
    let (_, result) = install(
        &home,
        &[
            "install",
            "notion",
            "--secret-stdin",
            "NOTION_TOKEN",
            "--json",
        ],
        "ntn_000000000000000000000000000000000000000000000",
    );
    let stages: Vec<(&str, bool)> = test_of(&result)["stages"]
        .as_array()
        .unwrap_or_else(|| panic!("{result}"))
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["ok"] == true))
        .collect();
    assert!(stages.contains(&("tools/list", true)), "{stages:?}");
    assert!(
        stages.iter().any(|(name, _)| *name == "credential_probe"),
        "{stages:?}"
    );
}
