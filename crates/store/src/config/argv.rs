//! Secrets and the command line. A secret on a process's argv is readable by every local user
//! (`/proc/PID/cmdline`) and runners log their argv (npm writes it to `~/.npm/_logs`), so an
//! argument that refers to a secret (`${secret:NAME}`) is planned here: a container runtime's
//! `-e NAME=${secret:…}` becomes `-e NAME` with the value in the runtime's environment (where
//! docker and podman read it from); any other such argument stays a secret on the command line,
//! which the launch refuses unless the user allowed it for that server.

use std::path::Path;

use super::model::{SECRET_ARG_OPEN, arg_secret_names};

/// One argument of a launch, as it will be passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchArg<'a> {
    /// Passed as it is (no secret in it).
    Plain(&'a str),
    /// `NAME=VALUE` of a container runtime's `-e`/`--env` whose value holds a secret: passed as
    /// `NAME`, with `NAME=VALUE` (secrets filled in) in the runtime's environment.
    EnvFromSecret { name: &'a str, value: &'a str },
    /// An argument with a secret in it that only the command line can carry.
    WithSecret(&'a str),
}

/// Whether `command` is a container runtime's client (`docker`, `podman`, `nerdctl`): its
/// `-e NAME` takes the value from its own environment, its launch flags decide the container's
/// isolation, and the container is the server's sandbox.
pub fn is_container_runtime(command: &str) -> bool {
    let base = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    matches!(base, "docker" | "podman" | "nerdctl")
}

/// Whether `command args` is one of Plugboard's own launchers (`plugboard run NAME`,
/// `plugboard serve …`): the server it starts runs in that server's own sandbox, which an outer
/// sandbox (granting only what this command line names) would keep from starting.
pub fn is_plugboard_launcher(command: &str, args: &[String]) -> bool {
    let base = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    base == "plugboard" && matches!(args.first().map(String::as_str), Some("run" | "serve"))
}

/// Options of `docker run` / `podman run` that take no value (so the next argument is not
/// theirs). Any other option without `=` is taken to consume the next argument.
const RUNTIME_SWITCHES: &[&str] = &[
    "-i",
    "-t",
    "-it",
    "-ti",
    "-d",
    "--rm",
    "--init",
    "--interactive",
    "--tty",
    "--detach",
    "--privileged",
    "--read-only",
    "--quiet",
    "-q",
];

/// How each argument of `command args` is passed.
pub fn plan_args<'a>(command: &str, args: &'a [String]) -> Vec<LaunchArg<'a>> {
    let has_secret = |a: &str| a.contains(SECRET_ARG_OPEN);
    if !is_container_runtime(command) {
        return args
            .iter()
            .map(|a| {
                if has_secret(a) {
                    LaunchArg::WithSecret(a)
                } else {
                    LaunchArg::Plain(a)
                }
            })
            .collect();
    }
    // The runtime's own options end at the image (the first bare argument after the
    // subcommand); an `-e` after it belongs to the container's command and is left alone.
    let mut planned = Vec::with_capacity(args.len());
    let mut subcommand_seen = false;
    let mut in_options = true;
    let mut env_value_next = false;
    let mut value_next = false;
    for arg in args {
        let a = arg.as_str();
        if env_value_next {
            env_value_next = false;
            planned.push(env_plan(a));
            continue;
        }
        if value_next {
            value_next = false;
            planned.push(plain_or_secret(a));
            continue;
        }
        if in_options && a.starts_with('-') && subcommand_seen {
            if a == "-e" || a == "--env" {
                env_value_next = true;
                planned.push(LaunchArg::Plain(a));
            } else if let Some(rest) = a.strip_prefix("--env=").or(a.strip_prefix("-e=")) {
                // `--env=NAME=VALUE`: split into `--env` and `NAME`.
                match env_plan(rest) {
                    LaunchArg::EnvFromSecret { name, value } if has_secret(rest) => {
                        planned.push(LaunchArg::Plain(&a[..a.find('=').unwrap_or(a.len())]));
                        planned.push(LaunchArg::EnvFromSecret { name, value });
                    }
                    _ => planned.push(plain_or_secret(a)),
                }
            } else {
                if !a.contains('=') && !RUNTIME_SWITCHES.contains(&a) {
                    value_next = true;
                }
                planned.push(plain_or_secret(a));
            }
            continue;
        }
        if !subcommand_seen {
            subcommand_seen = true;
        } else if in_options {
            in_options = false;
        }
        planned.push(plain_or_secret(a));
    }
    planned
}

fn plain_or_secret(arg: &str) -> LaunchArg<'_> {
    if arg.contains(SECRET_ARG_OPEN) {
        LaunchArg::WithSecret(arg)
    } else {
        LaunchArg::Plain(arg)
    }
}

/// The value of `-e`: `NAME=VALUE` with a secret in VALUE moves to the environment.
fn env_plan(arg: &str) -> LaunchArg<'_> {
    match arg.split_once('=') {
        Some((name, value))
            if !name.is_empty()
                && !name.contains(SECRET_ARG_OPEN)
                && value.contains(SECRET_ARG_OPEN) =>
        {
            LaunchArg::EnvFromSecret { name, value }
        }
        _ => plain_or_secret(arg),
    }
}

/// The secrets that `command args` would put on a command line (after the container
/// runtimes' `-e` are moved to the environment), in order of appearance.
pub fn secrets_on_argv<'a>(command: &str, args: &'a [String]) -> Vec<&'a str> {
    let mut names: Vec<&str> = plan_args(command, args)
        .into_iter()
        .filter_map(|a| match a {
            LaunchArg::WithSecret(text) => Some(text),
            _ => None,
        })
        .flat_map(arg_secret_names)
        .collect();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_runtimes_env_secret_moves_to_its_environment() {
        let a = args(&[
            "run",
            "-i",
            "--rm",
            "-e",
            "GITHUB_TOKEN=${secret:token}",
            "--env=OTHER=x${secret:other}",
            "-v",
            "/data:/data",
            "ghcr.io/github/github-mcp-server",
            "-e",
            "AFTER=${secret:after}",
        ]);
        let plan = plan_args("/usr/bin/docker", &a);
        assert_eq!(
            plan[4],
            LaunchArg::EnvFromSecret {
                name: "GITHUB_TOKEN",
                value: "${secret:token}"
            }
        );
        assert_eq!(plan[5], LaunchArg::Plain("--env"));
        assert_eq!(
            plan[6],
            LaunchArg::EnvFromSecret {
                name: "OTHER",
                value: "x${secret:other}"
            }
        );
        // After the image, `-e` is the container's own argument: it stays on the command line.
        assert_eq!(secrets_on_argv("docker", &a), vec!["after"]);
    }

    #[test]
    fn other_commands_keep_their_secrets_on_the_command_line() {
        let a = args(&[
            "-y",
            "pkg",
            "--api-key",
            "${secret:key}",
            "-e",
            "A=${secret:b}",
        ]);
        assert_eq!(secrets_on_argv("npx", &a), vec!["key", "b"]);
        assert!(secrets_on_argv("npx", &args(&["-y", "pkg"])).is_empty());
    }
}
