//! The sandbox of stdio servers, attacked for real with the kernel's Landlock: a fixture that
//! tries to read the home's SSH key (directly, through a symlink in its granted folder and
//! through `..`), to write the home, to connect out and to run a set-user-ID program; the
//! real filesystem server granted one folder by the sandbox while its own arguments allow
//! more; real servers (server-everything, the memory server, the Python SDK) still working
//! sandboxed; the CLI contract of `plugboard sandbox`; and servers saved before the sandbox
//! existed running as they did. Each denial is checked against the same call with the
//! sandbox off, so that a test which could not fail would show.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::fixture::fixture_bin;
use crate::support::peers::{everything_command, python_command};
use crate::support::{Home, assert_code, repo_root, stderr, stdout};

/// A test home that is also the servers' `$HOME`, with an SSH key in it and a `notes` folder.
struct Sandboxed {
    home: Home,
}

impl Sandboxed {
    fn new() -> Sandboxed {
        let home = Home::new();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::write(
            home.path().join(".ssh/id_rsa"),
            "PRIVATE-KEY-OF-THE-TEST-HOME\n",
        )
        .unwrap();
        std::fs::create_dir_all(home.path().join("notes")).unwrap();
        std::fs::write(home.path().join("notes/a.txt"), "hello from notes\n").unwrap();
        Sandboxed { home }
    }

    fn path(&self, rest: &str) -> PathBuf {
        self.home.path().join(rest)
    }

    fn run(&self, args: &[&str]) -> Output {
        self.home
            .cmd(args)
            .env("HOME", self.home.path())
            .output()
            .unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)))
    }

    /// The report of the fixture's `sandbox_probe` called with `args`.
    fn probe(&self, name: &str, args: &[(&str, &str)]) -> Value {
        let mut argv = vec!["call", name, "sandbox_probe", "-y", "--json"];
        let pairs: Vec<String> = args.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for pair in &pairs {
            argv.extend(["--arg", pair.as_str()]);
        }
        let call = self.json(&argv);
        assert_eq!(call["is_error"], false, "{call}");
        serde_json::from_str(call["content"][0]["text"].as_str().unwrap()).unwrap()
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[track_caller]
fn denied(report: &Value, key: &str) {
    let outcome = report[key].as_str().unwrap_or_default();
    assert!(
        outcome.starts_with("denied: Permission denied"),
        "{key} was not denied: {report}"
    );
}

#[track_caller]
fn allowed(report: &Value, key: &str) {
    let outcome = report[key].as_str().unwrap_or_default();
    assert!(outcome.starts_with("ok:"), "{key} was denied: {report}");
}

fn landlock_present() -> bool {
    plugboard_sandbox_abi() > 0
}

fn plugboard_sandbox_abi() -> u32 {
    plugboard::sandbox::kernel_abi()
}

#[test]
fn a_sandboxed_fixture_is_denied_the_home_the_network_and_set_user_id() {
    assert!(
        landlock_present(),
        "this kernel has no Landlock: the sandbox cannot be tested here"
    );
    let t = Sandboxed::new();
    let notes = t.path("notes");
    std::os::unix::fs::symlink(t.path(".ssh/id_rsa"), notes.join("key-link")).unwrap();
    let fixture = fixture_bin();
    let out = t.run(&[
        "add",
        "probe",
        "--cwd",
        &display(&notes),
        "--stdio",
        "--",
        fixture.to_str().unwrap(),
        "--sandbox-probe",
    ]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("sandbox: Can read and write ~/notes; any network"),
        "adding a custom server says what its sandbox grants: {}",
        stdout(&out)
    );

    let key = display(&t.path(".ssh/id_rsa"));
    let through_link = display(&notes.join("key-link"));
    let through_dots = format!("{}/../.ssh/id_rsa", notes.display());
    let home_file = display(&t.path("planted"));
    let inside = display(&notes.join("a.txt"));
    let written_inside = display(&notes.join("b.txt"));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();

    let report = t.probe("probe", &[("read", &key), ("write", &home_file)]);
    denied(&report, "read");
    denied(&report, "write");
    assert!(!t.path("planted").exists());
    denied(&t.probe("probe", &[("read", &through_link)]), "read");
    denied(&t.probe("probe", &[("read", &through_dots)]), "read");
    let report = t.probe("probe", &[("read", &inside), ("write", &written_inside)]);
    allowed(&report, "read");
    allowed(&report, "write");
    assert_eq!(
        std::fs::read_to_string(notes.join("b.txt")).unwrap(),
        "sandbox probe\n"
    );
    allowed(&t.probe("probe", &[("connect", &address)]), "connect");

    // No network: the connection is refused by the kernel; the listener never sees it.
    assert_code(
        &t.run(&["sandbox", "probe", "--network", "none", "--no-test"]),
        0,
    );
    denied(&t.probe("probe", &[("connect", &address)]), "connect");
    // Only the listed port.
    let port = listener.local_addr().unwrap().port();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    assert_code(
        &t.run(&[
            "sandbox",
            "probe",
            "--network",
            &format!("127.0.0.1:{port}"),
            "--no-test",
        ]),
        0,
    );
    allowed(&t.probe("probe", &[("connect", &address)]), "connect");
    denied(
        &t.probe(
            "probe",
            &[("connect", &other.local_addr().unwrap().to_string())],
        ),
        "connect",
    );

    // A program outside its grants does not run; a set-user-ID one it may run gets no
    // privilege (no_new_privs).
    let bin = t.path("bin");
    std::fs::create_dir(&bin).unwrap();
    let suid = bin.join("suid-id");
    std::fs::copy("/usr/bin/id", &suid).unwrap();
    denied(&t.probe("probe", &[("exec", &display(&suid))]), "exec");
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::fs::PermissionsExt;
        std::os::unix::fs::chown(&suid, Some(65534), None).unwrap();
        std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(t.home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let outside = std::process::Command::new(&suid).output().unwrap();
        assert!(
            String::from_utf8_lossy(&outside.stdout).contains("euid=65534"),
            "the set-user-ID copy works outside the sandbox"
        );
        assert_code(
            &t.run(&["sandbox", "probe", "--allow-read", "~/bin", "--no-test"]),
            0,
        );
        let report = t.probe("probe", &[("exec", &display(&suid))]);
        allowed(&report, "exec");
        assert!(
            !report["exec"].as_str().unwrap().contains("euid="),
            "set-user-ID took effect inside the sandbox: {report}"
        );
    } else {
        eprintln!("note: not root, so the set-user-ID copy cannot be made; that part is skipped");
    }

    // The same calls with the sandbox off reach the key: the denials above were the sandbox.
    let out = t.run(&["sandbox", "probe", "--off", "--no-test"]);
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("runs with all of your rights"),
        "{}",
        stderr(&out)
    );
    let report = t.probe("probe", &[("read", &key), ("connect", &address)]);
    allowed(&report, "read");
    allowed(&report, "connect");
}

#[test]
fn a_denial_at_start_is_named_by_the_test_with_the_command_that_grants_it() {
    let t = Sandboxed::new();
    let fixture = fixture_bin();
    let out = t.run(&[
        "add",
        "writer",
        "--no-test",
        "--stdio",
        "--",
        fixture.to_str().unwrap(),
        "--misbehave",
        "write-home",
    ]);
    assert_code(&out, 0);
    let out = t.run(&["test", "writer", "--json"]);
    assert_code(&out, 1);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let hint = result["hint"].as_str().unwrap_or_default();
    assert!(
        hint.contains("the sandbox denied ~/.mcp-fixture-was-here")
            && hint.contains("plugboard sandbox writer --allow-"),
        "{result}"
    );
    assert!(
        result["sandbox"]
            .as_str()
            .unwrap()
            .starts_with("Sees none of your files")
    );
    assert!(!t.path(".mcp-fixture-was-here").exists());
    let out = t.run(&["doctor", "writer"]);
    assert!(
        stdout(&out).contains("the sandbox denied ~/.mcp-fixture-was-here"),
        "the doctor explains the denial: {}",
        stdout(&out)
    );

    let out = t.run(&["sandbox", "writer", "--off"]);
    assert_code(&out, 0);
    assert!(t.path(".mcp-fixture-was-here").exists());

    // A command tested without saving it runs in the sandbox it would get from `add`, unless
    // --no-sandbox says otherwise.
    std::fs::remove_file(t.path(".mcp-fixture-was-here")).unwrap();
    let ad_hoc = |extra: &[&str]| {
        let mut args = vec!["test", "--json", "--stdio"];
        args.extend(extra);
        args.extend(["--", fixture.to_str().unwrap(), "--misbehave", "write-home"]);
        t.run(&args)
    };
    let out = ad_hoc(&[]);
    assert_code(&out, 1);
    assert!(stdout(&out).contains("the sandbox denied ~/.mcp-fixture-was-here"));
    assert!(!t.path(".mcp-fixture-was-here").exists());
    assert_code(&ad_hoc(&["--no-sandbox"]), 0);
    assert!(t.path(".mcp-fixture-was-here").exists());
}

#[test]
fn the_filesystem_server_cannot_read_a_folder_its_sandbox_denies_even_when_its_arguments_allow_it()
{
    let t = Sandboxed::new();
    let script = repo_root()
        .join("tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        script.exists(),
        "run scripts/setup: {} is missing",
        script.display()
    );
    std::os::unix::fs::symlink(t.path(".ssh/id_rsa"), t.path("notes/key-link")).unwrap();
    let out = t.run(&[
        "add",
        "files",
        "--stdio",
        "--",
        "node",
        script.to_str().unwrap(),
        &display(&t.path("notes")),
        &display(&t.path(".ssh")),
    ]);
    assert_code(&out, 0);
    let read = |path: &str| {
        t.json(&[
            "call",
            "files",
            "read_text_file",
            "-y",
            "--json",
            "--arg",
            &format!("path={path}"),
        ])
    };
    let key = display(&t.path(".ssh/id_rsa"));
    // Its arguments name ~/.ssh, so the server itself would serve the key …
    let call = read(&key);
    assert_eq!(call["is_error"], false, "{call}");
    assert!(call.to_string().contains("PRIVATE-KEY-OF-THE-TEST-HOME"));
    // … until the sandbox takes ~/.ssh away: then the kernel refuses the read.
    let out = t.run(&["sandbox", "files", "--deny", "~/.ssh", "--json"]);
    assert_code(&out, 0);
    let view: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(view["state"], "enforced", "{view}");
    assert_eq!(view["test"]["ok"], true, "{view}");
    for path in [
        key.clone(),
        display(&t.path("notes/key-link")),
        format!("{}/../.ssh/id_rsa", t.path("notes").display()),
    ] {
        let call = read(&path);
        assert_eq!(call["is_error"], true, "{path}: {call}");
        assert!(
            !call.to_string().contains("PRIVATE-KEY-OF-THE-TEST-HOME"),
            "{call}"
        );
    }
    // It still does its job in its folder.
    let call = read(&display(&t.path("notes/a.txt")));
    assert!(call.to_string().contains("hello from notes"), "{call}");
    let call = t.json(&[
        "call",
        "files",
        "write_file",
        "-y",
        "--json",
        "--arg",
        &format!("path={}", t.path("notes/new.txt").display()),
        "--arg",
        "content=written sandboxed",
    ]);
    assert_eq!(call["is_error"], false, "{call}");
    assert_eq!(
        std::fs::read_to_string(t.path("notes/new.txt")).unwrap(),
        "written sandboxed"
    );
}

#[test]
fn real_servers_start_and_work_sandboxed() {
    let t = Sandboxed::new();
    let (node, everything) = everything_command();
    let memory = repo_root()
        .join("tests/peers/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let (python, python_server) = python_command();
    let data = t.path("data");
    std::fs::create_dir(&data).unwrap();
    let memory_file = format!("MEMORY_FILE_PATH={}", data.join("memory.jsonl").display());
    let servers: [(&str, Vec<String>); 3] = [
        (
            "everything",
            vec![node.clone(), display(&everything), "stdio".into()],
        ),
        ("memory", vec![node.clone(), display(&memory)]),
        ("python", vec![display(&python), display(&python_server)]),
    ];
    for (name, command) in &servers {
        let mut argv = vec!["add", name, "--no-test", "--stdio"];
        if *name == "memory" {
            argv.extend(["--env", memory_file.as_str()]);
        }
        argv.push("--");
        argv.extend(command.iter().map(String::as_str));
        assert_code(&t.run(&argv), 0);
        let out = t.run(&["test", name, "--json"]);
        let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(result["ok"], true, "{name}: {result}");
        let sandbox = result["sandbox"].as_str().unwrap();
        assert!(!sandbox.starts_with("Not sandboxed"), "{name}: {sandbox}");
        let view = t.json(&["sandbox", name, "--json"]);
        assert_eq!(view["state"], "enforced", "{name}: {view}");
    }
    // The memory server keeps its graph in the folder its environment names.
    let call = t.json(&[
        "call",
        "memory",
        "create_entities",
        "-y",
        "--json",
        "--args",
        &json!({"entities": [{"name": "plugboard", "entityType": "app", "observations": ["sandboxed"]}]}).to_string(),
    ]);
    assert_eq!(call["is_error"], false, "{call}");
    assert!(
        std::fs::read_to_string(data.join("memory.jsonl"))
            .unwrap()
            .contains("sandboxed")
    );
}

#[test]
fn the_sandbox_command_refuses_what_the_kernel_cannot_enforce_and_saves_nothing() {
    let t = Sandboxed::new();
    std::fs::create_dir_all(t.path("notes/private")).unwrap();
    let fixture = fixture_bin();
    let out = t.run(&[
        "add",
        "fx",
        "--no-test",
        "--stdio",
        "--",
        fixture.to_str().unwrap(),
        &display(&t.path("notes")),
    ]);
    assert_code(&out, 0);
    let before = std::fs::read(t.home.config_path()).unwrap();
    let out = t.run(&["sandbox", "fx", "--deny", "~/notes/private"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("cannot hide part of a granted folder"),
        "{}",
        stderr(&out)
    );
    let out = t.run(&["sandbox", "fx", "--allow-read", "notes"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("not an absolute path"),
        "{}",
        stderr(&out)
    );
    let out = t.run(&["sandbox", "fx", "--network", "a b"]);
    assert_code(&out, 2);
    assert_eq!(std::fs::read(t.home.config_path()).unwrap(), before);

    let view = t.json(&["sandbox", "fx", "--json"]);
    assert_eq!(view["state"], "enforced");
    assert_eq!(view["network"], "any");
    let writes: Vec<&str> = view["write"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["path"].as_str().unwrap())
        .collect();
    assert!(writes.contains(&"~/notes"), "{view}");
    assert!(!writes.contains(&"~"), "{view}");

    // A remote server has nothing local to sandbox.
    assert_code(
        &t.run(&[
            "add",
            "remote",
            "--no-test",
            "--url",
            "https://example.com/mcp",
        ]),
        0,
    );
    assert_eq!(
        t.json(&["sandbox", "remote", "--json"])["state"],
        "not_applicable"
    );
    let out = t.run(&["sandbox", "remote", "--on"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("remote server"), "{}", stderr(&out));
}

#[test]
fn a_server_saved_before_the_sandbox_existed_runs_as_it_did_until_turned_on() {
    let t = Sandboxed::new();
    let fixture = fixture_bin();
    let config = json!({"version": 1, "servers": {"old": {
        "type": "stdio",
        "command": fixture.to_str().unwrap(),
        "args": ["--sandbox-probe"],
    }}});
    std::fs::write(t.home.config_path(), config.to_string()).unwrap();
    let view = t.json(&["sandbox", "old", "--json"]);
    assert_eq!(view["state"], "off", "{view}");
    assert!(
        view["summary"]
            .as_str()
            .unwrap()
            .starts_with("Off: it runs with all of your rights")
    );
    let key = display(&t.path(".ssh/id_rsa"));
    allowed(&t.probe("old", &[("read", &key)]), "read");
    let out = t.run(&["sandbox", "old", "--on"]);
    assert_code(&out, 0);
    denied(&t.probe("old", &[("read", &key)]), "read");

    // A catalog server saved before: turned on, it gets the network its entry declares.
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(t.home.config_path()).unwrap()).unwrap();
    config["servers"]["files"] = json!({
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", display(&t.path("notes"))],
        "source": {"catalog": "filesystem", "option": "api"},
    });
    std::fs::write(t.home.config_path(), config.to_string()).unwrap();
    let out = t.run(&["sandbox", "files", "--on", "--no-test"]);
    assert_code(&out, 0);
    let view = t.json(&["sandbox", "files", "--json"]);
    assert_eq!(view["network"], "registry.npmjs.org:443", "{view}");
}

/// A test catalog entry whose form declares what its server needs: a folder it may only read
/// (an environment field), a folder it may change (an argument field) and no network.
fn write_declaring_catalog(dir: &Path) {
    std::fs::write(
        dir.join("declared-probe.json"),
        json!({
            "id": "declared-probe", "name": "Declared probe",
            "description": "A fixture server whose form declares its folders and network.",
            "docs_url": "https://example.com/probe", "categories": ["files"],
            "options": [{
                "id": "local", "label": "Local",
                "transport": {"type": "stdio", "command": fixture_bin(),
                    "args": ["--sandbox-probe", "--description-suffix"],
                    "env_fields": [{"key": "DOCS_DIR", "label": "Documents", "kind": "folder",
                        "required": true, "access": "read"}],
                    "arg_fields": [{"key": "work", "label": "Work folder", "kind": "folder",
                        "required": true, "access": "write"}]},
                "auth": {"type": "none"},
                "sandbox": {"network": "none"}
            }]
        })
        .to_string(),
    )
    .unwrap();
}

#[test]
fn a_form_declares_its_folders_read_only_or_read_write_and_its_network() {
    assert!(landlock_present(), "this kernel has no Landlock");
    let t = Sandboxed::new();
    let catalog = tempfile::tempdir().unwrap();
    write_declaring_catalog(catalog.path());
    std::fs::create_dir_all(t.path("work space")).unwrap();
    let install = |sets: &[&str]| {
        let mut args = vec!["install", "declared-probe", "--no-test"];
        for set in sets {
            args.extend(["--set", set]);
        }
        t.home
            .cmd(&args)
            .env("HOME", t.home.path())
            .env("PLUGBOARD_CATALOG_DIR", catalog.path())
            .output()
            .unwrap()
    };

    // A relative folder would be resolved against some other working folder: refused, and
    // nothing is saved.
    let out = install(&["DOCS_DIR=notes", "work=~/work space"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("`notes` is not an absolute path"),
        "{}",
        stderr(&out)
    );
    assert!(!t.home.config_path().exists());

    let out = install(&["DOCS_DIR=~/notes", "work=~/work space"]);
    assert_code(&out, 0);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(t.home.config_path()).unwrap()).unwrap();
    let server = &config["servers"]["declared-probe"];
    let work = display(&t.path("work space"));
    assert_eq!(
        server["args"],
        json!(["--sandbox-probe", "--description-suffix", work]),
        "~ expanded, the space kept in one argument"
    );
    assert_eq!(server["sandbox"]["network"], "none", "{server}");
    assert_eq!(
        server["sandbox"]["allow_read"],
        json!([display(&t.path("notes"))])
    );

    let shown = t.json(&["sandbox", "declared-probe", "--json"]);
    assert!(
        shown["summary"]
            .as_str()
            .unwrap()
            .starts_with("Can read and write ~/work space; can read ~/notes; no network"),
        "{shown}"
    );

    // Enforced: the read-only folder reads but does not take a file, the read-write one
    // does, and no connection leaves.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let in_notes = display(&t.path("notes/new.txt"));
    let in_work = display(&t.path("work space/new.txt"));
    let report = t.probe(
        "declared-probe",
        &[
            ("read", &display(&t.path("notes/a.txt"))),
            ("write", &in_notes),
            ("connect", &address),
        ],
    );
    allowed(&report, "read");
    denied(&report, "write");
    denied(&report, "connect");
    assert!(!t.path("notes/new.txt").exists());
    allowed(&t.probe("declared-probe", &[("write", &in_work)]), "write");

    // The curated filesystem server: one folder per line (each its own argument), and the
    // hosts npx fetches the package from are the only network it is given.
    let out = t.run(&[
        "install",
        "filesystem",
        "--no-test",
        "--set",
        "paths=~/notes",
        "--set",
        "paths=~/work space",
    ]);
    assert_code(&out, 0);
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(t.home.config_path()).unwrap()).unwrap();
    let filesystem = &config["servers"]["filesystem"];
    let args = filesystem["args"].as_array().unwrap();
    assert_eq!(
        args[args.len() - 2..],
        [json!(display(&t.path("notes"))), json!(work)],
        "{filesystem}"
    );
    assert_eq!(filesystem["sandbox"]["network"], "registry.npmjs.org:443");
}

/// What a client starts (`plugboard run NAME`), tested as a command: it is not put in a
/// sandbox of its own, which would keep it from starting the server (the server runs in its
/// own sandbox, as configured).
#[test]
fn a_plugboard_launcher_tested_as_a_command_starts_its_sandboxed_server() {
    let t = Sandboxed::new();
    // The server's program where only its own sandbox grants it (not beside `plugboard`).
    std::fs::create_dir_all(t.path("servers")).unwrap();
    let fixture = t.path("servers/mcp-fixture");
    std::fs::copy(fixture_bin(), &fixture).unwrap();
    let out = t.run(&[
        "add",
        "inner",
        "--no-test",
        "--stdio",
        "--",
        fixture.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    let plugboard = crate::support::plugboard_bin();
    let home = t.home.path().display().to_string();
    let out = t.run(&[
        "test",
        "--json",
        "--stdio",
        "--env",
        &format!("PLUGBOARD_HOME={home}"),
        "--",
        plugboard.to_str().unwrap(),
        "run",
        "inner",
    ]);
    assert_code(&out, 0);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["ok"], true, "{result}");
    assert!(
        result["sandbox"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Off"),
        "{result}"
    );
    let inner = t.json(&["sandbox", "inner", "--json"]);
    assert_eq!(inner["state"], "enforced", "{inner}");
}
