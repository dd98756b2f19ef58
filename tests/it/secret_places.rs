//! Where a secret may be, and where it never is: a registry URL's secret variable stays in the
//! keyring (the config keeps `${secret:…}`, filled in only when the server is reached); a
//! secret argument never reaches a command line unless the user allowed it (a container
//! runtime's `-e NAME=…` goes through the runtime's environment instead); an imported file's
//! literal secrets (arguments, URL parts, a DSN's password) move to the keyring, and its
//! `${env:…}` stays a reference.

use serde_json::{Value, json};

use crate::support::fixture::HttpFixture;
use crate::support::registry::RegistryFixture;
use crate::support::{Home, assert_code, contains_bytes, require_keyring, stderr, stdout};

fn token(prefix: &str) -> String {
    format!("{prefix}{:032x}", rand::random::<u128>())
}

/// Every file under the home, the listing, `show` and `test --json`: none holds `secret`.
#[track_caller]
fn assert_nowhere(home: &Home, name: &str, secret: &str) {
    for (path, bytes) in home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, secret.as_bytes()),
            "{} holds the secret",
            path.display()
        );
    }
    for args in [
        vec!["list", "--json"],
        vec!["show", name, "--json"],
        vec!["show", name],
    ] {
        let out = home.run(&args);
        assert!(
            !stdout(&out).contains(secret) && !stderr(&out).contains(secret),
            "`{}` shows the secret",
            args.join(" ")
        );
    }
}

/// Publish `row` on `registry`, sync it, and install it with `args` and `secret` on stdin.
fn publish_and_install(
    home: &Home,
    registry: &RegistryFixture,
    row: Value,
    args: &[&str],
    secret: &str,
) -> std::process::Output {
    registry.post("/fixture/rows", &json!([{ "server": row }]));
    let url = registry.url();
    let synced = home
        .cmd(&["registry", "sync"])
        .env("PLUGBOARD_REGISTRY_URL", &url)
        .output()
        .unwrap();
    assert_code(&synced, 0);
    let mut cmd = home.cmd(&[&["install"], args].concat());
    cmd.env("PLUGBOARD_REGISTRY_URL", &url);
    crate::support::output_with_stdin(cmd, secret)
}

/// A registry remote at `…/mcp?api_key={api_key}` with the variable secret: the config keeps
/// the reference, the server gets the key, and no file, listing or test output shows it.
#[test]
fn a_secret_url_variable_stays_in_the_keyring_and_reaches_the_server() {
    require_keyring();
    let server = HttpFixture::start("http", &[]);
    let registry = RegistryFixture::start(&[]);
    let home = Home::new();
    let key = token("key_");
    let out = publish_and_install(
        &home,
        &registry,
        json!({
            "name": "io.github.plugboard-test/secret-url",
            "version": "1.0.0",
            "description": "A remote whose URL carries its API key",
            "remotes": [{"type": "streamable-http",
                         "url": format!("{}?api_key={{api_key}}", server.url("/mcp")),
                         "variables": {"api_key": {"isSecret": true, "isRequired": true,
                                                   "description": "The API key"}}}]
        }),
        &[
            "io.github.plugboard-test/secret-url",
            "--name",
            "keyed",
            "--secret-stdin",
            "api_key",
        ],
        &key,
    );
    assert_code(&out, 0);
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(config.contains("api_key=${secret:api_key}"), "{config}");
    // The test before the install and this one reached the server with the key in the URL.
    let test = home.run(&["test", "keyed", "--json"]);
    assert_code(&test, 0);
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.contains(&format!("api_key={key}"))),
        "{:?}",
        server.requests()
    );
    assert!(!stdout(&test).contains(&key));
    assert_nowhere(&home, "keyed", &key);
}

/// A secret on a command line is refused with the way out; allowed, it is passed (and npm
/// would be told to write no log). Through a container runtime, `-e NAME=${secret:…}` becomes
/// `-e NAME` with the value in the runtime's environment: never on any command line.
#[test]
fn a_secret_argument_never_reaches_a_command_line_unless_allowed() {
    require_keyring();
    let home = Home::new();
    let secret = token("tok_");
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let docker = bin.join("docker");
    // A stand-in for docker: shows its argv and whether the variable came through its
    // environment (by length: the value itself would be redacted anyway).
    std::fs::write(
        &docker,
        "#!/bin/sh\necho \"argv=$*\" >&2\necho \"env_len=${#GITHUB_TOKEN}\" >&2\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&docker, std::fs::Permissions::from_mode(0o755)).unwrap();

    let add = |name: &str, command: &[&str]| {
        let mut args = vec![
            "add",
            name,
            "--no-test",
            "--allow-secret-args",
            "--secret-env",
            "TOKEN",
            "--stdio",
            "--",
        ];
        args.extend_from_slice(command);
        let out = home
            .cmd(&args)
            .env("PLUGBOARD_SECRET_TOKEN", &secret)
            .output()
            .unwrap();
        assert_code(&out, 0);
    };
    add(
        "argv",
        &[
            "sh",
            "-c",
            "echo \"got=${#1}\" >&2; exit 3",
            "sh",
            "${secret:TOKEN}",
        ],
    );
    // As a server saved before the consent existed has it: off.
    assert_code(&home.run(&["edit", "argv", "--refuse-secret-args"]), 0);
    let tested = home.run(&["test", "argv", "--json"]);
    let result: Value = serde_json::from_str(stdout(&tested).trim()).unwrap();
    let message = result["error"].as_str().unwrap_or_default();
    assert!(message.contains("on its command line"), "{result}");
    assert!(
        result["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("--allow-secret-args"),
        "{result}"
    );
    assert!(
        !result.to_string().contains("got="),
        "it was started: {result}"
    );

    assert_code(&home.run(&["edit", "argv", "--allow-secret-args"]), 0);
    let tested = home.run(&["test", "argv", "--json"]);
    let result: Value = serde_json::from_str(stdout(&tested).trim()).unwrap();
    let tail = result["stderr_tail"].as_str().unwrap_or_default();
    assert!(
        tail.contains(&format!("got={}", secret.len())),
        "allowed, the argument is passed: {result}"
    );

    let docker_path = docker.to_str().unwrap().to_owned();
    add(
        "contained",
        &[
            &docker_path,
            "run",
            "-i",
            "--rm",
            "-e",
            "GITHUB_TOKEN=${secret:TOKEN}",
            "ghcr.io/github/github-mcp-server",
        ],
    );
    let tested = home.run(&["test", "contained", "--json"]);
    let result: Value = serde_json::from_str(stdout(&tested).trim()).unwrap();
    let tail = result["stderr_tail"].as_str().unwrap_or_default();
    assert!(
        tail.contains("argv=run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server"),
        "{result}"
    );
    assert!(
        tail.contains(&format!("env_len={}", secret.len())),
        "{result}"
    );
    assert_nowhere(&home, "contained", &secret);
}

/// Install refuses a registry row that would put its secret on the command line (nothing is
/// written), and says how to accept it.
#[test]
fn install_refuses_a_secret_argument_without_consent() {
    let registry = RegistryFixture::start(&[]);
    let home = Home::new();
    let out = publish_and_install(
        &home,
        &registry,
        json!({
            "name": "io.github.plugboard-test/secret-arg",
            "version": "1.0.0",
            "description": "A package that takes its key as an argument",
            "packages": [{"registryType": "npm", "identifier": "@plugboard-test/secret-arg",
                          "version": "1.0.0", "transport": {"type": "stdio"},
                          "packageArguments": [{"type": "named", "name": "--api-key",
                                                "isSecret": true, "isRequired": true}]}]
        }),
        &[
            "io.github.plugboard-test/secret-arg",
            "--no-pin",
            "--secret-stdin",
            "api-key",
        ],
        "sk_live_0123456789abcdefghij",
    );
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("on its command line"), "{err}");
    assert!(err.contains("--allow-secret-args"), "{err}");
    let config = std::fs::read_to_string(home.config_path()).unwrap_or_default();
    assert!(!config.contains("secret-arg"), "{config}");
}

/// A Cursor file whose entries hold literal secrets in places no name marks: an argument
/// (`--api-key=…` and `--token …`), a URL's query and user part, a DSN's password, and an
/// `${env:…}` reference. After the import the config holds none of the values, the env
/// reference is still one, and the remote server gets the URL it got before.
#[test]
fn import_moves_every_literal_secret_and_keeps_env_references() {
    require_keyring();
    let home = Home::new();
    let dir = tempfile::tempdir().unwrap();
    let api_key = "sk_live_PLUGBOARDtestFAKE0000000";
    let gh = token("ghp_");
    let query_key = token("q");
    let user_token = token("ghp_");
    let dsn_password = "Pw-only-in-the-DSN-42";
    let server = HttpFixture::start("http", &[]);
    let remote_url = server
        .url("/mcp")
        .replace("http://", &format!("http://{user_token}:x@"));
    let file = dir.path().join("mcp.json");
    let doc = json!({"mcpServers": {
        "stripe": {"command": "npx",
                   "args": ["-y", "@stripe/mcp", format!("--api-key={api_key}"), "--token", gh]},
        "remote": {"url": format!("{remote_url}?api_key={query_key}&region=eu")},
        "db": {"command": "uvx", "args": ["postgres-mcp"],
               "env": {"DATABASE_URL": format!("postgres://app:{dsn_password}@db.internal/app"),
                       "GH": "${env:PLUGBOARD_TEST_GH}"}}
    }});
    std::fs::write(&file, doc.to_string()).unwrap();
    // The preview holds no secret and says which server keeps one on its command line.
    let preview = home
        .cmd(&[
            "import",
            "--file",
            file.to_str().unwrap(),
            "--format",
            "cursor",
            "--dry-run",
            "--json",
        ])
        .env("PLUGBOARD_TEST_GH", "value-of-the-environment")
        .output()
        .unwrap();
    assert_code(&preview, 0);
    let previewed = stdout(&preview);
    assert!(previewed.contains("command line"), "{previewed}");
    let out = home
        .cmd(&[
            "import",
            "--file",
            file.to_str().unwrap(),
            "--format",
            "cursor",
            "--yes",
            "--json",
        ])
        .env("PLUGBOARD_TEST_GH", "value-of-the-environment")
        .output()
        .unwrap();
    assert_code(&out, 0);
    let printed = stdout(&out) + &previewed;
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    for secret in [
        api_key,
        gh.as_str(),
        query_key.as_str(),
        user_token.as_str(),
        dsn_password,
    ] {
        assert!(
            !config.contains(secret),
            "{secret} is in the config: {config}"
        );
        assert!(
            !printed.contains(secret),
            "{secret} is in the report: {printed}"
        );
    }
    assert!(!config.contains("value-of-the-environment"), "{config}");
    let saved: Value = serde_json::from_str(&config).unwrap();
    let servers = &saved["servers"];
    assert_eq!(
        servers["db"]["env"]["GH"],
        json!({"from_env": "${env:PLUGBOARD_TEST_GH}"}),
        "{config}"
    );
    assert_eq!(
        servers["stripe"]["args"],
        json!([
            "-y",
            "@stripe/mcp",
            "--api-key=${secret:ARG_3}",
            "--token",
            "${secret:ARG_5}"
        ]),
        "{config}"
    );
    assert_eq!(servers["stripe"]["allow_secret_args"], true, "{config}");
    assert_eq!(
        servers["remote"]["url"],
        format!(
            "http://${{secret:URL_USERNAME}}:${{secret:URL_PASSWORD}}@127.0.0.1:{}/mcp?api_key=${{secret:URL_API_KEY}}&region=eu",
            server.port
        ),
        "{config}"
    );
    let tested = home.run(&["test", "remote", "--json"]);
    assert_code(&tested, 0);
    assert!(!stdout(&tested).contains(&query_key));
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.ends_with(&format!("/mcp?api_key={query_key}&region=eu"))),
        "{:?}",
        server.requests()
    );
    assert!(
        servers["db"]["env"]["DATABASE_URL"]["secret"].is_string(),
        "{config}"
    );
}
