//! From a server's sandbox settings and its launch to the grants: the system's read-only
//! folders, the runtime the command lives in, the package caches its runner fills, the
//! folders its arguments, working folder and environment name (read and write: that is what
//! a form's folder field grants), a private temporary folder, then the user's own grants, and
//! last the user's denials. Nothing else of the home is granted.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::settings::{Network, Settings};

/// Why a path is granted (shown to the user and used to group the summary).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// System libraries, certificates and configuration.
    System,
    /// Where the command and its interpreter are installed.
    Runtime,
    /// A package runner's cache (npx, uvx, …), which it fills at launch.
    Cache,
    /// A folder or file named in the server's arguments.
    Argument,
    /// A folder or file named in the server's environment.
    Environment,
    /// The server's working folder.
    WorkingDir,
    /// The server's own temporary folder.
    Temp,
    /// Granted by the user.
    User,
}

/// One granted path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub reason: Reason,
}

/// Everything a sandboxed launch may touch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Read (and execute) only.
    pub read: Vec<Grant>,
    /// Read, write, create and remove.
    pub write: Vec<Grant>,
    pub network: Network,
    /// The private temporary folder (also in `write`); the launch's `TMPDIR`.
    pub tmp: PathBuf,
    /// Paths the user granted that do not exist (so nothing was granted for them).
    pub missing: Vec<PathBuf>,
    /// The TCP port a server that Plugboard starts as a local HTTP server listens on.
    pub listen: Option<u16>,
}

/// What a launch brings to its plan.
pub struct Inputs<'a> {
    pub home: Option<&'a Path>,
    /// The command as configured (`npx`).
    pub command: &'a str,
    /// Where it was found.
    pub program: &'a Path,
    /// The child's `PATH`.
    pub search_path: Option<&'a OsStr>,
    pub args: &'a [String],
    pub cwd: Option<&'a Path>,
    /// The values of the child's configured environment.
    pub env_values: Vec<&'a str>,
    /// The private temporary folder ([`private_tmp`]).
    pub tmp: PathBuf,
}

/// Settings that cannot be enforced as given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// A denied path lies inside a granted folder: Landlock grants whole folders and cannot
    /// take a part of one back.
    DenyInsideGrant { deny: PathBuf, grant: PathBuf },
    /// A granted or denied path is not absolute (nor `~/…`).
    NotAbsolute(String),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::DenyInsideGrant { deny, grant } => write!(
                f,
                "{} is inside the granted {}, and the kernel cannot hide part of a granted folder; \
                 grant narrower folders instead of {}",
                deny.display(),
                grant.display(),
                grant.display()
            ),
            PlanError::NotAbsolute(path) => {
                write!(
                    f,
                    "`{path}` is not an absolute path (or one starting with ~/)"
                )
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// Read-only folders every launch gets: the system's programs, libraries, certificates and
/// configuration, and the kernel's views of processes and devices.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/snap",
    "/proc",
    "/sys",
    "/run/systemd/resolve",
];

/// Devices and shared memory every launch may read and write.
const SYSTEM_WRITE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/shm",
];

/// The caches (read and write) and configuration (read) a runner uses, under the home.
fn runner_paths(command: &str) -> (&'static [&'static str], &'static [&'static str]) {
    let base = command.rsplit('/').next().unwrap_or(command);
    match base {
        "npx" | "npm" | "node" | "pnpm" | "pnpx" | "yarn" => (
            &[".npm", ".cache/node", ".cache/pnpm", ".local/share/pnpm"],
            &[".npmrc", ".config/npm"],
        ),
        "bun" | "bunx" => (&[".bun", ".npm"], &[".npmrc"]),
        "uvx" | "uv" => (&[".cache/uv", ".local/share/uv"], &[".config/uv"]),
        "pipx" => (&[".local/share/pipx", ".cache/pipx"], &[]),
        "deno" => (&[".cache/deno"], &[]),
        _ => (&[], &[]),
    }
}

/// Expand `~/` and require an absolute path.
pub(crate) fn expand(path: &str, home: Option<&Path>) -> Option<PathBuf> {
    let expanded = match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if path == "~" => home?.to_path_buf(),
        _ => PathBuf::from(path),
    };
    expanded.is_absolute().then_some(expanded)
}

/// Whether `path` is the home folder or one of its ancestors (granting it would grant all of
/// the home).
fn covers_home(path: &Path, home: Option<&Path>) -> bool {
    home.is_some_and(|home| home.starts_with(path))
}

/// The absolute (or `~/`) paths among a launch's values: arguments, working folder and
/// environment values, whole or after an `=` (`--dir=/x`, `NAME=/x`), with a leading `@`
/// (`@/x`, a file to read a value from) taken off.
fn named_paths<'a>(
    values: impl Iterator<Item = &'a str>,
    home: Option<&Path>,
) -> impl Iterator<Item = PathBuf> {
    values
        .flat_map(|value| {
            let after_equals = value.split_once('=').map(|(_, rest)| rest);
            [Some(value), after_equals]
        })
        .flatten()
        .map(|value| value.strip_prefix('@').unwrap_or(value))
        .filter_map(|value| {
            (value.starts_with('/') || value.starts_with("~/"))
                .then(|| expand(value, home))
                .flatten()
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The extensions of scripts an interpreter runs.
const SCRIPTS: &[&str] = &[
    "js", "mjs", "cjs", "ts", "mts", "py", "pyc", "rb", "pl", "php", "sh", "jar", "lua",
];

/// Files that mark the root of a project a script belongs to.
const PROJECT_MARKERS: &[&str] = &[
    "package.json",
    "pyproject.toml",
    "setup.py",
    "Cargo.toml",
    "go.mod",
    ".git",
];

/// The folder a script named on the command line needs to read to run: the folder holding
/// its outermost `node_modules` (where its dependencies are), else its nearest project root,
/// else its own folder; never the home or above.
fn project_root(file: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let ancestors: Vec<&Path> = file.ancestors().skip(1).collect();
    let root = ancestors
        .iter()
        .rev()
        .find(|dir| dir.file_name() == Some(OsStr::new("node_modules")))
        .and_then(|modules| modules.parent())
        .or_else(|| {
            ancestors
                .iter()
                .take_while(|dir| !covers_home(dir, home))
                .find(|dir| PROJECT_MARKERS.iter().any(|m| dir.join(m).exists()))
                .copied()
        })
        .or_else(|| file.parent())?;
    (!covers_home(root, home) && root != Path::new("/")).then(|| root.to_path_buf())
}

/// What naming `path` grants: a folder, read and write; a file, read and write, with read of
/// the project it belongs to; a path not made yet, its folder (read and write) when that is
/// not the home or above.
fn named_grants(path: PathBuf, home: Option<&Path>) -> Vec<(PathBuf, bool)> {
    if path.is_dir() {
        return vec![(path, true)];
    }
    if path.exists() {
        let mut grants = vec![];
        if let Some(root) = project_root(&path, home) {
            grants.push((root, false));
        }
        // A script is code to run, not data to change.
        let script = path
            .extension()
            .and_then(OsStr::to_str)
            .is_some_and(|ext| SCRIPTS.contains(&ext));
        grants.push((path, !script));
        return grants;
    }
    match path.parent() {
        Some(dir) if dir.is_dir() && !covers_home(dir, home) && dir != Path::new("/") => {
            vec![(dir.to_path_buf(), true)]
        }
        _ => vec![],
    }
}

/// Whether `path` is already readable through a system grant.
fn under_system(path: &Path) -> bool {
    SYSTEM_READ.iter().any(|sys| path.starts_with(sys))
}

/// The plan for one launch.
pub fn plan(settings: &Settings, inputs: &Inputs) -> Result<Plan, PlanError> {
    let home = inputs.home;
    let mut read: Vec<Grant> = vec![];
    let mut write: Vec<Grant> = vec![];
    let mut missing = vec![];
    let existing = |p: &str| Path::new(p).exists().then(|| PathBuf::from(p));

    for path in SYSTEM_READ.iter().filter_map(|p| existing(p)) {
        read.push(Grant {
            path,
            reason: Reason::System,
        });
    }
    for path in SYSTEM_WRITE.iter().filter_map(|p| existing(p)) {
        write.push(Grant {
            path,
            reason: Reason::System,
        });
    }

    // The runtime: the program's installation prefix (`…/bin/npx` → `…`), and each folder on
    // the child's PATH (where the runner finds its interpreter).
    let program = inputs
        .program
        .canonicalize()
        .unwrap_or_else(|_| inputs.program.to_path_buf());
    let mut runtime = vec![inputs.program.to_path_buf(), program.clone()];
    for exe in [inputs.program, program.as_path()] {
        if let Some(dir) = exe.parent() {
            let prefix = if dir.file_name() == Some(OsStr::new("bin")) {
                dir.parent().unwrap_or(dir)
            } else {
                dir
            };
            runtime.push(prefix.to_path_buf());
        }
    }
    if let Some(search) = inputs.search_path {
        for dir in std::env::split_paths(search).filter(|p| p.is_absolute()) {
            // A version manager's shims (pyenv, rbenv, asdf, mise) run the manager, which lives
            // one folder up, with the versions it installed.
            if dir.file_name() == Some(OsStr::new("shims"))
                && let Some(manager) = dir.parent()
            {
                runtime.push(manager.to_path_buf());
            }
            runtime.push(dir);
        }
    }
    for path in runtime {
        if path.exists() && !covers_home(&path, home) && !under_system(&path) {
            read.push(Grant {
                path,
                reason: Reason::Runtime,
            });
        }
    }

    if let Some(home) = home {
        let (caches, configs) = runner_paths(inputs.command);
        for cache in caches {
            let path = home.join(cache);
            // A cache that does not exist yet is made now, so that the runner can fill it.
            if path.exists() || std::fs::create_dir_all(&path).is_ok() {
                write.push(Grant {
                    path,
                    reason: Reason::Cache,
                });
            }
        }
        for config in configs {
            let path = home.join(config);
            if path.exists() {
                read.push(Grant {
                    path,
                    reason: Reason::Cache,
                });
            }
        }
    }

    let named = named_paths(inputs.args.iter().map(String::as_str), home)
        .map(|p| (p, Reason::Argument))
        .chain(
            named_paths(inputs.env_values.iter().copied(), home).map(|p| (p, Reason::Environment)),
        )
        .chain(
            inputs
                .cwd
                .map(|cwd| (cwd.to_path_buf(), Reason::WorkingDir)),
        );
    // A named path inside one the user (or the server's source) grants for reading only is
    // read only, whatever its launch implies.
    let read_only: Vec<PathBuf> = settings
        .allow_read
        .iter()
        .filter_map(|raw| expand(raw, home))
        .collect();
    for (named, reason) in named {
        for (path, writable) in named_grants(named, home) {
            if under_system(&path) {
                continue;
            }
            let writable = writable && !read_only.iter().any(|r| path.starts_with(r));
            let grant = Grant { path, reason };
            if writable {
                write.push(grant);
            } else {
                read.push(grant);
            }
        }
    }

    write.push(Grant {
        path: inputs.tmp.clone(),
        reason: Reason::Temp,
    });

    for (list, target) in [
        (&settings.allow_read, &mut read),
        (&settings.allow_write, &mut write),
    ] {
        for raw in list {
            let path = expand(raw, home).ok_or_else(|| PlanError::NotAbsolute(raw.clone()))?;
            if path.exists() {
                target.push(Grant {
                    path,
                    reason: Reason::User,
                });
            } else {
                missing.push(path);
            }
        }
    }

    for raw in &settings.deny {
        let deny = expand(raw, home).ok_or_else(|| PlanError::NotAbsolute(raw.clone()))?;
        read.retain(|g| !g.path.starts_with(&deny));
        write.retain(|g| !g.path.starts_with(&deny));
        if let Some(grant) = read
            .iter()
            .chain(&write)
            .find(|g| deny.starts_with(&g.path))
        {
            return Err(PlanError::DenyInsideGrant {
                deny,
                grant: grant.path.clone(),
            });
        }
    }

    for list in [&mut read, &mut write] {
        let mut seen = std::collections::HashSet::new();
        list.retain(|g| seen.insert(g.path.clone()));
    }
    Ok(Plan {
        read,
        write,
        network: settings.network.clone(),
        tmp: inputs.tmp.clone(),
        missing,
        listen: None,
    })
}

/// The private temporary folder of the server whose secrets live under `key`: under the
/// system's temporary folder, in a folder only this user may enter (refused if someone else
/// made it first, or if it is a symbolic link).
#[cfg(unix)]
pub fn private_tmp(key: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let safe: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let mut dir = std::env::temp_dir().join(format!("plugboard-sandbox-{uid}"));
    for step in [None, Some(safe)] {
        if let Some(step) = step {
            dir = dir.join(step);
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let meta = std::fs::symlink_metadata(&dir)?;
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a private folder of this user (made by someone else, or a link)",
                    dir.display()
                ),
            ));
        }
    }
    Ok(dir)
}

#[cfg(not(unix))]
pub fn private_tmp(key: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join("plugboard-sandbox").join(key);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(home: &'a Path, args: &'a [String], tmp: &Path) -> Inputs<'a> {
        Inputs {
            home: Some(home),
            command: "npx",
            program: Path::new("/usr/bin/env"),
            search_path: None,
            args,
            cwd: None,
            env_values: vec![],
            tmp: tmp.to_path_buf(),
        }
    }

    #[test]
    fn a_launch_gets_its_named_folders_and_caches_but_not_the_home() {
        let home = tempfile::tempdir().unwrap();
        let notes = home.path().join("notes");
        std::fs::create_dir(&notes).unwrap();
        let tmp = home.path().join("tmp");
        let args = vec![
            "-y".to_owned(),
            "@modelcontextprotocol/server-filesystem".to_owned(),
            notes.display().to_string(),
            "~/absent".to_owned(),
        ];
        let plan = plan(&Settings::on(), &inputs(home.path(), &args, &tmp)).unwrap();
        let writes: Vec<_> = plan.write.iter().map(|g| (&g.path, g.reason)).collect();
        assert!(writes.contains(&(&notes, Reason::Argument)), "{writes:?}");
        assert!(writes.contains(&(&home.path().join(".npm"), Reason::Cache)));
        assert!(writes.contains(&(&tmp, Reason::Temp)));
        assert!(
            !plan
                .read
                .iter()
                .chain(&plan.write)
                .any(|g| g.path == home.path()),
            "the home itself is never granted"
        );
    }

    #[test]
    fn a_named_folder_granted_for_reading_only_is_read_only() {
        let home = tempfile::tempdir().unwrap();
        let docs = home.path().join("docs");
        std::fs::create_dir_all(docs.join("drafts")).unwrap();
        let tmp = home.path().join("tmp");
        let args = vec![docs.join("drafts").display().to_string()];
        let settings = Settings {
            allow_read: vec!["~/docs".into()],
            ..Settings::on()
        };
        let plan = plan(&settings, &inputs(home.path(), &args, &tmp)).unwrap();
        let drafts = docs.join("drafts");
        assert!(!plan.write.iter().any(|g| g.path.starts_with(&docs)));
        assert!(plan.read.iter().any(|g| g.path == drafts));
        assert!(plan.read.iter().any(|g| g.path == docs));
    }

    #[test]
    fn a_denial_removes_grants_under_it_and_refuses_one_it_cannot_carve() {
        let home = tempfile::tempdir().unwrap();
        let notes = home.path().join("notes");
        std::fs::create_dir_all(notes.join("private")).unwrap();
        let tmp = home.path().join("tmp");
        let args = vec![notes.display().to_string()];
        let settings = Settings {
            deny: vec!["~/notes".into()],
            ..Settings::on()
        };
        let plan = plan(&settings, &inputs(home.path(), &args, &tmp)).unwrap();
        assert!(!plan.write.iter().any(|g| g.path == notes));

        let inside = Settings {
            deny: vec!["~/notes/private".into()],
            ..Settings::on()
        };
        let refused = super::plan(&inside, &inputs(home.path(), &args, &tmp)).unwrap_err();
        assert!(
            matches!(refused, PlanError::DenyInsideGrant { .. }),
            "{refused}"
        );

        let relative = Settings {
            allow_read: vec!["notes".into()],
            ..Settings::on()
        };
        assert_eq!(
            super::plan(&relative, &inputs(home.path(), &args, &tmp)).unwrap_err(),
            PlanError::NotAbsolute("notes".into())
        );
    }

    #[test]
    fn the_private_tmp_is_refused_when_someone_else_prepared_it() {
        let dir = private_tmp("server-one").unwrap();
        assert!(dir.is_dir());
        let link = dir.parent().unwrap().join("planted");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/", &link).unwrap();
        assert!(private_tmp("planted").is_err());
        std::fs::remove_file(&link).unwrap();
    }
}
