//! What a failed launch's own output says, read into its hint for every test (`test`,
//! `install`'s pre-save test, health, the app): the doctor's classification of broken
//! dependencies, a missing package, an unreachable index, and a server that says on stderr
//! that its credential is missing or wrong. Without this, a server that exited got the same
//! generic "exited" hint whatever it printed.

use crate::deps::rot::{RotKind, classify};
use crate::probe::{ErrorKind, TestResult};

/// Phrases a server prints when its credential is missing or refused (lower case).
const CREDENTIAL_COMPLAINTS: &[&str] = &[
    "invalid token",
    "invalid api key",
    "invalid_api_key",
    "api key is invalid",
    "invalid access token",
    "invalid credentials",
    "bad credentials",
    "authentication failed",
    "unauthorized",
    "no aws credentials",
    "unable to locate credentials",
    "missing api key",
    "api key is required",
    "api key not found",
    "token is required",
    "missing token",
    "credentials not found",
];

/// The line of `stderr` where a server complains about its credential, if one does.
fn credential_complaint(stderr: &str) -> Option<&str> {
    stderr.lines().rev().find(|line| {
        let lower = line.to_ascii_lowercase();
        CREDENTIAL_COMPLAINTS.iter().any(|p| lower.contains(p))
    })
}

/// Say what broke the failed launch of installed (or about to be installed) server `name`,
/// when its output shows it: the hint then names the cause and its fix instead of the generic
/// one. Only launches that ended or never answered are read; a result that already names a
/// cause from the protocol (an HTTP status, a refused credential probe) keeps its own. A
/// launch that worked with credentials nobody checked, while its output complains about them,
/// gets a warning saying so.
pub fn explain(name: &str, result: &mut TestResult) {
    if result.ok {
        note_credential_complaint(result);
        return;
    }
    if !matches!(
        result.error_kind,
        Some(ErrorKind::Exited | ErrorKind::Timeout | ErrorKind::Protocol)
    ) {
        return;
    }
    let stderr = result.stderr_tail.as_deref().unwrap_or("");
    let error = result.error.as_deref().unwrap_or("");
    let hint = if let Some(rot) = classify(stderr, error) {
        let evidence = &rot.evidence;
        match rot.kind {
            RotKind::NotFound => format!(
                "the package or this version of it is not on the package index (\"{evidence}\"): \
                 check its name and version, and which index npm or uv use"
            ),
            RotKind::Network => format!(
                "the package index could not be reached (\"{evidence}\"): check the network, a \
                 proxy, or a TLS-inspecting CA (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS)"
            ),
            RotKind::PinTooEarly => format!(
                "its dependency date is before the package itself (\"{evidence}\"): take it off \
                 with `plugboard edit {name} --unpin-dependencies`"
            ),
            RotKind::NoEntryPoint => {
                format!("the package has no command of the name it was started by (\"{evidence}\")")
            }
            RotKind::MovedOn | RotKind::RequiresPython | RotKind::Engine | RotKind::BuildFailed => {
                format!(
                    "its dependencies no longer fit it (\"{evidence}\"): `plugboard doctor {name}` \
                 names the fix (usually resolving them as of the version's publication date)"
                )
            }
        }
    } else if let Some(line) = credential_complaint(stderr) {
        format!(
            "the server says its credential is missing or wrong (\"{}\"): check the value, \
             then update it (`plugboard edit {name}`, or Update credentials in the app)",
            line.trim().chars().take(200).collect::<String>()
        )
    } else {
        return;
    };
    result.hint = Some(hint);
}

/// `hint` without its pointer to the stderr lines "below", for a place that shows none.
pub fn without_stderr_pointer(hint: &str) -> String {
    let mut out = hint.to_owned();
    for phrase in [
        "; its last stderr lines are below",
        ", its last stderr lines are below",
        " its last stderr lines are below",
    ] {
        out = out.replace(phrase, "");
    }
    out
}

/// A working server whose unchecked credential its own output calls wrong: a warning.
fn note_credential_complaint(result: &mut TestResult) {
    if !result.credentials_sent || result.verification == crate::probe::Verification::Verified {
        return;
    }
    let Some(line) = credential_complaint(result.stderr_tail.as_deref().unwrap_or("")) else {
        return;
    };
    let line: String = line.trim().chars().take(200).collect();
    result.warnings.push(format!(
        "its own output says its credential may be missing or wrong (\"{line}\"); nothing \
         checked the credential, so the first real call will tell"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportKind;
    use crate::probe::Failure;

    fn exited(stderr: &str) -> TestResult {
        let mut result = TestResult::failed(
            TransportKind::Stdio,
            Failure::new(
                ErrorKind::Exited,
                "the server process exited with code 1 before the handshake",
                "a missing or wrong credential, a missing dependency or a wrong argument are \
                 the usual causes",
            ),
            vec![],
        );
        result.stderr_tail = Some(stderr.to_owned());
        result
    }

    #[test]
    fn the_cause_the_output_shows_leads_the_hint() {
        let cases = [
            (
                "npm error 404 Not Found - GET https://registry.npmjs.org/nope-mcp",
                "not on the package index",
            ),
            (
                "AttributeError: 'Server' object has no attribute 'list_resources'",
                "plugboard doctor srv",
            ),
            (
                "Error: Invalid token format",
                "credential is missing or wrong",
            ),
            (
                "botocore.exceptions.NoCredentialsError: Unable to locate credentials",
                "credential is missing or wrong",
            ),
        ];
        for (stderr, expected) in cases {
            let mut result = exited(stderr);
            explain("srv", &mut result);
            let hint = result.hint.unwrap();
            assert!(hint.contains(expected), "{stderr}: {hint}");
            assert!(!hint.contains("usual causes"), "{hint}");
        }
        let mut quiet = exited("listening on stdio");
        explain("srv", &mut quiet);
        assert!(quiet.hint.unwrap().contains("usual causes"));
    }

    #[test]
    fn a_working_server_that_complains_about_its_unchecked_credential_is_flagged() {
        let mut started = TestResult::new(TransportKind::Stdio);
        started.ok = true;
        started.stderr_tail = Some("Error: Invalid token format\nlistening on stdio".into());
        let mut without = started.clone();
        explain("srv", &mut without);
        assert!(without.warnings.is_empty(), "it was given no credential");
        started.credentials_sent = true;
        explain("srv", &mut started);
        assert!(
            started.warnings[0].contains("Invalid token format"),
            "{:?}",
            started.warnings
        );
    }
}
