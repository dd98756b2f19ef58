//! What a test result means in the app's words: whether the server takes credentials at all
//! (a working server without any is simply "working"), whether signing in with OAuth would fix
//! it, and a hint that points at the field or the button that fixes it instead of at a CLI
//! command (the probe's hints name `plugboard …` commands; the CLI keeps that wording).

use crate::checks::uses_credentials;
use crate::config::{Auth, ServerConfig};

use super::TestReport;

/// Where the test ran: in the install form (nothing saved yet) or on an installed server.
pub(super) enum Place<'a> {
    /// The install form, with the labels of the fields that hold credentials.
    Form { credential_labels: Vec<&'a str> },
    /// An installed server (its card and detail page have the buttons).
    Installed,
}

/// Whether signing in with OAuth is what the failed `report` calls for: a remote server with
/// no auth or OAuth whose 401 advertised OAuth (or that is set up for OAuth already).
fn calls_for_sign_in(report: &TestReport, server: &ServerConfig) -> bool {
    if report.ok || report.error_kind.as_deref() != Some("unauthorized") {
        return false;
    }
    if !server.transport.is_remote() {
        return false;
    }
    let hint = report.hint.as_deref().unwrap_or("");
    match server.auth {
        Auth::Oauth2(_) => true,
        Auth::None => hint.contains("advertises OAuth") || hint.contains("plugboard auth "),
        _ => false,
    }
}

/// Fill in the app's view of `report` (a test of `server` at `place`).
pub(super) fn for_app(report: &mut TestReport, server: &ServerConfig, place: &Place<'_>) {
    report.uses_credentials = uses_credentials(server);
    report.sign_in = matches!(place, Place::Installed) && calls_for_sign_in(report, server);
    report.oauth_offered = matches!(place, Place::Form { .. })
        && !matches!(server.auth, Auth::Oauth2(_))
        && calls_for_sign_in(report, server);
    if let Some(hint) = report.hint.take() {
        let mut hint = app_hint(report, server, place, &hint);
        if report.stderr_tail.is_none() {
            // The probe's hint points below at the server's stderr; there is none to show.
            hint = crate::launch_failure::without_stderr_pointer(&hint);
        }
        report.hint = Some(hint);
    }
}

fn labels(place: &Place<'_>) -> Option<String> {
    match place {
        Place::Form { credential_labels } if !credential_labels.is_empty() => {
            let quoted: Vec<String> = credential_labels.iter().map(|l| format!("“{l}”")).collect();
            Some(match quoted.as_slice() {
                [one] => one.clone(),
                [init @ .., last] => format!("{} and {last}", init.join(", ")),
                [] => unreachable!(),
            })
        }
        _ => None,
    }
}

fn app_hint(report: &TestReport, server: &ServerConfig, place: &Place<'_>, hint: &str) -> String {
    let kind = report.error_kind.as_deref().unwrap_or("");
    let form = matches!(place, Place::Form { .. });
    match kind {
        "credentials" => {
            return match labels(place) {
                Some(fields) => format!("Check {fields} above, then test again."),
                None if form => "Check the credentials above, then test again.".into(),
                None => "Enter the right credentials with Update credentials (the key button), \
                         then test again."
                    .into(),
            };
        }
        "unauthorized" => {
            if report.sign_in {
                return "Sign in with OAuth: the Sign in button opens the sign-in page and \
                        switches this server to OAuth."
                    .into();
            }
            if form && calls_for_sign_in(report, server) {
                return "This server signs in with OAuth: save it, then use Sign in on its card."
                    .into();
            }
            if hint.contains("insufficient_scope") {
                return "The token lacks a scope this server needs: sign in again (Sign in) to \
                        grant it."
                    .into();
            }
            if uses_credentials(server) || hint.contains("--credential") {
                return match labels(place) {
                    Some(fields) => format!(
                        "The server refused the request: check {fields} above, then test again."
                    ),
                    None if form => {
                        "The server refused the request: check the credentials above.".into()
                    }
                    None => "The server refused the request: enter the right credentials with \
                             Update credentials, or change the auth in Edit."
                        .into(),
                };
            }
        }
        _ => {}
    }
    rewrite_commands(hint, form)
}

/// The hint with each CLI command replaced by what does the same in the app.
fn rewrite_commands(hint: &str, form: bool) -> String {
    let edit = if form {
        "change it above"
    } else {
        "change it with Edit"
    };
    let mut out = hint.to_string();
    let replacements: [(&str, String); 4] = [
        (
            "`--transport auto`",
            format!("the Auto-detect transport ({edit})"),
        ),
        ("`--transport sse`", format!("the SSE transport ({edit})")),
        (
            "`--transport shttp`",
            format!("the Streamable HTTP transport ({edit})"),
        ),
        ("`plugboard secrets status`", "the Doctor".to_string()),
    ];
    for (from, to) in &replacements {
        out = out.replace(from, to);
    }
    // `plugboard test NAME --timeout 300`, `plugboard edit NAME …`, `plugboard auth NAME`.
    while let Some(start) = out.find("`plugboard ") {
        let Some(len) = out[start + 1..].find('`') else {
            break;
        };
        let command = &out[start + 1..start + 1 + len];
        let words: Vec<&str> = command.split_whitespace().collect();
        let replacement = match words.get(1).copied() {
            Some("test") if command.contains("--timeout") => {
                if form {
                    "a longer timeout (test again: the package is cached now)"
                } else {
                    "a longer Timeout in Edit"
                }
            }
            Some("auth") => "Sign in",
            Some("edit")
                if command.contains("--secret-env") || command.contains("--credential") =>
            {
                if form {
                    "the field above"
                } else {
                    "Update credentials"
                }
            }
            Some("edit") | Some("add") => {
                if form {
                    "the form above"
                } else {
                    "Edit"
                }
            }
            Some("diff") | Some("approve") => "Review changes",
            Some("doctor") => "the Doctor",
            _ => "the app",
        };
        out.replace_range(start..start + len + 2, replacement);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigValue, SecretRef, TransportKind};

    fn report(kind: &str, hint: &str) -> TestReport {
        let mut r =
            TestReport::from_result(&crate::probe::TestResult::new(TransportKind::Shttp), 0);
        r.error_kind = Some(kind.into());
        r.hint = Some(hint.into());
        r
    }

    #[test]
    fn no_cli_command_reaches_the_app() {
        let server = ServerConfig::remote(TransportKind::Shttp, "https://example.com/mcp");
        for hint in [
            "nothing answers MCP at this URL (HTTP 404): check the path, or use `--transport auto`",
            "try again with a longer timeout (`plugboard test x --timeout 300`)",
            "fix the server with `plugboard edit x` or reinstall it",
            "set it: `plugboard edit x --secret-env K` (the value is read from stdin)",
            "review with `plugboard diff x`, then `plugboard approve x`",
        ] {
            for place in [
                Place::Installed,
                Place::Form {
                    credential_labels: vec![],
                },
            ] {
                let mut r = report("http", hint);
                for_app(&mut r, &server, &place);
                let out = r.hint.unwrap();
                assert!(!out.contains("plugboard"), "{out}");
                assert!(!out.contains("--"), "{out}");
            }
        }
    }

    #[test]
    fn no_pointer_to_a_stderr_that_is_not_there() {
        let server = ServerConfig::stdio("x", vec![]);
        let hint = "the process exited with code 1 before the handshake; its last stderr lines are below (a wrong argument is the usual cause)";
        let mut r = report("exited", hint);
        for_app(&mut r, &server, &Place::Installed);
        assert_eq!(
            r.hint.as_deref(),
            Some(
                "the process exited with code 1 before the handshake (a wrong argument is the usual cause)"
            )
        );
        let mut r = report("exited", hint);
        r.stderr_tail = Some("boom".into());
        for_app(&mut r, &server, &Place::Installed);
        assert!(r.hint.unwrap().contains("below"));
    }

    #[test]
    fn credentials_point_at_the_field_in_the_form_and_the_button_when_installed() {
        let mut server = ServerConfig::stdio("npx", vec![]);
        server
            .env
            .insert("TOKEN".into(), ConfigValue::Secret(SecretRef::new("TOKEN")));
        let hint = "check the credentials and update them with `plugboard edit x --credential`";
        let mut r = report("credentials", hint);
        for_app(
            &mut r,
            &server,
            &Place::Form {
                credential_labels: vec!["Bot token"],
            },
        );
        assert_eq!(
            r.hint.as_deref(),
            Some("Check “Bot token” above, then test again.")
        );
        assert!(r.uses_credentials);
        let mut r = report("credentials", hint);
        for_app(&mut r, &server, &Place::Installed);
        assert!(r.hint.unwrap().contains("Update credentials"));
    }

    #[test]
    fn a_401_that_advertises_oauth_offers_sign_in_on_installed_servers() {
        let server = ServerConfig::remote(TransportKind::Shttp, "https://example.com/mcp");
        let hint =
            "the server requires authorization (401); it advertises OAuth: run `plugboard auth x`";
        let mut r = report("unauthorized", hint);
        for_app(&mut r, &server, &Place::Installed);
        assert!(r.sign_in);
        assert!(r.hint.unwrap().contains("Sign in"));
        assert!(!r.uses_credentials);
        // A bearer server that is refused is not offered OAuth.
        let mut bearer = server.clone();
        bearer.auth = Auth::Bearer {
            token: SecretRef::new("T"),
        };
        let mut r = report("unauthorized", "the server rejected the credentials (401)");
        for_app(&mut r, &bearer, &Place::Installed);
        assert!(!r.sign_in);
    }
}
