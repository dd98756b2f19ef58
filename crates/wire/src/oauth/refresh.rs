//! Fresh access tokens: the stored token while it is good for longer than the refresh margin,
//! else a refresh (keeping the old refresh token when the server does not rotate it), one at a
//! time per server across threads and processes (a lock file `oauth-<namespace>.lock` in the
//! config directory, held while refreshing; the store is re-read once the lock is held). Also
//! the 401 path (refresh unless someone already did) and the 403 `insufficient_scope` path
//! (remember the scopes for the next sign-in, with a limit).

use std::fs::{File, TryLockError};
use std::path::PathBuf;
use std::time::Instant;

use super::challenge::parse_bearer_challenge;
use super::http::{now_millis, now_secs};
use super::machine::without_user;
use super::registration::{ClientIdentity, ClientSource};
use super::store::{
    StepUp, TokenRecord, configured_client_secret, delete_tokens, load_client, load_tokens,
    namespace, save_tokens,
};
use super::token_endpoint::{TokenReply, refresh_grant};
use super::{OAuthContext, OAuthError, oauth_settings};
use crate::config::{Auth, ServerConfig};
use crate::secrets::Sensitive;

/// Step-ups further apart than this do not count as "in a row".
const STEP_UP_WINDOW_SECS: u64 = 600;

/// The cross-process lock of one server's tokens. Released on drop.
pub(crate) struct RefreshLock {
    _file: File,
}

impl RefreshLock {
    pub async fn acquire(ctx: &OAuthContext, namespace: &str) -> Result<RefreshLock, OAuthError> {
        let path = lock_path(ctx, namespace);
        if let Some(dir) = path.parent() {
            plugboard_base::fs::create_dir(dir, true)
                .map_err(|e| OAuthError::Lock(format!("cannot create {} ({e})", dir.display())))?;
        }
        let file = plugboard_base::fs::open_lock_file(&path)
            .map_err(|e| OAuthError::Lock(format!("cannot open {} ({e})", path.display())))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(RefreshLock { _file: file }),
                Err(TryLockError::WouldBlock) => {
                    if started.elapsed() > ctx.options.lock_timeout {
                        return Err(OAuthError::Lock(format!(
                            "another Plugboard process has been refreshing this server's tokens \
                             for over {} s ({} is locked)",
                            ctx.options.lock_timeout.as_secs(),
                            path.display()
                        )));
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(TryLockError::Error(e)) => {
                    return Err(OAuthError::Lock(format!(
                        "cannot lock {} ({e})",
                        path.display()
                    )));
                }
            }
        }
    }
}

/// `<lock dir>/oauth-<namespace>.lock`, the namespace reduced to file-name-safe characters.
pub(crate) fn lock_path(ctx: &OAuthContext, namespace: &str) -> PathBuf {
    let safe: String = namespace
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    ctx.lock_dir.join(format!("oauth-{safe}.lock"))
}

fn uses_oauth(server: &ServerConfig) -> bool {
    matches!(server.auth, Auth::Oauth2(_) | Auth::None) && oauth_settings(server).is_ok()
}

impl OAuthContext {
    /// The access token to send to `server`, refreshed first when it expires within the refresh
    /// margin. `Ok(None)`: the server has no stored sign-in (or is not an OAuth server) — connect
    /// without a token, and on a 401 tell the user to sign in. `Err(LoginRequired)`: the tokens
    /// are expired or revoked and cannot be refreshed.
    pub async fn fresh_access_token(
        &self,
        name: &str,
        server: &ServerConfig,
    ) -> Result<Option<Sensitive<String>>, OAuthError> {
        if !uses_oauth(server) {
            return Ok(None);
        }
        let ns = namespace(name, server);
        let margin = self.options.refresh_margin;
        let machine = without_user(server);
        match self.current(ns, server)? {
            Some(record) if record.fresh_for(margin) => {
                return Ok(Some(Sensitive::new(record.access_token)));
            }
            None if !machine => return Ok(None),
            _ => {}
        }
        let _lock = RefreshLock::acquire(self, ns).await?;
        // Another thread or process may have refreshed while we waited.
        match self.current(ns, server)? {
            Some(record) if record.fresh_for(margin) => {
                Ok(Some(Sensitive::new(record.access_token)))
            }
            // No refresh token: a grant without a user is simply made again.
            _ if machine => self.obtain_without_user(name, server, None).await.map(Some),
            None => Ok(None),
            Some(record) => self.refresh_locked(name, server, record).await.map(Some),
        }
    }

    /// The server answered 401 to `rejected`: refresh (unless another process already replaced
    /// that token) and return the new token. `Err(LoginRequired)` when there is nothing to
    /// refresh with; the rejected tokens are then forgotten.
    pub async fn refresh_after_401(
        &self,
        name: &str,
        server: &ServerConfig,
        rejected: &Sensitive<String>,
    ) -> Result<Sensitive<String>, OAuthError> {
        let (_, url) = oauth_settings(server)?;
        let ns = namespace(name, server);
        let _lock = RefreshLock::acquire(self, ns).await?;
        let Some(record) = self.current(ns, server)? else {
            if without_user(server) {
                return self.obtain_without_user(name, server, None).await;
            }
            return Err(login_required(name, url, "it has no stored sign-in"));
        };
        if record.access_token != *rejected.expose() && record.fresh_for(std::time::Duration::ZERO)
        {
            return Ok(Sensitive::new(record.access_token));
        }
        if without_user(server) {
            return self.obtain_without_user(name, server, None).await;
        }
        if record.refresh_token.is_none() {
            delete_tokens(self.store.as_ref(), ns)?;
            return Err(login_required(
                name,
                url,
                "the server no longer accepts its access token and there is no refresh token",
            ));
        }
        self.refresh_locked(name, server, record).await
    }

    /// The server answered 403 with `error="insufficient_scope"`: remember the scopes it asks for
    /// so the next sign-in requests them (plus those already granted), and return the full list
    /// to request. Refuses (`StepUpLimit`) when the token already has every scope asked for (a new
    /// sign-in would not help) or after `max_step_ups` step-ups in a row.
    pub fn record_insufficient_scope(
        &self,
        name: &str,
        server: &ServerConfig,
        www_authenticate: &str,
    ) -> Result<Vec<String>, OAuthError> {
        oauth_settings(server)?;
        let ns = namespace(name, server);
        let challenge = parse_bearer_challenge(www_authenticate).unwrap_or_default();
        let required = challenge.scope.unwrap_or_default();
        if required.is_empty() {
            return Err(OAuthError::StepUpLimit(format!(
                "`{name}` refused the request for lack of scope but did not say which scope it \
                 needs"
            )));
        }
        let mut record = self.current(ns, server)?.ok_or_else(|| {
            OAuthError::LoginRequired(format!(
                "`{name}` needs scopes {}; sign in with `plugboard auth {name}`",
                required.join(" ")
            ))
        })?;
        if required.iter().all(|s| record.scopes.contains(s)) {
            return Err(OAuthError::StepUpLimit(format!(
                "`{name}` still refuses with insufficient_scope although the token already has \
                 {}; signing in again would not help",
                required.join(" ")
            )));
        }
        let mut step = record.step_up.clone().unwrap_or_default();
        if step.at + STEP_UP_WINDOW_SECS < now_secs() {
            step.attempts = 0;
        }
        step.attempts += 1;
        if step.attempts > self.options.max_step_ups {
            return Err(OAuthError::StepUpLimit(format!(
                "`{name}` asked for more scopes {} times in a row; giving up (it now asks for {})",
                step.attempts - 1,
                required.join(" ")
            )));
        }
        for s in &required {
            if !step.scopes.contains(s) {
                step.scopes.push(s.clone());
            }
        }
        let mut all = record.scopes.clone();
        for s in &step.scopes {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
        record.step_up = Some(StepUp {
            scopes: step.scopes,
            attempts: step.attempts,
            at: now_secs(),
        });
        save_tokens(self.store.as_ref(), ns, &record)?;
        Ok(all)
    }

    /// The stored record, if it belongs to the server's current URL.
    fn current(&self, ns: &str, server: &ServerConfig) -> Result<Option<TokenRecord>, OAuthError> {
        Ok(load_tokens(self.store.as_ref(), ns)?
            .filter(|r| Some(r.server_url.as_str()) == server.url.as_deref()))
    }

    /// The client identity a stored record was obtained with.
    pub(crate) fn client_of(
        &self,
        name: &str,
        server: &ServerConfig,
        record: &TokenRecord,
    ) -> Result<ClientIdentity, OAuthError> {
        let ns = namespace(name, server);
        let secret = match record.client_source {
            ClientSource::PreRegistered => {
                configured_client_secret(self.store.as_ref(), name, server)?
            }
            ClientSource::Dynamic => load_client(self.store.as_ref(), ns)?
                .filter(|c| c.client_id == record.client_id)
                .and_then(|c| c.client_secret)
                .map(Sensitive::new),
            ClientSource::MetadataDocument => None,
        };
        let method = if secret.is_some() {
            record.auth_method
        } else {
            crate::config::ClientAuthMethod::None
        };
        Ok(ClientIdentity {
            client_id: record.client_id.clone(),
            client_secret: secret,
            auth_method: method,
            source: record.client_source,
        })
    }

    /// Refresh with the lock held.
    async fn refresh_locked(
        &self,
        name: &str,
        server: &ServerConfig,
        record: TokenRecord,
    ) -> Result<Sensitive<String>, OAuthError> {
        let url = server.url.as_deref().unwrap_or_default();
        let ns = namespace(name, server);
        let Some(refresh_token) = record.refresh_token.clone() else {
            return Err(login_required(
                name,
                url,
                "its access token has expired and there is no refresh token",
            ));
        };
        let client = self.client_of(name, server, &record)?;
        let reply = refresh_grant(
            &self.http,
            &record.token_endpoint,
            &client,
            &refresh_token,
            &record.resource,
        )
        .await?;
        match reply {
            TokenReply::Issued(tokens) => {
                let now = now_secs();
                let updated = TokenRecord {
                    access_token: tokens.access_token.expose().clone(),
                    token_type: tokens.token_type,
                    // RFC 6749 §6: no new refresh token means the old one stays valid.
                    refresh_token: tokens
                        .refresh_token
                        .map(|r| r.into_inner())
                        .or(Some(refresh_token)),
                    expires_at_ms: tokens
                        .expires_in
                        .map(|s| now_millis().saturating_add(s.saturating_mul(1000))),
                    obtained_at: now,
                    scopes: tokens.scope.unwrap_or_else(|| record.scopes.clone()),
                    ..record
                };
                save_tokens(self.store.as_ref(), ns, &updated)?;
                Ok(Sensitive::new(updated.access_token))
            }
            TokenReply::Refused { error, message } if error == "invalid_grant" => {
                delete_tokens(self.store.as_ref(), ns)?;
                Err(login_required(
                    name,
                    url,
                    &format!(
                        "the authorization server no longer accepts its refresh token: {message}"
                    ),
                ))
            }
            TokenReply::Refused { message, .. } => Err(OAuthError::TokenEndpoint(message)),
        }
    }
}

fn login_required(name: &str, _url: &str, why: &str) -> OAuthError {
    OAuthError::LoginRequired(format!(
        "`{name}` needs a new sign-in ({why}); run `plugboard auth {name}`"
    ))
}
