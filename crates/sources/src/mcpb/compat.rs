//! A bundle's declared `compatibility`, checked before install: the platforms it supports
//! (Node.js names: `darwin`, `win32`, `linux`) and the runtime versions it needs (`node`,
//! `python`, as ranges such as `>=16.0.0`, `>=3.8,<4.0`, `^18 || ^20`), compared with the
//! runtimes found on this machine.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::manifest::Manifest;

/// This platform as Node.js names it (what `compatibility.platforms` lists).
pub fn platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// Why a bundle cannot run here, and what would fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Incompatible {
    pub reason: String,
    /// Empty when nothing can be done on this machine.
    pub fix: String,
}

/// A version as numbers (`v20.1.0` → `[20, 1, 0]`, `Python 3.11.2` → `[3, 11, 2]`).
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let rest = &text[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let numbers: Vec<u64> = rest[..end]
        .split('.')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    (!numbers.is_empty()).then_some(numbers)
}

fn cmp(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    let len = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..len)
        .map(|i| at(a, i).cmp(&at(b, i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// One comparison (`>=3.8`, `^18`, `~1.2`, `18.x`, `*`).
fn satisfies_one(version: &[u64], clause: &str) -> Option<bool> {
    use std::cmp::Ordering::*;
    let clause = clause.trim();
    if clause.is_empty() || clause == "*" || clause.eq_ignore_ascii_case("x") {
        return Some(true);
    }
    let (op, rest) = ["==", ">=", "<=", "!=", "~=", ">", "<", "=", "^", "~"]
        .iter()
        .find_map(|op| clause.strip_prefix(op).map(|r| (*op, r.trim())))
        .unwrap_or(("", clause));
    let wanted_text = rest.trim_start_matches('v');
    let wildcard = wanted_text
        .split('.')
        .position(|p| matches!(p, "x" | "X" | "*"));
    let wanted = parse_version(wanted_text)?;
    let prefix = |n: usize| {
        cmp(
            &version[..n.min(version.len())],
            &wanted[..n.min(wanted.len())],
        ) == Equal
    };
    Some(match op {
        ">=" => cmp(version, &wanted) != Less,
        ">" => cmp(version, &wanted) == Greater,
        "<=" => cmp(version, &wanted) != Greater,
        "<" => cmp(version, &wanted) == Less,
        "!=" => cmp(version, &wanted) != Equal,
        "^" => {
            let lead = wanted
                .iter()
                .position(|n| *n != 0)
                .unwrap_or(wanted.len() - 1);
            cmp(version, &wanted) != Less && prefix(lead + 1)
        }
        "~" | "~=" => {
            let keep = if op == "~=" {
                wanted.len().saturating_sub(1).max(1)
            } else {
                wanted.len().clamp(1, 2)
            };
            cmp(version, &wanted) != Less && prefix(keep)
        }
        _ => match wildcard {
            Some(n) => prefix(n),
            None if op.is_empty() && wanted.len() < 3 => prefix(wanted.len()),
            None => cmp(version, &wanted) == Equal,
        },
    })
}

/// Whether `version` is in `range` (npm or PEP 440 style: `,` or spaces join clauses, `||`
/// separates alternatives). `None` when the range cannot be read.
pub fn satisfies(version: &[u64], range: &str) -> Option<bool> {
    let mut any = false;
    for alternative in range.split("||") {
        let mut all = true;
        for clause in alternative
            .split([',', ' '])
            .filter(|c| !c.trim().is_empty())
        {
            all &= satisfies_one(version, clause)?;
        }
        any |= all;
    }
    Some(any)
}

/// `PROGRAM --version`, with a deadline; `None` when it cannot be run.
fn version_of(program: &str) -> Option<Vec<u64>> {
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait().ok()? {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let output = child.wait_with_output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    parse_version(&text)
}

/// The program that provides `runtime`, as the bundle's launch names it where it does.
fn runtime_program(runtime: &str, command: Option<&str>) -> Vec<String> {
    let named = command
        .map(|c| c.rsplit(['/', '\\']).next().unwrap_or(c).to_owned())
        .filter(|c| c.starts_with(runtime));
    let defaults: &[&str] = match runtime {
        "python" => &["python3", "python"],
        "node" => &["node"],
        other => return vec![other.to_owned()],
    };
    named
        .into_iter()
        .chain(defaults.iter().map(|s| (*s).to_owned()))
        .collect()
}

fn fix_for(runtime: &str) -> String {
    match runtime {
        "node" => {
            "install Node.js (on Debian: apt-get install nodejs npm, or from nodejs.org)".into()
        }
        "python" => "install Python 3 (on Debian: apt-get install python3)".into(),
        other => format!("install {other}"),
    }
}

/// Check `manifest`'s compatibility against this machine, finding runtimes with `version`.
pub fn check_with(
    manifest: &Manifest,
    version: &dyn Fn(&str) -> Option<Vec<u64>>,
) -> Result<(), Incompatible> {
    let here = platform();
    let platforms = &manifest.compatibility.platforms;
    if !platforms.is_empty() && !platforms.iter().any(|p| p == here) {
        return Err(Incompatible {
            reason: format!(
                "the bundle `{}` supports {} only, not this machine ({here})",
                manifest.name,
                platforms.join(", ")
            ),
            fix: String::new(),
        });
    }
    let command = manifest
        .server
        .mcp_config
        .as_ref()
        .map(|c| c.for_platform(here).command);
    let mut needed: Vec<(String, String)> = manifest
        .compatibility
        .runtimes
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // A node or python server needs its runtime even when the manifest names no version.
    for implied in ["node", "python"] {
        if manifest.server.kind == implied && !needed.iter().any(|(k, _)| k == implied) {
            needed.push((implied.to_owned(), "*".to_owned()));
        }
    }
    for (runtime, range) in needed {
        let programs = runtime_program(&runtime, command.as_deref());
        let found = programs
            .iter()
            .find_map(|p| version(p).map(|v| (p.clone(), v)));
        let Some((program, found)) = found else {
            return Err(Incompatible {
                reason: format!(
                    "the bundle `{}` needs {runtime}{}, which is not installed here ({} not found)",
                    manifest.name,
                    if range == "*" {
                        String::new()
                    } else {
                        format!(" {range}")
                    },
                    programs.join(" / ")
                ),
                fix: fix_for(&runtime),
            });
        };
        match satisfies(&found, &range) {
            Some(true) | None => {}
            Some(false) => {
                let shown: Vec<String> = found.iter().map(u64::to_string).collect();
                return Err(Incompatible {
                    reason: format!(
                        "the bundle `{}` needs {runtime} {range}, and this machine has {} ({program})",
                        manifest.name,
                        shown.join(".")
                    ),
                    fix: format!("{} in a version that satisfies {range}", fix_for(&runtime)),
                });
            }
        }
    }
    Ok(())
}

/// Check `manifest`'s compatibility against this machine.
pub fn check(manifest: &Manifest) -> Result<(), Incompatible> {
    check_with(manifest, &version_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranges() {
        let v = |s: &str| parse_version(s).unwrap();
        assert_eq!(v("v20.20.2"), [20, 20, 2]);
        assert_eq!(v("Python 3.11.2\n"), [3, 11, 2]);
        for (version, range, ok) in [
            ("20.1.0", ">=16.0.0", true),
            ("14.0.0", ">=16.0.0", false),
            ("3.11.2", ">=3.8,<4.0", true),
            ("4.0.0", ">=3.8,<4.0", false),
            ("2.5.0", ">=2.0.0 <3.0.0", true),
            ("20.1.0", "^18 || ^20", true),
            ("19.0.0", "^18 || ^20", false),
            ("3.11.0", "3.11", true),
            ("3.12.0", "3.11.x", false),
            ("1.2.9", "~1.2.3", true),
            ("1.3.0", "~1.2.3", false),
            ("3.10.1", "~=3.10", true),
            ("0.2.5", "^0.2.1", true),
            ("0.3.0", "^0.2.1", false),
            ("5.0.0", "*", true),
        ] {
            assert_eq!(
                satisfies(&v(version), range),
                Some(ok),
                "{version} in {range}"
            );
        }
        assert_eq!(satisfies(&v("1.0"), ">=banana"), None);
    }

    fn manifest(compat: serde_json::Value, kind: &str) -> Manifest {
        Manifest::from_value(&json!({
            "manifest_version": "0.3", "name": "b", "version": "1", "description": "", "author": {"name": "a"},
            "server": {"type": kind, "entry_point": "x", "mcp_config": {"command": "python3", "args": []}},
            "compatibility": compat
        }))
        .unwrap()
    }

    #[test]
    fn platforms_and_runtimes_are_checked() {
        let found = |p: &str| match p {
            "python3" => Some(vec![3, 11, 2]),
            _ => None,
        };
        assert!(check_with(&manifest(json!({}), "python"), &found).is_ok());
        let err =
            check_with(&manifest(json!({"platforms": ["plan9"]}), "python"), &found).unwrap_err();
        assert!(err.reason.contains("supports plan9 only"), "{err}");
        let err = check_with(
            &manifest(json!({"runtimes": {"python": ">=3.12"}}), "python"),
            &found,
        )
        .unwrap_err();
        assert!(
            err.reason
                .contains("needs python >=3.12, and this machine has 3.11.2"),
            "{err}"
        );
        let err = check_with(&manifest(json!({}), "node"), &found).unwrap_err();
        assert!(err.reason.contains("needs node"), "{err}");
        assert!(err.fix.contains("Node.js"));
        assert!(check_with(&manifest(json!({}), "binary"), &found).is_ok());
    }
}
