//! Checks of ARCHITECTURE.md's invariants that a test can see: the core never depends on Tauri,
//! its crates depend only on the layers below them, and every source module says what it is
//! for.

use std::path::Path;
use std::process::Command;

use crate::support::repo_root;

/// A plain `cargo build` or `cargo test` at the root builds no Tauri code: no crate named
/// tauri* is in the tree of the default members (the core's crates, the CLI, the fixtures).
#[test]
fn the_core_does_not_depend_on_tauri() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--edges",
            "normal,build,dev",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        tree.lines().any(|l| l.starts_with("plugboard-ops ")) && tree.lines().count() > 50,
        "cargo tree printed too little:\n{tree}"
    );
    let tauri: Vec<&str> = tree
        .lines()
        .filter(|l| l.starts_with("tauri") || l.starts_with("plugboard-app "))
        .collect();
    assert!(tauri.is_empty(), "the core depends on Tauri: {tauri:?}");
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_starts_with_a_doc_comment() {
    let root = repo_root();
    let mut files = vec![];
    for dir in ["src", "crates", "tests", "fixtures"] {
        rust_files(&root.join(dir), &mut files);
    }
    let missing: Vec<_> = files
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` doc: {missing:?}"
    );
}

/// The workspace's members and their layers, lowest first. The desktop shell is a member (one
/// lockfile and target directory for everything shipped) but not a default member.
const LAYERS: [&str; 7] = [
    "plugboard-base",
    "plugboard-sandbox",
    "plugboard-store",
    "plugboard-wire",
    "plugboard-sources",
    "plugboard-ops",
    "plugboard-app-api",
];

fn workspace_metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_desktop_shell_shares_the_workspace_but_is_not_a_default_member() {
    let meta = workspace_metadata();
    let name_of = |id: &serde_json::Value| -> String {
        meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == *id)
            .and_then(|p| p["name"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    let members: Vec<String> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(name_of)
        .collect();
    let defaults: Vec<String> = meta["workspace_default_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(name_of)
        .collect();
    assert!(members.iter().any(|n| n == "plugboard-app"), "{members:?}");
    assert!(
        !defaults.iter().any(|n| n == "plugboard-app"),
        "{defaults:?}"
    );
    for layer in LAYERS.iter().chain(&["plugboard"]) {
        assert!(
            defaults.iter().any(|n| n == layer),
            "{layer} not a default member"
        );
    }
    assert!(
        !repo_root().join("src-tauri/Cargo.lock").exists(),
        "src-tauri must use the workspace's lockfile"
    );
}

/// Data flows one way: each core crate depends only on the crates of the layers below it, and
/// the command line (`plugboard`) never on the app's API.
#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let meta = workspace_metadata();
    let mut upward = vec![];
    for package in meta["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let rank = |n: &str| LAYERS.iter().position(|l| *l == n);
        let own = match name {
            "plugboard" => Some(LAYERS.len() - 1),
            other => rank(other),
        };
        let Some(own) = own else { continue };
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let normal = dep["kind"].is_null();
            if let Some(theirs) = rank(dep_name)
                && normal
                && theirs >= own
            {
                upward.push(format!("{name} → {dep_name}"));
            }
        }
    }
    assert!(upward.is_empty(), "dependencies that climb: {upward:?}");
}

/// Every HTTP client is built through `plugboard::tls::http_client_builder`, which installs the
/// TLS crypto provider: reqwest is built without one, so a client built directly would panic
/// on first use (src/tls.rs).
#[test]
fn http_clients_are_built_with_the_tls_provider() {
    let root = repo_root();
    let mut files = vec![];
    for dir in ["src", "crates", "tests", "tools", "src-tauri/src"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    let direct: Vec<_> = files
        .iter()
        .filter(|p| !p.ends_with("src/tls.rs") && !p.ends_with("tests/it/architecture.rs"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            ["Client::builder()", "Client::new()", "reqwest::get("]
                .iter()
                .any(|call| text.contains(call))
        })
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(
        direct.is_empty(),
        "HTTP clients built without plugboard::tls::http_client_builder: {direct:?}"
    );
}

/// A crate's top-level modules (`<src>/<name>.rs` or `<src>/<name>/`) and, for each, the other
/// top-level modules of the same crate its code names through `crate::` (comments left out).
fn module_graph(
    src: &Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut modules: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut files = vec![];
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path.clone());
        }
        modules.entry(name).or_default().extend(files);
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, files) in &modules {
        let mut uses = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(file).unwrap();
            let code: String = text
                .lines()
                .map(|line| match line.find("//") {
                    Some(i) => &line[..i],
                    None => line,
                })
                .collect::<Vec<_>>()
                .join("\n");
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let named: Vec<String> = match rest.strip_prefix('{') {
                    // `use crate::{a, b::c, ...}`: every first segment at the top level of the
                    // braces.
                    Some(inner) => {
                        let mut depth = 0;
                        let mut end = inner.len();
                        for (j, c) in inner.char_indices() {
                            match c {
                                '{' => depth += 1,
                                '}' if depth == 0 => {
                                    end = j;
                                    break;
                                }
                                '}' => depth -= 1,
                                _ => {}
                            }
                        }
                        let mut out = vec![];
                        let mut depth = 0;
                        let mut item = String::new();
                        for c in inner[..end].chars().chain([',']) {
                            match c {
                                '{' => depth += 1,
                                '}' => depth -= 1,
                                ',' if depth == 0 => {
                                    out.push(std::mem::take(&mut item));
                                    continue;
                                }
                                _ => {}
                            }
                            item.push(c);
                        }
                        out.iter()
                            .map(|s| s.trim().split("::").next().unwrap_or("").trim().to_string())
                            .collect()
                    }
                    None => vec![
                        rest.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect(),
                    ],
                };
                for name in named {
                    if name != *module && names.contains(&name) {
                        uses.insert(name);
                    }
                }
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// Data flows one way inside each crate too: no two of its top-level modules may reach each
/// other, directly or through others. Shared small types live below the modules that use them.
#[test]
fn core_modules_have_no_import_circles() {
    let root = repo_root();
    let wire = module_graph(&root.join("crates/wire/src"));
    assert!(
        wire.get("probe")
            .is_some_and(|uses| uses.contains("connect")),
        "the module graph was not read: {wire:?}"
    );
    let mut crates = vec![root.join("src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        crates.push(entry.unwrap().path().join("src"));
    }
    for src in crates {
        assert_no_circles(&src, &module_graph(&src));
    }
}

fn assert_no_circles(
    src: &Path,
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) {
    // Every circle shows up as a module that reaches itself; report each circle once.
    let mut circles: Vec<Vec<String>> = vec![];
    for start in graph.keys() {
        // Depth-first search for a path start → … → start.
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in &graph[&node] {
                if next == start {
                    let mut circle = path.clone();
                    let min = (0..circle.len()).min_by_key(|&i| &circle[i]).unwrap();
                    circle.rotate_left(min);
                    if !circles.contains(&circle) {
                        circles.push(circle);
                    }
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    let shown: Vec<String> = circles
        .iter()
        .map(|c| format!("{} → {}", c.join(" → "), c[0]))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles between the modules of {}:\n  {}",
        src.display(),
        shown.join("\n  ")
    );
}
