//! Launches broken by their dependencies: a package that starts one day and not the next
//! because `uvx pkg==1.0` or `npx pkg@1.0` resolved its unpinned dependencies to newer releases.
//! [`classify`] reads a failed launch's output (the doctor's and the launch benchmark's one
//! classification); [`pinned_relaunch`] proposes the fix: the same launch with its dependencies
//! resolved as of the version's publication date (uv `--exclude-newer`, npm `--before`), and
//! [`apply_pin`] makes that change to an installed server.

use serde::Serialize;

use crate::config::ServerConfig;
use crate::registry::time::{format_rfc3339, parse_rfc3339};

/// What broke a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RotKind {
    /// An `ImportError` / `ModuleNotFoundError` (or Node's missing export): a dependency's
    /// newer release removed or renamed what the package uses.
    MovedOn,
    /// The package needs another Python than the one found (`requires-python`).
    RequiresPython,
    /// npm's `EBADENGINE`: a dependency needs another Node.js.
    Engine,
    /// The pinned date is before the package version itself.
    PinTooEarly,
    /// The package or version does not exist (on this index).
    NotFound,
    /// The package has no command named as the package.
    NoEntryPoint,
    /// A dependency had to be compiled and could not be.
    BuildFailed,
    /// The package index could not be reached (TLS trust, proxy, offline).
    Network,
}

impl RotKind {
    /// The doctor's stable finding code.
    pub fn code(self) -> &'static str {
        match self {
            RotKind::MovedOn => "deps.moved_on",
            RotKind::RequiresPython => "deps.requires_python",
            RotKind::Engine => "deps.engine",
            RotKind::PinTooEarly => "deps.pin_too_early",
            RotKind::NotFound => "deps.not_found",
            RotKind::NoEntryPoint => "deps.no_entry_point",
            RotKind::BuildFailed => "deps.build_failed",
            RotKind::Network => "deps.network",
        }
    }

    /// Whether resolving the dependencies as of the version's date is the fix.
    pub fn pin_helps(self) -> bool {
        matches!(
            self,
            RotKind::MovedOn | RotKind::RequiresPython | RotKind::Engine | RotKind::BuildFailed
        )
    }
}

/// A classified launch failure: what broke it and the line that says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rot {
    pub kind: RotKind,
    pub evidence: String,
}

fn find_line<'a>(text: &'a str, needles: &[&str]) -> Option<&'a str> {
    text.lines().rev().find(|line| {
        let lower = line.to_ascii_lowercase();
        needles.iter().any(|n| lower.contains(n))
    })
}

/// What broke a launch, from its stderr (and the test's error message), if it is one of the
/// known ways dependencies rot.
pub fn classify(stderr: &str, error: &str) -> Option<Rot> {
    let text = format!("{stderr}\n{error}");
    let rules: &[(RotKind, &[&str])] = &[
        (
            RotKind::PinTooEarly,
            &[
                "with a date before",
                "because there is no version of",
                "excluded by `--exclude-newer`",
                "but all versions were excluded",
            ],
        ),
        (
            RotKind::Network,
            &[
                "invalid peer certificate",
                "unknownissuer",
                "unable to get local issuer certificate",
                "self signed certificate",
                "self-signed certificate",
                "certificate verify failed",
                "unable_to_get_issuer_cert",
                "enotfound registry",
                "eai_again",
                "failed to fetch:",
                "network is unreachable",
            ],
        ),
        (
            RotKind::RequiresPython,
            &[
                "requires-python",
                "does not satisfy python",
                "no interpreter found for python",
                "requires a different python",
                "python version",
            ],
        ),
        (RotKind::Engine, &["ebadengine", "unsupported engine"]),
        (
            RotKind::NoEntryPoint,
            &["is not provided by package", "an executable named"],
        ),
        (
            RotKind::MovedOn,
            &[
                "modulenotfounderror",
                "importerror",
                "cannot import name",
                "no module named",
                "does not provide an export named",
                "err_package_path_not_exported",
                "err_module_not_found",
                "has no attribute",
            ],
        ),
        (
            RotKind::BuildFailed,
            &[
                "failed to build",
                "failed building wheel",
                "node-gyp",
                "command 'gcc' failed",
                "error: subprocess-exited-with-error",
            ],
        ),
        (
            RotKind::NotFound,
            &[
                "no solution found",
                "not found in the package registry",
                "npm error 404",
                "e404",
                "etarget",
                "no matching version found",
                "package not found",
                "no versions of",
            ],
        ),
    ];
    for (kind, needles) in rules {
        // The pin rule only applies to pinned launches' messages, which name it.
        if let Some(line) = find_line(&text, needles) {
            if *kind == RotKind::PinTooEarly
                && !text.contains("--exclude-newer")
                && !text.contains("with a date before")
                && !text.to_ascii_lowercase().contains("exclude")
            {
                continue;
            }
            return Some(Rot {
                kind: *kind,
                evidence: line.trim().chars().take(300).collect(),
            });
        }
    }
    None
}

/// The date a launch of a version published at `published_at` resolves its dependencies as of:
/// a day later (room for the package's own upload and clocks).
pub fn pin_date(published_at: &str) -> Option<String> {
    parse_rfc3339(published_at).map(|t| format_rfc3339(t + 86_400))
}

/// The pinned relaunch of a stdio (or locally started) launch: its command line with the
/// dependencies resolved as of `date`. `None` when it is not a `uvx` or `npx` launch, or is
/// pinned already.
pub fn pinned_args(command: &str, args: &[String], date: &str) -> Option<Vec<String>> {
    let program = std::path::Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    match program {
        "uvx" | "uvx.exe" => {
            if args.iter().any(|a| a.starts_with("--exclude-newer")) {
                return None;
            }
            let mut out = vec!["--exclude-newer".to_owned(), date.to_owned()];
            out.extend(args.iter().cloned());
            Some(out)
        }
        "npx" | "npx.cmd" => {
            if args.iter().any(|a| a.starts_with("--before")) {
                return None;
            }
            let mut out: Vec<String> = args.to_vec();
            let at = out
                .iter()
                .position(|a| a == "-y" || a == "--yes")
                .map_or(0, |i| i + 1);
            out.insert(at, format!("--before={date}"));
            Some(out)
        }
        _ => None,
    }
}

/// The pinned relaunch proposed for an installed server: the date its dependencies are
/// resolved as of, and the new command line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PinnedRelaunch {
    pub date: String,
    pub command: String,
    pub args: Vec<String>,
}

/// The relaunch of `server` with its dependencies resolved as of `date`; `None` when it is not
/// a `uvx` or `npx` launch, or is pinned already.
pub fn pinned_relaunch(server: &ServerConfig, date: &str) -> Option<PinnedRelaunch> {
    let (command, args) = match &server.launch {
        Some(launch) => (&launch.command, &launch.args),
        None => (server.command.as_ref()?, &server.args),
    };
    Some(PinnedRelaunch {
        args: pinned_args(command, args, date)?,
        command: command.clone(),
        date: date.to_owned(),
    })
}

/// The dependency date a pinned launch already names (`--exclude-newer DATE`, `--before=DATE`).
pub fn pinned_date(args: &[String]) -> Option<&str> {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        if arg == "--exclude-newer" || arg == "--before" {
            return words.next().map(String::as_str);
        }
        if let Some(date) = arg
            .strip_prefix("--exclude-newer=")
            .or_else(|| arg.strip_prefix("--before="))
        {
            return Some(date);
        }
    }
    None
}

/// Change installed server `name` to its pinned relaunch (one-server mutation).
pub fn apply_pin(
    servers: &crate::manage::Servers,
    name: &str,
    date: Option<&str>,
) -> Result<PinnedRelaunch, crate::manage::ManageError> {
    let server = servers.config().load()?.server(name)?;
    let relaunch = date
        .and_then(|date| pinned_relaunch(&server, date))
        .ok_or_else(|| crate::manage::ManageError::Invalid {
            name: name.to_owned(),
            detail: "it is not a uvx or npx launch with a known publication date, or it is \
                     pinned already"
                .into(),
        })?;
    let args = relaunch.args.clone();
    let tool = if relaunch.command.ends_with("uvx") {
        "uv"
    } else {
        "npm"
    };
    let date = relaunch.date.clone();
    servers.config().update(name, move |server| {
        match &mut server.launch {
            Some(launch) => launch.args = args,
            None => server.args = args,
        }
        if let Some(origin) = server.source.as_mut().and_then(|s| s.registry.as_mut()) {
            origin.pinned = Some(crate::config::DependencyPin {
                tool: tool.into(),
                flag: if tool == "uv" {
                    "--exclude-newer".into()
                } else {
                    "--before".into()
                },
                date,
            });
        }
        Ok(())
    })?;
    Ok(relaunch)
}

/// Take a dependency pin off installed server `name`: its command line without
/// `--exclude-newer DATE` / `--before=DATE`. Returns the new arguments.
pub fn remove_pin(
    servers: &crate::manage::Servers,
    name: &str,
) -> Result<Vec<String>, crate::manage::ManageError> {
    let (after, ()) = servers.config().update(name, |server| {
        let args = match &mut server.launch {
            Some(launch) => &mut launch.args,
            None => &mut server.args,
        };
        let mut out = Vec::with_capacity(args.len());
        let mut words = args.drain(..);
        while let Some(arg) = words.next() {
            if arg == "--exclude-newer" || arg == "--before" {
                words.next();
            } else if !(arg.starts_with("--exclude-newer=") || arg.starts_with("--before=")) {
                out.push(arg);
            }
        }
        drop(words);
        *args = out;
        if let Some(origin) = server.source.as_mut().and_then(|s| s.registry.as_mut()) {
            origin.pinned = None;
        }
        Ok(())
    })?;
    Ok(match after.launch {
        Some(launch) => launch.args,
        None => after.args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_rot_is_recognised() {
        let cases = [
            (
                "ModuleNotFoundError: No module named 'mcp.server.fastmcp'. This is mcp 2.x",
                RotKind::MovedOn,
            ),
            (
                "ImportError: cannot import name 'FastMCP' from 'mcp.server'",
                RotKind::MovedOn,
            ),
            (
                "  × No solution found when resolving tool dependencies:\n  ╰─▶ Because the current Python version (3.11.7) does not satisfy Python>=3.12 and x==1.0 depends on Python>=3.12",
                RotKind::RequiresPython,
            ),
            (
                "npm warn EBADENGINE Unsupported engine {\nnpm warn EBADENGINE   package: 'x@1.0.0',",
                RotKind::Engine,
            ),
            (
                "npm error notarget No matching version found for betterprompt-mcp@0.2.1 with a date before 10/20/2025",
                RotKind::PinTooEarly,
            ),
            (
                "error: Failed to fetch: `https://pypi.org/simple/x/`\n  Caused by: invalid peer certificate: UnknownIssuer",
                RotKind::Network,
            ),
            (
                "An executable named `foo` is not provided by package `foo-mcp`.",
                RotKind::NoEntryPoint,
            ),
            (
                "npm error 404 Not Found - GET https://registry.npmjs.org/nope",
                RotKind::NotFound,
            ),
        ];
        for (text, kind) in cases {
            assert_eq!(classify(text, "").map(|r| r.kind), Some(kind), "{text}");
        }
        assert_eq!(classify("listening on stdio", "the server exited"), None);
    }

    #[test]
    fn relaunches_are_pinned_once() {
        let args: Vec<String> = [
            "--from",
            "mcp-server-r-counter==0.0.3",
            "mcp-server-r-counter",
        ]
        .map(String::from)
        .to_vec();
        let pinned = pinned_args("uvx", &args, "2025-09-27T03:25:25Z").unwrap();
        assert_eq!(pinned[..2], ["--exclude-newer", "2025-09-27T03:25:25Z"]);
        assert_eq!(pinned_args("uvx", &pinned, "2025-09-27T03:25:25Z"), None);
        let npx: Vec<String> = ["-y", "x@1.0.0"].map(String::from).to_vec();
        assert_eq!(
            pinned_args("/usr/bin/npx", &npx, "2025-01-02T00:00:00Z").unwrap(),
            ["-y", "--before=2025-01-02T00:00:00Z", "x@1.0.0"]
        );
        assert_eq!(pinned_args("node", &npx, "d"), None);
        assert_eq!(
            pin_date("2025-09-26T03:25:25.186688Z").as_deref(),
            Some("2025-09-27T03:25:25Z")
        );
    }
}
