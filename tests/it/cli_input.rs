//! The CLI's input and output edges: every command that takes a secret reads it from a piped
//! standard input as its help says (checked in the real keyring), and a closed stdout pipe
//! (`plugboard list | head`) ends a command quietly instead of with a panic.

use serde_json::Value;

use crate::cli_servers::secret_tool_lookup;
use crate::support::fixture::fixture_bin;
use crate::support::{Home, assert_code, require_keyring, stderr, stdout};

fn namespace(home: &Home, name: &str) -> String {
    let config: Value =
        serde_json::from_slice(&std::fs::read(home.config_path()).unwrap()).unwrap();
    config["servers"][name]["secret_namespace"]
        .as_str()
        .unwrap_or(name)
        .to_string()
}

fn stored(home: &Home, name: &str, secret: &str) -> Option<String> {
    secret_tool_lookup(&format!("{}/{secret}", namespace(home, name)))
}

#[test]
fn every_secret_taking_command_reads_a_piped_stdin() {
    require_keyring();
    let home = Home::new();
    let fixture = fixture_bin();
    let fixture = fixture.to_str().unwrap();
    let url = "http://127.0.0.1:9/mcp";

    // add --stdio --secret-env K
    let out = home.run_with_stdin(
        &[
            "add",
            "local",
            "--stdio",
            "--secret-env",
            "API_TOKEN",
            "--no-test",
            "--",
            fixture,
        ],
        "tok-add-env\n",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "local", "API_TOKEN").as_deref(),
        Some("tok-add-env")
    );

    // add --url --secret-header H
    let out = home.run_with_stdin(
        &[
            "add",
            "hdr",
            "--url",
            url,
            "--transport",
            "shttp",
            "--secret-header",
            "X-Api-Key",
            "--no-test",
        ],
        "tok-add-header",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "hdr", "X-Api-Key").as_deref(),
        Some("tok-add-header")
    );

    // add --url --bearer-stdin
    let out = home.run_with_stdin(
        &[
            "add",
            "bearer",
            "--url",
            url,
            "--transport",
            "shttp",
            "--bearer-stdin",
            "--no-test",
        ],
        "tok-add-bearer\n",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "bearer", "BEARER_TOKEN").as_deref(),
        Some("tok-add-bearer")
    );

    // edit --secret-env K (the case of the review: "no value for `K`")
    let out = home.run_with_stdin(
        &["edit", "local", "--secret-env", "API_TOKEN"],
        "tok-edit-env\n",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "local", "API_TOKEN").as_deref(),
        Some("tok-edit-env")
    );

    // edit with two secrets: one line each, in the order of the flags
    let out = home.run_with_stdin(
        &[
            "edit",
            "local",
            "--secret-env",
            "FIRST_KEY",
            "--secret-env",
            "SECOND_KEY",
        ],
        "tok-one\ntok-two\n",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "local", "FIRST_KEY").as_deref(),
        Some("tok-one")
    );
    assert_eq!(
        stored(&home, "local", "SECOND_KEY").as_deref(),
        Some("tok-two")
    );

    // edit --secret-header H
    let out = home.run_with_stdin(
        &["edit", "hdr", "--secret-header", "X-Api-Key"],
        "tok-edit-header",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "hdr", "X-Api-Key").as_deref(),
        Some("tok-edit-header")
    );

    // edit --credential
    let out = home.run_with_stdin(&["edit", "bearer", "--credential"], "tok-edit-credential\n");
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "bearer", "BEARER_TOKEN").as_deref(),
        Some("tok-edit-credential")
    );

    // install --secret-stdin KEY
    let out = home.run_with_stdin(
        &[
            "install",
            "tavily",
            "--secret-stdin",
            "TAVILY_API_KEY",
            "--no-test",
        ],
        "tvly-from-stdin\n",
    );
    assert_code(&out, 0);
    assert_eq!(
        stored(&home, "tavily", "TAVILY_API_KEY").as_deref(),
        Some("tvly-from-stdin")
    );

    // test --url --bearer-stdin: the token is read (the test then fails to connect: exit 1, not
    // the usage error 2 of a missing token).
    let out = home.run_with_stdin(
        &[
            "test",
            "--url",
            url,
            "--transport",
            "shttp",
            "--bearer-stdin",
            "--timeout",
            "5",
        ],
        "tok-test\n",
    );
    assert_code(&out, 1);

    // An empty pipe is a clear usage error that changes nothing.
    let before = std::fs::read(home.config_path()).unwrap();
    let out = home.run_with_stdin(&["edit", "local", "--secret-env", "API_TOKEN"], "");
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("no value for `API_TOKEN`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(home.config_path()).unwrap(), before);
    assert_eq!(
        stored(&home, "local", "API_TOKEN").as_deref(),
        Some("tok-edit-env")
    );

    for name in ["local", "hdr", "bearer", "tavily"] {
        assert_code(&home.run(&["remove", name]), 0);
    }
}

/// Run `plugboard args` with a stdout whose reader is already gone.
fn with_closed_stdout(home: &Home, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    home.cmd(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let home = Home::new();
    let fixture = fixture_bin();
    let out = home.run(&[
        "add",
        "quiet",
        "--stdio",
        "--no-test",
        "--",
        fixture.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["catalog"],
        &["show", "quiet"],
        &["catalog", "show", "github"],
    ] {
        let out = with_closed_stdout(&home, args);
        assert_eq!(stderr(&out), "", "{args:?} wrote to stderr");
        assert_eq!(out.status.code(), Some(141), "{args:?}: {}", stdout(&out));
    }
}
