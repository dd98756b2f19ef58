//! OAuth for remote MCP servers, as the MCP authorization spec describes: discovery (RFC 9728,
//! RFC 8414 / OpenID Connect, the 2025-03-26 fallbacks), the client identity (pre-registered,
//! client ID metadata document, RFC 7591 registration), the authorization code flow with PKCE
//! S256, `state`, RFC 8707 `resource` and RFC 9207 `iss`, driven by a job state machine that the
//! app and the CLI poll; the client credentials grant and enterprise-managed authorization for
//! servers whose tokens come without a user; tokens in the secret store, refreshed before expiry and after a 401 (one
//! refresh at a time, across processes), scope step-up after a 403, and RFC 7009 revocation.
//!
//! One job per file: [`challenge`] (the `WWW-Authenticate` header), [`discovery`],
//! [`registration`], [`authorize`] (PKCE, scopes, the authorization URL and its safety check),
//! [`callback`] (the loopback listener and pasted redirect URLs), [`job`] (the state machine),
//! [`store`] (the token store), [`token_endpoint`], [`refresh`] (fresh tokens, 401, step-up,
//! the cross-process lock), [`machine`] (client credentials and enterprise-managed
//! authorization: tokens without a user) and [`revoke`].
//!
//! No token, code, verifier or client secret ever appears in an error, a status, a log or a
//! `Debug` print: they live in [`Sensitive`] or in record types whose `Debug` hides them.

pub mod authorize;
pub mod callback;
pub mod challenge;
pub mod discovery;
mod error;
mod http;
pub mod job;
pub mod machine;
pub mod refresh;
pub mod registration;
pub mod revoke;
pub mod store;
mod token_endpoint;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use authorize::validate_authorization_url;
pub use challenge::{BearerChallenge, parse_bearer_challenge};
pub use error::OAuthError;
pub use job::{JobState, JobStatus, OAuthJobs, StartOptions};
pub use registration::ClientSource;
pub use revoke::RevokeOutcome;
pub use store::{
    CLIENT_SECRET, ISSUER_SECRET, TOKENS_SECRET, TokenStatus, bind_issuer, redaction_values,
    token_issuer, token_status,
};

use crate::config::{Auth, OAuthSettings, ServerConfig};
use crate::secrets::{SecretStore, Sensitive};

/// Tunables of the OAuth module. The defaults are what the app and the CLI use.
#[derive(Clone, Debug)]
pub struct OAuthOptions {
    /// How long a job waits in `awaiting_user` before it expires.
    pub wait_for_user: Duration,
    /// Refresh an access token this long before it expires.
    pub refresh_margin: Duration,
    /// Timeout of each HTTP request to a server or authorization server.
    pub http_timeout: Duration,
    /// How long to wait for another process's refresh of the same server.
    pub lock_timeout: Duration,
    /// The `client_name` sent with a dynamic registration.
    pub client_name: String,
    /// A client ID metadata document URL to use where the authorization server supports them
    /// and the server's settings name none.
    pub client_metadata_url: Option<String>,
    /// How many scope step-ups in a row are allowed before Plugboard gives up.
    pub max_step_ups: u32,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            wait_for_user: Duration::from_secs(300),
            refresh_margin: Duration::from_secs(60),
            http_timeout: Duration::from_secs(30),
            lock_timeout: Duration::from_secs(60),
            client_name: "Plugboard".into(),
            client_metadata_url: None,
            max_step_ups: 2,
        }
    }
}

/// What every OAuth operation needs: the secret store, the directory for the per-server refresh
/// locks (the config directory), the options and an HTTP client.
#[derive(Clone)]
pub struct OAuthContext {
    store: Arc<dyn SecretStore>,
    lock_dir: PathBuf,
    options: OAuthOptions,
    http: http::Http,
}

impl OAuthContext {
    /// A context whose refresh locks live in `lock_dir` (normally the config directory).
    pub fn new(
        store: Arc<dyn SecretStore>,
        lock_dir: impl Into<PathBuf>,
    ) -> Result<OAuthContext, OAuthError> {
        OAuthContext::with_options(store, lock_dir, OAuthOptions::default())
    }

    pub fn with_options(
        store: Arc<dyn SecretStore>,
        lock_dir: impl Into<PathBuf>,
        options: OAuthOptions,
    ) -> Result<OAuthContext, OAuthError> {
        Ok(OAuthContext {
            http: http::Http::new(options.http_timeout)?,
            store,
            lock_dir: lock_dir.into(),
            options,
        })
    }

    /// A context for the user's config directory (`$PLUGBOARD_HOME` or the platform's).
    pub fn for_user(store: Arc<dyn SecretStore>) -> Result<OAuthContext, OAuthError> {
        let dir = crate::config::config_dir().ok_or_else(|| {
            OAuthError::Config(
                "no config directory: set PLUGBOARD_HOME or HOME so Plugboard knows where to \
                 keep its files"
                    .into(),
            )
        })?;
        OAuthContext::new(store, dir)
    }

    pub fn store(&self) -> &Arc<dyn SecretStore> {
        &self.store
    }

    pub fn lock_dir(&self) -> &Path {
        &self.lock_dir
    }

    pub fn options(&self) -> &OAuthOptions {
        &self.options
    }
}

/// The OAuth settings of a server that may sign in with OAuth: `oauth2` servers, and remote
/// servers with no auth configured (a server may turn out to need OAuth only when it answers
/// 401). Other auth modes, stdio servers and servers without a URL cannot.
pub fn oauth_settings(server: &ServerConfig) -> Result<(OAuthSettings, &str), OAuthError> {
    if !server.transport.is_remote() {
        return Err(OAuthError::Config(
            "OAuth is for remote servers; this one runs as a local process".into(),
        ));
    }
    let url = server
        .url
        .as_deref()
        .ok_or_else(|| OAuthError::Config("the server has no URL".into()))?;
    match &server.auth {
        Auth::Oauth2(settings) => Ok((settings.clone(), url)),
        Auth::None => Ok((OAuthSettings::default(), url)),
        other => Err(OAuthError::Config(format!(
            "the server is set up for {} authentication, not OAuth; change its auth to OAuth first",
            other.label()
        ))),
    }
}

/// [`OAuthContext::fresh_access_token`] for the user's config directory.
pub async fn fresh_access_token(
    server_name: &str,
    server: &ServerConfig,
    store: Arc<dyn SecretStore>,
) -> Result<Option<Sensitive<String>>, OAuthError> {
    OAuthContext::for_user(store)?
        .fresh_access_token(server_name, server)
        .await
}

/// [`OAuthContext::revoke_and_forget`] for the user's config directory.
pub async fn revoke_and_forget(
    server_name: &str,
    server: &ServerConfig,
    store: Arc<dyn SecretStore>,
) -> Result<RevokeOutcome, OAuthError> {
    OAuthContext::for_user(store)?
        .revoke_and_forget(server_name, server)
        .await
}
