//! An organisation's policy through the CLI (`PLUGBOARD_POLICY`, as `/etc/plugboard/policy.json`
//! would be): a policy that allows only a company registry fixes the registry list, refuses
//! curated, custom and unpublished local-bundle installs with its reason, allows the company's
//! registry servers (a real bundle, tested, secret in the keyring) and the published bundle
//! file; `allowed_names` narrows by name; a malformed policy refuses every install.

use serde_json::{Value, json};

use crate::bundles_cli::{bundle_dirs, json_of, server_entry};
use crate::support::bundles::{FileServer, mcpb_row, notes_bundle};
use crate::support::registry::RegistryFixture;
use crate::support::{Home, assert_code, output_with_stdin, require_keyring, stderr, stdout};

struct Company {
    registry: RegistryFixture,
    files: FileServer,
    policy: tempfile::NamedTempFile,
    home: Home,
}

impl Company {
    fn run(&self, args: &[&str], stdin: &str) -> std::process::Output {
        let mut cmd = self.home.cmd(args);
        cmd.env("PLUGBOARD_POLICY", self.policy.path())
            .env("SSL_CERT_FILE", self.files.ca.as_ref().unwrap());
        output_with_stdin(cmd, stdin)
    }

    fn write_policy(&self, text: &str) {
        std::fs::write(self.policy.path(), text).unwrap();
    }
}

#[test]
fn a_company_registry_only_policy_refuses_curated_and_custom_installs_and_allows_its_servers() {
    require_keyring();
    let registry = RegistryFixture::start(&["--no-snapshot"]);
    let files = FileServer::https();
    let published = notes_bundle("3.1.0", &["describe"], false);
    let url = files.publish(&published.file, "acme-notes-3.1.0.mcpb");
    registry.post(
        "/fixture/rows",
        &json!([
            mcpb_row(
                "io.github.acme/notes",
                "3.1.0",
                &url,
                Some(&published.sha256())
            ),
            mcpb_row(
                "io.github.other/notes",
                "1.0.0",
                &url,
                Some(&published.sha256())
            ),
        ]),
    );
    let company = Company {
        policy: tempfile::NamedTempFile::new().unwrap(),
        home: Home::new(),
        registry,
        files,
    };
    let company_url = company.registry.url();
    company.write_policy(
        &json!({"registries": [company_url], "only_registry_servers": true,
                "allowed_names": ["io.github.acme/*"]})
        .to_string(),
    );

    // What is in force, and that the user cannot change the registry list.
    let out = company.run(&["policy", "--json"], "");
    assert_code(&out, 0);
    let shown = json_of(&out);
    assert_eq!(shown["state"], "in_force");
    assert_eq!(shown["registries"], json!([company_url]));
    assert!(
        shown["summary"]
            .as_str()
            .unwrap()
            .contains("only servers published")
    );
    let out = company.run(&["registry", "add", "https://registry.example.com"], "");
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("fixed by the organisation policy"),
        "{}",
        stderr(&out)
    );
    let out = company.run(&["registry", "sync", "--json"], "");
    assert_code(&out, 0);
    let report = json_of(&out);
    assert_eq!(
        report["registries"].as_array().unwrap().len(),
        1,
        "only the company's: {report}"
    );
    assert_eq!(report["registries"][0]["registry"], company_url.as_str());

    // Curated and custom installs are refused with the policy's reason; nothing is written.
    let out = company.run(&["install", "github", "--no-test"], "");
    assert_code(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("catalog entry `github` is not"), "{err}");
    assert!(
        err.contains(company.policy.path().to_str().unwrap()),
        "names the policy: {err}"
    );
    let out = company.run(
        &[
            "add",
            "mine",
            "--stdio",
            "--no-test",
            "--",
            "node",
            "server.js",
        ],
        "",
    );
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("custom server `mine` cannot be added"),
        "{}",
        stderr(&out)
    );
    assert!(!company.home.config_path().exists());

    // A server of the company's registry installs, is tested, keeps its secret in the keyring.
    let out = company.run(
        &[
            "install",
            "io.github.acme/notes",
            "--secret-stdin",
            "api_key",
            "--json",
        ],
        "acme-key-1",
    );
    assert_code(&out, 0);
    assert_eq!(json_of(&out)["test"]["ok"], true);
    // allowed_names narrows by name, even within the company's registry.
    let out = company.run(
        &[
            "install",
            "io.github.other/notes",
            "--secret-stdin",
            "api_key",
        ],
        "k",
    );
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("not among the server names the policy allows"),
        "{}",
        stderr(&out)
    );

    // A local bundle file: allowed when the company publishes exactly it, refused otherwise.
    let file = published.file.to_str().unwrap();
    let out = company.run(
        &[
            "install",
            file,
            "--name",
            "notes-local",
            "--secret-stdin",
            "api_key",
        ],
        "k2",
    );
    assert_code(&out, 0);
    let unpublished = notes_bundle("3.2.0-dev", &["describe"], false);
    let out = company.run(
        &[
            "install",
            unpublished.file.to_str().unwrap(),
            "--name",
            "dev",
            "--secret-stdin",
            "api_key",
        ],
        "k3",
    );
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("not one of their packages"),
        "{}",
        stderr(&out)
    );
    assert_eq!(bundle_dirs(&company.home).len(), 2);
    assert!(server_entry(&company.home, "dev").is_null());

    // A malformed policy refuses every install, saying why; it cannot be worked around.
    company.write_policy("{\"registries\": [\"https://x\"], \"only_registry_servers\": tru");
    let before = std::fs::read(company.home.config_path()).unwrap();
    for args in [
        vec![
            "install",
            "io.github.acme/notes",
            "--name",
            "again",
            "--no-test",
        ],
        vec!["install", "time", "--no-test"],
        vec!["add", "x", "--stdio", "--no-test", "--", "node"],
        vec!["install", file, "--name", "again2", "--no-test"],
    ] {
        let out = company.run(&args, "");
        assert_code(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains("every install is refused") && err.contains("not valid JSON"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(company.home.config_path()).unwrap(), before);
    let out = company.run(&["policy"], "");
    assert!(stdout(&out).contains("cannot be used"), "{}", stdout(&out));
    let out = company.home.run(&["policy", "--json"]);
    let none: Value = json_of(&out);
    assert_eq!(
        none["state"], "none",
        "without the policy file nothing is in force"
    );
    for name in ["notes", "notes-local"] {
        assert_code(&company.run(&["remove", name], ""), 0);
    }
}

/// After install, the policy still holds: an edit that points an allowed registry server
/// somewhere else is refused (the config byte for byte as before), an edit that leaves its
/// launch alone goes through, and a server the policy forbids is refused at every launch
/// (`run`, `test`, `health`) with the reason, nothing started.
#[test]
fn an_edit_cannot_leave_the_policy_and_a_forbidden_server_never_launches() {
    let home = Home::new();
    let policy = tempfile::NamedTempFile::new().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = home.cmd(args);
        cmd.env("PLUGBOARD_POLICY", policy.path());
        output_with_stdin(cmd, "")
    };
    // Installed before the policy: a registry server of the company and a custom one.
    for (name, url) in [
        ("acme", "http://127.0.0.1:9/mcp"),
        ("mine", "http://127.0.0.1:9/other"),
    ] {
        let out = home.run(&[
            "add",
            name,
            "--url",
            url,
            "--transport",
            "shttp",
            "--no-test",
        ]);
        assert_code(&out, 0);
    }
    let path = home.config_path();
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["servers"]["acme"]["source"] = json!({
        "option": "remote",
        "registry": {"url": "https://registry.acme.example", "name": "io.github.acme/tickets",
                     "version": "1.0.0"}
    });
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    std::fs::write(
        policy.path(),
        json!({"registries": ["https://registry.acme.example"], "only_registry_servers": true,
               "allowed_names": ["io.github.acme/*"]})
        .to_string(),
    )
    .unwrap();

    // Pointing the allowed server elsewhere is refused before anything is written.
    let before = std::fs::read(&path).unwrap();
    let out = run(&["edit", "acme", "--url", "https://evil.example/mcp"]);
    assert_code(&out, 2);
    let said = stderr(&out);
    assert!(said.contains("refused") && said.contains("acme"), "{said}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a refused edit changed the config"
    );
    // An edit that keeps its launch is fine.
    assert_code(&run(&["edit", "acme", "--timeout", "7"]), 0);

    // The custom server, allowed when it was added, may not launch now.
    let out = run(&["run", "mine"]);
    assert_code(&out, 2);
    let said = stderr(&out);
    assert!(
        said.contains("refused") && said.contains("`mine` may not run here"),
        "{said}"
    );
    let out = run(&["test", "mine", "--json"]);
    assert_code(&out, 1);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error_kind"], "config", "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("may not run here"),
        "{result}"
    );
    let out = run(&["health", "--json"]);
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = results.to_string();
    assert!(text.contains("`mine` may not run here"), "{text}");
    assert!(!text.contains("`acme` may not run here"), "{text}");

    // Without the policy the URL edit goes through, and the server is the user's own from then
    // on: with the policy back it may not run either.
    let mut cmd = home.cmd(&["edit", "acme", "--url", "http://127.0.0.1:9/moved"]);
    cmd.env_remove("PLUGBOARD_POLICY");
    assert_code(&output_with_stdin(cmd, ""), 0);
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        config["servers"]["acme"].get("source").is_none(),
        "{config}"
    );
    let out = run(&["run", "acme"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("`acme` may not run here"),
        "{}",
        stderr(&out)
    );
}

/// An environment variable that decides what runs (`NODE_OPTIONS`, `LD_PRELOAD`, `PATH`, the
/// package index) is judged like a new command: setting it on a server the policy allows by its
/// origin is refused, while ordinary settings go through.
#[test]
fn a_loader_variable_is_judged_like_a_new_command() {
    let home = Home::new();
    let policy = tempfile::NamedTempFile::new().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = home.cmd(args);
        cmd.env("PLUGBOARD_POLICY", policy.path());
        output_with_stdin(cmd, "")
    };
    crate::run_stdio::add_fixture(&home, "acme", &[], None);
    let path = home.config_path();
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["servers"]["acme"]["source"] = json!({
        "option": "npm",
        "registry": {"url": "https://registry.acme.example", "name": "io.github.acme/tickets",
                     "version": "1.0.0"}
    });
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    std::fs::write(
        policy.path(),
        json!({"registries": ["https://registry.acme.example"], "only_registry_servers": true,
               "allowed_names": ["io.github.acme/*"]})
        .to_string(),
    )
    .unwrap();
    let before = std::fs::read(&path).unwrap();
    for setting in [
        "NODE_OPTIONS=--require=/tmp/evil.js",
        "LD_PRELOAD=/tmp/evil.so",
        "PATH=/tmp/evil:/usr/bin",
        "npm_config_registry=https://evil.example/",
        "PYTHONPATH=/tmp/evil",
    ] {
        let out = run(&["edit", "acme", "--env", setting]);
        assert_code(&out, 2);
        assert!(
            stderr(&out).contains("refused"),
            "{setting}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{setting} was written"
        );
    }
    assert_code(&run(&["edit", "acme", "--env", "LOG_LEVEL=debug"]), 0);
    assert_code(&run(&["test", "acme"]), 0);
}
