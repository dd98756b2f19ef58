//! MCPB bundles through the CLI: bundles packed by the official packer from the fixture servers
//! in `tests/bundles/` (Node and Python) installed from a file and from a registry (the registry
//! fixture naming bundles on a loopback HTTPS server whose test CA the CLI trusts), tested, their
//! secrets in the keyring only, their directory gone with `remove`; hostile bundles refused
//! with nothing left behind; bundles that do not fit this machine refused before install.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::bundles::{FileServer, edit_json, mcpb_row, notes_bundle, pack, raw_zip};
use crate::support::registry::RegistryFixture;
use crate::support::{
    Home, assert_code, contains_bytes, output_with_stdin, require_keyring, stderr, stdout,
};

pub fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// The bundle directories under `home`.
pub fn bundle_dirs(home: &Home) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.path().join("bundles"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The config entry of `name`.
pub fn server_entry(home: &Home, name: &str) -> Value {
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    config["servers"][name].clone()
}

/// The secret `secret` of server `name`, read from the keyring.
pub fn keyring_secret(home: &Home, name: &str, secret: &str) -> Option<String> {
    use plugboard::secrets::{KeyringStore, SecretKey, SecretStore};
    let entry = server_entry(home, name);
    let namespace = entry["secret_namespace"]
        .as_str()
        .expect("a secret namespace")
        .to_owned();
    let store = KeyringStore::open().expect("keyring");
    store
        .get(&SecretKey::new(&namespace, secret))
        .unwrap()
        .map(|v| v.expose().to_owned())
}

/// The `describe` tool's report of how the Node fixture was started.
fn started_with(test: &Value, tool: &str) -> Value {
    let tools = test["tools"].as_array().expect("tools");
    let t = tools
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("no {tool}: {test}"));
    serde_json::from_str(t["description"].as_str().unwrap()).unwrap()
}

#[test]
fn a_node_bundle_from_the_official_packer_installs_from_a_file_with_its_secret_in_the_keyring_only()
{
    require_keyring();
    let home = Home::new();
    let bundle = notes_bundle("1.0.0", &["describe", "read_note"], false);
    let secret = "sk-notes-7Qm2xV9pLk";
    let folders = tempfile::tempdir().unwrap();
    let (a, b) = (folders.path().join("a"), folders.path().join("b c"));
    let list = format!("{}\n{}", a.display(), b.display());
    let file = bundle.file.to_str().unwrap();
    let out = home.run_with_stdin(
        &[
            "install",
            file,
            "--name",
            "notes",
            "--set",
            &format!("folders={list}"),
            "--set",
            "level=4",
            "--secret-stdin",
            "api_key",
            "--json",
        ],
        secret,
    );
    assert_code(&out, 0);
    let report = json_of(&out);
    assert_eq!(report["test"]["ok"], true, "{report}");
    // The launch: ${__dirname}, the number, the multiple directory field expanded into two
    // arguments (one with a space), the boolean default, the key in the environment.
    let started = started_with(&report["test"], "describe");
    assert_eq!(
        started["args"],
        json!([
            "--level",
            "4",
            a.display().to_string(),
            b.display().to_string()
        ]),
        "{started}"
    );
    assert_eq!(started["key_length"], secret.len());
    assert_eq!(started["verbose"], "false");
    let entry = server_entry(&home, "notes");
    let dir = entry["source"]["bundle"]["dir"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(Path::new(&dir).join("server/index.js").exists());
    assert!(
        dir.starts_with(home.path().join("bundles").to_str().unwrap()),
        "{dir}"
    );
    assert_eq!(entry["cwd"], dir.as_str());
    assert_eq!(entry["source"]["bundle"]["sha256"], bundle.sha256());
    assert_eq!(entry["source"]["bundle"]["version"], "1.0.0");
    assert_eq!(
        entry["env"]["NOTES_API_KEY"],
        json!({"secret": "NOTES_API_KEY"})
    );

    // The secret is in the keyring and nowhere else: no file of the home, no output.
    assert_eq!(
        keyring_secret(&home, "notes", "NOTES_API_KEY").as_deref(),
        Some(secret)
    );
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, secret.as_bytes()),
            "{} holds the secret",
            path.display()
        );
    }
    assert!(!stdout(&out).contains(secret) && !stderr(&out).contains(secret));

    // A later test of the installed server works from the keyring.
    let out = home.run(&["test", "notes", "--json"]);
    assert_code(&out, 0);
    assert_eq!(
        started_with(&json_of(&out), "describe")["key_length"],
        secret.len()
    );

    // Removing the server deletes its bundle directory and its secret.
    let out = home.run(&["remove", "notes"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("bundle was deleted"),
        "{}",
        stdout(&out)
    );
    assert!(!Path::new(&dir).exists());
    assert_eq!(bundle_dirs(&home), Vec::<String>::new());
    let store = plugboard::secrets::KeyringStore::open().unwrap();
    let namespace = entry["secret_namespace"].as_str().unwrap();
    use plugboard::secrets::SecretStore;
    assert!(
        store
            .get(&plugboard::secrets::SecretKey::new(
                namespace,
                "NOTES_API_KEY"
            ))
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_python_bundle_installs_with_its_defaults_and_its_form_is_validated_first() {
    require_keyring();
    let home = Home::new();
    let bundle = pack("python-server", |_| {});
    let file = bundle.file.to_str().unwrap();

    // Its form: the sensitive token is never taken from the command line, a missing one says
    // how to give it, and nothing is left behind either way.
    let out = home.run(&["install", file, "--set", "token=abc"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("secret field"), "{}", stderr(&out));
    let out = home.run(&["install", file]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("--secret-stdin token"),
        "{}",
        stderr(&out)
    );
    assert_eq!(bundle_dirs(&home), Vec::<String>::new());
    assert!(!home.config_path().exists() || server_entry(&home, "plugboard-clock").is_null());

    let out = home.run_with_stdin(
        &["install", file, "--secret-stdin", "token", "--json"],
        "tok-55",
    );
    assert_code(&out, 0);
    let report = json_of(&out);
    let now = &report["test"]["tools"][0];
    assert_eq!(now["name"], "now");
    let started: Value = serde_json::from_str(now["description"].as_str().unwrap()).unwrap();
    assert_eq!(started["args"], json!(["--zone=UTC"]), "the default zone");
    assert_eq!(started["token_length"], 6);
    let entry = server_entry(&home, "plugboard-clock");
    assert_eq!(entry["command"], "python3");
    let sep = std::path::MAIN_SEPARATOR;
    assert!(
        entry["args"][0]
            .as_str()
            .unwrap()
            .ends_with(&format!("{sep}server{sep}main.py")),
        "${{/}} is the path separator: {entry}"
    );
    assert_eq!(
        entry["source"]["inputs"]["token"],
        json!({"secret": "CLOCK_TOKEN"})
    );
    assert_eq!(
        entry["source"]["inputs"].get("zone"),
        None,
        "defaults are not recorded"
    );
    let out = home.run(&["remove", "plugboard-clock"]);
    assert_code(&out, 0);
    assert_eq!(bundle_dirs(&home), Vec::<String>::new());
}

#[test]
fn registry_bundles_are_downloaded_over_https_only_and_checked_against_their_digest() {
    require_keyring();
    let registry = RegistryFixture::start(&["--no-snapshot"]);
    let files = FileServer::https();
    let plain = FileServer::http();
    let bundle = notes_bundle("2.0.0", &["describe"], false);
    let good = files.publish(&bundle.file, "notes-2.0.0.mcpb");
    let http_url = plain.publish(&bundle.file, "notes-2.0.0.mcpb");
    let sha = bundle.sha256();
    let wrong = "0".repeat(64);
    registry.post(
        "/fixture/rows",
        &json!([
            mcpb_row("io.github.plugboard-test/notes", "2.0.0", &good, Some(&sha)),
            mcpb_row(
                "io.github.plugboard-test/notes-tampered",
                "2.0.0",
                &good,
                Some(&wrong)
            ),
            mcpb_row(
                "io.github.plugboard-test/notes-unchecked",
                "2.0.0",
                &good,
                None
            ),
            mcpb_row(
                "io.github.plugboard-test/notes-plain",
                "2.0.0",
                &http_url,
                Some(&sha)
            ),
        ]),
    );
    let home = Home::new();
    let run = |args: &[&str], stdin: &str| {
        let mut cmd = home.cmd(args);
        cmd.env("PLUGBOARD_REGISTRY_URL", registry.url())
            .env("SSL_CERT_FILE", files.ca.as_ref().unwrap());
        output_with_stdin(cmd, stdin)
    };
    assert_code(&run(&["registry", "sync"], ""), 0);

    // The form of a bundle package is the bundle's manifest's, after the download.
    let out = run(
        &[
            "install",
            "io.github.plugboard-test/notes",
            "--secret-stdin",
            "api_key",
            "--json",
        ],
        "k-reg-1",
    );
    assert_code(&out, 0);
    let report = json_of(&out);
    assert_eq!(report["test"]["ok"], true);
    let entry = server_entry(&home, "notes");
    assert_eq!(
        entry["source"]["registry"]["name"],
        "io.github.plugboard-test/notes"
    );
    assert_eq!(entry["source"]["registry"]["version"], "2.0.0");
    assert_eq!(entry["source"]["bundle"]["sha256"], sha);
    assert_eq!(
        keyring_secret(&home, "notes", "NOTES_API_KEY").as_deref(),
        Some("k-reg-1")
    );
    assert_eq!(bundle_dirs(&home).len(), 1);
    let config_before = std::fs::read(home.config_path()).unwrap();

    for (name, why, code) in [
        (
            "notes-tampered",
            "does not match the registry's fileSha256",
            1,
        ),
        ("notes-unchecked", "no fileSha256", 2),
        ("notes-plain", "https only", 2),
    ] {
        let out = run(
            &[
                "install",
                &format!("io.github.plugboard-test/{name}"),
                "--secret-stdin",
                "api_key",
            ],
            "k",
        );
        assert_code(&out, code);
        assert!(stderr(&out).contains(why), "{name}: {}", stderr(&out));
        assert_eq!(bundle_dirs(&home).len(), 1, "{name}: nothing left behind");
        assert_eq!(
            std::fs::read(home.config_path()).unwrap(),
            config_before,
            "{name}"
        );
    }
    assert_code(&run(&["remove", "notes"], ""), 0);
    assert_eq!(bundle_dirs(&home), Vec::<String>::new());
}

fn refused(home: &Home, bundle: &Path, why: &str) {
    let out = home.run_with_stdin(
        &[
            "install",
            bundle.to_str().unwrap(),
            "--secret-stdin",
            "api_key",
        ],
        "k",
    );
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(why),
        "{}: {}",
        bundle.display(),
        stderr(&out)
    );
    assert_eq!(
        bundle_dirs(home),
        Vec::<String>::new(),
        "{}: nothing left",
        bundle.display()
    );
    assert!(!home.config_path().exists(), "no server saved");
}

#[test]
fn hostile_bundles_are_refused_and_leave_nothing_behind() {
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    let good = notes_bundle("1.0.0", &["describe"], false);
    let manifest = {
        let z = zip::ZipArchive::new(std::fs::File::open(&good.file).unwrap());
        let mut z = z.unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut z.by_name("manifest.json").unwrap(), &mut text).unwrap();
        text
    };
    let m = manifest.as_bytes();

    // Wrong digest of a local file is the registry's business; locally: traversal, absolute
    // paths, a bomb, a newer manifest_version.
    let escape = work.path().join("escape");
    std::fs::create_dir(&escape).unwrap();
    let traversal = work.path().join("traversal.mcpb");
    raw_zip(
        &traversal,
        &[("manifest.json", m), ("../../escape/evil.js", b"pwned")],
    );
    refused(&home, &traversal, "climbs out of the bundle");
    let absolute = work.path().join("absolute.mcpb");
    let target = escape.join("abs.js");
    raw_zip(
        &absolute,
        &[("manifest.json", m), (target.to_str().unwrap(), b"pwned")],
    );
    refused(&home, &absolute, "absolute path");
    assert_eq!(
        std::fs::read_dir(&escape).unwrap().count(),
        0,
        "nothing written outside"
    );
    let bomb = work.path().join("bomb.mcpb");
    raw_zip(
        &bomb,
        &[
            ("manifest.json", m),
            ("server/zeros.bin", &vec![0u8; 64 << 20]),
        ],
    );
    assert!(
        std::fs::metadata(&bomb).unwrap().len() < 1 << 20,
        "a small file"
    );
    refused(&home, &bomb, "possible zip bomb");
    let newer = work.path().join("newer.mcpb");
    let mut v: Value = serde_json::from_str(&manifest).unwrap();
    v["manifest_version"] = json!("0.9");
    raw_zip(&newer, &[("manifest.json", v.to_string().as_bytes())]);
    refused(
        &home,
        &newer,
        "manifest_version 0.9 is newer than this Plugboard understands",
    );
    let notzip = work.path().join("notzip.mcpb");
    std::fs::write(&notzip, b"#!/bin/sh\necho hi\n").unwrap();
    refused(&home, &notzip, "not a zip archive");
    let nomanifest = work.path().join("nomanifest.mcpb");
    raw_zip(&nomanifest, &[("server/index.js", b"x")]);
    refused(&home, &nomanifest, "no manifest.json");
    let out = home.run(&["install", "./does-not-exist.mcpb"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("does-not-exist.mcpb"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_manifest_with_unknown_fields_installs_and_says_what_was_not_used() {
    require_keyring();
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    let good = notes_bundle("1.0.0", &["describe"], false);
    // Unpack the packer's bundle, add fields a newer packer might write, zip it again.
    let mut z = zip::ZipArchive::new(std::fs::File::open(&good.file).unwrap()).unwrap();
    let mut entries: Vec<(String, Vec<u8>)> = vec![];
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut data = vec![];
        std::io::Read::read_to_end(&mut f, &mut data).unwrap();
        entries.push((f.name().unwrap().into_owned(), data));
    }
    for (name, data) in entries.iter_mut() {
        if name == "manifest.json" {
            let mut v: Value = serde_json::from_slice(data).unwrap();
            v["sandbox"] = json!({"network": false});
            v["user_config"]["level"]["step"] = json!(1);
            *data = v.to_string().into_bytes();
        }
    }
    let file = work.path().join("extra.mcpb");
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    raw_zip(&file, &refs);
    let out = home.run_with_stdin(
        &[
            "install",
            file.to_str().unwrap(),
            "--secret-stdin",
            "api_key",
            "--name",
            "extra",
        ],
        "k1",
    );
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("the manifest's fields sandbox are not used"),
        "{}",
        stderr(&out)
    );
    let entry = server_entry(&home, "extra");
    assert_eq!(entry["source"]["bundle"]["name"], "plugboard-notes");
    assert_code(&home.run(&["remove", "extra"]), 0);
}

#[test]
fn bundles_that_do_not_fit_this_machine_are_refused_before_install() {
    let home = Home::new();
    let elsewhere = pack("node-server", |src| {
        edit_json(&src.join("manifest.json"), |m| {
            m["compatibility"]["platforms"] = json!(["win32"])
        });
    });
    if std::env::consts::OS != "windows" {
        refused(&home, &elsewhere.file, "supports win32 only");
    }
    let future_node = pack("node-server", |src| {
        edit_json(&src.join("manifest.json"), |m| {
            m["compatibility"]["runtimes"]["node"] = json!(">=99.0.0")
        });
    });
    refused(
        &home,
        &future_node.file,
        "needs node >=99.0.0, and this machine has",
    );
}
