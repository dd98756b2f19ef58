//! The scanner of tool definitions against a corpus: poisoned definitions written after
//! published attacks (`tests/data/scanner/poisoned.json`: each must raise its findings with
//! their severity and a span that points at them), and what real servers list
//! (`tests/data/scanner/real-servers.json`) and what the registry snapshot's authors wrote
//! (every server, argument, variable and header description), where nothing may be critical.
//! The counts are printed for the record.

use std::collections::BTreeSet;
use std::io::Read;

use plugboard::pinning::flags::{self, Flag, OtherServers, Severity};
use serde_json::Value;

use crate::support::repo_root;

fn load(name: &str) -> Value {
    let path = repo_root().join("tests/data/scanner").join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// Every finding on one tool definition, shadowing included when `others` are given.
fn scan(tool: &Value, others: &[(String, Vec<String>)]) -> Vec<Flag> {
    let name = tool["name"].as_str().unwrap();
    let description = tool["description"].as_str();
    let mut out = vec![];
    flags::scan_tool(name, description, &tool["inputSchema"], &mut out);
    if let Some(description) = description {
        let own: BTreeSet<String> = [name.to_owned()].into();
        let others = OtherServers {
            servers: others,
            own: &own,
        };
        flags::scan_shadowing(name, "the description", description, &others, &mut out);
    }
    out
}

#[test]
fn every_poisoned_definition_of_the_corpus_is_caught_with_its_severity() {
    let corpus = load("poisoned.json");
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 12);
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let others: Vec<(String, Vec<String>)> =
            serde_json::from_value(case.get("others").cloned().unwrap_or(Value::Array(vec![])))
                .unwrap();
        let found = scan(&case["tool"], &others);
        for expected in case["expect"].as_array().unwrap() {
            let code = expected["code"].as_str().unwrap();
            let severity = expected["severity"].as_str().unwrap();
            let hit = found
                .iter()
                .find(|f| f.code == code)
                .unwrap_or_else(|| panic!("{id}: no {code} in {found:#?}"));
            assert_eq!(hit.severity.as_str(), severity, "{id}: {hit:#?}");
            assert!(
                hit.span.is_some() || code == "long_description",
                "{id}: {hit:#?}"
            );
        }
        // The span points into the text it names.
        for flag in &found {
            let (Some(span), "description") = (flag.span, flag.place.as_str()) else {
                continue;
            };
            let text: Vec<char> = case["tool"]["description"]
                .as_str()
                .unwrap()
                .chars()
                .collect();
            assert!(
                span.start < span.end && span.end <= text.len(),
                "{id}: {flag:#?}"
            );
        }
    }
    println!(
        "scanner corpus: {} poisoned definitions, every one caught",
        cases.len()
    );
}

/// The texts of the registry snapshot that its servers' authors wrote for people and models.
fn registry_texts() -> Vec<(String, String)> {
    let path =
        repo_root().join("fixtures/registry-fixture/data/registry-snapshot-2025-12-18.json.gz");
    let mut json = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut json)
        .unwrap();
    let rows: Value = serde_json::from_str(json.trim_start_matches('\u{feff}')).unwrap();
    let mut texts = vec![];
    let mut push = |name: &str, value: &Value| {
        if let Some(text) = value.as_str().filter(|t| !t.is_empty()) {
            texts.push((name.to_owned(), text.to_owned()));
        }
    };
    for row in rows.as_array().unwrap() {
        let server = &row["server"];
        let name = server["name"].as_str().unwrap_or("?");
        push(name, &server["description"]);
        for package in server["packages"].as_array().into_iter().flatten() {
            for list in [
                "environmentVariables",
                "packageArguments",
                "runtimeArguments",
            ] {
                for item in package[list].as_array().into_iter().flatten() {
                    push(name, &item["description"]);
                }
            }
        }
        for remote in server["remotes"].as_array().into_iter().flatten() {
            for header in remote["headers"].as_array().into_iter().flatten() {
                push(name, &header["description"]);
            }
        }
    }
    texts.sort();
    texts.dedup();
    texts
}

#[test]
fn real_servers_and_the_registrys_texts_raise_nothing_critical() {
    let real = load("real-servers.json");
    let mut definitions = 0;
    let mut flagged = vec![];
    for (server, lists) in real["servers"].as_object().unwrap() {
        for tool in lists["tools"].as_array().unwrap() {
            definitions += 1;
            flagged.extend(scan(tool, &[]).into_iter().map(|f| (server.clone(), f)));
        }
        for item in lists["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .chain(lists["resources"].as_array().unwrap())
        {
            if let Some(text) = item["description"].as_str() {
                definitions += 1;
                let mut out = vec![];
                flags::scan_text("(item)", "the description", text, &mut out);
                flagged.extend(out.into_iter().map(|f| (server.clone(), f)));
            }
        }
    }
    let critical: Vec<_> = flagged
        .iter()
        .filter(|(_, f)| f.severity == Severity::Critical)
        .collect();
    assert!(
        critical.is_empty(),
        "critical findings on real servers: {critical:#?}"
    );
    println!(
        "real servers: {definitions} definitions, {} findings (none critical)",
        flagged.len()
    );

    let texts = registry_texts();
    assert!(texts.len() > 1000, "{}", texts.len());
    let mut findings: Vec<(String, Flag)> = vec![];
    for (server, text) in &texts {
        let mut out = vec![];
        flags::scan_text("(registry)", "the description", text, &mut out);
        findings.extend(out.into_iter().map(|f| (server.clone(), f)));
    }
    let critical: Vec<_> = findings
        .iter()
        .filter(|(_, f)| f.severity == Severity::Critical)
        .collect();
    let warnings = findings.len() - critical.len();
    println!(
        "registry snapshot: {} texts, {} critical ({:.2} %), {warnings} other findings",
        texts.len(),
        critical.len(),
        100.0 * critical.len() as f64 / texts.len() as f64
    );
    for (server, flag) in &critical {
        println!("  critical on {server}: {} — {}", flag.code, flag.detail);
    }
    assert!(
        critical.is_empty(),
        "critical findings in the registry's texts: {critical:#?}"
    );
}
