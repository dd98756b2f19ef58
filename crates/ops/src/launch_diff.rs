//! What changes in how a server is started or reached when its config is replaced (an update
//! to a new version): the program, its arguments, the package it runs, the host it talks to,
//! the environment and headers, the isolation-relevant flags. Shown next to the tool diff, and
//! the one thing that decides whether the user must be asked before the server's secrets are
//! handed to the new launch: they are when the destination is new (another host, another
//! package, another program) and the server has secrets.

use serde::Serialize;

use crate::config::{ConfigValue, ServerConfig};

/// One difference between the old and the new launch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct LaunchChange {
    /// `command`, `arguments`, `package`, `url host`, `env NAME`, `header NAME`, `working directory`.
    pub what: String,
    /// As it was (`None`: it is new).
    pub from: Option<String>,
    /// As it will be (`None`: it is gone).
    pub to: Option<String>,
}

/// The launch diff of a config replacement.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, specta::Type)]
pub struct LaunchDiff {
    pub changes: Vec<LaunchChange>,
    /// Another program, package or host receives what the server is given.
    pub new_destination: bool,
    /// The server has secrets (they go to the launch: env, headers, URL, arguments).
    pub carries_secrets: bool,
}

impl LaunchDiff {
    /// Whether the user must agree before the secrets go to the new launch.
    pub fn needs_consent(&self) -> bool {
        self.new_destination && self.carries_secrets
    }

    /// The changes as lines for a terminal.
    pub fn lines(&self) -> Vec<String> {
        self.changes
            .iter()
            .map(|c| match (&c.from, &c.to) {
                (Some(from), Some(to)) => format!("  ~ {}: {from} → {to}", c.what),
                (None, Some(to)) => format!("  + {}: {to}", c.what),
                (Some(from), None) => format!("  - {}: {from}", c.what),
                (None, None) => format!("  ~ {}", c.what),
            })
            .collect()
    }
}

/// The launch diff from `old` to `new`.
pub fn launch_diff(name: &str, old: &ServerConfig, new: &ServerConfig) -> LaunchDiff {
    let mut diff = LaunchDiff {
        carries_secrets: !new.secret_keys(name).is_empty(),
        ..LaunchDiff::default()
    };
    let mut change = |what: &str, from: Option<String>, to: Option<String>| {
        if from != to {
            diff.changes.push(LaunchChange {
                what: what.to_owned(),
                from,
                to,
            });
        }
    };
    change("command", old.command.clone(), new.command.clone());
    let joined = |s: &ServerConfig| (!s.args.is_empty()).then(|| s.args.join(" "));
    change("arguments", joined(old), joined(new));
    change("package", package_of(old), package_of(new));
    change("url host", host_of(old), host_of(new));
    change("url", old.url.clone(), new.url.clone());
    change("working directory", old.cwd.clone(), new.cwd.clone());
    for (label, old_values, new_values) in [
        ("env", &old.env, &new.env),
        ("header", &old.headers, &new.headers),
    ] {
        let keys: std::collections::BTreeSet<&String> =
            old_values.keys().chain(new_values.keys()).collect();
        for key in keys {
            change(
                &format!("{label} {key}"),
                old_values.get(key).map(shown),
                new_values.get(key).map(shown),
            );
        }
    }
    let launch_of = |s: &ServerConfig| {
        s.launch.as_ref().map(|l| {
            std::iter::once(l.command.clone())
                .chain(l.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    change("local process", launch_of(old), launch_of(new));
    diff.new_destination = old.command != new.command
        || package_of(old) != package_of(new)
        || host_of(old) != host_of(new)
        || old.launch.as_ref().map(|l| &l.command) != new.launch.as_ref().map(|l| &l.command);
    diff
}

fn shown(value: &ConfigValue) -> String {
    match value.shown() {
        Some(text) => text.to_owned(),
        None => "(secret)".to_owned(),
    }
}

fn host_of(server: &ServerConfig) -> Option<String> {
    let url = url::Url::parse(server.url.as_deref()?).ok()?;
    Some(match url.port() {
        Some(port) => format!("{}:{port}", url.host_str()?),
        None => url.host_str()?.to_owned(),
    })
}

/// The package a runner starts, without its version: the first argument of `npx`/`uvx`/`bunx`
/// /`dnx`/`docker run` … that is not an option (or an option's value), with `@VERSION`,
/// `==VERSION` or `:TAG` taken off.
fn package_of(server: &ServerConfig) -> Option<String> {
    runner_identity(server).map(|(_, package, _)| package)
}

/// A server a package runner starts, as the same server whatever version is pinned and however
/// the runner is told to resolve it: the runner program, the package without its version, and
/// the arguments after the package (what the server itself is given). `None` for a program
/// that is not a package runner.
pub fn runner_identity(server: &ServerConfig) -> Option<(String, String, Vec<String>)> {
    let (command, args) = match &server.launch {
        Some(l) => (l.command.as_str(), &l.args),
        None => (server.command.as_deref()?, &server.args),
    };
    let base = std::path::Path::new(command).file_name()?.to_str()?;
    let valued_options: &[&str] = match base {
        "uvx" | "uv" => &[
            "--exclude-newer",
            "--from",
            "--with",
            "--python",
            "--index-url",
        ],
        "npx" | "bunx" | "pnpm" | "yarn" => &["--before", "-p", "--package"],
        "docker" | "podman" => &["-e", "--env", "-v", "--volume", "--network", "--name", "-p"],
        _ => return None,
    };
    let mut skip_next = false;
    for (at, arg) in args.iter().enumerate() {
        if skip_next {
            skip_next = false;
            continue;
        }
        if arg.starts_with('-') {
            skip_next = valued_options.contains(&arg.as_str());
            continue;
        }
        if matches!(arg.as_str(), "run" | "dlx" | "tool") {
            continue;
        }
        let without_version = if let Some((name, _)) = arg.split_once("==") {
            name
        } else if let Some(at) = arg.rfind('@').filter(|&at| at > 0) {
            &arg[..at]
        } else if base == "docker" || base == "podman" {
            arg.rsplit_once(':')
                .filter(|(_, tag)| !tag.contains('/'))
                .map_or(arg.as_str(), |(image, _)| image)
        } else {
            arg
        };
        return Some((
            base.to_owned(),
            without_version.to_owned(),
            args[at + 1..].to_vec(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;

    fn npx(args: &[&str]) -> ServerConfig {
        ServerConfig::stdio("npx", args.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_new_version_of_the_same_package_is_no_new_destination() {
        let d = launch_diff(
            "s",
            &npx(&["-y", "@scope/server@1.0.0"]),
            &npx(&["-y", "@scope/server@1.1.0"]),
        );
        assert!(!d.new_destination, "{d:?}");
        assert_eq!(d.changes.len(), 1);
    }

    #[test]
    fn another_package_or_host_is() {
        let d = launch_diff(
            "s",
            &npx(&["-y", "@scope/server@1.0.0"]),
            &npx(&["-y", "@other/server@1.1.0"]),
        );
        assert!(d.new_destination);
        let remote =
            |url: &str| ServerConfig::remote(crate::config::TransportKind::Shttp, url.to_owned());
        let d = launch_diff(
            "s",
            &remote("https://mcp.example.com/v1"),
            &remote("https://collector.example.net/v1"),
        );
        assert!(d.new_destination);
        assert!(
            d.lines()
                .iter()
                .any(|l| l.contains("collector.example.net"))
        );
    }
}
