//! What a failed package launch means when its dependencies are to blame (an `ImportError`
//! after a dependency's major release, `requires-python`, `EBADENGINE`, …; see
//! `crate::deps::rot`), and the fix: the same launch with its dependencies resolved as of the
//! version's publication date (`plugboard edit NAME --pin-dependencies`).

use std::path::Path;

use super::Finding;
use crate::config::ServerConfig;
use crate::deps::rot::{Rot, RotKind, classify, pin_date, pinned_date, pinned_relaunch};
use crate::probe::TestResult;
use crate::registry::Listing;
use crate::registry::sources::registries;

/// The package spec a `uvx` or `npx` command line runs (`pkg==1.0`, `pkg@1.0`), as
/// (identifier, version).
pub fn launched_package(command: &str, args: &[String]) -> Option<(String, String)> {
    let program = Path::new(command).file_name()?.to_str()?;
    let mut words = args.iter().peekable();
    while let Some(arg) = words.next() {
        match program {
            "uvx" => {
                if arg == "--from" {
                    let spec = words.next()?;
                    let (id, v) = spec.split_once("==")?;
                    return Some((id.split('[').next()?.to_owned(), v.to_owned()));
                }
                if arg.starts_with('-') {
                    if matches!(
                        arg.as_str(),
                        "--exclude-newer" | "--python" | "-p" | "--with" | "--index-url"
                    ) {
                        words.next();
                    }
                    continue;
                }
                let (id, v) = arg.split_once("==")?;
                return Some((id.split('[').next()?.to_owned(), v.to_owned()));
            }
            "npx" => {
                if arg.starts_with('-') {
                    continue;
                }
                let at = arg.rfind('@').filter(|&i| i > 0)?;
                return Some((arg[..at].to_owned(), arg[at + 1..].to_owned()));
            }
            _ => return None,
        }
    }
    None
}

/// The date `server`'s dependencies are best resolved as of: a day after the version it was
/// installed from was published (its registry origin), the date its curated catalog entry pins
/// today, or a day after the publication the cached registry listings show for the package it
/// launches.
pub fn dependency_date(config_dir: &Path, server: &ServerConfig) -> Option<String> {
    let source = server.source.as_ref();
    if let Some(published) = source
        .and_then(|s| s.registry.as_ref())
        .and_then(|r| r.published_at.as_deref())
    {
        return pin_date(published);
    }
    if let Some(date) = source
        .filter(|s| !s.catalog.is_empty())
        .and_then(|s| catalog_date(&s.catalog, &s.option))
    {
        return Some(date);
    }
    pin_date(&published_in_listing(config_dir, server)?)
}

/// The dependency date the curated catalog's launch of `entry`'s `option` names.
fn catalog_date(entry: &str, option: &str) -> Option<String> {
    let catalog = crate::catalog::Catalog::load_default().ok()?;
    let option = catalog.get(entry)?.option(option)?;
    let crate::catalog::CatalogTransport::Stdio { args, .. } = &option.transport else {
        return None;
    };
    pinned_date(args).map(str::to_owned)
}

/// The registry publication date of the package `server` launches, from the cached listings.
fn published_in_listing(config_dir: &Path, server: &ServerConfig) -> Option<String> {
    let (command, args) = match &server.launch {
        Some(l) => (&l.command, &l.args),
        None => (server.command.as_ref()?, &server.args),
    };
    let (identifier, version) = launched_package(command, args)?;
    let sources = registries(config_dir).ok()?;
    let listing = Listing::load(config_dir, &sources);
    listing
        .servers()
        .filter(|(_, b)| b.packages().any(|p| p.identifier == identifier))
        .find_map(|(at, _)| {
            let row = listing.row(at).ok()?;
            let package = row
                .server
                .packages
                .iter()
                .find(|p| p.identifier == identifier)?;
            (package.version.as_deref().unwrap_or(&row.server.version) == version)
                .then(|| row.meta.official.published_at.clone())
                .flatten()
        })
}

fn describe(rot: &Rot) -> String {
    let what = match rot.kind {
        RotKind::MovedOn => "a dependency's newer release no longer has what the package imports",
        RotKind::RequiresPython => "the package needs another Python version than the one found",
        RotKind::Engine => "a dependency needs another Node.js version (EBADENGINE)",
        RotKind::PinTooEarly => "the dependency pin's date is before this package version itself",
        RotKind::NotFound => "the package or version was not found on the package index",
        RotKind::NoEntryPoint => "the package has no command of that name",
        RotKind::BuildFailed => "a dependency had to be compiled here and could not be",
        RotKind::Network => "the package index could not be reached (TLS trust, proxy or network)",
    };
    format!("{what}: {}", rot.evidence)
}

/// The finding for a launch broken by its dependencies, with the pinned relaunch as its fix
/// where that helps.
pub fn explain(
    name: &str,
    server: &ServerConfig,
    result: &TestResult,
    config_dir: &Path,
) -> Option<Finding> {
    if result.ok {
        return None;
    }
    let rot = classify(
        result.stderr_tail.as_deref().unwrap_or(""),
        result.error.as_deref().unwrap_or(""),
    )?;
    let relaunch = || pinned_relaunch(server, &dependency_date(config_dir, server)?);
    let fix = match rot.kind {
        kind if kind.pin_helps() => match relaunch() {
            Some(r) => format!(
                "run it with its dependencies as of {} (a day after this version was published): \
                 `plugboard edit {name} --pin-dependencies`, which makes it `{} {}`",
                r.date,
                r.command,
                r.args.join(" ")
            ),
            None if matches!(rot.kind, RotKind::RequiresPython) => {
                "install the Python version the package needs (uv can: `uv python install 3.12`), or \
                 pin an older package version"
                    .into()
            }
            None => "Plugboard cannot tell when this version was published, so it cannot pick \
                     a date to resolve its dependencies as of: add the launch again with an exact \
                     version and a date (`uvx --exclude-newer DATE PKG==VERSION`, \
                     `npx -y --before=DATE PKG@VERSION`), or install it from the marketplace, \
                     whose launches are pinned"
                .into(),
        },
        RotKind::PinTooEarly => format!(
            "the pin excludes the package itself: take it off with `plugboard edit {name} --unpin-dependencies`"
        ),
        RotKind::Network => "if your network re-signs TLS, point SSL_CERT_FILE (uv, Python) and \
                             NODE_EXTRA_CA_CERTS (npm) at its CA bundle before starting Plugboard; \
                             Plugboard passes them to the servers it starts"
            .into(),
        RotKind::NoEntryPoint => "the package's command has another name: see the list in its \
                                  error and run it with `uvx --from PACKAGE==VERSION COMMAND`"
            .into(),
        RotKind::NotFound => "check the package name and version, and which index npm / uv use \
                              (npm_config_registry, UV_INDEX_URL)"
            .into(),
        _ => String::new(),
    };
    Some(Finding::error(rot.kind.code(), describe(&rot), fix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launched_packages_are_read_from_command_lines() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            launched_package(
                "uvx",
                &v(&["--exclude-newer", "2025-01-01", "mcp-units==0.3.3"])
            ),
            Some(("mcp-units".into(), "0.3.3".into()))
        );
        assert_eq!(
            launched_package("/x/uvx", &v(&["--from", "a[cli]==1.0", "a-cmd"])),
            Some(("a".into(), "1.0".into()))
        );
        assert_eq!(
            launched_package("npx", &v(&["-y", "@scope/pkg@2.0.1", "--flag"])),
            Some(("@scope/pkg".into(), "2.0.1".into()))
        );
        assert_eq!(launched_package("node", &v(&["x.js"])), None);
    }
}
