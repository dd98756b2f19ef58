//! The catalog on disk: every file validates against the schema and parses, ids are unique,
//! every option's form round-trips, bad files are named, and an extra directory adds entries.

use std::collections::BTreeSet;

use plugboard::catalog::{Catalog, CatalogError, dir_entries, parse_entry};
use plugboard::form::{
    FieldState, FieldTarget, FormInput, InputKind, build_server, field_states, form_for,
};

use crate::support::{Home, assert_code, repo_root, stdout};

fn catalog_files() -> Vec<(String, String)> {
    let dir = repo_root().join("catalog");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name().unwrap() != "catalog.schema.json"
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_file_validates_against_the_schema_and_parses() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("catalog/catalog.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let files = catalog_files();
    assert!(files.len() >= 50, "only {} catalog entries", files.len());
    let mut ids = BTreeSet::new();
    for (name, text) in &files {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        let entry = parse_entry(name, text).unwrap_or_else(|e| panic!("{e}"));
        assert!(ids.insert(entry.id.clone()), "duplicate id {}", entry.id);
    }
    let embedded = Catalog::load(None).unwrap();
    assert_eq!(
        embedded.entries().len(),
        files.len(),
        "the binary embeds every file"
    );
}

#[test]
fn the_required_credential_probes_are_declared() {
    let catalog = Catalog::load(None).unwrap();
    let probe = |id: &str| {
        catalog
            .get(id)
            .unwrap()
            .options
            .iter()
            .find_map(|o| o.probe.clone())
            .unwrap_or_else(|| panic!("{id} has no probe"))
    };
    assert_eq!(probe("github").tool, "get_me");
    assert_eq!(probe("linear").tool, "list_teams");
    let slack = probe("slack");
    assert_eq!(slack.tool, "slack_list_channels");
    let codes = slack.auth_error.unwrap().values;
    for code in ["invalid_auth", "not_authed", "token_revoked"] {
        assert!(codes.iter().any(|c| c == code), "slack probe misses {code}");
    }
}

/// Fill every field of every option with a sample, build the server, and read the form back.
#[test]
fn every_option_form_round_trips_to_a_config_and_back() {
    let catalog = Catalog::load(None).unwrap();
    let mut options = 0;
    for entry in catalog.entries() {
        for option in &entry.options {
            options += 1;
            let spec = form_for(entry, Some(&option.id)).unwrap();
            assert_eq!(spec.option_id, option.id);
            let mut input = FormInput::default();
            for field in &spec.fields {
                let value = match field.target {
                    FieldTarget::Url => field.default.clone().unwrap(),
                    // Path fields take whole paths; a list of folders, one per line.
                    _ if field.input == InputKind::List && field.picker.is_some() => {
                        format!("/srv/sample one\n/srv/sample-{}", field.key.to_lowercase())
                    }
                    _ if field.picker.is_some() => {
                        format!("/srv/sample-{}", field.key.to_lowercase())
                    }
                    _ => format!("sample-{}", field.key.to_lowercase()),
                };
                input.set(&field.key, value);
            }
            let prepared = build_server(entry, &spec, &input, &entry.id)
                .unwrap_or_else(|e| panic!("{}/{}: {e}", entry.id, option.id));
            prepared.config.validate().unwrap();
            let json = serde_json::to_string(&prepared.config).unwrap();
            for secret in prepared.secrets.values() {
                assert!(
                    !json.contains(secret.expose()),
                    "{}: secret in config",
                    entry.id
                );
            }
            let states = field_states(&spec, &prepared.config);
            for field in &spec.fields {
                let state = &states[&field.key];
                if field.secret {
                    assert_eq!(state, &FieldState::SecretRef, "{}/{}", entry.id, field.key);
                } else {
                    let expected = input.values[&field.key].expose().clone();
                    assert_eq!(
                        state,
                        &FieldState::Plain(expected),
                        "{}/{}",
                        entry.id,
                        field.key
                    );
                }
            }
        }
    }
    assert!(options >= 60, "only {options} options");
}

#[test]
fn a_malformed_file_is_named_with_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = catalog_files()
        .into_iter()
        .find(|(n, _)| n == "tavily.json")
        .unwrap()
        .1;
    let mut value: serde_json::Value = serde_json::from_str(&good).unwrap();
    value["options"][0]["transport"]
        .as_object_mut()
        .unwrap()
        .remove("command");
    std::fs::write(dir.path().join("tavily.json"), value.to_string()).unwrap();
    let err = dir_entries(dir.path()).unwrap_err();
    let CatalogError::Invalid { file, detail } = &err else {
        panic!("{err}")
    };
    assert!(file.ends_with("tavily.json"), "{file}");
    assert!(
        detail.contains("options[0].transport") && detail.contains("command"),
        "{detail}"
    );

    std::fs::write(dir.path().join("tavily.json"), "{ not json").unwrap();
    let err = dir_entries(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("tavily.json") && err.contains("line 1"),
        "{err}"
    );

    let mut wrong_category: serde_json::Value = serde_json::from_str(&good).unwrap();
    wrong_category["categories"] = serde_json::json!(["gardening"]);
    std::fs::write(dir.path().join("tavily.json"), wrong_category.to_string()).unwrap();
    let err = dir_entries(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("categories[0]") && err.contains("gardening"),
        "{err}"
    );
}

#[test]
fn an_extra_catalog_dir_adds_entries_and_the_cli_finds_them() {
    let home = Home::new();
    let extra = tempfile::tempdir().unwrap();
    std::fs::write(
        extra.path().join("acme-widgets.json"),
        serde_json::json!({
            "id": "acme-widgets", "name": "Acme Widgets", "description": "Widgets for testing.",
            "docs_url": "https://example.com/acme", "categories": ["data"], "keywords": ["sprocket"],
            "options": [{"id": "local", "label": "Local", "transport": {"type": "stdio", "command": "acme", "args": []}, "auth": {"type": "none"}}]
        })
        .to_string(),
    )
    .unwrap();
    let out = home
        .cmd(&["catalog", "sprocket", "--json"])
        .env("PLUGBOARD_CATALOG_DIR", extra.path())
        .output()
        .unwrap();
    assert_code(&out, 0);
    let hits: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(hits[0]["id"], "acme-widgets");

    std::fs::write(extra.path().join("broken.json"), "[]").unwrap();
    let out = home
        .cmd(&["catalog"])
        .env("PLUGBOARD_CATALOG_DIR", extra.path())
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(crate::support::stderr(&out).contains("broken.json"));
}

#[test]
fn catalog_search_and_categories_from_the_cli() {
    let home = Home::new();
    let out = home.run(&["catalog", "git", "--json"]);
    assert_code(&out, 0);
    let hits: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h["id"].as_str().unwrap()).collect();
    // The entry named exactly that first, then the names starting with it.
    assert_eq!(ids[..2], ["git", "github"], "{ids:?}");
    let out = home.run(&["catalog", "--category", "search", "--json"]);
    let hits: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| {
        h["categories"]
            .as_array()
            .unwrap()
            .contains(&"search".into())
    }));
    let out = home.run(&["catalog", "--category", "nope"]);
    assert_code(&out, 2);
    let out = home.run(&["catalog", "show", "slack", "--json"]);
    assert_code(&out, 0);
    let shown: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(shown["forms"].as_array().unwrap().len() >= 2);
    let out = home.run(&["catalog", "show", "no-such-thing"]);
    assert_code(&out, 2);
}
