//! The CLI on installed servers: add, list, show, edit, enable/disable, rename, remove, install
//! from the catalog with secrets in the keyring, and bad input that changes nothing.

use serde_json::Value;

use crate::support::{Home, assert_code, contains_bytes, require_keyring, stderr, stdout};

fn list(home: &Home) -> Vec<Value> {
    let out = home.run(&["list", "--json"]);
    assert_code(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn add_list_toggle_rename_remove_without_secrets() {
    let home = Home::new();
    assert_code(
        &home.run(&[
            "add",
            "local",
            "--no-test",
            "--stdio",
            "--env",
            "MODE=fast",
            "--",
            "node",
            "server.js",
            "--flag",
        ]),
        0,
    );
    assert_code(
        &home.run(&[
            "add",
            "remote",
            "--no-test",
            "--url",
            "https://example.com/mcp",
            "--transport",
            "shttp",
            "--header",
            "X-Team=blue",
        ]),
        0,
    );
    let servers = list(&home);
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[0]["name"], "local");
    assert_eq!(servers[0]["type"], "stdio");
    assert_eq!(servers[0]["enabled"], true);
    assert_eq!(
        servers[0]["args"],
        serde_json::json!(["server.js", "--flag"])
    );
    assert_eq!(servers[1]["type"], "shttp");
    assert_eq!(servers[1]["headers"]["X-Team"], "blue");

    assert_code(&home.run(&["disable", "local"]), 0);
    assert_eq!(list(&home)[0]["enabled"], false);
    assert_eq!(
        list(&home)[0]["env"]["MODE"],
        "fast",
        "disable keeps settings"
    );
    assert_code(&home.run(&["enable", "local"]), 0);
    assert_eq!(list(&home)[0]["enabled"], true);

    assert_code(&home.run(&["rename", "local", "renamed"]), 0);
    let names: Vec<_> = list(&home).iter().map(|s| s["name"].clone()).collect();
    assert_eq!(names, ["renamed", "remote"]);

    let out = home.run(&["show", "renamed", "--json"]);
    assert_code(&out, 0);
    let shown: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(shown["command"], "node");

    assert_code(&home.run(&["remove", "renamed"]), 0);
    assert_eq!(list(&home).len(), 1);
    let out = home.run(&["list"]);
    assert!(stdout(&out).contains("remote"));
}

/// Each bad input exits 2 with a one-line message and leaves the config file byte-identical.
#[test]
fn bad_input_exits_2_and_changes_nothing() {
    let home = Home::new();
    assert_code(
        &home.run(&["add", "keep", "--no-test", "--stdio", "--", "cmd"]),
        0,
    );
    let before = std::fs::read(home.config_path()).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["install", "no-such-entry"], "no catalog entry"),
        (&["install", "tavily", "--no-test"], "TAVILY_API_KEY"),
        (
            &["install", "tavily", "--set", "TAVILY_API_KEY=tvly-abc"],
            "never taken from the command line",
        ),
        (&["install", "git", "--no-test"], "repo_path"),
        (
            &["install", "git", "--set", "nope=1"],
            "has no field `nope`",
        ),
        (
            &["install", "github", "--option", "carrier-pigeon"],
            "choose one of",
        ),
        (
            &["add", "bad name", "--no-test", "--stdio", "--", "cmd"],
            "contains ` `",
        ),
        (
            &["add", "keep", "--no-test", "--stdio", "--", "cmd"],
            "already exists",
        ),
        (
            &["add", "x", "--no-test", "--url", "ftp://example.com"],
            "http",
        ),
        (
            &["add", "x", "--no-test", "--url", "not a url"],
            "not a valid URL",
        ),
        (
            &[
                "add",
                "x",
                "--no-test",
                "--stdio",
                "--env",
                "1BAD=v",
                "--",
                "cmd",
            ],
            "environment variable",
        ),
        (
            &[
                "add",
                "x",
                "--no-test",
                "--url",
                "https://e.com",
                "--header",
                "Bad Header=v",
            ],
            "header",
        ),
        (&["show", "ghost"], "no server named `ghost`"),
        (&["enable", "ghost"], "no server named"),
        (&["rename", "ghost", "other"], "no server named"),
        (&["rename", "keep", "bad/name"], "contains `/`"),
        (&["remove", "ghost"], "no server named"),
        (&["edit", "ghost", "--env", "A=b"], "no server named"),
    ];
    for (args, want) in cases {
        let out = home.run(args);
        assert_code(&out, 2);
        let err = stderr(&out);
        assert!(err.contains(want), "{args:?}: expected `{want}` in: {err}");
        // One error line (a warning about this machine, e.g. a runner not installed, may precede it).
        let errors = err
            .trim()
            .lines()
            .filter(|l| !l.starts_with("warning: "))
            .count();
        assert_eq!(errors, 1, "{args:?}: one line: {err}");
        assert_eq!(
            std::fs::read(home.config_path()).unwrap(),
            before,
            "{args:?} changed the file"
        );
    }
}

#[test]
fn a_broken_config_file_is_reported_and_kept() {
    let home = Home::new();
    std::fs::write(home.config_path(), "{\"servers\": {oops").unwrap();
    for args in [
        &["list"][..],
        &["add", "x", "--no-test", "--stdio", "--", "c"],
        &["remove", "x"],
    ] {
        let out = home.run(args);
        assert_code(&out, 2);
        assert!(stderr(&out).contains("left untouched"), "{}", stderr(&out));
    }
    assert_eq!(
        std::fs::read_to_string(home.config_path()).unwrap(),
        "{\"servers\": {oops"
    );
}

/// The "must show": after installing an entry with a password field, the secret is in the
/// keyring and no byte of it is under the config directory or in any CLI output.
#[test]
fn installed_secrets_live_only_in_the_keyring() {
    require_keyring();
    let home = Home::new();
    let secret = format!("tvly-{}", rand_suffix());
    let out = home.run_with_stdin(
        &[
            "install",
            "tavily",
            "--secret-stdin",
            "TAVILY_API_KEY",
            "--no-test",
        ],
        &format!("{secret}\n"),
    );
    assert_code(&out, 0);
    let mut outputs = vec![out];
    outputs.push(home.run(&["list", "--json"]));
    outputs.push(home.run(&["list"]));
    outputs.push(home.run(&["show", "tavily", "--json"]));
    outputs.push(home.run(&["show", "tavily"]));
    for out in &outputs {
        assert!(!contains_bytes(&out.stdout, secret.as_bytes()));
        assert!(!contains_bytes(&out.stderr, secret.as_bytes()));
    }
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, secret.as_bytes()),
            "secret in {}",
            path.display()
        );
    }
    let shown: Value = serde_json::from_str(&stdout(&outputs[3])).unwrap();
    assert_eq!(shown["env"]["TAVILY_API_KEY"]["set"], true);
    assert_eq!(shown["source"]["catalog"], "tavily");

    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    let server = &config["servers"]["tavily"];
    assert_eq!(
        server["env"]["TAVILY_API_KEY"],
        serde_json::json!({"secret": "TAVILY_API_KEY"})
    );
    let namespace = server["secret_namespace"].as_str().unwrap();
    let stored = secret_tool_lookup(&format!("{namespace}/TAVILY_API_KEY"));
    assert_eq!(stored.as_deref(), Some(secret.as_str()));

    // Rename keeps the secret reachable; remove deletes it.
    assert_code(&home.run(&["rename", "tavily", "search"]), 0);
    let out = home.run(&["show", "search", "--json"]);
    let shown: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(shown["env"]["TAVILY_API_KEY"]["set"], true);
    assert_code(&home.run(&["remove", "search"]), 0);
    assert_eq!(
        secret_tool_lookup(&format!("{namespace}/TAVILY_API_KEY")),
        None
    );
}

/// Secret patch semantics through `edit`: omitted keeps, supplied replaces, unset deletes.
#[test]
fn edit_keeps_replaces_and_clears_secrets() {
    require_keyring();
    let home = Home::new();
    let out = home
        .cmd(&[
            "add",
            "svc",
            "--no-test",
            "--stdio",
            "--secret-env",
            "API_TOKEN",
            "--secret-env",
            "OTHER_SECRET",
            "--",
            "cmd",
        ])
        .env("PLUGBOARD_SECRET_API_TOKEN", "first-value-123456")
        .env("PLUGBOARD_SECRET_OTHER_SECRET", "other-value-123456")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    let ns = config["servers"]["svc"]["secret_namespace"]
        .as_str()
        .unwrap()
        .to_string();

    // Omitted: an unrelated edit keeps both secrets.
    assert_code(&home.run(&["edit", "svc", "--env", "MODE=x"]), 0);
    assert_eq!(
        secret_tool_lookup(&format!("{ns}/API_TOKEN")).as_deref(),
        Some("first-value-123456")
    );
    // Supplied: replaced.
    let out = home
        .cmd(&["edit", "svc", "--secret-env", "API_TOKEN"])
        .env("PLUGBOARD_SECRET_API_TOKEN", "second-value-654321")
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(
        secret_tool_lookup(&format!("{ns}/API_TOKEN")).as_deref(),
        Some("second-value-654321")
    );
    // Cleared: the reference and the keyring entry both go; the other secret stays.
    assert_code(&home.run(&["edit", "svc", "--unset-env", "API_TOKEN"]), 0);
    assert_eq!(secret_tool_lookup(&format!("{ns}/API_TOKEN")), None);
    assert_eq!(
        secret_tool_lookup(&format!("{ns}/OTHER_SECRET")).as_deref(),
        Some("other-value-123456")
    );
    let shown: Value =
        serde_json::from_str(&stdout(&home.run(&["show", "svc", "--json"]))).unwrap();
    assert!(shown["env"].get("API_TOKEN").is_none());
    assert_eq!(shown["env"]["MODE"], "x");
    assert_code(&home.run(&["remove", "svc"]), 0);
    assert_eq!(secret_tool_lookup(&format!("{ns}/OTHER_SECRET")), None);
}

fn rand_suffix() -> String {
    format!("{:016x}{:08x}", rand::random::<u64>(), std::process::id())
}

/// What `secret-tool` (libsecret, a separate client) finds in the Secret Service.
pub fn secret_tool_lookup(account: &str) -> Option<String> {
    let out = std::process::Command::new("secret-tool")
        .args(["lookup", "service", "plugboard", "username", account])
        .output()
        .expect("secret-tool (libsecret-tools) is installed");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        .filter(|s| !s.is_empty())
}
