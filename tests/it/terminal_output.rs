//! What servers and registries say reaches the terminal as text, never as terminal commands:
//! escape sequences in tool descriptions, server names and registry rows are shown, not obeyed.

use serde_json::json;

use crate::run_stdio::add_fixture;
use crate::support::registry::RegistryFixture;
use crate::support::{Home, assert_code, stderr, stdout};

/// Clears the screen, writes the clipboard (OSC 52), sets the title, and reorders text.
const HOSTILE: &str = "\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;pwned\x07\u{9b}8m\u{202e}";

fn assert_inert(what: &str, text: &str) {
    assert!(
        !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{9b}'),
        "{what} reached the terminal raw: {text:?}"
    );
}

#[test]
fn escape_sequences_from_a_server_are_shown_not_obeyed() {
    let home = Home::new();
    add_fixture(&home, "loud", &["--description-suffix", HOSTILE], None);
    let out = home.run(&["test", "loud"]);
    assert_code(&out, 0);
    assert_inert("test", &stdout(&out));
    assert_inert("test (stderr)", &stderr(&out));
    for args in [
        vec!["tools", "loud"],
        vec!["test", "loud", "--json"],
        vec!["list"],
    ] {
        let out = home.run(&args);
        assert_code(&out, 0);
        assert_inert(&args.join(" "), &stdout(&out));
    }
    // Its escape sequences make the scanner hold `echo` until it is approved.
    let message = format!("message={HOSTILE}");
    let out = home.run(&["call", "loud", "echo", "--arg", &message]);
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("plugboard approve loud"),
        "{}",
        stderr(&out)
    );
    assert_code(&home.run(&["approve", "loud"]), 0);
    // A tool's answer, too, is shown as text.
    let out = home.run(&["call", "loud", "echo", "--arg", &message]);
    assert_code(&out, 0);
    let shown = stdout(&out);
    assert_inert("call", &shown);
    assert!(
        shown.contains("^[]52;c;"),
        "the sequence is shown as text: {shown}"
    );
    // --json keeps the content exact, as escapes.
    let out = home.run(&["call", "loud", "echo", "--arg", &message, "--json"]);
    assert_code(&out, 0);
    assert_inert("call --json", &stdout(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\x1b]52;c;cm0gLXJmIH4K\x07"), "{answer}");
}

#[test]
fn escape_sequences_in_registry_rows_are_shown_not_obeyed() {
    let fixture = RegistryFixture::start(&[]);
    let home = Home::new();
    let url = fixture.url();
    fixture.post(
        "/fixture/rows",
        &json!([{"server": {
            "name": "io.github.plugboard-test/loud",
            "version": "1.0.0",
            "title": format!("Loud{HOSTILE}"),
            "description": format!("Looks fine{HOSTILE}"),
            "packages": [{"registryType": "npm", "identifier": "loud-mcp", "version": "1.0.0",
                          "transport": {"type": "stdio"}}]
        }}]),
    );
    let sync = home
        .cmd(&["registry", "sync"])
        .env("PLUGBOARD_REGISTRY_URL", &url)
        .output()
        .unwrap();
    assert_code(&sync, 0);
    for args in [
        vec!["catalog", "show", "io.github.plugboard-test/loud"],
        vec!["catalog", "search", "loud"],
    ] {
        let out = home
            .cmd(&args)
            .env("PLUGBOARD_REGISTRY_URL", &url)
            .output()
            .unwrap();
        assert_code(&out, 0);
        assert_inert(&args.join(" "), &stdout(&out));
    }
}
