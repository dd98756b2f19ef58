//! Headers from a command the user trusts (`headers_helper` of a remote server): a corporate
//! sign-in tool that mints short-lived tokens prints `{"Authorization": "Bearer …"}` and
//! Plugboard sends what it printed.
//!
//! The command runs as an argument vector, never through a shell, with standard input closed
//! and a small environment: the base variables every stdio server gets (home, user, locale,
//! temporary folder, proxies, TLS trust, `PATH`), what a desktop sign-in needs to open a browser
//! or reach the session bus, and `PLUGBOARD_SERVER_NAME` / `PLUGBOARD_SERVER_URL` (also under
//! Claude Code's names, so helpers written for it work unchanged). Nothing else of Plugboard's
//! environment, so no credential variable, reaches it. It has [`RUN_LIMIT`] to finish and
//! [`OUTPUT_LIMIT`] bytes to print.
//!
//! Its headers are kept in this process's memory for the helper's `ttl` (never in a file),
//! and [`expire`] drops them so the next use runs it again (after a 401 or 403). A connection
//! that stays open (Try it, the gateway) asks its [`HelperSource`] before each request, so a
//! session longer than the ttl sends new headers when the kept ones run out.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use crate::config::HeadersHelper;
use crate::connect::env;
use crate::connect::header_source::HeaderSource;
use crate::secrets::Sensitive;

/// How long the helper may run.
pub const RUN_LIMIT: Duration = Duration::from_secs(15);
/// The most it may print on standard output.
pub const OUTPUT_LIMIT: usize = 64 * 1024;
/// How much of its standard error an error quotes (redacted by the caller).
const ERROR_TAIL: usize = 600;

/// Desktop variables a sign-in helper may need (to open a browser, or reach the keyring on the
/// session bus), passed besides the base ones.
const DESKTOP_VARS: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
];

/// Headers, as the helper printed them.
pub use crate::connect::header_source::Headers;

struct Held {
    got: Instant,
    ttl: Duration,
    headers: Headers,
}

fn held() -> &'static Mutex<HashMap<String, Held>> {
    static HELD: OnceLock<Mutex<HashMap<String, Held>>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// One server's helper, as what its headers are kept under.
fn key(server: &str, url: &str, helper: &HeadersHelper) -> String {
    serde_json::json!([server, url, helper.command, helper.args]).to_string()
}

/// The headers `helper` prints for server `server` at `url`: kept ones while its ttl lasts,
/// else from a new run.
pub fn headers(server: &str, url: &str, helper: &HeadersHelper) -> Result<Headers, String> {
    if let Some(kept) = kept(server, url, helper) {
        return Ok(kept);
    }
    let headers = run(server, url, helper)?;
    held().lock().unwrap_or_else(|p| p.into_inner()).insert(
        key(server, url, helper),
        Held {
            got: Instant::now(),
            ttl: helper.ttl(),
            headers: headers.clone(),
        },
    );
    Ok(headers)
}

/// The kept headers of server `server`'s helper while their ttl lasts.
fn kept(server: &str, url: &str, helper: &HeadersHelper) -> Option<Headers> {
    let held = held().lock().unwrap_or_else(|p| p.into_inner());
    held.get(&key(server, url, helper))
        .filter(|h| h.got.elapsed() < h.ttl)
        .map(|h| h.headers.clone())
}

/// A remote server's helper, as an open connection asks it for the headers of each request.
#[derive(Clone, Debug)]
pub struct HelperSource {
    /// The server's name.
    pub server: String,
    /// Its URL as configured (secrets not filled in), as the helper is told it.
    pub url: String,
    pub helper: HeadersHelper,
}

impl HeaderSource for HelperSource {
    /// The kept headers while their ttl lasts, else those of a new run (on a blocking thread:
    /// a sign-in tool may take seconds).
    fn current(&self) -> BoxFuture<'_, Result<Headers, String>> {
        Box::pin(async move {
            if let Some(kept) = kept(&self.server, &self.url, &self.helper) {
                return Ok(kept);
            }
            let source = self.clone();
            tokio::task::spawn_blocking(move || {
                headers(&source.server, &source.url, &source.helper)
            })
            .await
            .unwrap_or_else(|e| Err(format!("its headers helper could not be run: {e}")))
        })
    }

    fn expire_if_got_before(&self, since: Instant) -> bool {
        expire_if_got_before(&self.server, &self.url, &self.helper, since)
    }
}

/// Forget the kept headers of server `server`'s helper: the next use runs it again.
pub fn expire(server: &str, url: &str, helper: &HeadersHelper) {
    held()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&key(server, url, helper));
}

/// After a refusal: forget the kept headers of server `server`'s helper if they were got before
/// `since` (kept from an earlier use, so a new run may bring new ones). Whether it did.
pub fn expire_if_got_before(
    server: &str,
    url: &str,
    helper: &HeadersHelper,
    since: Instant,
) -> bool {
    let mut held = held().lock().unwrap_or_else(|p| p.into_inner());
    let key = key(server, url, helper);
    if held.get(&key).is_some_and(|h| h.got < since) {
        held.remove(&key);
        true
    } else {
        false
    }
}

/// The environment the helper runs with.
fn helper_env(server: &str, url: &str) -> Vec<(String, OsString)> {
    let mut vars: Vec<(String, OsString)> = env::base_env(None, false)
        .into_iter()
        .filter(|(k, _)| env::BASE_VARS.contains(&k.as_str()) || k == "PATH")
        .collect();
    vars.extend(
        DESKTOP_VARS
            .iter()
            .filter_map(|name| std::env::var_os(name).map(|v| ((*name).to_owned(), v))),
    );
    for (name, value) in [
        ("PLUGBOARD_SERVER_NAME", server),
        ("PLUGBOARD_SERVER_URL", url),
        ("CLAUDE_CODE_MCP_SERVER_NAME", server),
        ("CLAUDE_CODE_MCP_SERVER_URL", url),
    ] {
        vars.push((name.to_owned(), value.into()));
    }
    vars
}

/// Run the helper once and read its headers.
fn run(server: &str, url: &str, helper: &HeadersHelper) -> Result<Headers, String> {
    let shown = &helper.command;
    let found = env::find_command(&helper.command, None, None).map_err(|_| {
        format!("its headers helper `{shown}` was not found (give its absolute path)")
    })?;
    let mut command = Command::new(&found.path);
    command
        .args(&helper.args)
        .env_clear()
        .envs(helper_env(server, url))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("its headers helper `{shown}` could not start: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut bytes = vec![];
        let _ = (&mut stdout)
            .take(OUTPUT_LIMIT as u64 + 1)
            .read_to_end(&mut bytes);
        // Drain the rest so the helper never blocks on a full pipe.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = vec![];
        let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut bytes);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        bytes
    });
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => break None,
        }
    };
    let Some(status) = status else {
        end_group(&mut child);
        return Err(format!(
            "its headers helper `{shown}` did not finish within {} seconds",
            RUN_LIMIT.as_secs()
        ));
    };
    // The helper is done; anything it left running must not hold its pipes open.
    end_group(&mut child);
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let tail = || {
        let text = String::from_utf8_lossy(&err);
        let text = text.trim();
        let start = text
            .char_indices()
            .rev()
            .nth(ERROR_TAIL)
            .map_or(0, |(i, _)| i);
        if text.is_empty() {
            String::new()
        } else {
            // Its headers are unknown here; the pattern rules still hide token shapes.
            format!(
                ": {}",
                crate::redact::Redactor::empty().redact(&text[start..])
            )
        }
    };
    if !status.success() {
        return Err(format!(
            "its headers helper `{shown}` failed ({status}){}",
            tail()
        ));
    }
    if out.len() > OUTPUT_LIMIT {
        return Err(format!(
            "its headers helper `{shown}` printed more than {} KiB",
            OUTPUT_LIMIT / 1024
        ));
    }
    parse(&out).map_err(|detail| format!("its headers helper `{shown}` {detail}"))
}

/// Stop the helper's process group (it and anything it started).
fn end_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pgid) = i32::try_from(child.id()) {
        // SAFETY: a signal to the process group this helper leads.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The headers in the helper's output: one JSON object whose values are strings, every name
/// and value one HTTP allows.
fn parse(out: &[u8]) -> Result<Headers, String> {
    let value: serde_json::Value = serde_json::from_slice(out)
        .map_err(|_| "did not print a JSON object of headers on standard output".to_owned())?;
    let Some(object) = value.as_object() else {
        return Err("did not print a JSON object of headers on standard output".into());
    };
    let mut headers = vec![];
    for (name, value) in object {
        let Some(value) = value.as_str() else {
            return Err(format!(
                "printed a header `{name}` whose value is not a string"
            ));
        };
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || reqwest::header::HeaderValue::from_str(value).is_err()
        {
            return Err(format!(
                "printed a header `{name}` with a name or value HTTP does not allow"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "host"
                | "content-length"
                | "content-type"
                | "transfer-encoding"
                | "connection"
                | "accept"
                | "last-event-id"
        ) || lower.starts_with("mcp-")
        {
            return Err(format!(
                "printed the header `{name}`, which the protocol sets itself"
            ));
        }
        headers.push((name.clone(), Sensitive::new(value.to_owned())));
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_a_json_object_of_allowed_headers() {
        let h = parse(br#"{"Authorization": "Bearer abc", "X-Team": "blue"}"#).unwrap();
        assert_eq!(h.len(), 2);
        assert!(parse(b"Bearer abc").is_err());
        assert!(parse(br#"["a"]"#).is_err());
        assert!(parse(br#"{"X": 1}"#).is_err());
        assert!(parse(br#"{"X": "a\nb"}"#).is_err());
        assert!(parse(br#"{"Host": "evil"}"#).is_err());
        assert!(parse(br#"{"Mcp-Session-Id": "x"}"#).is_err());
    }
}
