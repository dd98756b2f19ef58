//! `plugboard call`, `read`, `prompt` and `diagnose` as a user runs them, against
//! server-everything and the fixture's schema tools: values by kind, progress on stderr, a
//! cancelled long call, arguments read by the schema, refusals that send nothing (exit 2),
//! `isError` (exit 1), questions on a terminal and without one, the trace, the bundle.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fixture::fixture_bin;
use crate::support::peers::everything_command;
use crate::support::{Home, assert_code, stderr, stdout};

const SECRET: &str = "sk-live-CLI-EVERYTHING-8a7b6c5d";

fn with_everything() -> Home {
    let home = Home::new();
    let (node, script) = everything_command();
    let env = format!("EVERYTHING_API_KEY={SECRET}");
    let script = script.display().to_string();
    let out = home.run(&[
        "add",
        "everything",
        "--stdio",
        "--env",
        &env,
        "--no-test",
        "--",
        &node,
        &script,
        "stdio",
    ]);
    assert_code(&out, 0);
    let fixture = fixture_bin().display().to_string();
    let out = home.run(&[
        "add",
        "fx",
        "--stdio",
        "--no-test",
        "--",
        &fixture,
        "--schema-tools",
    ]);
    assert_code(&out, 0);
    home
}

#[test]
fn call_prints_the_right_values_by_kind() {
    let home = with_everything();
    let out = home.run(&[
        "call",
        "everything",
        "get-sum",
        "--arg",
        "a=2",
        "--arg",
        "b=3",
    ]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("The sum of 2 and 3 is 5."),
        "{}",
        stdout(&out)
    );

    let out = home.run(&[
        "call",
        "everything",
        "get-structured-content",
        "--arg",
        "location=New York",
    ]);
    assert_code(&out, 0);
    let shown = stdout(&out);
    assert!(
        shown.contains("structured content: matches the tool's output schema"),
        "{shown}"
    );
    assert!(shown.contains("\"temperature\": 33"), "{shown}");

    let out = home.run(&["call", "everything", "get-tiny-image"]);
    assert_code(&out, 0);
    let line = stdout(&out)
        .lines()
        .find(|l| l.contains("[image]"))
        .map(str::to_owned)
        .expect("the image line");
    assert!(
        line.contains("[image] image/png, ") && line.contains(" bytes (the data is image/png)"),
        "{line}"
    );

    let out = home.run(&[
        "call",
        "everything",
        "get-resource-links",
        "--arg",
        "count=2",
        "--json",
    ]);
    assert_code(&out, 0);
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let links: Vec<&Value> = outcome["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "resource_link")
        .collect();
    assert_eq!(links.len(), 2, "{outcome}");

    let out = home.run(&[
        "call",
        "everything",
        "get-structured-content",
        "--arg",
        "location=Chicago",
        "--json",
    ]);
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["structured"]["check"], "valid");
    assert_eq!(outcome["structured"]["value"]["humidity"], 82);

    // The fixture's tool that breaks its own output schema: shown, not hidden.
    let out = home.run(&["call", "fx", "schema_output_mismatch"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("does NOT match the tool's output schema"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("✗ count: the value is not of type \"integer\""),
        "{}",
        stdout(&out)
    );
}

#[test]
fn get_env_never_shows_the_secret() {
    let home = with_everything();
    let out = home.run(&["call", "everything", "get-env", "--trace", "--json"]);
    assert_code(&out, 0);
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("EVERYTHING_API_KEY"), "{all}");
    assert!(!all.contains(SECRET), "the secret leaked");
}

#[test]
fn progress_is_printed_as_it_arrives() {
    let home = with_everything();
    let out = home.run(&[
        "call",
        "everything",
        "trigger-long-running-operation",
        "--arg",
        "duration=1",
        "--arg",
        "steps=3",
    ]);
    assert_code(&out, 0);
    let err = stderr(&out);
    for step in ["progress 1/3", "progress 2/3", "progress 3/3 (100 %)"] {
        assert!(err.contains(step), "{err}");
    }
    assert!(stdout(&out).contains("Long running operation completed"));
}

#[test]
fn ctrl_c_cancels_a_long_call_and_ends_the_request() {
    let home = with_everything();
    let mut child = home
        .cmd(&[
            "call",
            "everything",
            "trigger-long-running-operation",
            "--arg",
            "duration=60",
            "--arg",
            "steps=60",
            "--trace",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "stderr ended: {seen}"
        );
        seen.push_str(&line);
        if line.contains("progress 1/60") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no progress: {seen}"
        );
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    err.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{seen}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the call was not ended"
    );
    assert!(
        seen.contains("→ notification notifications/cancelled"),
        "{seen}"
    );
    assert!(seen.contains("the call was cancelled"), "{seen}");
}

#[test]
fn arguments_are_read_by_the_schema_and_bad_ones_send_nothing() {
    let home = with_everything();
    let out = home.run(&[
        "call",
        "everything",
        "get-sum",
        "--arg",
        "a=x",
        "--arg",
        "b=1",
        "--trace",
    ]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("`--arg a`: `x` is not a number"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("tools/call"), "a call was sent");

    let out = home.run(&["call", "everything", "get-sum", "--args", "{\"a\": 1}"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("b: is required"), "{}", stderr(&out));

    let out = home.run(&["call", "everything", "get-sum", "--args", "{nope"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("--args is not valid JSON"),
        "{}",
        stderr(&out)
    );

    let bad = json!({"customer": {"name": "Ada"}, "items": [{"sku": "A-1", "qty": 2}, {"sku": "a b", "qty": 0}], "delivery": {"kind": "ship", "address": "x"}});
    let out = home.run(&["call", "fx", "schema_nested", "--args", &bad.to_string()]);
    assert_code(&out, 2);
    let err = stderr(&out);
    for field in ["items[1].sku", "items[1].qty", "delivery.address"] {
        assert!(err.contains(field), "{field}: {err}");
    }

    // Values typed for their fields: numbers, booleans, enums, JSON, nested paths, null.
    let out = home.run(&[
        "call",
        "fx",
        "schema_scalars",
        "--arg",
        "title=Quarterly",
        "--arg",
        "count=4",
        "--arg",
        "urgent=yes",
        "--arg",
        "colour=blue",
        "--arg",
        "size=Large",
        "--arg",
        "note=null",
        "--arg",
        "version=2",
        "--json",
    ]);
    assert_code(&out, 0);
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        outcome["structured"]["value"]["received"],
        json!({"title": "Quarterly", "count": 4, "urgent": true, "colour": "blue", "size": "l", "note": null, "version": 2})
    );
    let out = home.run(&[
        "call",
        "fx",
        "schema_nested",
        "--arg",
        "customer.name=Ada",
        "--arg",
        "items.0.sku=A-1",
        "--arg",
        "items.0.qty=2",
        "--arg",
        "delivery={\"kind\":\"pickup\",\"store\":\"north\"}",
        "--arg",
        "tags.team=blue",
        "--json",
    ]);
    assert_code(&out, 0);
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        outcome["structured"]["value"]["received"]["items"],
        json!([{"sku": "A-1", "qty": 2}])
    );
    assert_eq!(
        outcome["structured"]["value"]["received"]["tags"],
        json!({"team": "blue"})
    );

    // The hostile schema: 10,000 enum values, a $ref cycle, deep nesting.
    let out = home.run(&[
        "call",
        "fx",
        "schema_hostile",
        "--arg",
        "choice=value-09999",
        "--arg",
        "loop={\"again\":{}}",
    ]);
    assert_code(&out, 0);
    let out = home.run(&["call", "fx", "schema_hostile", "--arg", "choice=nope"]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("is not one of value-00000"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_tool_not_marked_read_only_needs_a_yes() {
    let home = with_everything();
    let out = home.run(&[
        "call",
        "fx",
        "purge_records",
        "--arg",
        "table=users",
        "--trace",
    ]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("is marked destructive; nothing was sent"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("tools/call"));
    let out = home.run(&[
        "call",
        "fx",
        "purge_records",
        "--arg",
        "table=users",
        "--yes",
    ]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("purged every record of users"));

    // On a terminal: a tool that may change things needs "y"; a destructive one its name.
    let out = in_terminal(&home, "call everything toggle-simulated-logging", "n\n");
    assert!(
        out.contains("It is not marked read-only, so it may change things. [y/N]"),
        "{out}"
    );
    assert!(out.contains("was not called"), "{out}");
    let out = in_terminal(
        &home,
        "call fx purge_records --arg table=t",
        "purge_records\n",
    );
    assert!(out.contains("Type its name to call it"), "{out}");
    assert!(out.contains("purged every record of t"), "{out}");
}

#[test]
fn disabled_tools_cannot_be_called() {
    let home = with_everything();
    let path = home.config_path();
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["servers"]["fx"]["tools"] = json!({"disabled": ["schema_scalars"]});
    std::fs::write(&path, config.to_string()).unwrap();
    let out = home.run(&[
        "call",
        "fx",
        "schema_scalars",
        "--arg",
        "title=abc",
        "--arg",
        "count=1",
        "--yes",
    ]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("`schema_scalars` is disabled"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn is_error_exits_1_and_questions_are_declined_without_a_terminal() {
    let home = with_everything();
    let out = home.run(&[
        "call",
        "everything",
        "trigger-sampling-request",
        "--arg",
        "prompt=hi",
        "--yes",
    ]);
    assert_code(&out, 1);
    assert!(
        stdout(&out).contains("reported an error"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("Plugboard holds no language model"),
        "{}",
        stdout(&out)
    );

    let out = home.run(&["call", "everything", "trigger-elicitation-request", "--yes"]);
    assert_code(&out, 0);
    assert!(stdout(&out).contains("User declined"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("declined, because standard input is not a terminal"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn elicitation_is_asked_on_a_terminal() {
    let home = with_everything();
    // Answer, then every field in order: name, check, firstLine (default), email, homepage,
    // birthdate, integer, number (default), four enums by number, one default.
    let typed = "y\nAda Lovelace\ny\n\nada@example.com\n\n\n7\n\n2\n1,3\n2\n\n\n";
    let out = in_terminal(
        &home,
        "call everything trigger-elicitation-request --yes",
        typed,
    );
    assert!(
        out.contains("The server asks: Please provide inputs"),
        "{out}"
    );
    assert!(out.contains("- Name: Ada Lovelace"), "{out}");
    assert!(out.contains("- Favorite Integer: 7"), "{out}");
}

#[test]
fn read_and_prompt() {
    let home = with_everything();
    let out = home.run(&["read", "everything", "demo://resource/dynamic/text/1"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("Resource 1: This is a plaintext resource"),
        "{}",
        stdout(&out)
    );
    let out = home.run(&[
        "prompt",
        "everything",
        "args-prompt",
        "--arg",
        "city=Paris",
        "--json",
    ]);
    assert_code(&out, 0);
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        outcome["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Paris"),
        "{outcome}"
    );
    let out = home.run(&["prompt", "everything", "nope"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("is not a prompt of `everything`"));
}

#[test]
fn diagnose_writes_a_redacted_bundle() {
    let home = with_everything();
    let out = home.run(&["test", "everything"]);
    assert_code(&out, 0);
    let file = home.path().join("bundle.json");
    let out = home.run(&["diagnose", "everything", "--bundle", file.to_str().unwrap()]);
    assert_code(&out, 0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(SECRET), "the secret is in the bundle");
    let bundle: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(bundle["format"], 1);
    assert_eq!(bundle["plugboard_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(bundle["os"]["family"], std::env::consts::OS);
    assert_eq!(
        bundle["config"]["env"]["EVERYTHING_API_KEY"],
        format!("<plain value, {} characters>", SECRET.len())
    );
    assert_eq!(bundle["last_test"]["ok"], true);
    assert_eq!(
        bundle["session"]["info"]["server_name"],
        "mcp-servers/everything"
    );
    assert!(bundle["trace"].as_array().unwrap().len() >= 6);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // A server that does not start: the bundle says why, with what it printed.
    let out = home.run(&[
        "add",
        "broken",
        "--stdio",
        "--no-test",
        "--",
        "sh",
        "-c",
        "echo boom >&2; exit 3",
    ]);
    assert_code(&out, 0);
    let out = home.run(&["diagnose", "broken", "--bundle", file.to_str().unwrap()]);
    assert_code(&out, 0);
    let bundle: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(bundle["session"]["error_kind"], "exited", "{bundle}");
    assert!(bundle["stderr_tail"].as_str().unwrap().contains("boom"));
}

/// Run `plugboard ARGS` in a pseudo-terminal (util-linux `script`), typing `input`; the
/// terminal's whole output.
fn in_terminal(home: &Home, args: &str, input: &str) -> String {
    let command = format!("{} {args}", crate::support::plugboard_bin().display());
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("PLUGBOARD_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux)");
    let mut stdin = child.stdin.take().unwrap();
    // Typed slowly enough that each prompt reads its own line.
    for line in input.split_inclusive('\n') {
        std::thread::sleep(Duration::from_millis(300));
        let _ = stdin.write_all(line.as_bytes());
    }
    std::thread::sleep(Duration::from_millis(300));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
