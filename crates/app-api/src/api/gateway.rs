//! The app's Gateway page: every profile at a glance (servers, the tools and tokens its clients
//! get, the clients that launch it), profiles created, given other servers and removed, and
//! the record of the calls made through gateways. A profile's gateway goes into a client's file
//! through the export (`ExportSelection::profile`). All logic is in [`crate::gateway`].

use serde::{Deserialize, Serialize};

use super::{Api, ApiError, ErrorCode, FieldError};
use crate::gateway::activity::{ActivityLog, ActivityRecord};
use crate::gateway::hooks::Hook;
use crate::gateway::status::ServerStatus;
use crate::gateway::{Permission, ProfileError, ProfileStore};
use crate::profile_overview::{ProfileOverview, overview};

/// One profile on the Gateway page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ProfileView {
    pub name: String,
    pub servers: Vec<String>,
    /// `default`: every enabled server, including ones installed later.
    pub all_enabled: bool,
    /// Enabled tools of its tested servers, and what their definitions cost a model.
    pub tools: u32,
    pub tokens: u32,
    /// Enabled tools of those servers the profile hides from its clients.
    pub hidden: u32,
    /// Its servers that were never tested (their tools are not counted).
    pub untested: Vec<String>,
    /// Its permission rules, by rule.
    pub rules: Vec<RuleView>,
    /// What a new rule may name: `*side_effects`, its servers, the tools of its tested servers.
    pub targets: Vec<String>,
    /// Its hooks, in the order they run.
    pub hooks: Vec<HookView>,
    /// A hook that fails (crashes, runs out of time) blocks the call; else the call goes on.
    pub hooks_fail_closed: bool,
    /// Its servers start on their first use, not all when its gateway starts.
    pub lazy: bool,
    /// The apps whose files launch its gateway.
    pub clients: Vec<String>,
    /// What a client's file runs for it.
    pub command: String,
}

/// One permission rule of a profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct RuleView {
    /// A server, a namespaced tool (`server__tool`) or `*side_effects`.
    pub rule: String,
    /// `allow`, `ask`, `deny` or `hide`.
    pub permission: String,
}

/// One hook of a profile: a command run around each call of the tools it matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct HookView {
    /// `pre_tool_use` (before the call; may block it or change its arguments) or
    /// `post_tool_use` (after it, before the result goes back).
    pub event: String,
    /// The namespaced tools it runs for: `*` matches any text (`github__*`, `*`).
    pub matcher: String,
    /// The command line (`sh -c`); it reads the call as JSON on its standard input.
    pub command: String,
}

/// A change to a profile's hooks: one added (run after the others), one taken away (the first
/// equal to it), whether a failing hook blocks the call.
#[derive(Clone, Debug, Default, Deserialize, specta::Type)]
pub struct HooksChange {
    pub add: Option<HookView>,
    pub remove: Option<HookView>,
    pub fail_closed: Option<bool>,
}

/// A gateway running now (`plugboard serve` launched by an app).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct RunningGatewayView {
    pub pid: u32,
    pub profile: String,
    /// The name its client gave, once it has.
    pub client: Option<String>,
    pub up_seconds: u32,
    pub servers: Vec<ServerStatus>,
}

/// One call made through a gateway.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ActivityView {
    pub at_ms: f64,
    pub client: Option<String>,
    pub profile: String,
    pub server: String,
    pub tool: String,
    /// `allow`, `ask_accepted`, `ask_declined`, `ask_unanswered`, `deny`, `hidden`,
    /// `hook_blocked`, …
    pub decision: String,
    pub outcome: String,
    pub duration_ms: f64,
    /// The arguments' keys and types, never their values (`{"path": "string"}`).
    pub arguments: String,
    pub result_bytes: f64,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn view(p: ProfileOverview) -> ProfileView {
    ProfileView {
        command: format!("plugboard serve --profile {}", p.name),
        tools: count(p.tools),
        tokens: count(p.tokens),
        hidden: count(p.hidden),
        rules: p
            .permissions
            .iter()
            .map(|(rule, permission)| RuleView {
                rule: rule.clone(),
                permission: permission.as_str().to_owned(),
            })
            .collect(),
        targets: p.targets,
        hooks: p.hooks.iter().map(hook_view).collect(),
        hooks_fail_closed: p.hooks_fail_closed,
        name: p.name,
        servers: p.servers,
        all_enabled: p.all_enabled,
        lazy: p.lazy,
        untested: p.untested,
        clients: p.clients,
    }
}

fn hook_view(hook: &Hook) -> HookView {
    HookView {
        event: hook.event.as_str().to_owned(),
        matcher: hook.matcher.clone(),
        command: hook.command.clone(),
    }
}

fn activity_view(r: ActivityRecord) -> ActivityView {
    ActivityView {
        at_ms: r.at_ms as f64,
        client: r.client,
        profile: r.profile,
        server: r.server,
        tool: r.tool,
        decision: r.decision,
        outcome: r.outcome,
        duration_ms: r.duration_ms,
        arguments: serde_json::Value::Object(r.argument_shape).to_string(),
        result_bytes: r.result_bytes as f64,
    }
}

impl From<ProfileError> for ApiError {
    fn from(err: ProfileError) -> ApiError {
        let message = err.to_string();
        match err {
            ProfileError::NotFound(_) => ApiError::new(ErrorCode::NotFound, message),
            ProfileError::Exists(_) => ApiError {
                code: ErrorCode::Duplicate,
                fields: vec![FieldError {
                    field: "name".into(),
                    message: message.clone(),
                }],
                message,
            },
            ProfileError::InvalidName(_) | ProfileError::BuiltIn => {
                ApiError::field("name", message)
            }
            ProfileError::UnknownServer { .. } => ApiError::field("servers", message),
            ProfileError::UnknownRule { .. } => ApiError::field("permissions", message),
            ProfileError::File { .. } => ApiError::new(ErrorCode::Io, message),
            _ => ApiError::new(ErrorCode::Internal, message),
        }
    }
}

impl Api {
    fn profile_store(&self) -> ProfileStore {
        ProfileStore::in_config_dir(self.servers.config().dir())
    }

    /// Every profile, `default` first.
    pub fn profiles(&self) -> Result<Vec<ProfileView>, ApiError> {
        Ok(overview(&self.servers)?.into_iter().map(view).collect())
    }

    /// Create profile `name` serving `servers`, or (`create` false) make an existing one serve
    /// them; returns every profile.
    pub fn save_profile(
        &self,
        name: &str,
        servers: &[String],
        create: bool,
    ) -> Result<Vec<ProfileView>, ApiError> {
        let config = self.servers.config().load()?;
        let store = self.profile_store();
        if create {
            store.create(name.trim(), servers.to_vec(), &config)?;
        } else {
            store.edit(name, &config, |p| p.servers = Some(servers.to_vec()))?;
        }
        self.profiles()
    }

    /// Make profile `name` start its servers on first use (`lazy`) or all at once; returns
    /// every profile.
    pub fn set_profile_lazy(&self, name: &str, lazy: bool) -> Result<Vec<ProfileView>, ApiError> {
        let config = self.servers.config().load()?;
        self.profile_store()
            .edit(name, &config, |p| p.lazy = lazy)?;
        self.profiles()
    }

    /// Give profile `name` the rule `rule` with `permission` (`allow`, `ask`, `deny`, `hide`),
    /// or (`None`) take the rule away; returns every profile.
    pub fn set_profile_rule(
        &self,
        name: &str,
        rule: &str,
        permission: Option<&str>,
    ) -> Result<Vec<ProfileView>, ApiError> {
        let permission = match permission {
            Some(text) => Some(Permission::parse(text).ok_or_else(|| {
                ApiError::field(
                    "permission",
                    format!("`{text}` is not a permission: allow, ask, deny or hide"),
                )
            })?),
            None => None,
        };
        let config = self.servers.config().load()?;
        self.profile_store()
            .edit(name, &config, |p| match permission {
                Some(permission) => {
                    p.permissions.insert(rule.to_owned(), permission);
                }
                None => {
                    p.permissions.remove(rule);
                }
            })?;
        self.profiles()
    }

    /// Change profile `name`'s hooks as `change` says; returns every profile. A hook that is not
    /// one (no such event, no matcher, no command) is refused and nothing is changed.
    pub fn set_profile_hooks(
        &self,
        name: &str,
        change: HooksChange,
    ) -> Result<Vec<ProfileView>, ApiError> {
        let hook = |view: &HookView| {
            Hook::new(&view.event, &view.matcher, &view.command)
                .map_err(|why| ApiError::field("hook", why))
        };
        let add = change.add.as_ref().map(hook).transpose()?;
        let remove = change.remove.as_ref().map(hook).transpose()?;
        let config = self.servers.config().load()?;
        self.profile_store().edit(name, &config, |p| {
            if let Some(remove) = &remove
                && let Some(at) = p.hooks.iter().position(|h| {
                    (h.event, &h.matcher, &h.command)
                        == (remove.event, &remove.matcher, &remove.command)
                })
            {
                p.hooks.remove(at);
            }
            if let Some(add) = add {
                p.hooks.push(add);
            }
            if let Some(fail_closed) = change.fail_closed {
                p.hooks_fail_closed = fail_closed;
            }
        })?;
        self.profiles()
    }

    /// Remove profile `name` (its servers stay installed); returns every profile.
    pub fn remove_profile(&self, name: &str) -> Result<Vec<ProfileView>, ApiError> {
        self.profile_store().remove(name)?;
        self.profiles()
    }

    /// The gateways running now, oldest first, with each server's state.
    pub fn running_gateways(&self) -> Vec<RunningGatewayView> {
        let now = crate::clock::now_ms();
        crate::gateway::status::running(self.servers.config().dir())
            .into_iter()
            .map(|g| RunningGatewayView {
                pid: g.pid,
                profile: g.profile,
                client: g.client,
                up_seconds: u32::try_from(now.saturating_sub(g.started_at_ms) / 1000)
                    .unwrap_or(u32::MAX),
                servers: g.servers,
            })
            .collect()
    }

    /// The last `last` calls made through gateways (of `server` only, when given), newest first.
    pub fn activity(&self, server: Option<&str>, last: u32) -> Vec<ActivityView> {
        let mut records = ActivityLog::in_config_dir(self.servers.config().dir()).read();
        records.retain(|r| server.is_none_or(|s| r.server == s));
        records
            .into_iter()
            .rev()
            .take(last as usize)
            .map(activity_view)
            .collect()
    }
}
