//! Profiles: named sets of installed servers a gateway serves, with per-profile permissions
//! (which also hide tools: a profile's own tools) (`profiles.json` in the config directory,
//! private; every rule names an installed server). The profile `default` is built in:
//! every enabled server. A profile names servers by name; a rename or remove of a server is
//! followed here ([`ProfileStore::follow_rename`], [`ProfileStore::follow_remove`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::hooks::Hook;
use super::permissions::Permission;
use crate::config::{Config, validate_name};
use crate::probe::naming;

/// The built-in profile: every enabled server.
pub const DEFAULT_PROFILE: &str = "default";
/// The file profiles are kept in.
pub const PROFILES_FILE: &str = "profiles.json";

/// One profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The installed servers it serves, by name (`None`: every enabled server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// Permissions by rule: a server name (`github`), a namespaced tool (`github__delete_repo`),
    /// or `*side_effects` (every tool not declared read-only). The most specific rule wins;
    /// `hide` keeps the tools it covers out of the profile's list.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub permissions: BTreeMap<String, Permission>,
    /// Commands run before and after the calls their matchers cover, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
    /// A hook that fails (crashes, times out, another exit code than 0 or 2) blocks the call;
    /// otherwise the call goes on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hooks_fail_closed: bool,
    /// Start each server on its first use rather than when the gateway starts; until then its
    /// tools are listed as its last successful test saw them. A server never tested (whose
    /// tools are not known) starts at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lazy: bool,
}

/// The rule that covers every tool not declared read-only.
pub const SIDE_EFFECTS_RULE: &str = "*side_effects";

#[derive(Debug, Default, Serialize, Deserialize)]
struct ProfilesFile {
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

/// Why a profile operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("no profile `{0}`; `plugboard profile list` shows them")]
    NotFound(String),
    #[error("a profile `{0}` exists already")]
    Exists(String),
    #[error("`{0}` is not a valid profile name (letters, digits, `_` and `-`, at most 64)")]
    InvalidName(String),
    #[error("`{server}` is not an installed server")]
    UnknownServer { server: String },
    #[error(
        "`{rule}` names no installed server: a rule is a server's name, `SERVER__TOOL` (a tool as \
         the gateway lists it) or `{SIDE_EFFECTS_RULE}`"
    )]
    UnknownRule { rule: String },
    #[error("the profile `default` is built in (every enabled server); create another one")]
    BuiltIn,
    #[error("{}: {detail}", path.display())]
    File { path: PathBuf, detail: String },
}

/// The profiles of one config directory.
pub struct ProfileStore {
    path: PathBuf,
}

impl ProfileStore {
    pub fn in_config_dir(dir: &Path) -> ProfileStore {
        ProfileStore {
            path: dir.join(PROFILES_FILE),
        }
    }

    fn read(&self) -> Result<ProfilesFile, ProfileError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| ProfileError::File {
                path: self.path.clone(),
                detail: format!("is not a valid profiles file ({e}); it was left untouched"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ProfilesFile::default()),
            Err(e) => Err(ProfileError::File {
                path: self.path.clone(),
                detail: format!("cannot be read ({e})"),
            }),
        }
    }

    /// Read, change and write the file under its lock.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut ProfilesFile) -> Result<T, ProfileError>,
    ) -> Result<T, ProfileError> {
        let file_error = |e: std::io::Error| ProfileError::File {
            path: self.path.clone(),
            detail: e.to_string(),
        };
        if let Some(dir) = self.path.parent() {
            plugboard_base::fs::create_dir(dir, true).map_err(file_error)?;
        }
        let lock = plugboard_base::fs::open_lock_file(&self.path.with_extension("lock"))
            .map_err(file_error)?;
        lock.lock().map_err(file_error)?;
        let mut file = self.read()?;
        let out = change(&mut file)?;
        let text = serde_json::to_vec_pretty(&file).expect("profiles serialize");
        plugboard_base::fs::write_private(&self.path, &text).map_err(file_error)?;
        Ok(out)
    }

    /// Every profile, `default` first.
    pub fn list(&self) -> Result<Vec<(String, Profile)>, ProfileError> {
        let file = self.read()?;
        let mut out = vec![(
            DEFAULT_PROFILE.to_owned(),
            file.profiles
                .get(DEFAULT_PROFILE)
                .cloned()
                .unwrap_or_default(),
        )];
        out.extend(
            file.profiles
                .into_iter()
                .filter(|(name, _)| name != DEFAULT_PROFILE),
        );
        Ok(out)
    }

    /// Profile `name` (`default` always exists).
    pub fn get(&self, name: &str) -> Result<Profile, ProfileError> {
        let mut file = self.read()?;
        match file.profiles.remove(name) {
            Some(profile) => Ok(profile),
            None if name == DEFAULT_PROFILE => Ok(Profile::default()),
            None => Err(ProfileError::NotFound(name.to_owned())),
        }
    }

    /// Create profile `name` serving `servers` (each must be installed).
    pub fn create(
        &self,
        name: &str,
        servers: Vec<String>,
        config: &Config,
    ) -> Result<(), ProfileError> {
        validate_name(name).map_err(|_| ProfileError::InvalidName(name.to_owned()))?;
        if name == DEFAULT_PROFILE {
            return Err(ProfileError::BuiltIn);
        }
        check_installed(&servers, config)?;
        self.update(|file| {
            if file.profiles.contains_key(name) {
                return Err(ProfileError::Exists(name.to_owned()));
            }
            file.profiles.insert(
                name.to_owned(),
                Profile {
                    servers: Some(servers),
                    ..Profile::default()
                },
            );
            Ok(())
        })
    }

    /// Change profile `name` with `edit` (`default` may get permissions, not a server list).
    pub fn edit(
        &self,
        name: &str,
        config: &Config,
        edit: impl FnOnce(&mut Profile),
    ) -> Result<Profile, ProfileError> {
        self.update(|file| {
            let profile = match file.profiles.get_mut(name) {
                Some(p) => p,
                None if name == DEFAULT_PROFILE => {
                    file.profiles.entry(name.to_owned()).or_default()
                }
                None => return Err(ProfileError::NotFound(name.to_owned())),
            };
            edit(profile);
            if name == DEFAULT_PROFILE && profile.servers.is_some() {
                return Err(ProfileError::BuiltIn);
            }
            if let Some(servers) = &mut profile.servers {
                servers.sort();
                servers.dedup();
                check_installed(servers, config)?;
            }
            check_rules(&profile.permissions, config)?;
            Ok(profile.clone())
        })
    }

    /// Remove profile `name`.
    pub fn remove(&self, name: &str) -> Result<(), ProfileError> {
        if name == DEFAULT_PROFILE {
            return Err(ProfileError::BuiltIn);
        }
        self.update(|file| {
            file.profiles
                .remove(name)
                .map(|_| ())
                .ok_or_else(|| ProfileError::NotFound(name.to_owned()))
        })
    }

    /// Server `old` is now `new`: every profile and rule that names it follows.
    pub fn follow_rename(&self, old: &str, new: &str) -> Result<(), ProfileError> {
        if !self.path.exists() {
            return Ok(());
        }
        self.update(|file| {
            for profile in file.profiles.values_mut() {
                if let Some(servers) = &mut profile.servers {
                    for server in servers.iter_mut().filter(|s| *s == old) {
                        *server = new.to_owned();
                    }
                }
                profile.permissions = std::mem::take(&mut profile.permissions)
                    .into_iter()
                    .map(|(rule, permission)| (renamed_rule(&rule, old, new), permission))
                    .collect();
            }
            Ok(())
        })
    }

    /// Server `name` is gone: it leaves every profile.
    pub fn follow_remove(&self, name: &str) -> Result<(), ProfileError> {
        if !self.path.exists() {
            return Ok(());
        }
        self.update(|file| {
            for profile in file.profiles.values_mut() {
                if let Some(servers) = &mut profile.servers {
                    servers.retain(|s| s != name);
                }
                let prefix = format!("{name}__");
                profile
                    .permissions
                    .retain(|rule, _| rule != name && !rule.starts_with(&prefix));
            }
            Ok(())
        })
    }
}

fn renamed_rule(rule: &str, old: &str, new: &str) -> String {
    if rule == old {
        return new.to_owned();
    }
    match rule.strip_prefix(&format!("{old}__")) {
        Some(tool) => format!("{new}__{tool}"),
        None => rule.to_owned(),
    }
}

fn check_installed(servers: &[String], config: &Config) -> Result<(), ProfileError> {
    let installed: Vec<&str> = config.names().collect();
    match servers.iter().find(|s| !installed.contains(&s.as_str())) {
        Some(server) => Err(ProfileError::UnknownServer {
            server: server.clone(),
        }),
        None => Ok(()),
    }
}

/// Every rule names an installed server (or is `*side_effects`): a mistyped rule would match
/// nothing and leave the tools it meant as they were.
fn check_rules(rules: &BTreeMap<String, Permission>, config: &Config) -> Result<(), ProfileError> {
    let names_a_server = |rule: &str| {
        config.names().any(|server| {
            rule == server
                || rule
                    .strip_prefix(&naming::server_part(server))
                    .and_then(|rest| rest.strip_prefix("__"))
                    .is_some_and(|tool| !tool.is_empty())
        })
    };
    match rules
        .keys()
        .find(|rule| *rule != SIDE_EFFECTS_RULE && !names_a_server(rule))
    {
        Some(rule) => Err(ProfileError::UnknownRule { rule: rule.clone() }),
        None => Ok(()),
    }
}

/// The servers profile `profile` serves now, in name order: its list, or every enabled server.
pub fn servers_of(profile: &Profile, config: &Config) -> Vec<String> {
    let mut names: Vec<String> = match &profile.servers {
        Some(list) => list
            .iter()
            .filter(|n| config.names().any(|m| m == n.as_str()))
            .cloned()
            .collect(),
        None => config
            .servers()
            .into_iter()
            .filter(|(_, s)| s.as_ref().is_ok_and(|s| s.enabled))
            .map(|(n, _)| n.to_owned())
            .collect(),
    };
    names.sort();
    names
}
