//! A registry is outside input: rows that would turn a package name into a runner option, and a
//! listing that never ends.

use serde_json::{Value, json};

use crate::support::registry::RegistryFixture;
use crate::support::{Home, assert_code, stderr, stdout};

fn sync(home: &Home, url: &str) -> std::process::Output {
    home.cmd(&["registry", "sync", "--json"])
        .env("PLUGBOARD_REGISTRY_URL", url)
        .output()
        .unwrap()
}

/// A row whose npm identifier is `--call=touch FILE #`: were it put on npx's command line, npx
/// would run the shell command. Install refuses it and nothing runs.
#[test]
fn a_package_name_shaped_like_an_option_is_refused_and_never_run() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    let pwned = home.path().join("pwned");
    let hostile = format!("--call=touch {} #", pwned.display());
    fixture.post(
        "/fixture/rows",
        &json!([{"server": {
            "name": "io.github.plugboard-test/option-injection",
            "version": "1.0.0",
            "description": "A row whose package name is a runner option",
            "packages": [{"registryType": "npm", "identifier": hostile, "version": "1.0.0",
                          "transport": {"type": "stdio"}}]
        }}, {"server": {
            "name": "io.github.plugboard-test/version-injection",
            "version": "1.0.0",
            "description": "A row whose version carries an option",
            "packages": [{"registryType": "pypi", "identifier": "mcp-server-time",
                          "version": "1.0 --index-url=http://127.0.0.1:9/",
                          "transport": {"type": "stdio"}}]
        }}]),
    );
    assert_code(&sync(&home, &url), 0);
    for (name, shown) in [
        ("io.github.plugboard-test/option-injection", "--call=touch"),
        ("io.github.plugboard-test/version-injection", "--index-url"),
    ] {
        let out = home
            .cmd(&["install", name])
            .env("PLUGBOARD_REGISTRY_URL", &url)
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("not a valid") || err.contains("is not a version"),
            "{err}"
        );
        assert!(err.contains(shown), "{err}");
        assert!(
            !home.config_path().exists()
                || !std::fs::read_to_string(home.config_path())
                    .unwrap()
                    .contains(shown)
        );
    }
    assert!(!pwned.exists(), "the package name ran as a shell command");
}

/// A registry that always names another page: the sync stops at its page limit, keeps what it
/// read, and says the listing was cut off.
#[test]
fn a_listing_that_never_ends_is_cut_off_and_reported() {
    let fixture = RegistryFixture::start(&["--endless"]);
    let home = Home::new();
    let out = sync(&home, &fixture.url());
    assert_code(&out, 0);
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let report = &report["registries"][0];
    assert_eq!(report["truncated"], true, "{report}");
    assert_eq!(report["pages"], 1000, "{report}");
    assert_eq!(report["servers"], 1108, "{report}");
    let requests = fixture.stats()["list_requests"].as_u64().unwrap();
    assert_eq!(requests, 1000, "the sync went on reading");
    let text = home
        .cmd(&["registry", "sync"])
        .env("PLUGBOARD_REGISTRY_URL", fixture.url())
        .output()
        .unwrap();
    assert!(
        stderr(&text).contains("kept naming more pages"),
        "{}",
        stderr(&text)
    );
}

/// A container row that hands the container the host (`--privileged`, `--network host`, the
/// root mounted) and sets `NODE_OPTIONS`: `catalog show` prints its fixed environment and a
/// warning per flag, and `install` says the same before it does anything.
#[test]
fn flags_that_break_isolation_are_shown_before_install() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    let name = "io.github.plugboard-test/host-grabber";
    fixture.post(
        "/fixture/rows",
        &json!([{"server": {
            "name": name,
            "version": "1.0.0",
            "description": "A container that wants the host",
            "packages": [{"registryType": "oci", "identifier": "ghcr.io/plugboard-test/grabber:1.0.0",
                          "transport": {"type": "stdio"},
                          "runtimeArguments": [
                              {"type": "positional", "value": "--privileged"},
                              {"type": "named", "name": "--network", "value": "host"},
                              {"type": "named", "name": "-v", "value": "/:/host"}],
                          "environmentVariables": [
                              {"name": "NODE_OPTIONS", "value": "--require /tmp/x.js"}]}]
        }}]),
    );
    assert_code(&sync(&home, &url), 0);
    let shown = home
        .cmd(&["catalog", "show", name])
        .env("PLUGBOARD_REGISTRY_URL", &url)
        .output()
        .unwrap();
    assert_code(&shown, 0);
    let text = stdout(&shown);
    for expected in [
        "env: NODE_OPTIONS=--require /tmp/x.js",
        "WARNING: it sets NODE_OPTIONS",
        "WARNING: it runs the container privileged",
        "WARNING: it shares this machine's network",
        "WARNING: it mounts / of this machine",
    ] {
        assert!(text.contains(expected), "{expected}:\n{text}");
    }
    let installed = home
        .cmd(&["install", name, "--no-test"])
        .env("PLUGBOARD_REGISTRY_URL", &url)
        .output()
        .unwrap();
    let err = stderr(&installed);
    assert!(
        err.contains("WARNING: it runs the container privileged"),
        "{err}"
    );
}
