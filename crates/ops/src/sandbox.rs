//! A server's sandbox as the user sees and changes it (`plugboard sandbox`, the app's server
//! detail): its settings, the grants its next launch gets, what the running kernel enforces of
//! them, and one sentence saying so. A change is judged by planning it first: settings the
//! kernel cannot honour are refused before anything is saved.

use std::path::PathBuf;

pub use plugboard_sandbox::Network;
use plugboard_sandbox::{Grant, NetworkEnforcement, Plan, Reason, Settings};
use serde::Serialize;

use crate::config::{ServerConfig, TransportKind};
use crate::manage::{ManageError, Servers};
use crate::resolve::{Target, resolve, resolve_launch};
use crate::secrets::{MemoryStore, SecretStore};

/// One granted path, for display.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, specta::Type)]
pub struct GrantView {
    /// With the home written as `~`.
    pub path: String,
    /// `system`, `runtime`, `cache`, `argument`, `environment`, `working_dir`, `temp`, `user`.
    pub reason: &'static str,
}

/// Where a server's sandbox stands.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[derive(specta::Type)]
pub enum SandboxState {
    /// On, and the kernel enforces it.
    Enforced,
    /// On in the settings, but this kernel cannot enforce it: the server runs unconfined.
    NotEnforced,
    /// Off for this server.
    Off,
    /// A remote server runs elsewhere; there is nothing local to sandbox.
    NotApplicable,
}

/// A server's sandbox.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct SandboxView {
    pub name: String,
    pub state: SandboxState,
    /// One sentence: "Can read and write ~/notes; no network (…)".
    pub summary: String,
    /// `any`, `none` or `HOST:PORT,…` as set.
    pub network: String,
    pub read: Vec<GrantView>,
    pub write: Vec<GrantView>,
    /// Paths granted in the settings that do not exist (nothing granted for them).
    pub missing: Vec<String>,
    /// As set by the user.
    pub allow_read: Vec<String>,
    pub allow_write: Vec<String>,
    pub deny: Vec<String>,
    /// The kernel's Landlock ABI (0: none).
    pub kernel_abi: u32,
    /// Why the grants could not be worked out (a command not found, a secret not set).
    pub problem: Option<String>,
}

/// A change to a server's sandbox (`plugboard sandbox NAME --on --allow-write ~/notes …`).
#[derive(Debug, Clone, Default)]
pub struct SandboxChange {
    pub enabled: Option<bool>,
    pub network: Option<Network>,
    pub allow_read: Vec<String>,
    pub allow_write: Vec<String>,
    pub deny: Vec<String>,
}

impl SandboxChange {
    pub fn is_empty(&self) -> bool {
        self.enabled.is_none()
            && self.network.is_none()
            && self.allow_read.is_empty()
            && self.allow_write.is_empty()
            && self.deny.is_empty()
    }
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::System => "system",
        Reason::Runtime => "runtime",
        Reason::Cache => "cache",
        Reason::Argument => "argument",
        Reason::Environment => "environment",
        Reason::WorkingDir => "working_dir",
        Reason::Temp => "temp",
        Reason::User => "user",
    }
}

fn grants(list: &[Grant], home: Option<&std::path::Path>) -> Vec<GrantView> {
    list.iter()
        .map(|g| GrantView {
            path: plugboard_sandbox::display_path(&g.path, home),
            reason: reason_name(g.reason),
        })
        .collect()
}

/// Whether `server` runs anything on this machine.
fn runs_locally(server: &ServerConfig) -> bool {
    server.transport == TransportKind::Stdio || server.launch.is_some()
}

/// The plan of the server's next launch, with its settings on (whatever they say).
fn plan_of(name: &str, server: &ServerConfig, store: &dyn SecretStore) -> Result<Plan, String> {
    let mut on = server.clone();
    let settings = on.sandbox.clone().unwrap_or_default();
    on.sandbox = Some(Settings {
        enabled: true,
        ..settings
    });
    let target = if on.transport == TransportKind::Stdio {
        match resolve(name, &on, store, None)
            .map_err(|e| e.to_string())?
            .into_parts()
            .0
        {
            Target::Stdio(target) => target,
            Target::Remote(_) => return Err("it is not a local server".into()),
        }
    } else {
        resolve_launch(name, &on, store)
            .map_err(|e| e.to_string())?
            .0
    };
    target
        .sandbox
        .ok_or_else(|| "its sandbox could not be planned".to_owned())
}

/// Where `server`'s sandbox stands, from its settings and the kernel alone (no launch is
/// planned): for a list of servers.
pub fn state_of(server: &ServerConfig) -> SandboxState {
    if !runs_locally(server) {
        return SandboxState::NotApplicable;
    }
    let Some(settings) = server.sandbox.as_ref().filter(|s| s.enabled) else {
        return SandboxState::Off;
    };
    let abi = plugboard_sandbox::landlock_abi();
    if abi == 0 || (!settings.network.is_any() && abi < 4) {
        SandboxState::NotEnforced
    } else {
        SandboxState::Enforced
    }
}

/// The view of `server`'s sandbox.
pub fn describe(name: &str, server: &ServerConfig, store: &dyn SecretStore) -> SandboxView {
    let home = home();
    let settings = server.sandbox.clone().unwrap_or_default();
    let abi = plugboard_sandbox::landlock_abi();
    let mut view = SandboxView {
        name: name.to_owned(),
        state: SandboxState::Off,
        summary: String::new(),
        network: settings.network.to_string(),
        read: vec![],
        write: vec![],
        missing: vec![],
        allow_read: settings.allow_read.clone(),
        allow_write: settings.allow_write.clone(),
        deny: settings.deny.clone(),
        kernel_abi: abi,
        problem: None,
    };
    if !runs_locally(server) {
        view.state = SandboxState::NotApplicable;
        view.summary = "A remote server: it runs elsewhere, nothing local to sandbox".into();
        return view;
    }
    let plan = match plan_of(name, server, store) {
        Ok(plan) => plan,
        Err(problem) => {
            view.summary = if settings.enabled {
                "On, but its grants cannot be worked out until the problem below is fixed".into()
            } else {
                "Off: it runs with all of your rights".into()
            };
            if !settings.enabled {
                view.state = SandboxState::Off;
            } else {
                view.state = SandboxState::NotEnforced;
            }
            view.problem = Some(problem);
            return view;
        }
    };
    view.read = grants(&plan.read, home.as_deref());
    view.write = grants(&plan.write, home.as_deref());
    view.missing = plan
        .missing
        .iter()
        .map(|p| plugboard_sandbox::display_path(p, home.as_deref()))
        .collect();
    let enforcement = match plugboard_sandbox::prepare(&plan) {
        Ok(prepared) => prepared.enforcement,
        Err(e) => {
            view.state = if settings.enabled {
                SandboxState::NotEnforced
            } else {
                SandboxState::Off
            };
            view.problem = Some(e.to_string());
            view.summary = "The kernel refused this sandbox".into();
            return view;
        }
    };
    let sentence = plugboard_sandbox::summary(&plan, &enforcement, home.as_deref());
    if !settings.enabled {
        view.state = SandboxState::Off;
        view.summary = format!(
            "Off: it runs with all of your rights (turned on: {})",
            lowercase_first(&sentence)
        );
    } else if enforcement.in_force() {
        view.state = SandboxState::Enforced;
        view.summary = sentence;
        if enforcement.network == NetworkEnforcement::NotEnforced {
            view.state = SandboxState::NotEnforced;
        }
    } else {
        view.state = SandboxState::NotEnforced;
        view.summary = sentence;
    }
    view
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The sandbox of installed server `name`.
pub fn view(servers: &Servers, name: &str) -> Result<SandboxView, ManageError> {
    let server = servers.config().load()?.server(name)?;
    let empty = MemoryStore::new();
    let store: &dyn SecretStore = match servers.secrets() {
        Ok(store) => store.as_ref(),
        Err(_) => &empty,
    };
    Ok(describe(name, &server, store))
}

/// Apply `change` to server `name`'s sandbox settings, refused (nothing saved) when the
/// result could not be enforced as set.
pub fn change(
    servers: &Servers,
    name: &str,
    change: &SandboxChange,
) -> Result<SandboxView, ManageError> {
    let before = servers.config().load()?.server(name)?;
    let invalid = |detail: String| ManageError::Invalid {
        name: name.to_owned(),
        detail,
    };
    if !runs_locally(&before) {
        return Err(invalid(
            "it is a remote server: it runs elsewhere, and only servers started on this machine \
             are sandboxed"
                .into(),
        ));
    }
    let mut settings = before
        .sandbox
        .clone()
        .unwrap_or_else(|| first_settings(&before));
    apply(&mut settings, change).map_err(invalid)?;
    let mut after = before.clone();
    after.sandbox = Some(settings.clone());
    let empty = MemoryStore::new();
    let store: &dyn SecretStore = match servers.secrets() {
        Ok(store) => store.as_ref(),
        Err(_) => &empty,
    };
    if let Err(problem) = plan_of(name, &after, store)
        && problem.contains("cannot be enforced")
    {
        return Err(invalid(problem));
    }
    servers.config().update(name, |server| {
        server.sandbox = Some(settings.clone());
        Ok(())
    })?;
    Ok(describe(name, &after, store))
}

/// What the sandbox of a server saved without one starts from: the network its catalog entry
/// declares for it (with the hosts its package runner fetches from), else an open network.
fn first_settings(server: &ServerConfig) -> Settings {
    let mut settings = Settings::default();
    let declared = server
        .source
        .as_ref()
        .filter(|source| !source.catalog.is_empty())
        .and_then(|source| {
            let catalog = crate::catalog::Catalog::load_default().ok()?;
            let option = catalog.get(&source.catalog)?.option(&source.option)?;
            Some(option.sandbox.as_ref()?.network.clone())
        });
    let command = server
        .command
        .as_deref()
        .or(server.launch.as_ref().map(|l| l.command.as_str()))
        .unwrap_or_default();
    settings.declare(declared.as_ref(), command, vec![]);
    settings
}

/// `change` applied to `settings`: a grant takes the path out of the denials and a denial out
/// of the grants, so the last word on a path wins.
fn apply(settings: &mut Settings, change: &SandboxChange) -> Result<(), String> {
    for path in change
        .allow_read
        .iter()
        .chain(&change.allow_write)
        .chain(&change.deny)
    {
        if !(path.starts_with('/') || path.starts_with("~/") || path == "~") {
            return Err(format!(
                "`{path}` is not an absolute path (or one starting with ~/)"
            ));
        }
    }
    if let Some(enabled) = change.enabled {
        settings.enabled = enabled;
    }
    if let Some(network) = &change.network {
        settings.network = network.clone();
    }
    let normal = |p: &String| p.trim_end_matches('/').to_owned();
    for (path, write) in change
        .allow_read
        .iter()
        .map(|p| (p, false))
        .chain(change.allow_write.iter().map(|p| (p, true)))
    {
        let path = normal(path);
        settings.deny.retain(|d| *d != path);
        settings.allow_read.retain(|d| *d != path);
        settings.allow_write.retain(|d| *d != path);
        if write {
            settings.allow_write.push(path);
        } else {
            settings.allow_read.push(path);
        }
    }
    for path in &change.deny {
        let path = normal(path);
        settings.allow_read.retain(|d| *d != path);
        settings.allow_write.retain(|d| *d != path);
        if !settings.deny.contains(&path) {
            settings.deny.push(path);
        }
    }
    Ok(())
}

/// What the sandbox denied a server, and how to grant it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// "the sandbox denied ~/data"
    pub what: String,
    /// The command that grants it.
    pub fix: String,
}

/// What a failed launch's stderr says the sandbox denied; `None` when nothing in it looks like
/// a denial.
pub fn explain_denial(name: &str, stderr: &str) -> Option<Denial> {
    let line = stderr.lines().find(|line| {
        let lower = line.to_ascii_lowercase();
        lower.contains("permission denied")
            || lower.contains("eacces")
            || lower.contains("operation not permitted")
            || lower.contains("eperm")
    })?;
    // The path nearest the words of the denial: the last one before them ("sh: /x: Permission
    // denied"), else the first after ("EACCES: permission denied, open '/x'").
    let lower = line.to_ascii_lowercase();
    let at = [
        "permission denied",
        "eacces",
        "operation not permitted",
        "eperm",
    ]
    .iter()
    .filter_map(|words| lower.find(words))
    .min()
    .unwrap_or(0);
    let mut words: Vec<(usize, &str)> = vec![];
    let mut start = None;
    for (i, c) in line.char_indices() {
        let separator = matches!(c, '\'' | '"' | ' ' | ',' | '`');
        match (separator, start) {
            (false, None) => start = Some(i),
            (true, Some(from)) => {
                words.push((from, &line[from..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push((from, &line[from..]));
    }
    words.retain(|(_, word)| word.starts_with('/') && word.len() > 1);
    let path = words
        .iter()
        .rev()
        .find(|(i, _)| *i < at)
        .or_else(|| words.iter().find(|(i, _)| *i >= at))
        .map(|(_, word)| word.trim_end_matches([':', ')', '.']));
    let endpoint = line.split([' ', '\'', '"', ',']).find(|word| {
        word.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && !host.contains('/') && port.parse::<u16>().is_ok()
        })
    });
    Some(match (path, endpoint) {
        (Some(path), _) => {
            let shown =
                plugboard_sandbox::display_path(std::path::Path::new(path), home().as_deref());
            Denial {
                what: format!("the sandbox denied {shown}"),
                fix: format!(
                    "grant it with `plugboard sandbox {name} --allow-read {shown}` (or \
                     --allow-write to let it change it)"
                ),
            }
        }
        (None, Some(endpoint)) => Denial {
            what: format!("the sandbox denied a connection to {endpoint}"),
            fix: format!(
                "allow it with `plugboard sandbox {name} --network {endpoint}` (or --network any)"
            ),
        },
        (None, None) => Denial {
            what: format!(
                "the sandbox may have denied something (\"{}\")",
                line.trim()
            ),
            fix: format!(
                "see `plugboard sandbox {name}`, or check with `plugboard sandbox {name} --off`"
            ),
        },
    })
}

/// The denial behind a failed test of a server in an enforced sandbox, if its stderr shows one.
pub fn denial_in(name: &str, result: &crate::probe::TestResult) -> Option<Denial> {
    let enforced = result
        .sandbox
        .as_deref()
        .is_some_and(|s| !s.starts_with("Not sandboxed") && !s.starts_with("Off"));
    if result.ok || !enforced {
        return None;
    }
    explain_denial(name, result.stderr_tail.as_deref()?)
}

/// Fill in a test result's sandbox sentence, and when the test failed in an enforced sandbox
/// with a denial in the server's stderr, say what was denied and how to grant it.
pub fn annotate(
    name: &str,
    server: &ServerConfig,
    store: &dyn SecretStore,
    result: &mut crate::probe::TestResult,
) {
    if !runs_locally(server) {
        return;
    }
    let view = describe(name, server, store);
    result.sandbox = Some(view.summary);
    if view.state != SandboxState::Enforced {
        return;
    }
    if let Some(denial) = denial_in(name, result) {
        let explained = format!("{}: {}", denial.what, denial.fix);
        result.hint = Some(match result.hint.take() {
            Some(hint) => format!("{explained}; {hint}"),
            None => explained,
        });
    }
}

/// The kernel's Landlock ABI (0: none).
pub fn kernel_abi() -> u32 {
    plugboard_sandbox::landlock_abi()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_are_named_with_the_command_that_grants_them() {
        let node = "Error: EACCES: permission denied, open '/etc/secret/id_rsa'";
        let told = explain_denial("files", node).unwrap();
        assert_eq!(told.what, "the sandbox denied /etc/secret/id_rsa");
        assert!(
            told.fix
                .contains("plugboard sandbox files --allow-read /etc/secret/id_rsa")
        );
        let python = "PermissionError: [Errno 13] Permission denied: '/srv/data'";
        assert_eq!(
            explain_denial("py", python).unwrap().what,
            "the sandbox denied /srv/data"
        );
        let connect = "Error: connect EACCES 203.0.113.9:443";
        let told = explain_denial("net", connect).unwrap();
        assert!(told.fix.contains("--network 203.0.113.9:443"), "{told:?}");
        let shim = "/opt/pyenv/shims/python3: line 12: /opt/pyenv/libexec/pyenv: Permission denied";
        assert_eq!(
            explain_denial("py", shim).unwrap().what,
            "the sandbox denied /opt/pyenv/libexec/pyenv"
        );
        assert_eq!(explain_denial("ok", "listening on stdio"), None);
    }

    #[test]
    fn the_last_word_on_a_path_wins() {
        let mut settings = Settings::on();
        let grant = SandboxChange {
            allow_write: vec!["~/notes/".into()],
            ..SandboxChange::default()
        };
        apply(&mut settings, &grant).unwrap();
        assert_eq!(settings.allow_write, ["~/notes"]);
        let deny = SandboxChange {
            deny: vec!["~/notes".into()],
            ..SandboxChange::default()
        };
        apply(&mut settings, &deny).unwrap();
        assert!(settings.allow_write.is_empty());
        assert_eq!(settings.deny, ["~/notes"]);
        apply(&mut settings, &grant).unwrap();
        assert!(settings.deny.is_empty());
        let relative = SandboxChange {
            allow_read: vec!["notes".into()],
            ..SandboxChange::default()
        };
        assert!(apply(&mut settings, &relative).is_err());
    }
}
