//! `plugboard run NAME`: an installed server made available to other MCP clients as a stdio
//! server. The other client's config names only `plugboard run NAME`; the secrets stay in
//! Plugboard's store and are added here, at launch, never on a command line and never in the
//! other client's file.
//!
//! - A stdio server is spawned with its secrets in its environment and its stdio relayed byte
//!   for byte ([`stdio`]): signals are forwarded to its process group, its exit code is passed
//!   through, and when `plugboard run` ends (its stdin closes, a signal, or it dies) the whole
//!   group goes too.
//! - A remote server (streamable HTTP, SSE, auto) is bridged ([`bridge`]): JSON-RPC messages
//!   read from stdin are sent to the server, and its responses, notifications and requests are
//!   written to stdout, with the auth headers or OAuth token (refreshed, retried once after a
//!   401) added here.
//!
//! Either way the client's messages pass the server's tool filter ([`tool_filter`], on this
//! process's stdio: [`client_io`]): disabled tools are not listed and not called, and a change
//! of tool state reaches the connected client as `notifications/tools/list_changed`.
//!
//! Standard output carries MCP traffic only. Every diagnostic goes to stderr, redacted.

pub mod bridge;
pub mod client_io;
pub mod sessions;
pub mod stdio;
pub mod tool_filter;
pub mod translate;

use std::sync::Arc;

use crate::config::{Auth, ConfigError, ServerConfig};
use crate::manage::Servers;
use crate::oauth::{OAuthContext, OAuthError};
use crate::redact::Redactor;
use crate::resolve::{ResolveError, Target, WithAccessToken, resolve};
use crate::secrets::{MemoryStore, SecretError, SecretStore, Sensitive};

/// Why `plugboard run` could not start (or keep) the server. [`RunError::exit_code`] maps it to
/// the CLI's exit codes; messages are redacted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error(
        "server `{name}` is disabled, so it is not run; enable it with `plugboard enable {name}`"
    )]
    Disabled { name: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot read the secrets of `{name}`: {source}")]
    Secrets {
        name: String,
        #[source]
        source: SecretError,
    },
    #[error("{message} ({hint})")]
    Resolve { message: String, hint: String },
    #[error("server `{name}` needs an OAuth sign-in: {detail}")]
    OAuth { name: String, detail: String },
    #[error("could not start `{command}`: {detail}")]
    Spawn { command: String, detail: String },
    #[error(
        "the tools of `{name}` changed since you approved them ({summary}); they are not exposed \
         until you review them with `plugboard diff {name}` and `plugboard approve {name}` \
         (or run with --allow-unapproved)"
    )]
    ToolsChanged { name: String, summary: String },
    #[error("refused: {0}")]
    Policy(#[from] crate::policy::Refusal),
    /// The home or config could be changed by someone else, who could point the server at
    /// their own program and be handed its secrets.
    #[error("refusing to start a server with its secrets: {0}")]
    UnsafeHome(String),
    #[error("{0}")]
    Failed(String),
}

impl RunError {
    /// 2 for configuration problems (nothing could be run), 1 when running failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Disabled { .. }
            | RunError::Config(_)
            | RunError::Secrets { .. }
            | RunError::Resolve { .. }
            | RunError::OAuth { .. }
            | RunError::ToolsChanged { .. }
            | RunError::Policy(_)
            | RunError::UnsafeHome(_) => 2,
            RunError::Spawn { .. } | RunError::Failed(_) => 1,
        }
    }
}

impl From<ResolveError> for RunError {
    fn from(err: ResolveError) -> Self {
        RunError::Resolve {
            message: err.to_string(),
            hint: err.hint(),
        }
    }
}

/// An exit code for a process that ended with `status` (128 + signal for a signal).
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    1
}

/// The OAuth state of a bridged server: the context to refresh with and the current token.
pub struct OAuthSession {
    pub context: OAuthContext,
    pub name: String,
    pub server: ServerConfig,
    pub token: Sensitive<String>,
}

/// Write one diagnostic line to stderr, redacted.
pub(crate) fn diag(redactor: &Redactor, name: &str, text: &str) {
    eprintln!("plugboard run {name}: {}", redactor.redact(text));
}

/// Run installed server `name` on this process's stdin/stdout until either side ends. Returns
/// the exit code to end with (the server's own, for a stdio server).
///
/// For a stdio server the caller should run this on a current-thread runtime on the main thread:
/// the child is then tied to that thread's life (Linux `PR_SET_PDEATHSIG`).
pub async fn run(servers: &Servers, name: &str, allow_unapproved: bool) -> Result<i32, RunError> {
    for path in [
        servers.config().dir().to_path_buf(),
        servers.config().path(),
    ] {
        if let Some(why) = plugboard_base::fs::unsafe_ownership(&path) {
            return Err(RunError::UnsafeHome(why));
        }
    }
    let server = servers.config().load()?.server(name)?;
    if !server.enabled {
        return Err(RunError::Disabled { name: name.into() });
    }
    let dir = servers.config().dir();
    crate::admission::check(dir, name, &server)?;
    let rules = client_io::rules_for(dir, name, Some(&server)).unwrap_or(tool_filter::ToolRules {
        policy: server.tools.clone(),
        review: crate::config::Review::default(),
        server_enabled: true,
        keep_controls: server.keep_control_characters,
    });
    if !allow_unapproved {
        refuse_changed_tools(servers, name, &rules)?;
    }
    let oauth = matches!(server.auth, Auth::Oauth2(_));
    let store: Arc<dyn SecretStore> = if server.secret_keys(name).is_empty() && !oauth {
        Arc::new(MemoryStore::new())
    } else {
        servers
            .secrets()
            .cloned()
            .map_err(|source| RunError::Secrets {
                name: name.into(),
                source,
            })?
    };
    let mut session = None;
    let resolve_store: Arc<dyn SecretStore> = if oauth {
        let context = OAuthContext::new(store.clone(), servers.config().dir()).map_err(|e| {
            RunError::OAuth {
                name: name.into(),
                detail: e.to_string(),
            }
        })?;
        let token = match context.fresh_access_token(name, &server).await {
            Ok(Some(token)) => token,
            Ok(None) => {
                return Err(RunError::OAuth {
                    name: name.into(),
                    detail: format!("it has not been authorized yet; run `plugboard auth {name}`"),
                });
            }
            Err(OAuthError::LoginRequired(detail)) => {
                return Err(RunError::OAuth {
                    name: name.into(),
                    detail,
                });
            }
            Err(other) => return Err(RunError::Failed(other.to_string())),
        };
        let with_token = WithAccessToken::new(store.clone(), server.secret_namespace(name), &token);
        session = Some(OAuthSession {
            context,
            name: name.into(),
            server: server.clone(),
            token,
        });
        Arc::new(with_token)
    } else {
        store.clone()
    };
    let resolved = resolve(name, &server, resolve_store.as_ref(), None)?;
    let mut redactor = resolved.redactor().clone();
    if let Some(s) = &session {
        redactor = redactor.with_secrets([s.token.expose().as_str()]);
    }
    let known = crate::checks::known_era(servers, name);
    let filter = Arc::new(tool_filter::ToolFilter::new(name, rules).with_secrets(redactor.clone()));
    let (client, relay_side) = client_io::ClientIo::start(filter, dir, name);
    let code = match resolved.target() {
        Target::Stdio(target) => stdio::relay(name, target, redactor, known, relay_side).await,
        Target::Remote(target) => {
            // A package serving HTTP here is started first and stopped when the bridge ends.
            let local = match &server.launch {
                None => None,
                Some(_) => Some(
                    crate::local_http::LocalServer::start(
                        name,
                        &server,
                        resolve_store.as_ref(),
                        crate::local_http::START_TIMEOUT,
                    )
                    .await
                    .map_err(|e| RunError::Spawn {
                        command: server
                            .launch
                            .as_ref()
                            .map(|l| l.command.clone())
                            .unwrap_or_default(),
                        detail: redactor.redact(&format!(
                            "{} ({})\n{}",
                            e.failure.error, e.failure.hint, e.stderr
                        )),
                    })?,
                ),
            };
            let bridged = bridge::bridge(
                name,
                resolved.transport(),
                target,
                session,
                server
                    .headers_helper
                    .clone()
                    .zip(server.url.clone())
                    .map(|(helper, url)| bridge::HelperSource {
                        name: name.to_owned(),
                        url,
                        helper,
                    }),
                redactor,
                known,
                relay_side,
            )
            .await;
            if let Some(local) = local {
                local.stop().await;
            }
            bridged
        }
    };
    client.finish().await;
    code
}

/// The tool-pinning gate: a server whose last test saw tools that differ from the approved ones
/// is not exposed to other clients until the user reviews and approves them, unless every tool
/// not approved is one the tool filter hides anyway (a tool added since the approval is
/// disabled until reviewed, unless the user chose otherwise). A server that was never tested
/// has nothing pinned and runs.
fn refuse_changed_tools(
    servers: &Servers,
    name: &str,
    rules: &tool_filter::ToolRules,
) -> Result<(), RunError> {
    match crate::pinning::status(servers.config().dir(), name) {
        Ok(crate::pinning::PinStatus::Changed(diff))
            if diff.only_in_switched_off_tools(|tool| rules.allows(tool)) =>
        {
            Ok(())
        }
        Ok(crate::pinning::PinStatus::Changed(diff)) => Err(RunError::ToolsChanged {
            name: name.into(),
            summary: if diff.first_seen {
                "they were never approved".to_string()
            } else {
                diff.changes.summary()
            },
        }),
        Ok(_) => Ok(()),
        Err(err) => Err(RunError::Failed(format!(
            "the tool pin of `{name}` cannot be read: {err}"
        ))),
    }
}
