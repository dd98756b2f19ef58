//! Checks of ARCHITECTURE.md's invariants that a test can see: the core never depends on Tauri,
//! and every source module says what it is for.

use std::path::Path;
use std::process::Command;

use crate::support::repo_root;

/// `cargo test` at the root builds no Tauri code: no crate named tauri* is in the core's tree.
#[test]
fn the_core_does_not_depend_on_tauri() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "plugboard",
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
        tree.lines().count() > 50,
        "cargo tree printed too little:\n{tree}"
    );
    let tauri: Vec<&str> = tree.lines().filter(|l| l.starts_with("tauri")).collect();
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
    for dir in ["src", "tests", "fixtures"] {
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

/// The desktop shell (`src-tauri/`) is a workspace of its own, excluded from this one, so
/// `cargo test` here never builds Tauri even though the shell depends on this crate.
#[test]
fn the_desktop_shell_is_not_in_this_workspace() {
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
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"plugboard"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("tauri") || *n == "plugboard-app"),
        "the workspace builds the desktop shell: {names:?}"
    );
    let shell = std::fs::read_to_string(repo_root().join("src-tauri/Cargo.toml")).unwrap();
    assert!(
        shell.contains("\n[workspace]"),
        "src-tauri must be its own workspace"
    );
}

/// Every HTTP client is built through `plugboard::tls::http_client_builder`, which installs the
/// TLS crypto provider: reqwest is built without one, so a client built directly would panic
/// on first use (src/tls.rs).
#[test]
fn http_clients_are_built_with_the_tls_provider() {
    let root = repo_root();
    let mut files = vec![];
    for dir in ["src", "tests", "tools", "src-tauri/src"] {
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
