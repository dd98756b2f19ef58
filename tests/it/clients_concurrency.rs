//! Exports running at the same moment (two terminals, the app and the CLI) each keep what they
//! wrote: the record of Plugboard's entries is changed under a lock, and a client file that
//! changed between plan and write is planned again, never written over.

use serde_json::Value;

use crate::run_stdio::add_fixture;
use crate::support::{Home, assert_code};

#[test]
fn concurrent_exports_keep_every_ownership_record() {
    let home = Home::new();
    add_fixture(&home, "one", &[], None);
    add_fixture(&home, "two", &[], None);
    let dir = tempfile::tempdir().unwrap();
    let rounds = 12;
    let mut files = vec![];
    for round in 0..rounds {
        let pair = [
            ("cursor", dir.path().join(format!("cursor-{round}.json"))),
            ("vscode", dir.path().join(format!("vscode-{round}.json"))),
            ("cursor", dir.path().join(format!("shared-{round}.json"))),
            ("cursor", dir.path().join(format!("shared-{round}.json"))),
        ];
        let children: Vec<_> = pair
            .iter()
            .map(|(client, file)| {
                home.cmd(&[
                    "export",
                    "--client",
                    client,
                    "--file",
                    file.to_str().unwrap(),
                    "--write",
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for child in children {
            assert_code(&child.wait_with_output().unwrap(), 0);
        }
        files.extend(pair.into_iter().map(|(_, f)| f));
    }
    let record: Value =
        serde_json::from_slice(&std::fs::read(home.path().join("exports.json")).unwrap()).unwrap();
    let recorded = record["files"].as_object().unwrap();
    files.sort();
    files.dedup();
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let key = f.canonicalize().unwrap().to_string_lossy().into_owned();
            recorded
                .get(&key)
                .is_none_or(|r| r["entries"].as_object().unwrap().len() != 2)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} files lost their record: {missing:?}",
        missing.len(),
        files.len()
    );
    for file in &files {
        let doc: Value = serde_json::from_slice(&std::fs::read(file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let servers = doc
            .get("mcpServers")
            .or_else(|| doc.get("servers"))
            .unwrap();
        assert_eq!(
            servers.as_object().unwrap().len(),
            2,
            "{}: {doc}",
            file.display()
        );
    }
}
