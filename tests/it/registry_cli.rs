//! The registry through the CLI, against the registry fixture serving the real snapshot: a full
//! sync, offline use with the cache's age, incremental syncs (new versions, deprecations,
//! deletions, unreadable rows), each registry failing on its own, the v0 fallback, a corrupt
//! cache, the registry list, and real registry servers installed and run (npx, uvx, a package
//! started locally over HTTP), secrets in the keyring only.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::registry::{RegistryFixture, path_with_uv};
use crate::support::snapshot::latest_rows;
use crate::support::{Home, assert_code, contains_bytes, require_keyring, stderr, stdout};

fn run(home: &Home, url: &str, args: &[&str]) -> std::process::Output {
    home.cmd(args)
        .env("PLUGBOARD_REGISTRY_URL", url)
        .output()
        .expect("run plugboard")
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

fn sync(home: &Home, url: &str) -> Value {
    let out = run(home, url, &["registry", "sync", "--json"]);
    let report = json_of(&out);
    report["registries"][0].clone()
}

#[test]
fn a_sync_lists_the_snapshot_and_the_marketplace_works_offline_with_the_caches_age() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    let report = sync(&home, &url);
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["full"], true);
    assert_eq!(report["servers"], 1108);
    assert_eq!(report["skipped"], 0);
    assert_eq!(report["pages"], 12, "100 rows per page");
    drop(fixture);

    // Offline: every server of the snapshot is still listed, each once: as a registry row, or
    // as the curated entry that stands for it.
    let out = run(&home, &url, &["catalog", "--json"]);
    assert_code(&out, 0);
    let hits: Vec<Value> = serde_json::from_value(json_of(&out)).unwrap();
    let snapshot: BTreeSet<String> = latest_rows()
        .iter()
        .map(|r| r.server.name.clone())
        .collect();
    let mut listed = BTreeSet::new();
    for hit in &hits {
        match hit["source"].as_str().unwrap() {
            "registry" => {
                assert!(
                    listed.insert(hit["registry_name"].as_str().unwrap().to_owned()),
                    "{hit}"
                );
            }
            _ => {
                for name in hit["registry_name"].as_str().into_iter() {
                    listed.insert(name.to_owned());
                }
            }
        }
    }
    // Curated entries naming a registry server stand for it (cloudflare's one row, five entries).
    for entry in plugboard::catalog::Catalog::load(None).unwrap().entries() {
        listed.extend(entry.registry_names.iter().cloned());
    }
    assert_eq!(listed.intersection(&snapshot).count(), 1108);
    let registry_rows = hits.iter().filter(|h| h["source"] == "registry").count();
    assert!(registry_rows > 1000, "{registry_rows}");
    assert!(
        stderr(&out).contains("1108 servers, cached less than a minute ago"),
        "{}",
        stderr(&out)
    );
    // Each registry row carries what the marketplace shows.
    let row = hits
        .iter()
        .find(|h| h["registry_name"] == "io.github.AungMyoKyaw/betterprompt-mcp")
        .expect("betterprompt is listed");
    assert_eq!(row["version"], "0.2.1");
    assert_eq!(row["owner"], "AungMyoKyaw");
    assert_eq!(row["transport"], "stdio");
    assert!(
        row["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["id"] == "npm")
    );

    // A sync now fails (nothing listens) and says the cache is still used.
    let out = run(&home, &url, &["registry", "sync"]);
    assert_code(&out, 1);
    let text = stdout(&out);
    assert!(text.contains("sync failed (refused)"), "{text}");
    assert!(
        text.contains("Offline: listing the 1108 servers cached"),
        "{text}"
    );
    let status = json_of(&run(&home, &url, &["registry", "status", "--json"]));
    assert_eq!(status["registries"][0]["servers"], 1108);
    assert_eq!(status["registries"][0]["origin"], "environment");
    // Searching works offline, multi-word, ranked.
    let out = run(
        &home,
        &url,
        &[
            "catalog", "current", "time", "--source", "registry", "--json",
        ],
    );
    let hits: Vec<Value> = serde_json::from_value(json_of(&out)).unwrap();
    assert!(!hits.is_empty());
    for hit in &hits {
        let text = format!(
            "{} {} {}",
            hit["name"], hit["registry_name"], hit["description"]
        )
        .to_lowercase();
        assert!(text.contains("current") && text.contains("time"), "{hit}");
    }
}

fn row(name: &str, version: &str, extra: Value) -> Value {
    let mut server = json!({
        "name": name, "version": version, "description": format!("A test server {name}"),
        "packages": [{"registryType": "npm", "identifier": "test-package", "version": version, "transport": {"type": "stdio"}}]
    });
    if let (Some(s), Some(e)) = (server.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    json!({"server": server})
}

#[test]
fn incremental_syncs_bring_new_versions_deprecations_and_deletions_and_skip_bad_rows() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    assert_eq!(sync(&home, &url)["servers"], 1108);

    fixture.post(
        "/fixture/rows",
        &json!([
            row("io.github.AungMyoKyaw/betterprompt-mcp", "9.0.0", json!({})),
            row("io.github.plugboard-test/brand-new", "1.0.0", json!({"title": "Brand New"})),
            {"server": {"name": "io.github.plugboard-test/broken", "description": "no version"}},
        ]),
    );
    fixture.post(
        "/fixture/status",
        &json!({
            "name": "io.github.guanqun-yang/mcp-server-r-counter", "status": "deprecated",
            "statusMessage": "use the r-counter-2 server instead"
        }),
    );
    fixture.post(
        "/fixture/status",
        &json!({"name": "io.github.sellisd/mcp-units", "status": "deleted"}),
    );

    let report = sync(&home, &url);
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["full"], false, "{report}");
    assert_eq!(report["changed"], 3, "{report}");
    assert_eq!(report["removed"], 1, "{report}");
    assert_eq!(report["skipped"], 1, "{report}");
    assert_eq!(report["servers"], 1108 + 1 - 1, "{report}");
    let stats = fixture.stats();
    let last = stats["queries"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        last.contains("updated_since=") && last.contains("version=latest"),
        "{last}"
    );

    let shown = json_of(&run(
        &home,
        &url,
        &[
            "catalog",
            "show",
            "io.github.AungMyoKyaw/betterprompt-mcp",
            "--json",
        ],
    ));
    assert_eq!(shown["server"]["version"], "9.0.0");
    let out = run(
        &home,
        &url,
        &["catalog", "r-counter", "--source", "registry", "--json"],
    );
    let hits: Vec<Value> = serde_json::from_value(json_of(&out)).unwrap();
    let deprecated = hits
        .iter()
        .find(|h| h["registry_name"] == "io.github.guanqun-yang/mcp-server-r-counter")
        .expect("a deprecated server is still listed");
    assert_eq!(deprecated["deprecated"], true);
    assert_eq!(
        deprecated["status_message"],
        "use the r-counter-2 server instead"
    );
    // Installing it says so before anything else (nothing is started: --no-test).
    let out = run(
        &home,
        &url,
        &[
            "install",
            "io.github.guanqun-yang/mcp-server-r-counter",
            "--no-test",
            "--no-pin",
        ],
    );
    assert!(
        stderr(&out).contains("deprecated: use the r-counter-2 server instead"),
        "{}",
        stderr(&out)
    );
    let out = run(
        &home,
        &url,
        &["catalog", "show", "io.github.sellisd/mcp-units"],
    );
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("no catalog entry or registry server named"),
        "{}",
        stderr(&out)
    );
    let out = run(&home, &url, &["catalog", "brand", "new", "--json"]);
    let hits: Vec<Value> = serde_json::from_value(json_of(&out)).unwrap();
    assert_eq!(
        hits[0]["registry_name"],
        "io.github.plugboard-test/brand-new"
    );

    // A second sync with nothing new keeps everything.
    let report = sync(&home, &url);
    assert_eq!(report["servers"], 1108, "{report}");
    assert_eq!(report["removed"], 0);

    // Other versions on demand.
    let out = run(
        &home,
        &url,
        &[
            "catalog",
            "show",
            "io.github.AungMyoKyaw/betterprompt-mcp",
            "--version",
            "0.2.1",
            "--versions",
            "--json",
        ],
    );
    let shown = json_of(&out);
    assert_eq!(shown["server"]["version"], "0.2.1");
    let versions: Vec<&str> = shown["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert!(
        versions.contains(&"9.0.0") && versions.contains(&"0.2.1"),
        "{versions:?}"
    );
}

#[test]
fn each_registry_fails_on_its_own_and_the_others_are_synced() {
    let good = RegistryFixture::start(&[]);
    let failing = RegistryFixture::start(&["--fail-status", "503"]);
    let not_a_registry = RegistryFixture::start(&["--not-a-registry"]);
    let closed = crate::support::fixture::closed_port();
    // TLS spoken to a plain-HTTP port; a host name that does not resolve.
    let urls = format!(
        "{},{},{},http://127.0.0.1:{closed},https://127.0.0.1:{},http://registry.invalid",
        good.url(),
        failing.url(),
        not_a_registry.url(),
        good.port
    );
    let home = Home::new();
    let out = run(&home, &urls, &["registry", "sync", "--json"]);
    assert_code(&out, 1);
    let report = json_of(&out);
    let codes: Vec<Value> = report["registries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error_code"].clone())
        .collect();
    assert_eq!(
        codes,
        [
            Value::Null,
            json!("http"),
            json!("malformed"),
            json!("refused"),
            json!("tls"),
            json!("dns")
        ]
    );
    assert_eq!(report["registries"][0]["servers"], 1108);
    for r in &report["registries"].as_array().unwrap()[1..] {
        assert!(!r["hint"].as_str().unwrap().is_empty(), "{r}");
    }
    let out = run(&home, &urls, &["catalog", "--source", "registry", "--json"]);
    assert_code(&out, 0);
    assert!(
        serde_json::from_value::<Vec<Value>>(json_of(&out))
            .unwrap()
            .len()
            > 1000
    );
}

#[test]
fn a_registry_without_v0_1_is_read_through_v0() {
    let fixture = RegistryFixture::start(&["--only-v0"]);
    let home = Home::new();
    let report = sync(&home, &fixture.url());
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["api"], "v0");
    assert_eq!(report["servers"], 1108);
    // Later syncs go straight to v0.
    let report = sync(&home, &fixture.url());
    assert_eq!(report["api"], "v0");
    assert_eq!(report["full"], false);
}

#[test]
fn a_corrupt_cache_is_reported_never_breaks_the_marketplace_and_is_rebuilt() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    sync(&home, &url);
    let dir = home.path().join("registry");
    let cache = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&cache, b"{\"plugboard_registry_cache\": 1, \"url\"").unwrap();
    let out = run(&home, &url, &["catalog", "--json"]);
    assert_code(&out, 0);
    assert!(stderr(&out).contains("rebuilds it"), "{}", stderr(&out));
    let hits: Vec<Value> = serde_json::from_value(json_of(&out)).unwrap();
    assert!(hits.iter().all(|h| h["source"] == "curated"));
    let report = sync(&home, &url);
    assert_eq!(
        report["full"], true,
        "a corrupt cache is rebuilt by a full pull"
    );
    assert_eq!(report["servers"], 1108);
    assert!(!home.config_path().exists(), "the config is never touched");
    // No temp file is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn registries_are_read_in_order_added_and_removed() {
    let home = Home::new();
    // No PLUGBOARD_REGISTRY_URL: the official registry (status needs no network).
    let status = json_of(&home.run(&["registry", "status", "--json"]));
    assert_eq!(
        status["registries"][0]["registry"],
        "https://registry.modelcontextprotocol.io"
    );
    assert_eq!(status["registries"][0]["origin"], "default");
    assert_eq!(status["registries"][0]["cached"], false);
    assert_code(
        &home.run(&["registry", "add", "https://registry.example.com/"]),
        0,
    );
    let status = json_of(&home.run(&["registry", "status", "--json"]));
    let urls: Vec<&str> = status["registries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["registry"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        [
            "https://registry.modelcontextprotocol.io",
            "https://registry.example.com"
        ]
    );
    assert_code(
        &home.run(&[
            "registry",
            "remove",
            "https://registry.modelcontextprotocol.io",
        ]),
        0,
    );
    let status = json_of(&home.run(&["registry", "status", "--json"]));
    assert_eq!(status["registries"].as_array().unwrap().len(), 1);
    let out = home.run(&["registry", "add", "ftp://nope"]);
    assert_code(&out, 2);
    assert_code(&home.run(&["registry", "pinning", "off"]), 0);
    let status = json_of(&home.run(&["registry", "status", "--json"]));
    assert_eq!(status["pin_dependencies"], false);
}

/// A real registry server (npm, run through `npx`) installed from the CLI with a secret input:
/// tested to its tool list before it is saved, the secret in the keyring and nowhere else.
#[test]
fn a_registry_server_installed_from_the_cli_keeps_its_secret_in_the_keyring_only() {
    require_keyring();
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    sync(&home, &url);
    let token = "tmdb-Secret-Token-5f0c2e91d7";
    let out = home
        .cmd(&[
            "install",
            "io.github.tcehjaava/tmdb-mcp-server",
            "--secret-stdin",
            "TMDB_ACCESS_TOKEN",
            "--json",
        ])
        .env("PLUGBOARD_REGISTRY_URL", &url)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(token.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_code(&out, 0);
    let installed = json_of(&out);
    assert_eq!(installed["test"]["ok"], true, "{installed}");
    assert!(
        installed["test"]["tools"].as_array().unwrap().len() >= 5,
        "{installed}"
    );
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    let server = &config["servers"]["tmdb-mcp-server"];
    assert_eq!(
        server["env"]["TMDB_ACCESS_TOKEN"],
        json!({"secret": "TMDB_ACCESS_TOKEN"})
    );
    assert_eq!(
        server["source"]["registry"]["name"],
        "io.github.tcehjaava/tmdb-mcp-server"
    );
    assert_eq!(server["source"]["registry"]["version"], "0.1.1");
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(args.contains(&"tmdb-mcp-server@0.1.1"), "{args:?}");
    // The secret is in the keyring, under the server's namespace…
    let store = plugboard::secrets::KeyringStore::open().unwrap();
    let key = plugboard::secrets::SecretKey::new(
        server["secret_namespace"].as_str().unwrap(),
        "TMDB_ACCESS_TOKEN",
    );
    let stored = plugboard::secrets::SecretStore::get(&store, &key)
        .unwrap()
        .unwrap();
    assert_eq!(stored.expose(), token);
    // …and nowhere else: no file, no output.
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, token.as_bytes()),
            "{} holds the secret",
            path.display()
        );
    }
    assert!(!stdout(&out).contains(token) && !stderr(&out).contains(token));
    let out = run(&home, &url, &["test", "tmdb-mcp-server", "--json"]);
    assert_code(&out, 0);
    assert!(!stdout(&out).contains(token));
    let out = run(&home, &url, &["catalog", "tmdb", "--installed", "--json"]);
    let hits: Vec<Value> = serde_json::from_value(json_of(&out)).unwrap();
    assert_eq!(hits[0]["installed_as"], json!(["tmdb-mcp-server"]));
    // `edit --set` finds the form of the registry version it runs (the one listed).
    let out = run(&home, &url, &["edit", "tmdb-mcp-server", "--set", "nope=1"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("has no field `nope` (fields: TMDB_ACCESS_TOKEN)"),
        "{}",
        stderr(&out)
    );
    assert_code(&home.run(&["remove", "tmdb-mcp-server"]), 0);
    assert!(
        plugboard::secrets::SecretStore::get(&store, &key)
            .unwrap()
            .is_none()
    );
}

/// A PyPI registry server whose unpinned dependencies moved on: plain `uvx pkg==0.0.3` fails
/// here (mcp 2.x renamed FastMCP), the doctor says why and proposes the pinned relaunch, and
/// the pinned launch (`uv --exclude-newer` a day after its publication) starts and lists tools.
#[test]
fn a_pypi_server_that_fails_unpinned_starts_pinned_to_its_publication_date() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    let path = path_with_uv();
    let run_uv = |args: &[&str]| {
        home.cmd(args)
            .env("PLUGBOARD_REGISTRY_URL", &url)
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    assert_code(&run_uv(&["registry", "sync"]), 0);
    let name = "io.github.guanqun-yang/mcp-server-r-counter";
    assert_code(
        &run_uv(&["install", name, "--no-pin", "--no-test", "--name", "plain"]),
        0,
    );
    let out = run_uv(&["test", "plain", "--json"]);
    assert_code(&out, 1);
    let result = json_of(&out);
    assert!(
        result["stderr_tail"]
            .as_str()
            .unwrap_or("")
            .contains("No module named 'mcp.server.fastmcp'"),
        "{result}"
    );
    let out = run_uv(&["doctor", "plain", "--json"]);
    let report = json_of(&out);
    let findings = report["servers"][0]["findings"].as_array().unwrap();
    let rot = findings
        .iter()
        .find(|f| f["code"] == "deps.moved_on")
        .unwrap_or_else(|| panic!("{report}"));
    let fix = rot["fix"].as_str().unwrap();
    assert!(
        fix.contains("plugboard edit plain --pin-dependencies"),
        "{fix}"
    );
    assert!(
        fix.contains("--exclude-newer 2025-09-27T03:25:25Z"),
        "{fix}"
    );

    // Installed pinned (the default), it starts.
    let out = run_uv(&["install", name, "--name", "pinned", "--json"]);
    assert_code(&out, 0);
    let installed = json_of(&out);
    assert_eq!(installed["test"]["ok"], true, "{installed}");
    assert_eq!(installed["test"]["tools"][0]["name"], "count");
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    let pinned = &config["servers"]["pinned"];
    assert_eq!(
        pinned["args"],
        json!([
            "--exclude-newer",
            "2025-09-27T03:25:25Z",
            "mcp-server-r-counter==0.0.3"
        ])
    );
    assert_eq!(
        pinned["source"]["registry"]["pinned"]["date"],
        "2025-09-27T03:25:25Z"
    );
    // The doctor's fix, applied to the plain one, makes it start too.
    assert_code(&run_uv(&["edit", "plain", "--pin-dependencies"]), 0);
    assert_code(&run_uv(&["test", "plain"]), 0);
}

/// A package whose transport is streamable HTTP on this machine: Plugboard starts it (real
/// server-everything through `npx`), waits for its port, tests it, and stops it again.
#[test]
fn a_local_http_package_is_started_tested_and_stopped() {
    let fixture = RegistryFixture::start(&[]);
    let everything: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::repo_root().join("tests/peers/package-lock.json"))
            .unwrap(),
    )
    .unwrap();
    let version =
        everything["packages"]["node_modules/@modelcontextprotocol/server-everything"]["version"]
            .as_str()
            .unwrap()
            .to_owned();
    fixture.post("/fixture/rows", &json!([{"server": {
        "name": "io.github.plugboard-test/everything-http", "version": version,
        "description": "server-everything over streamable HTTP, started locally",
        "packages": [{
            "registryType": "npm", "identifier": "@modelcontextprotocol/server-everything", "version": version,
            "transport": {"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp"},
            "packageArguments": [{"type": "positional", "value": "streamableHttp"}],
            "environmentVariables": [{"name": "PORT", "value": "{port}", "description": "Port to listen on"}]
        }]
    }}]));
    let home = Home::new();
    let url = fixture.url();
    sync(&home, &url);
    let port = crate::support::peers::free_port();
    let out = run(
        &home,
        &url,
        &[
            "install",
            "io.github.plugboard-test/everything-http",
            "--set",
            &format!("port={port}"),
            "--json",
        ],
    );
    assert_code(&out, 0);
    let installed = json_of(&out);
    assert_eq!(installed["test"]["ok"], true, "{installed}");
    assert!(installed["test"]["tools"].as_array().unwrap().len() >= 5);
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    let server = &config["servers"]["everything-http"];
    assert_eq!(server["type"], "shttp");
    assert_eq!(server["url"], format!("http://127.0.0.1:{port}/mcp"));
    assert_eq!(server["launch"]["command"], "npx");
    assert_eq!(server["launch"]["env"]["PORT"], port.to_string());
    // Stopped: nothing listens on its port any more.
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the package was left running"
    );
    let out = run(&home, &url, &["test", "everything-http"]);
    assert_code(&out, 0);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the package was left running"
    );
}

/// What runtimes need to reach their package indexes reaches the servers Plugboard starts.
#[test]
fn stdio_servers_get_the_tls_trust_and_index_settings_of_the_environment() {
    let home = Home::new();
    let out = home
        .cmd(&[
            "test", "--json", "--stdio", "--", "sh", "-c",
            "printf '%s|%s|%s|%s|%s\\n' \"$SSL_CERT_FILE\" \"$NODE_EXTRA_CA_CERTS\" \"$UV_INDEX_URL\" \"$npm_config_registry\" \"$PIP_INDEX_URL\" >&2; exit 3",
        ])
        .env("SSL_CERT_FILE", "/tmp/marker-ca.pem")
        .env("NODE_EXTRA_CA_CERTS", "/tmp/marker-node.pem")
        .env("UV_INDEX_URL", "https://uv.example/simple")
        .env("npm_config_registry", "https://npm.example/")
        .env("PIP_INDEX_URL", "https://pip.example/simple")
        .output()
        .unwrap();
    let result = json_of(&out);
    let tail = result["stderr_tail"].as_str().unwrap_or("");
    assert!(
        tail.contains("/tmp/marker-ca.pem|/tmp/marker-node.pem|https://uv.example/simple|https://npm.example/|https://pip.example/simple"),
        "{result}"
    );
}
