//! The dependencies of package launches: whether npm lets a launch pin them to a date (its
//! `--before` resolves the pinned version only when npm's registry dates that version before
//! the date, which mirrors do not always do), and recognising launches broken by dependencies
//! that moved on (see [`rot`]).

pub mod rot;

use std::time::{Duration, Instant};

use crate::connect::env::find_command;
use crate::registry::time::parse_rfc3339;

const NPM_VIEW_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether `npm --before DATE` can resolve `identifier@version`: asks npm (with the user's npm
/// configuration) when the version was published. `Err` says why not.
pub fn npm_before_allowed(identifier: &str, version: &str, date: &str) -> Result<(), String> {
    let npm = find_command("npm", None, None)
        .map_err(|_| "npm is not installed, so npm's dates cannot be checked".to_owned())?;
    let mut child = std::process::Command::new(&npm.path)
        .args(["view", identifier, "time", "--json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("`npm view` could not start: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ =
            std::io::Read::read_to_end(&mut std::io::Read::take(&mut stdout, 8 << 20), &mut out);
        out
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < NPM_VIEW_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = reader.join().unwrap_or_default();
    match status {
        Some(s) if s.success() => {}
        Some(_) => return Err(format!("`npm view {identifier} time` failed")),
        None => {
            return Err(format!(
                "`npm view {identifier} time` took longer than {} s",
                NPM_VIEW_TIMEOUT.as_secs()
            ));
        }
    }
    let times: serde_json::Value = serde_json::from_slice(&out)
        .map_err(|e| format!("`npm view` printed something else than JSON: {e}"))?;
    let published = times
        .get(version)
        .and_then(|t| t.as_str())
        .ok_or_else(|| format!("npm's registry has no date for {identifier}@{version}"))?;
    match (parse_rfc3339(published), parse_rfc3339(date)) {
        (Some(p), Some(d)) if p <= d => Ok(()),
        (Some(_), Some(_)) => Err(format!(
            "npm's registry dates {identifier}@{version} {published}, after {date} (a mirror's \
             date?), so `--before` would refuse it"
        )),
        _ => Err(format!(
            "npm's date for {identifier}@{version} ({published}) is not readable"
        )),
    }
}
