//! Other clients' config files, in their real formats and at their real paths under a temporary
//! HOME: Claude Desktop, Claude Code, Cursor, VS Code (JSONC, `inputs`), GitHub Copilot's own
//! file (`tools`), Windsurf (`serverUrl`)
//! and the generic `mcpServers` file. For each: a config with plaintext tokens imports with the
//! tokens moved into the keyring and none left in Plugboard's files; the servers round-trip
//! through export (launchers) and import (recognised as launchers); `--rewrite-source` leaves no
//! token in the source; export keeps other entries and keys, removes disabled servers, and
//! `plugboard clients` reports Plugboard's entries and drift.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plugboard::secrets::{KeyringStore, SecretKey, SecretStore};
use serde_json::{Value, json};

use crate::support::{Home, assert_code, contains_bytes, require_keyring, stdout};

struct Tokens {
    stdio: String,
    remote: String,
    input: String,
}

impl Tokens {
    fn new() -> Tokens {
        let r = || format!("{:016x}", rand::random::<u64>());
        Tokens {
            stdio: format!("ghp_plain{}", r()),
            remote: format!("lin_plain{}", r()),
            input: format!("trk_input{}", r()),
        }
    }

    fn all(&self) -> [&str; 3] {
        [&self.stdio, &self.remote, &self.input]
    }
}

/// One client format under test.
struct Case {
    client: &'static str,
    /// The file, relative to HOME (`None`: generic, in HOME/servers.json).
    path: &'static str,
    /// The source file's text.
    text: fn(&Tokens) -> String,
    /// The transport the remote entry becomes.
    remote_type: &'static str,
    /// How the remote secret is stored: (secret name, "auth" | "header").
    remote_secret: (&'static str, &'static str),
    /// Extra environment for the import (VS Code input values).
    import_env: fn(&Tokens) -> Vec<(String, String)>,
    /// Servers expected besides github and linear.
    extra: &'static [&'static str],
}

fn launcher() -> Value {
    json!({"command": "/opt/other/bin/plugboard", "args": ["run", "mine"]})
}

fn github(t: &Tokens, typed: bool) -> Value {
    let mut v = json!({
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": t.stdio, "LOG_LEVEL": "debug"}
    });
    if typed {
        v["type"] = json!("stdio");
    }
    v
}

fn pretty(v: Value) -> String {
    serde_json::to_string_pretty(&v).unwrap()
}

fn no_env(_: &Tokens) -> Vec<(String, String)> {
    vec![]
}

const CASES: &[Case] = &[
    Case {
        client: "claude-desktop",
        path: ".config/Claude/claude_desktop_config.json",
        text: |t| {
            pretty(json!({
                "globalShortcut": "Ctrl+Space",
                "mcpServers": {
                    "github": github(t, false),
                    "linear": {"command": "uvx", "args": ["linear-mcp"], "env": {"LINEAR_API_KEY": t.remote}},
                    "mine": launcher()
                }
            }))
        },
        remote_type: "stdio",
        remote_secret: ("LINEAR_API_KEY", "env"),
        import_env: no_env,
        extra: &[],
    },
    Case {
        client: "claude-code",
        path: ".claude.json",
        text: |t| {
            pretty(json!({
                "numStartups": 7,
                "projects": {"/src/app": {"mcpServers": {}, "allowedTools": []}},
                "mcpServers": {
                    "github": github(t, true),
                    "linear": {"type": "http", "url": "https://mcp.linear.example/mcp",
                               "headers": {"Authorization": format!("Bearer {}", t.remote)}},
                    "mine": launcher()
                }
            }))
        },
        remote_type: "shttp",
        remote_secret: ("BEARER_TOKEN", "auth"),
        import_env: no_env,
        extra: &[],
    },
    Case {
        client: "copilot",
        path: ".copilot/mcp-config.json",
        text: |t| {
            let mut github = github(t, true);
            github["tools"] = json!(["*"]);
            pretty(json!({
                "mcpServers": {
                    "github": github,
                    "linear": {"type": "http", "url": "https://mcp.linear.example/mcp",
                               "headers": {"Authorization": format!("Bearer {}", t.remote)},
                               "tools": ["list_issues"]},
                    "mine": launcher()
                }
            }))
        },
        remote_type: "shttp",
        remote_secret: ("BEARER_TOKEN", "auth"),
        import_env: no_env,
        extra: &[],
    },
    Case {
        client: "cursor",
        path: ".cursor/mcp.json",
        text: |t| {
            pretty(json!({
                "mcpServers": {
                    "github": github(t, false),
                    "linear": {"url": "https://mcp.linear.example/sse",
                               "headers": {"Authorization": format!("Bearer {}", t.remote)}},
                    "mine": launcher()
                }
            }))
        },
        remote_type: "auto",
        remote_secret: ("BEARER_TOKEN", "auth"),
        import_env: no_env,
        extra: &[],
    },
    Case {
        client: "vscode",
        path: ".config/Code/User/mcp.json",
        text: |t| {
            format!(
                r#"{{
  // Servers for every workspace
  "inputs": [
    {{"type": "promptString", "id": "tracker-token", "description": "Tracker token", "password": true}},
  ],
  "servers": {{
    "github": {github},
    /* remote */
    "linear": {{"type": "http", "url": "https://mcp.linear.example/mcp",
                "headers": {{"Authorization": "Bearer {remote}"}}}},
    "tracker": {{"type": "stdio", "command": "tracker-mcp", "env": {{"TRACKER_TOKEN": "${{input:tracker-token}}"}}}},
    "mine": {{"type": "stdio", "command": "/opt/other/bin/plugboard", "args": ["run", "mine"]}},
  }},
  "chat.mcp.discovery.enabled": true
}}
"#,
                github = github(t, true),
                remote = t.remote
            )
        },
        remote_type: "shttp",
        remote_secret: ("BEARER_TOKEN", "auth"),
        import_env: |t| vec![("PLUGBOARD_SECRET_TRACKER_TOKEN".into(), t.input.clone())],
        extra: &["tracker"],
    },
    Case {
        client: "windsurf",
        path: ".codeium/windsurf/mcp_config.json",
        text: |t| {
            pretty(json!({
                "mcpServers": {
                    "github": github(t, false),
                    "linear": {"serverUrl": "https://mcp.linear.example/mcp",
                               "headers": {"Authorization": format!("Bearer {}", t.remote)}},
                    "mine": launcher()
                }
            }))
        },
        remote_type: "auto",
        remote_secret: ("BEARER_TOKEN", "auth"),
        import_env: no_env,
        extra: &[],
    },
    Case {
        client: "generic",
        path: "",
        text: |t| {
            pretty(json!({
                "mcpServers": {
                    "github": github(t, false),
                    "linear": {"type": "sse", "url": "https://mcp.linear.example/sse",
                               "headers": {"X-API-Key": t.remote, "X-Team": "blue"}},
                    "mine": launcher()
                }
            }))
        },
        remote_type: "sse",
        remote_secret: ("X-API-Key", "header"),
        import_env: no_env,
        extra: &[],
    },
];

/// A Plugboard home plus a user HOME where the clients' files live.
struct World {
    home: Home,
    user: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            home: Home::new(),
            user: tempfile::tempdir().unwrap(),
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.home.cmd(args);
        cmd.env("HOME", self.user.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("APPDATA")
            .env_remove("COPILOT_HOME");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn source(&self, case: &Case) -> PathBuf {
        if case.path.is_empty() {
            self.user.path().join("servers.json")
        } else {
            self.user.path().join(case.path)
        }
    }

    fn write_source(&self, case: &Case, tokens: &Tokens) -> PathBuf {
        let path = self.source(case);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, (case.text)(tokens)).unwrap();
        path
    }

    /// `import` from the case's file with the case's extra environment.
    fn import(&self, case: &Case, tokens: &Tokens, extra: &[&str]) -> Output {
        let source = self.source(case);
        let source = source.to_str().unwrap();
        let mut args = vec!["import"];
        if case.client == "generic" {
            args.extend(["--file", source, "--format", "generic"]);
        } else {
            args.extend(["--client", case.client]);
        }
        args.extend(extra);
        let mut cmd = self.cmd(&args);
        for (k, v) in (case.import_env)(tokens) {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn config(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.home.config_path()).unwrap()).unwrap()
    }

    /// Assert the imported servers, their secrets in the keyring and none in Plugboard's files.
    fn check_imported(&self, case: &Case, tokens: &Tokens) {
        let config = self.config();
        let servers = config["servers"].as_object().unwrap();
        let mut names: Vec<&str> = servers.keys().map(String::as_str).collect();
        names.sort_unstable();
        let mut want = vec!["github", "linear"];
        want.extend(case.extra);
        want.sort_unstable();
        assert_eq!(names, want, "{config}");
        let keyring = KeyringStore::open().unwrap();
        let secret = |server: &str, name: &str| {
            let ns = servers[server]["secret_namespace"].as_str().unwrap();
            keyring
                .get(&SecretKey::new(ns, name))
                .unwrap()
                .map(|v| v.expose().clone())
        };
        let gh = &servers["github"];
        assert_eq!(gh["type"], "stdio");
        assert_eq!(gh["command"], "npx");
        assert_eq!(
            gh["args"],
            json!(["-y", "@modelcontextprotocol/server-github"])
        );
        assert_eq!(gh["env"]["LOG_LEVEL"], "debug");
        assert_eq!(
            gh["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
            json!({"secret": "GITHUB_PERSONAL_ACCESS_TOKEN"})
        );
        assert_eq!(
            secret("github", "GITHUB_PERSONAL_ACCESS_TOKEN").as_deref(),
            Some(tokens.stdio.as_str())
        );
        let lin = &servers["linear"];
        assert_eq!(lin["type"], case.remote_type, "{lin}");
        let (secret_name, place) = case.remote_secret;
        match place {
            "auth" => assert_eq!(
                lin["auth"],
                json!({"type": "bearer", "token": {"secret": secret_name}})
            ),
            "header" => {
                assert_eq!(lin["headers"][secret_name], json!({"secret": secret_name}));
                assert_eq!(lin["headers"]["X-Team"], "blue");
            }
            _ => assert_eq!(lin["env"][secret_name], json!({"secret": secret_name})),
        }
        assert_eq!(
            secret("linear", secret_name).as_deref(),
            Some(tokens.remote.as_str())
        );
        if case.extra.contains(&"tracker") {
            assert_eq!(
                secret("tracker", "TRACKER_TOKEN").as_deref(),
                Some(tokens.input.as_str())
            );
        }
        for (path, bytes) in self.home.all_file_bytes() {
            for token in tokens.all() {
                assert!(
                    !contains_bytes(&bytes, token.as_bytes()),
                    "a token is in Plugboard's file {}",
                    path.display()
                );
            }
        }
    }
}

fn plugboard_path() -> String {
    crate::support::plugboard_bin()
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn servers_key(client: &str) -> &'static str {
    if client == "vscode" {
        "servers"
    } else {
        "mcpServers"
    }
}

fn check_launcher(entry: &Value, client: &str, name: &str) {
    assert_eq!(entry["command"], plugboard_path(), "{entry}");
    assert_eq!(entry["args"], json!(["run", name]));
    if matches!(client, "vscode" | "claude-code" | "copilot") {
        assert_eq!(entry["type"], "stdio");
    }
    if client == "copilot" {
        // Plugboard decides which tools a client sees: Copilot may call all it is given.
        assert_eq!(entry["tools"], json!(["*"]), "{entry}");
    }
    // No secret in a launcher: its only env is the Plugboard home (the tests' home is not the
    // default one), so a client started from the desktop finds the same servers.
    let env = entry["env"].as_object().expect("the tests' home is named");
    let keys: Vec<&String> = env.keys().collect();
    assert_eq!(
        keys,
        ["PLUGBOARD_HOME"],
        "nothing but the home in a launcher: {entry}"
    );
    assert!(
        Path::new(env["PLUGBOARD_HOME"].as_str().unwrap()).is_dir(),
        "{entry}"
    );
}

fn round_trip(case: &Case) {
    require_keyring();
    let tokens = Tokens::new();

    // 1. Import: servers as in the source, secrets in the keyring only.
    let a = World::new();
    let source = a.write_source(case, &tokens);
    let original = std::fs::read(&source).unwrap();
    let out = a.import(case, &tokens, &["--dry-run"]);
    assert_code(&out, 0);
    assert!(!a.home.config_path().exists(), "a dry run changes nothing");
    assert!(
        stdout(&out).contains("skipped, it already runs through Plugboard"),
        "{}",
        stdout(&out)
    );
    let out = a.import(case, &tokens, &["--yes"]);
    assert_code(&out, 0);
    a.check_imported(case, &tokens);
    assert_eq!(
        std::fs::read(&source).unwrap(),
        original,
        "without --rewrite-source the source is kept"
    );

    // 2. Export to a fresh file of the same format: every server as a launcher.
    let exported = a.user.path().join("exported").join("mcp.json");
    let out = a.run(&[
        "export",
        "--client",
        case.client,
        "--file",
        exported.to_str().unwrap(),
        "--write",
    ]);
    assert_code(&out, 0);
    let doc = read(&exported);
    let entries = doc[servers_key(case.client)].as_object().unwrap();
    let config = a.config();
    assert_eq!(entries.len(), config["servers"].as_object().unwrap().len());
    for name in config["servers"].as_object().unwrap().keys() {
        check_launcher(&entries[name], case.client, name);
    }
    // 3. ... and importing that file finds nothing new: they are all Plugboard's launchers.
    let out = a
        .cmd(&[
            "import",
            "--file",
            exported.to_str().unwrap(),
            "--format",
            case.client,
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    assert_code(&out, 0);
    let plan: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(plan["servers"], json!([]), "{plan}");
    assert_eq!(plan["skipped"].as_array().unwrap().len(), entries.len());

    // 4. Import with --rewrite-source: the source keeps its other keys and entries, its imported
    //    entries become launchers, and no token is left in it.
    let b = World::new();
    let source = b.write_source(case, &tokens);
    let out = b.import(
        case,
        &tokens,
        &["--yes", "--rewrite-source", "--no-test", "--force"],
    );
    assert_code(&out, 0);
    b.check_imported(case, &tokens);
    let text = std::fs::read(&source).unwrap();
    for token in tokens.all() {
        assert!(
            !contains_bytes(&text, token.as_bytes()),
            "a token is left in {}",
            source.display()
        );
    }
    let doc = read(&source);
    let key = servers_key(case.client);
    check_launcher(&doc[key]["github"], case.client, "github");
    check_launcher(&doc[key]["linear"], case.client, "linear");
    assert_eq!(
        doc[key]["mine"]["args"],
        json!(["run", "mine"]),
        "foreign launcher kept"
    );
    let original = (case.text)(&tokens);
    for unknown in [
        "globalShortcut",
        "numStartups",
        "projects",
        "chat.mcp.discovery.enabled",
    ] {
        if original.contains(unknown) {
            assert!(doc.get(unknown).is_some(), "`{unknown}` was dropped");
        }
    }
    let backups: Vec<PathBuf> = std::fs::read_dir(source.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".plugboard-backup-"))
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    // The backup is the file as it was, less the tokens that moved into the keyring.
    let without_tokens = [&tokens.stdio, &tokens.remote, &tokens.input]
        .iter()
        .fold(original.clone(), |text, token| {
            text.replace(token.as_str(), "***")
        });
    assert_eq!(
        std::fs::read_to_string(&backups[0]).unwrap(),
        without_tokens
    );

    // 5. Exporting to the rewritten file changes nothing (the launchers are Plugboard's); after
    //    disabling a server its launcher goes, everything else stays.
    let export_args: Vec<String> = if case.client == "generic" {
        vec![
            "export".into(),
            "--client".into(),
            "generic".into(),
            "--file".into(),
            source.to_string_lossy().into_owned(),
            "--write".into(),
        ]
    } else {
        vec![
            "export".into(),
            "--client".into(),
            case.client.into(),
            "--write".into(),
        ]
    };
    let export_args: Vec<&str> = export_args.iter().map(String::as_str).collect();
    let out = b.run(&export_args);
    assert_code(&out, 0);
    assert!(!stdout(&out).contains("conflict"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("already up to date"),
        "{}",
        stdout(&out)
    );
    assert_code(&b.run(&["disable", "github"]), 0);
    let out = b.run(&export_args);
    assert_code(&out, 0);
    let after = read(&source);
    assert!(after[key].get("github").is_none(), "{after}");
    check_launcher(&after[key]["linear"], case.client, "linear");
    assert_eq!(after[key]["mine"], doc[key]["mine"]);
    if case.client != "generic" {
        let out = b.run(&["clients", "--json"]);
        assert_code(&out, 0);
        let clients: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let me = clients
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == case.client)
            .unwrap();
        assert_eq!(me["exists"], true);
        // Only the hand-made launcher of a server this home does not have (it fails there).
        assert_eq!(
            me["drift"],
            json!([{"entry": "mine", "state": "server_gone"}]),
            "{me}"
        );
        assert!(me["servers"].as_array().unwrap().contains(&json!("linear")));
        // Someone edits Plugboard's entry by hand: that is drift.
        let mut edited = after.clone();
        edited[key]["linear"]["args"] = json!(["run", "something-else"]);
        std::fs::write(&source, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
        let out = b.run(&["clients", "--json"]);
        let clients: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let me = clients
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == case.client)
            .unwrap();
        assert_eq!(me["drifted"], true, "{me}");
        assert_eq!(me["drift"][0]["entry"], "linear");
        // The entry now launches a server that is not installed: it fails in that client.
        assert!(
            me["drift"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["entry"] == "linear" && d["state"] == "server_gone"),
            "{me}"
        );
    }
}

fn case(client: &str) -> &'static Case {
    CASES.iter().find(|c| c.client == client).unwrap()
}

#[test]
fn claude_desktop_round_trip_and_secrets() {
    round_trip(case("claude-desktop"));
}

#[test]
fn claude_code_round_trip_and_secrets() {
    round_trip(case("claude-code"));
}

#[test]
fn cursor_round_trip_and_secrets() {
    round_trip(case("cursor"));
}

#[test]
fn vscode_round_trip_and_secrets() {
    round_trip(case("vscode"));
}

#[test]
fn copilot_round_trip_and_secrets() {
    round_trip(case("copilot"));
}

/// Copilot's file follows `COPILOT_HOME`; a VS Code file that still holds servers is named
/// as deprecated by VS Code, with where its servers go now.
#[test]
fn copilot_home_is_followed_and_the_deprecated_vscode_file_is_named() {
    let world = World::new();
    let copilot_home = world.user.path().join("elsewhere");
    let vscode = world.user.path().join(".config/Code/User/mcp.json");
    std::fs::create_dir_all(vscode.parent().unwrap()).unwrap();
    std::fs::write(
        &vscode,
        r#"{"servers": {"old": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}}}"#,
    )
    .unwrap();
    let out = world
        .cmd(&["clients", "--json"])
        .env("COPILOT_HOME", &copilot_home)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let clients: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let of = |id: &str| {
        clients
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == id)
            .unwrap_or_else(|| panic!("no {id} in {clients}"))
            .clone()
    };
    assert_eq!(
        of("copilot")["path"],
        copilot_home.join("mcp-config.json").to_str().unwrap()
    );
    assert!(
        of("vscode")["deprecated"]
            .as_str()
            .unwrap()
            .contains("deprecated"),
        "{clients}"
    );
    let out = world.run(&["clients"]);
    let text = stdout(&out);
    assert!(
        text.contains("note: VS Code (")
            && text.contains("VS Code 1.140 shows this file as deprecated"),
        "{text}"
    );
    assert!(text.contains("--client copilot"), "{text}");
}

/// A project folder's files, as VS Code 1.140 reads them: `.mcp.json` (Copilot's format, where
/// new servers go) and the deprecated `.vscode/mcp.json`. `clients --workspace` shows both and
/// names the deprecated one with the commands that move on; import reads the old file with
/// `${workspaceFolder}` as the folder and its literal token moved to the keyring; export writes
/// launchers to `.mcp.json`; a client without a project file is refused clearly.
#[test]
fn a_project_folder_s_files_are_shown_imported_and_written() {
    require_keyring();
    let world = World::new();
    let project = world.user.path().join("my app");
    let old = project.join(".vscode/mcp.json");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    let token = format!(
        "sk_live_{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    );
    std::fs::write(
        &old,
        format!(
            r#"{{
  // the project's database
  "servers": {{
    "db": {{"type": "stdio", "command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "${{workspaceFolder}}/data.db"],
            "env": {{"DB_API_KEY": "{token}"}}}}
  }}
}}"#
        ),
    )
    .unwrap();
    let folder = project.to_str().unwrap();
    let clients = |world: &World| -> Vec<Value> {
        let out = world.run(&["clients", "--json", "--workspace", folder]);
        assert_code(&out, 0);
        let all: Value = serde_json::from_str(&stdout(&out)).unwrap();
        all.as_array()
            .unwrap()
            .iter()
            .filter(|c| c["workspace"] == folder)
            .cloned()
            .collect()
    };
    let in_project = clients(&world);
    let ids: Vec<&str> = in_project
        .iter()
        .map(|c| c["client"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["vscode", "copilot"], "{in_project:?}");
    let vscode = &in_project[0];
    assert_eq!(vscode["path"], old.to_str().unwrap());
    assert_eq!(
        (vscode["exists"].clone(), vscode["other_entries"].clone()),
        (json!(true), json!(1))
    );
    assert!(vscode["deprecated"].as_str().unwrap().contains(".mcp.json"));
    assert_eq!(in_project[1]["exists"], false);
    let text = stdout(&world.run(&["clients", "--workspace", folder]));
    assert!(text.contains("VS Code (project)"), "{text}");
    assert!(
        text.contains(&format!(
            "export --client copilot --workspace {folder} --write"
        )),
        "{text}"
    );

    let out = world.run(&["import", "--client", "vscode", "--workspace", folder, "-y"]);
    assert_code(&out, 0);
    let config: Value = read(&world.home.config_path());
    let db = &config["servers"]["db"];
    assert_eq!(
        db["args"],
        json!([
            "mcp-server-sqlite",
            "--db-path",
            format!("{folder}/data.db")
        ]),
        "{db}"
    );
    assert_eq!(
        db["env"]["DB_API_KEY"],
        json!({"secret": "DB_API_KEY"}),
        "{db}"
    );
    for (path, bytes) in world.home.all_file_bytes() {
        assert!(
            !contains_bytes(&bytes, token.as_bytes()),
            "{}",
            path.display()
        );
    }

    let out = world.run(&[
        "export",
        "--client",
        "copilot",
        "--workspace",
        folder,
        "--write",
    ]);
    assert_code(&out, 0);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("deprecated"));
    let written = read(&project.join(".mcp.json"));
    check_launcher(&written["mcpServers"]["db"], "copilot", "db");
    let in_project = clients(&world);
    assert_eq!(in_project[1]["servers"], json!(["db"]), "{in_project:?}");
    assert_eq!(in_project[1]["drifted"], false);

    // Writing the old file still works, with VS Code's word on it.
    let out = world.run(&["export", "--client", "vscode", "--workspace", folder]);
    assert_code(&out, 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("deprecated"));
    let out = world.run(&["export", "--client", "cursor", "--workspace", folder]);
    assert_code(&out, 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("reads no file in a project folder"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = world.run(&["clients", "--workspace", &format!("{folder}/missing")]);
    assert_code(&out, 2);
}

#[test]
fn windsurf_round_trip_and_secrets() {
    round_trip(case("windsurf"));
}

#[test]
fn generic_round_trip_and_secrets() {
    round_trip(case("generic"));
}

/// Export never touches entries Plugboard did not write, names clashes, and prints (without
/// writing) unless asked to write.
#[test]
fn export_respects_foreign_entries_and_previews() {
    let w = World::new();
    assert_code(
        &w.run(&["add", "github", "--no-test", "--stdio", "--", "npx", "gh"]),
        0,
    );
    assert_code(
        &w.run(&["add", "notes", "--no-test", "--stdio", "--", "notes-mcp"]),
        0,
    );
    let path = w.user.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = json!({
        "mcpServers": {"github": {"command": "docker", "args": ["run", "gh"]}, "other": {"url": "https://x.example/mcp"}},
        "someSetting": 1
    });
    std::fs::write(&path, pretty(original.clone())).unwrap();
    let out = w.run(&["export", "--client", "cursor"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("nothing was written"),
        "{}",
        stdout(&out)
    );
    assert_eq!(read(&path), original);
    let out = w.run(&["export", "--client", "cursor", "--write"]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("conflict"), "{}", stdout(&out));
    let doc = read(&path);
    assert_eq!(
        doc["mcpServers"]["github"], original["mcpServers"]["github"],
        "foreign entry kept"
    );
    assert_eq!(doc["mcpServers"]["other"], original["mcpServers"]["other"]);
    assert_eq!(doc["someSetting"], 1);
    check_launcher(&doc["mcpServers"]["notes"], "cursor", "notes");
    // A generic export needs a file.
    let out = w.run(&["export", "--client", "generic"]);
    assert_code(&out, 2);
}
