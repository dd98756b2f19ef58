//! The CLI's test, health, install-with-test and auth commands against real fixture servers.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli_servers::secret_tool_lookup;
use crate::oauth_fixture::{OAuthServer, consent, deliver};
use crate::support::fixture::fixture_bin;
use crate::support::{Home, assert_code, contains_bytes, require_keyring, stderr, stdout};

fn fixture() -> String {
    fixture_bin().display().to_string()
}

#[test]
fn ad_hoc_stdio_test_prints_the_result_document() {
    let home = Home::new();
    let fx = fixture();
    let out = home.run(&[
        "test",
        "--json",
        "--timeout",
        "10",
        "--stdio",
        "--",
        &fx,
        "--tools",
        "3",
    ]);
    assert_code(&out, 0);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(result["verification"], "connectivity-only");
    assert_eq!(result["tools"].as_array().unwrap().len(), 6);
    assert_eq!(result["tools"][0]["adapted_name"], "mcp__ad-hoc__echo");
    let stages: Vec<&str> = result["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages[..5],
        ["resolve", "connect", "discover", "initialize", "tools/list"]
    );
    assert!(!home.config_path().exists(), "an ad hoc test saves nothing");

    let out = home.run(&["test", "--timeout", "10", "--stdio", "--", &fx]);
    assert_code(&out, 0);
    assert!(stderr(&out).contains("initialize"), "live stages on stderr");
    assert!(stdout(&out).contains("mcp__ad-hoc__check_credentials"));

    let out = home.run(&[
        "test",
        "--timeout",
        "5",
        "--stdio",
        "--",
        &fx,
        "--misbehave",
        "exit-at-once",
    ]);
    assert_code(&out, 1);
    assert!(stdout(&out).contains("(exited)"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("fatal: fixture configured to fail"),
        "stderr tail shown"
    );
    assert_code(&home.run(&["test"]), 2);
}

/// A catalog entry (from a test catalog dir) whose password field is checked by the server.
fn write_test_catalog(dir: &std::path::Path, expected: &str) {
    let expected_file = dir.join("expected-token.txt");
    std::fs::write(&expected_file, expected).unwrap();
    std::fs::write(
        dir.join("fixture-vault.json"),
        serde_json::json!({
            "id": "fixture-vault", "name": "Fixture Vault",
            "description": "A fixture server that checks its token.",
            "docs_url": "https://example.com/vault", "categories": ["security"],
            "options": [{
                "id": "token", "label": "Token",
                "transport": {"type": "stdio", "command": fixture(),
                    "args": ["--expect-env", format!("VAULT_TOKEN=@{}", expected_file.display())],
                    "env_fields": [{"key": "VAULT_TOKEN", "label": "Vault token", "kind": "password",
                        "required": true, "help": "From [the vault](https://example.com)."},
                        {"key": "VAULT_NOTE", "label": "Note", "kind": "text", "required": false}]},
                "auth": {"type": "none"},
                "probe": {"tool": "check_credentials", "arguments": {},
                    "auth_error": {"pointer": "/error", "values": ["invalid_auth"]}}
            }]
        })
        .to_string(),
    )
    .unwrap();
}

/// `plugboard ARGS` in `home` with the extra catalog in `catalog`, `stdin` piped to it.
fn run_with_catalog(
    home: &Home,
    catalog: &std::path::Path,
    args: &[&str],
    stdin: &str,
) -> std::process::Output {
    let mut child = home
        .cmd(args)
        .env("PLUGBOARD_CATALOG_DIR", catalog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.as_bytes()).unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

#[test]
fn install_tests_first_verifies_credentials_and_saves_nothing_on_failure() {
    require_keyring();
    let home = Home::new();
    let catalog = tempfile::tempdir().unwrap();
    let good = format!("vault-{:016x}", rand::random::<u64>());
    write_test_catalog(catalog.path(), &good);
    let install = |secret: &str| {
        let install = [
            "install",
            "fixture-vault",
            "--secret-stdin",
            "VAULT_TOKEN",
            "--json",
        ];
        run_with_catalog(&home, catalog.path(), &install, secret)
    };

    let wrong = format!("wrong-{:016x}", rand::random::<u64>());
    let out = install(&wrong);
    assert_code(&out, 1);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["error_kind"], "credentials", "{result:#}");
    assert!(stderr(&out).contains("nothing was saved"));
    assert!(!home.config_path().exists());
    assert!(
        !contains_bytes(&out.stdout, wrong.as_bytes())
            && !contains_bytes(&out.stderr, wrong.as_bytes())
    );

    let out = install(&good);
    assert_code(&out, 0);
    let installed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        installed["test"]["verification"], "verified",
        "{installed:#}"
    );
    assert_eq!(installed["server"]["env"]["VAULT_TOKEN"]["set"], true);

    // The stored health is the install test; `test` and `health` verify again from the keyring.
    let out = home
        .cmd(&["test", "fixture-vault", "--json"])
        .env("PLUGBOARD_CATALOG_DIR", catalog.path())
        .output()
        .unwrap();
    assert_code(&out, 0);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["verification"], "verified");
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, good.as_bytes()),
            "secret in {}",
            path.display()
        );
    }
    assert!(home.path().join("health/fixture-vault.json").exists());
    assert_code(&home.run(&["remove", "fixture-vault"]), 0);
    assert!(!home.path().join("health/fixture-vault.json").exists());
}

/// A server that prints its secret to stderr and into an error: no output ever shows it.
/// `edit NAME --set` changes a catalog server through the form it was installed with: the
/// other fields and the stored secret are kept (its credential check still passes), a new
/// secret that fails the test changes nothing, a required secret cannot be cleared, an optional
/// field can; a server with no form, an unknown field and a raw flag beside a form flag are
/// refused; no file holds a secret.
#[test]
fn edit_set_changes_a_catalog_server_through_its_form() {
    require_keyring();
    let home = Home::new();
    let catalog = tempfile::tempdir().unwrap();
    let good = format!("vault-{:016x}", rand::random::<u64>());
    write_test_catalog(catalog.path(), &good);
    let run = |args: &[&str], stdin: &str| run_with_catalog(&home, catalog.path(), args, stdin);
    let install = [
        "install",
        "fixture-vault",
        "--set",
        "VAULT_NOTE=first",
        "--secret-stdin",
        "VAULT_TOKEN",
    ];
    assert_code(&run(&install, &good), 0);
    let env = || {
        let shown: Value =
            serde_json::from_str(&stdout(&home.run(&["show", "fixture-vault", "--json"]))).unwrap();
        shown["env"].clone()
    };

    let out = run(&["edit", "fixture-vault", "--set", "VAULT_NOTE=second"], "");
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("Changed `fixture-vault`"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("verified"),
        "the kept token passed its check: {}",
        stdout(&out)
    );
    assert_eq!(env()["VAULT_NOTE"], "second");
    assert_eq!(env()["VAULT_TOKEN"]["set"], true);

    let wrong = format!("wrong-{:016x}", rand::random::<u64>());
    let out = run(
        &["edit", "fixture-vault", "--secret", "VAULT_TOKEN"],
        &wrong,
    );
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert!(
        !contains_bytes(&out.stdout, wrong.as_bytes())
            && !contains_bytes(&out.stderr, wrong.as_bytes())
    );
    let out = run(&["test", "fixture-vault", "--json"], "");
    assert_code(&out, 0);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        result["verification"], "verified",
        "the stored token is still the good one"
    );

    let out = run(&["edit", "fixture-vault", "--clear", "VAULT_TOKEN"], "");
    assert_code(&out, 2);
    assert!(stderr(&out).contains("required"), "{}", stderr(&out));
    assert_code(
        &run(&["edit", "fixture-vault", "--clear", "VAULT_NOTE"], ""),
        0,
    );
    assert!(env().get("VAULT_NOTE").is_none(), "{}", env());
    assert_eq!(env()["VAULT_TOKEN"]["set"], true);

    let out = run(&["edit", "fixture-vault", "--set", "nope=1"], "");
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("fields: VAULT_TOKEN, VAULT_NOTE"),
        "{}",
        stderr(&out)
    );
    let out = run(&["edit", "fixture-vault", "--set", "VAULT_TOKEN=x"], "");
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("--secret VAULT_TOKEN"),
        "{}",
        stderr(&out)
    );
    assert_code(
        &run(
            &[
                "edit",
                "fixture-vault",
                "--set",
                "VAULT_NOTE=x",
                "--env",
                "A=B",
            ],
            "",
        ),
        2,
    );
    assert_code(
        &home.run(&["add", "custom", "--no-test", "--stdio", "--", &fixture()]),
        0,
    );
    let out = run(&["edit", "custom", "--set", "A=B"], "");
    assert_code(&out, 2);
    assert!(stderr(&out).contains("has no form"), "{}", stderr(&out));

    for (path, bytes) in home.all_file_bytes() {
        for secret in [&good, &wrong] {
            assert!(
                !contains_bytes(&bytes, secret.as_bytes()),
                "secret in {}",
                path.display()
            );
        }
    }
    assert_code(&home.run(&["remove", "fixture-vault"]), 0);
}

#[test]
fn a_secret_printed_by_the_server_never_reaches_any_output() {
    require_keyring();
    let home = Home::new();
    let secret = format!(
        "leak-{:016x}-{:08x}",
        rand::random::<u64>(),
        std::process::id()
    );
    let fx = fixture();
    let out = home
        .cmd(&[
            "add",
            "leaky",
            "--no-test",
            "--secret-env",
            "API_TOKEN",
            "--stdio",
            "--",
            &fx,
            "--misbehave",
            "leak-secret-env=API_TOKEN",
        ])
        .env("PLUGBOARD_SECRET_API_TOKEN", &secret)
        .output()
        .unwrap();
    assert_code(&out, 0);
    for args in [
        &["test", "leaky", "--json"][..],
        &["test", "leaky"],
        &["health", "--json"],
        &["health"],
    ] {
        let out = home.run(args);
        assert_code(&out, 1);
        assert!(
            !contains_bytes(&out.stdout, secret.as_bytes()),
            "{args:?} stdout leaks"
        );
        assert!(
            !contains_bytes(&out.stderr, secret.as_bytes()),
            "{args:?} stderr leaks"
        );
    }
    let out = home.run(&["test", "leaky"]);
    assert!(
        stdout(&out).contains("debug: token is ***"),
        "{}",
        stdout(&out)
    );
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, secret.as_bytes()),
            "{}",
            path.display()
        );
    }
}

/// Health over 30 servers, 10 of them hanging: about one timeout, not ten; disabled servers are
/// skipped; each server gets its own verdict.
#[test]
fn health_of_thirty_servers_with_ten_hanging_takes_about_one_timeout() {
    let home = Home::new();
    let fx = fixture();
    for i in 0..30 {
        let name = format!("s{i:02}");
        let mut args = vec![
            "add",
            &name,
            "--no-test",
            "--timeout",
            "3",
            "--stdio",
            "--",
            &fx,
        ];
        if i % 3 == 0 {
            args.extend(["--misbehave", "never-answer"]);
        }
        assert_code(&home.run(&args), 0);
    }
    assert_code(
        &home.run(&[
            "add",
            "off",
            "--no-test",
            "--stdio",
            "--",
            "/nonexistent/cmd",
        ]),
        0,
    );
    assert_code(&home.run(&["disable", "off"]), 0);
    let started = Instant::now();
    let out = home.run(&["health", "--json"]);
    let elapsed = started.elapsed();
    assert_code(&out, 1);
    let rows: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows.len(), 30, "the disabled server is skipped");
    for (i, row) in rows.iter().enumerate() {
        if i % 3 == 0 {
            assert_eq!(row["error_kind"], "timeout", "{row:#}");
        } else {
            assert_eq!(row["ok"], true, "{row:#}");
        }
    }
    eprintln!("health of 30 servers (10 hanging, 3 s timeout) took {elapsed:?}");
    // Serially the hanging ones alone would take 30 s; concurrently about one timeout.
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
}

/// `plugboard auth` against a real authorization server on loopback: the URL is printed, the
/// "browser" consents, the CLI finishes with a test using the new token; later tests use the
/// stored tokens; no token is in any file.
#[test]
fn auth_signs_in_and_later_tests_use_the_stored_tokens() {
    auth_flow(&[], "legacy");
}

/// The same against a protected server that speaks only MCP 2026-07-28: the sign-in's final
/// test (and the later ones) speak its era.
#[test]
fn auth_signs_in_to_a_modern_server_and_its_final_test_is_modern() {
    auth_flow(&["--modern"], "modern");
}

fn auth_flow(server_args: &[&str], era: &str) {
    require_keyring();
    let home = Home::new();
    let server = OAuthServer::start(server_args);
    assert_code(
        &home.run(&[
            "add",
            "secured",
            "--no-test",
            "--url",
            &server.mcp_url(),
            "--transport",
            "shttp",
        ]),
        0,
    );
    let out = home.run(&["test", "secured", "--json"]);
    assert_code(&out, 1);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["error_kind"], "unauthorized");

    let mut child = home
        .cmd(&["auth", "secured", "--no-browser"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.next().unwrap().unwrap();
    assert!(url.starts_with("http://127.0.0.1"), "{url}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, _) = rt.block_on(async { deliver(&consent(&url).await).await });
    assert_eq!(status, 200);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    let text = rest.join("\n");
    assert!(text.contains("works"), "{text}\n{}", stderr(&out));
    assert!(text.contains(&format!("({era})")), "{text}");

    let out = home.run(&["test", "secured", "--json"]);
    assert_code(&out, 0);
    let later: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(later["era"], era, "{later:#}");
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    assert_eq!(config["servers"]["secured"]["auth"]["type"], "oauth2");
    let namespace = config["servers"]["secured"]["secret_namespace"]
        .as_str()
        .unwrap()
        .to_string();
    let tokens =
        secret_tool_lookup(&format!("{namespace}/oauth_tokens")).expect("tokens in the keyring");
    let tokens: Value = serde_json::from_str(&tokens).unwrap();
    let access = tokens["access_token"].as_str().unwrap().to_string();
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, access.as_bytes()),
            "token in {}",
            path.display()
        );
    }
    // A Try-it call resolves the stored token the same way, and never shows it.
    let out = home.run(&["call", "secured", "whoami", "--yes", "--trace"]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("scopes: "), "{}", stdout(&out));
    assert!(!format!("{}{}", stdout(&out), stderr(&out)).contains(&access));
    assert_code(&home.run(&["remove", "secured"]), 0);
    assert_eq!(
        secret_tool_lookup(&format!("{namespace}/oauth_tokens")),
        None
    );
}

/// A launch that fails says why from its own output, as the doctor would: a package missing
/// from npm (a real 404 from the registry) and a server that complains about its token get
/// their cause in the hint, not the generic "exited" one.
#[test]
fn a_failed_launch_is_explained_by_what_it_printed() {
    let home = Home::new();
    let hint_of = |args: &[&str]| {
        let mut all = vec!["test", "--json", "--no-sandbox", "--stdio", "--"];
        all.extend_from_slice(args);
        let out = home.run(&all);
        assert_code(&out, 1);
        let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
        result["hint"].as_str().unwrap_or("").to_owned()
    };
    let missing = hint_of(&["npx", "-y", "plugboard-no-such-package-4c1e9a@1.0.0"]);
    assert!(missing.contains("not on the package index"), "{missing}");
    let refused = hint_of(&["sh", "-c", "echo 'Error: Invalid token format' >&2; exit 1"]);
    assert!(
        refused.contains("credential is missing or wrong") && refused.contains("Invalid token"),
        "{refused}"
    );
}

/// The first words of a passing test say what it proved: "works" for a server that takes no
/// credentials, "started and answered" with the credentials named as unchecked for one given a
/// key nothing checked, and a warning when that server's own output calls the key wrong.
#[test]
fn the_first_words_of_a_passing_test_say_what_was_proven() {
    require_keyring();
    let home = Home::new();
    let fx = fixture();
    let script = format!("echo 'Error: Invalid token format' >&2; exec {fx}");
    assert_code(
        &home.run(&["add", "plain", "--no-test", "--stdio", "--", &fx]),
        0,
    );
    let out = home
        .cmd(&[
            "add",
            "keyed",
            "--no-test",
            "--no-sandbox",
            "--secret-env",
            "API_KEY",
            "--stdio",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .env("PLUGBOARD_SECRET_API_KEY", "sk-not-a-real-key-0000")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let out = home.run(&["test", "plain"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).starts_with("✓ `plain` works:"),
        "{}",
        stdout(&out)
    );
    let out = home.run(&["test", "keyed"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(
        text.starts_with("✓ `keyed` started and answered:"),
        "{text}"
    );
    assert!(text.contains("credentials were not checked"), "{text}");
    assert!(text.contains("Invalid token format"), "{text}");
    let out = home.run(&["test", "keyed", "--json"]);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["credentials_sent"], true);
}
