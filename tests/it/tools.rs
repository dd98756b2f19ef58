//! Per-tool control and the context budget with real parts: server-everything (17 tools with
//! real annotations to a test, which declares what Plugboard supports; 13 to a client that
//! declares no elicitation, sampling or roots) over stdio and over streamable HTTP through `plugboard run`, driven by the
//! Python SDK's stdio client (`tests/peers/python_tools_client.py`), and the SDK's client and
//! server in the modern era (2026-07-28: a `subscriptions/listen` stream hears the change); the budget checked against
//! tiktoken-rs counting the same definitions; the fixture paging its tools through the filter;
//! and the one-server mutations (unknown names change nothing, rename and re-install keep the
//! state).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fixture::fixture_bin;
use crate::support::peers::{Background, everything_command, free_port, python_command};
use crate::support::{Home, assert_code, repo_root, stderr, stdout};

/// The tools server-everything lists to a test: with the capabilities Plugboard declares
/// (elicitation, sampling, roots) it offers four more than to a client that declares none.
const EVERYTHING_TOOLS: usize = 17;

fn json_out(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

/// Install server-everything over stdio as `name` and test it (which lists its tools).
fn add_everything(home: &Home, name: &str) {
    let (node, script) = everything_command();
    let script = script.display().to_string();
    let out = home.run(&["add", name, "--stdio", "--", &node, &script, "stdio"]);
    assert_code(&out, 0);
}

/// The Python SDK's client launching `plugboard run NAME` with `plan` (see the script).
fn python_tools_client(home: &Home, plan: &Value, name: &str) -> std::process::Child {
    let python = repo_root().join(".tools/peers-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup",
        python.display()
    );
    Command::new(python)
        .arg(repo_root().join("tests/peers/python_tools_client.py"))
        .arg(plan.to_string())
        .arg(crate::support::plugboard_bin())
        .args(["run", name])
        .env("PLUGBOARD_HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: std::process::Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{e}: stdout {} stderr {}", stdout(&out), stderr(&out)))
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the client never got ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Disable `get-env`, check a real client through `plugboard run NAME` no longer sees it and
/// gets the error when it calls it while other tools work, then disable `echo` while that
/// client is connected: it is told, and no longer lists it.
fn a_real_client_loses_disabled_tools(home: &Home, name: &str) {
    let out = home.run(&["tools", name, "--disable", "get-env"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("Disabled: get-env."),
        "{}",
        stdout(&out)
    );
    let ready = home.path().join(format!("{name}-ready"));
    let plan = json!({
        "calls": [
            {"tool": "get-env", "arguments": {}},
            {"tool": "echo", "arguments": {"message": "still here"}},
        ],
        "ready_file": ready,
    });
    let client = python_tools_client(home, &plan, name);
    wait_for(&ready);
    let out = home.run(&["tools", name, "--disable", "echo"]);
    assert_code(&out, 0);
    // The change says who was told: the connected client, by the name it introduced itself.
    assert!(
        stdout(&out).contains("told at once: mcp"),
        "{}",
        stdout(&out)
    );
    let seen = finish(client);
    let listed = names(&seen["tools"]);
    assert_eq!(listed.len(), 12, "{seen:#}");
    assert!(!listed.contains(&"get-env".to_string()), "{seen:#}");
    let refused = &seen["calls"][0];
    assert_eq!(refused["error"]["code"], -32602, "{seen:#}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("`get-env`"), "{message}");
    assert!(
        message.contains(&format!("plugboard tools {name} --enable get-env")),
        "{message}"
    );
    assert_eq!(seen["calls"][1]["text"], "Echo: still here", "{seen:#}");
    assert_eq!(seen["calls"][1]["error"], Value::Null);
    assert_eq!(seen["changed"], true, "told of the change: {seen:#}");
    let after = names(&seen["tools_after"]);
    assert_eq!(after.len(), 11, "{seen:#}");
    assert!(!after.contains(&"echo".to_string()), "{seen:#}");

    // The session is over: nobody left to tell.
    let out = home.run(&["tools", name, "--enable", "echo"]);
    assert!(
        stdout(&out).contains("No client is running"),
        "{}",
        stdout(&out)
    );
    assert_code(&home.run(&["tools", name, "--disable", "echo"]), 0);
    assert!(
        std::fs::read_dir(home.path().join("sessions"))
            .unwrap()
            .next()
            .is_none(),
        "the session's record went with it"
    );

    // `test` and `health` still see every tool.
    let out = home.run(&["test", name, "--json"]);
    assert_code(&out, 0);
    assert_eq!(
        json_out(&out)["tools"].as_array().unwrap().len(),
        EVERYTHING_TOOLS
    );
    let out = home.run(&["health", "--json"]);
    let health = json_out(&out);
    let result = health
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{health:#}"));
    assert_eq!(
        result["tools"].as_array().unwrap().len(),
        EVERYTHING_TOOLS,
        "{result:#}"
    );
}

#[test]
fn server_everything_over_stdio_loses_disabled_tools_for_a_real_client() {
    let home = Home::new();
    add_everything(&home, "everything");
    a_real_client_loses_disabled_tools(&home, "everything");
}

/// The modern era (2026-07-28) with real parts on both ends: the Python SDK's high-level client
/// negotiates it with the SDK's own server (installed as `pysdk`) through `plugboard run`; a
/// disabled tool is missing and refused, and a change while it listens reaches it on its
/// `subscriptions/listen` stream.
fn a_modern_client_loses_disabled_tools(home: &Home) {
    assert_code(&home.run(&["tools", "pysdk", "--disable", "shout"]), 0);
    let ready = home.path().join("pysdk-ready");
    let plan = json!({
        "modern": true,
        "calls": [
            {"tool": "shout", "arguments": {"text": "quiet"}},
            {"tool": "add", "arguments": {"a": 2, "b": 3}},
        ],
        "ready_file": ready,
    });
    let client = python_tools_client(home, &plan, "pysdk");
    wait_for(&ready);
    let out = home.run(&["tools", "pysdk", "--enable", "shout"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("told at once: mcp"),
        "a listening client is told: {}",
        stdout(&out)
    );
    let seen = finish(client);
    assert_eq!(seen["version"], "2026-07-28", "{seen:#}");
    assert_eq!(names(&seen["tools"]), ["add", "book_table"], "{seen:#}");
    let refused = &seen["calls"][0];
    assert_eq!(refused["error"]["code"], -32602, "{seen:#}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("plugboard tools pysdk --enable shout"),
        "{seen:#}"
    );
    assert_eq!(seen["calls"][1]["text"], "5", "{seen:#}");
    assert_eq!(seen["changed"], true, "told on its listen stream: {seen:#}");
    assert_eq!(
        names(&seen["tools_after"]),
        ["add", "shout", "book_table"],
        "{seen:#}"
    );
}

#[test]
fn the_python_sdk_in_the_modern_era_over_stdio_loses_disabled_tools_and_hears_changes() {
    let home = Home::new();
    let (python, script) = python_command();
    let (python, script) = (python.display().to_string(), script.display().to_string());
    assert_code(
        &home.run(&["add", "pysdk", "--stdio", "--", &python, &script, "stdio"]),
        0,
    );
    a_modern_client_loses_disabled_tools(&home);
}

#[test]
fn the_python_sdk_in_the_modern_era_over_streamable_http_loses_disabled_tools_through_the_bridge() {
    let home = Home::new();
    let (python, script) = python_command();
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(script).arg("streamable-http").arg(port.to_string());
    let server = Background::start(cmd, port);
    let url = server.url("/mcp");
    assert_code(
        &home.run(&["add", "pysdk", "--url", &url, "--transport", "shttp"]),
        0,
    );
    a_modern_client_loses_disabled_tools(&home);
}

#[test]
fn server_everything_over_streamable_http_loses_disabled_tools_through_the_bridge() {
    let home = Home::new();
    let (node, script) = everything_command();
    let port = free_port();
    let mut cmd = Command::new(node);
    cmd.arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let server = Background::start(cmd, port);
    let url = server.url("/mcp");
    assert_code(
        &home.run(&["add", "remote", "--url", &url, "--transport", "shttp"]),
        0,
    );
    a_real_client_loses_disabled_tools(&home, "remote");
}

/// What tiktoken-rs counts for the definition a client sends of each tool in `tools` (a test
/// result's list), built here the way the budget documents it.
fn reference_costs(server: &str, tools: &Value) -> Vec<(String, usize)> {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap();
            let mut definition = serde_json::Map::new();
            definition.insert("name".into(), json!(format!("mcp__{server}__{name}")));
            if let Some(description) = tool.get("description").filter(|d| !d.is_null()) {
                definition.insert("description".into(), description.clone());
            }
            definition.insert("input_schema".into(), tool["input_schema"].clone());
            let text = serde_json::to_string(&Value::Object(definition)).unwrap();
            (name.to_owned(), bpe.encode_ordinary(&text).len())
        })
        .collect()
}

#[test]
fn the_budget_of_server_everything_matches_a_reference_count_and_drops_by_a_tools_cost() {
    let home = Home::new();
    add_everything(&home, "everything");
    let out = home.run(&["test", "everything", "--json"]);
    assert_code(&out, 0);
    let reference = reference_costs("everything", &json_out(&out)["tools"]);
    assert_eq!(reference.len(), EVERYTHING_TOOLS);
    let total: usize = reference.iter().map(|(_, c)| c).sum();

    let budget = json_out(&home.run(&["budget", "--json"]));
    assert_eq!(budget["tokens"], total, "{budget:#}");
    assert_eq!(budget["tools"], EVERYTHING_TOOLS);
    assert_eq!(
        budget["servers"],
        json!([{"name": "everything", "tokens": total, "tools": EVERYTHING_TOOLS, "failing": false}])
    );
    assert_eq!(budget["clients"], json!([]));

    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    let mut keys: Vec<&String> = listing.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["server", "tokens", "tools"]);
    assert_eq!(listing["server"], "everything");
    assert_eq!(listing["tokens"], total);
    for (tool, (name, cost)) in listing["tools"].as_array().unwrap().iter().zip(&reference) {
        let mut keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["annotations", "enabled", "name", "tokens"]);
        assert_eq!(&tool["name"], name);
        assert_eq!(&tool["tokens"], cost, "{name}");
        assert_eq!(tool["enabled"], true);
        assert!(tool["annotations"]["readOnlyHint"].is_boolean(), "{tool}");
    }

    let get_env = reference.iter().find(|(n, _)| n == "get-env").unwrap().1;
    assert_code(
        &home.run(&["tools", "everything", "--disable", "get-env"]),
        0,
    );
    let budget = json_out(&home.run(&["budget", "--json"]));
    assert_eq!(budget["tokens"], total - get_env, "{budget:#}");
    assert_eq!(budget["tools"], EVERYTHING_TOOLS - 1);
    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    assert_eq!(listing["tokens"], total - get_env);
    let disabled = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get-env")
        .unwrap();
    assert_eq!(disabled["enabled"], false);
    assert_eq!(
        disabled["tokens"], get_env,
        "a disabled tool still shows its cost"
    );

    // The tools that say they may change things, off in one go: by annotation.
    let out = home.run(&[
        "tools",
        "everything",
        "--disable-annotated",
        "not-read-only",
    ]);
    assert_code(&out, 0);
    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    let off: Vec<&str> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["enabled"] == false)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        off,
        [
            "get-env",
            "gzip-file-as-resource",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-elicitation-request",
            "trigger-url-elicitation",
            "trigger-sampling-request",
            "simulate-research-query"
        ]
    );
    let expected: usize = reference
        .iter()
        .filter(|(n, _)| !off.contains(&n.as_str()))
        .map(|(_, c)| c)
        .sum();
    assert_eq!(listing["tokens"], expected);
    // Disabling the server takes all of it out of the total.
    assert_code(&home.run(&["disable", "everything"]), 0);
    let budget = json_out(&home.run(&["budget", "--json"]));
    assert_eq!(
        (budget["tokens"].clone(), budget["tools"].clone()),
        (json!(0), json!(0))
    );
}

/// Unknown tool names change nothing; switches survive a rename and a reinstall; a server never
/// tested has no figures in the budget, and one that worked and now fails is not counted.
#[test]
fn unknown_tool_names_change_nothing_and_state_survives_rename_and_reinstall() {
    let home = Home::new();
    add_everything(&home, "ev");
    let before = std::fs::read(home.config_path()).unwrap();
    for args in [
        vec!["tools", "ev", "--disable", "get_env"],
        vec!["tools", "ev", "--disable", "echo", "--enable", "nope"],
        vec!["tools", "ev", "--only", "echo", "missing"],
        vec!["tools", "ev", "--disable", "echo", "--enable", "echo"],
    ] {
        let out = home.run(&args);
        assert_code(&out, 2);
        assert!(
            stderr(&out).contains("nothing was changed"),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(home.config_path()).unwrap(),
            before,
            "{args:?}"
        );
    }
    let out = home.run(&["tools", "ev", "--disable", "get_env"]);
    assert!(
        stderr(&out).contains("did you mean `get-env`"),
        "{}",
        stderr(&out)
    );
    let out = home.run(&["tools", "nope", "--disable", "echo"]);
    assert_code(&out, 2);

    assert_code(&home.run(&["tools", "ev", "--only", "echo", "get-sum"]), 0);
    assert_code(&home.run(&["rename", "ev", "everything"]), 0);
    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    let on: Vec<&str> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["enabled"] == true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(on, ["echo", "get-sum"]);
    // Removed and installed again (same server, same name): the choices come back.
    assert_code(&home.run(&["remove", "everything"]), 0);
    add_everything(&home, "everything");
    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    let on = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["enabled"] == true)
        .count();
    assert_eq!(on, 2, "{listing:#}");

    // A server never tested has no tool list to choose from.
    let fixture = fixture_bin();
    assert_code(
        &home.run(&[
            "add",
            "fresh",
            "--no-test",
            "--stdio",
            "--",
            fixture.to_str().unwrap(),
        ]),
        0,
    );
    let out = home.run(&["tools", "fresh", "--disable", "echo"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("plugboard test fresh"),
        "{}",
        stderr(&out)
    );
    let budget = json_out(&home.run(&["budget", "--json"]));
    let fresh = budget["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "fresh")
        .unwrap();
    assert_eq!(
        fresh,
        &json!({"name": "fresh", "tokens": null, "tools": null, "failing": false})
    );

    // A server that worked and now fails keeps its figures, but they are not counted.
    let dir = tempfile::tempdir().unwrap();
    let switch = dir.path().join("works");
    let wrapper = dir.path().join("flaky-server");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n[ -e '{}' ] || {{ echo 'it broke' >&2; exit 1; }}\nexec '{}' \"$@\"\n",
            switch.display(),
            fixture.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&switch, "").unwrap();
    let add = home.run(&[
        "add",
        "flaky",
        "--no-sandbox",
        "--stdio",
        "--",
        wrapper.to_str().unwrap(),
    ]);
    assert_code(&add, 0);
    let before = json_out(&home.run(&["budget", "--json"]));
    std::fs::remove_file(&switch).unwrap();
    assert_code(&home.run(&["test", "flaky"]), 1);
    let after = json_out(&home.run(&["budget", "--json"]));
    let flaky = after["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "flaky")
        .unwrap()
        .clone();
    assert_eq!(flaky["failing"], true, "{after:#}");
    assert!(flaky["tools"].as_u64().unwrap() > 0, "{flaky}");
    assert_eq!(
        after["tools"].as_u64().unwrap(),
        before["tools"].as_u64().unwrap() - flaky["tools"].as_u64().unwrap(),
        "{after:#}"
    );
}

/// A wrapper running the fixture with as many extra tools as `count_file` says, in pages of 4.
fn paging_fixture(dir: &Path, count_file: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("paging-fixture");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nexec '{}' --page-size 4 --tools \"$(cat '{}')\"\n",
            fixture_bin().display(),
            count_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn every_page_is_filtered_and_tools_added_later_wait_for_review() {
    let home = Home::new();
    let count = home.path().join("count");
    std::fs::write(&count, "5").unwrap();
    let wrapper = paging_fixture(home.path(), &count);
    assert_code(
        &home.run(&[
            "add",
            "pages",
            // The wrapper reads the count file and runs the fixture, which its command line
            // does not name: a sandbox would (rightly) deny both.
            "--no-sandbox",
            "--stdio",
            "--",
            wrapper.to_str().unwrap(),
        ]),
        0,
    );
    let listing = json_out(&home.run(&["tools", "pages", "--json"]));
    let all: Vec<String> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(all.len(), 8, "{listing:#}");
    // One tool off on each of the two pages.
    let (first, last) = (all[1].clone(), all[6].clone());
    assert_code(
        &home.run(&["tools", "pages", "--disable", &first, &last]),
        0,
    );
    let seen = finish(python_tools_client(&home, &json!({"calls": []}), "pages"));
    let listed = names(&seen["tools"]);
    let expected: Vec<String> = all
        .iter()
        .filter(|n| **n != first && **n != last)
        .cloned()
        .collect();
    assert_eq!(listed, expected);

    // The server grows a tool after its tools were approved: `plugboard run` still serves it,
    // without the new tool, until it is reviewed.
    std::fs::write(&count, "6").unwrap();
    let out = home.run(&["test", "pages", "--json"]);
    assert_code(&out, 0);
    assert_eq!(json_out(&out)["pin_state"], "tools_changed");
    let now = json_out(&home.run(&["tools", "pages", "--json"]));
    let added: Vec<&str> = now["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .filter(|n| !all.iter().any(|a| a == n))
        .collect();
    assert_eq!(added.len(), 1, "{now:#}");
    let added = added[0].to_owned();
    let seen = finish(python_tools_client(&home, &json!({"calls": []}), "pages"));
    assert!(!names(&seen["tools"]).contains(&added), "{seen:#}");
    assert_eq!(names(&seen["tools"]), expected);
    // Approving it is the review: it shows.
    assert_code(&home.run(&["approve", "pages"]), 0);
    let seen = finish(python_tools_client(&home, &json!({"calls": []}), "pages"));
    assert!(names(&seen["tools"]).contains(&added), "{seen:#}");
    // Chosen "enabled" for new tools: a later tool would show at once, so an unreviewed one
    // refuses the run as before.
    assert_code(&home.run(&["tools", "pages", "--new-tools", "enabled"]), 0);
    std::fs::write(&count, "7").unwrap();
    assert_code(&home.run(&["test", "pages"]), 0);
    let out = home.run(&["run", "pages"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("plugboard approve pages"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exported_launchers_name_the_home_and_clients_see_only_enabled_tools_under_their_caps() {
    let home = Home::new();
    let user = tempfile::tempdir().unwrap();
    let as_user = |args: &[&str]| {
        home.cmd(args)
            .env("HOME", user.path())
            .env("XDG_CONFIG_HOME", user.path().join(".config"))
            .output()
            .unwrap()
    };
    add_everything(&home, "everything");
    assert_code(
        &home.run(&["tools", "everything", "--disable", "get-env"]),
        0,
    );
    let fixture = fixture_bin();
    assert_code(
        &home.run(&[
            "add",
            "many",
            "--stdio",
            "--",
            fixture.to_str().unwrap(),
            "--tools",
            "40",
        ]),
        0,
    );
    assert_code(&as_user(&["export", "--client", "cursor", "--write"]), 0);
    let file = user.path().join(".cursor/mcp.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &doc["mcpServers"]["everything"];
    assert_eq!(
        entry["env"],
        json!({"PLUGBOARD_HOME": home.path().to_string_lossy()}),
        "{entry}"
    );
    assert_eq!(entry["args"], json!(["run", "everything"]));

    // Launched from the desktop (no PLUGBOARD_HOME of its own), the entry's env is what finds
    // the servers: without it there is no such server.
    let mut bare = Command::new(entry["command"].as_str().unwrap());
    bare.args(["run", "everything"])
        .env_remove("PLUGBOARD_HOME")
        .env("HOME", user.path())
        .env("XDG_CONFIG_HOME", user.path().join(".config"))
        .stdin(Stdio::null());
    let out = bare.output().unwrap();
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("no server named `everything`"),
        "{}",
        stderr(&out)
    );

    let clients = json_out(&as_user(&["clients", "--json"]));
    let cursor = clients
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == "cursor")
        .unwrap();
    // everything with get-env off, and many's 43.
    let enabled = EVERYTHING_TOOLS - 1 + 43;
    assert_eq!(cursor["tools"], enabled, "{cursor:#}");
    let out = as_user(&["clients"]);
    assert!(
        stdout(&out).contains(&enabled.to_string()),
        "{}",
        stdout(&out)
    );

    let budget = json_out(&as_user(&["budget", "--client", "cursor", "--json"]));
    assert_eq!(
        budget["clients"],
        json!([{"client": "cursor", "tools": enabled, "cap": 40, "over": true}])
    );
    assert_eq!(budget["tools"], enabled);
    let out = as_user(&["budget"]);
    assert!(
        stdout(&out).contains(&format!(
            "warning: Cursor gets {enabled} tools from Plugboard, over its limit of 40"
        )),
        "{}",
        stdout(&out)
    );
    // Under the cap once the big server is down to a few tools.
    assert_code(&home.run(&["tools", "many", "--only", "echo", "add"]), 0);
    let budget = json_out(&as_user(&["budget", "--client", "cursor", "--json"]));
    assert_eq!(budget["clients"][0]["tools"], EVERYTHING_TOOLS - 1 + 2);
    assert_eq!(budget["clients"][0]["over"], false);

    // In the default home, the launcher needs no env.
    let default_user = tempfile::tempdir().unwrap();
    let in_default = |args: &[&str]| {
        let mut cmd = home.cmd(args);
        cmd.env_remove("PLUGBOARD_HOME")
            .env("HOME", default_user.path())
            .env("XDG_CONFIG_HOME", default_user.path().join(".config"));
        cmd.output().unwrap()
    };
    assert_code(
        &in_default(&[
            "add",
            "fx",
            "--no-test",
            "--stdio",
            "--",
            fixture.to_str().unwrap(),
        ]),
        0,
    );
    assert_code(&in_default(&["export", "--client", "cursor", "--write"]), 0);
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(default_user.path().join(".cursor/mcp.json")).unwrap(),
    )
    .unwrap();
    assert!(doc["mcpServers"]["fx"].get("env").is_none(), "{doc:#}");
}

/// The tools server-everything offers only to a client that can answer its requests
/// (elicitation, sampling, roots) are listed by a test, which declares what Plugboard
/// supports, so they can be switched off and on like any other; a client that declares none
/// still does not get them from the server.
#[test]
fn tools_offered_only_to_capable_clients_are_listed_and_switchable() {
    let home = Home::new();
    add_everything(&home, "everything");
    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    let state = |listing: &Value, name: &str| {
        listing["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed: {listing:#}"))["enabled"]
            .clone()
    };
    for tool in [
        "trigger-elicitation-request",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        assert_eq!(state(&listing, tool), true, "{tool}");
    }
    assert_code(
        &home.run(&[
            "tools",
            "everything",
            "--disable",
            "trigger-sampling-request",
        ]),
        0,
    );
    let listing = json_out(&home.run(&["tools", "everything", "--json"]));
    assert_eq!(state(&listing, "trigger-sampling-request"), false);
    assert_code(
        &home.run(&[
            "tools",
            "everything",
            "--enable",
            "trigger-sampling-request",
        ]),
        0,
    );
}
