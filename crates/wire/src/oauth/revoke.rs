//! Signing out when a server is removed: RFC 7009 revocation of the refresh and access tokens
//! where the authorization server advertised a `revocation_endpoint`, then the server's OAuth
//! secrets (tokens, dynamic registration, the issuer it is bound to) and its refresh lock file
//! are deleted. Revocation
//! failures are reported, never fatal: the local secrets go either way.

use serde::Serialize;

use super::error::scrub;
use super::http::{ClientAuth, display_url};
use super::refresh::{RefreshLock, lock_path};
use super::store::{delete_client, delete_tokens, forget_issuer, load_tokens, namespace};
use super::{OAuthContext, OAuthError};
use crate::config::ServerConfig;

/// What `revoke_and_forget` did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, specta::Type)]
pub struct RevokeOutcome {
    /// There were stored tokens.
    pub had_tokens: bool,
    /// The authorization server accepted the revocation of every token sent.
    pub revoked: bool,
    /// The authorization server has no revocation endpoint (tokens just expire).
    pub revocation_unsupported: bool,
    /// What went wrong talking to the authorization server (already free of secrets).
    pub warnings: Vec<String>,
}

impl OAuthContext {
    /// Revoke the server's tokens where possible, then delete its OAuth secrets. Call it with
    /// the server's config as it was before removal (the namespace comes from it).
    pub async fn revoke_and_forget(
        &self,
        name: &str,
        server: &ServerConfig,
    ) -> Result<RevokeOutcome, OAuthError> {
        let ns = namespace(name, server).to_string();
        let mut outcome = RevokeOutcome::default();
        {
            let _lock = RefreshLock::acquire(self, &ns).await?;
            if let Some(record) = load_tokens(self.store.as_ref(), &ns)? {
                outcome.had_tokens = true;
                match record.revocation_endpoint.as_deref() {
                    None => outcome.revocation_unsupported = true,
                    Some(endpoint) => {
                        let client = self.client_of(name, server, &record)?;
                        let auth = ClientAuth {
                            client_id: &client.client_id,
                            client_secret: client.client_secret.as_ref(),
                            method: client.auth_method,
                        };
                        let secret_text = client
                            .client_secret
                            .as_ref()
                            .map(|s| s.expose().as_str())
                            .unwrap_or("");
                        let mut all_ok = true;
                        // The refresh token first: revoking it usually ends the access token too.
                        let mut tokens = vec![];
                        if let Some(r) = record.refresh_token.as_deref() {
                            tokens.push((r, "refresh_token"));
                        }
                        tokens.push((record.access_token.as_str(), "access_token"));
                        for (token, hint) in tokens {
                            let params = [("token", token), ("token_type_hint", hint)];
                            match self.http.post_form(endpoint, &params, Some(&auth)).await {
                                Ok(reply) if reply.is_success() => {}
                                Ok(reply) => {
                                    all_ok = false;
                                    let detail = reply
                                        .json()
                                        .and_then(|d| {
                                            d.get("error")
                                                .and_then(|e| e.as_str())
                                                .map(str::to_string)
                                        })
                                        .unwrap_or_else(|| format!("HTTP {}", reply.status));
                                    let mut secrets = record.secret_values();
                                    secrets.push(secret_text);
                                    outcome.warnings.push(format!(
                                        "{} refused to revoke the {}: {}",
                                        display_url(endpoint),
                                        hint.replace('_', " "),
                                        scrub(&detail, &secrets)
                                    ));
                                }
                                Err(e) => {
                                    all_ok = false;
                                    outcome.warnings.push(e.to_string());
                                }
                            }
                        }
                        outcome.revoked = all_ok;
                    }
                }
            }
            delete_tokens(self.store.as_ref(), &ns)?;
            delete_client(self.store.as_ref(), &ns)?;
            forget_issuer(self.store.as_ref(), &ns)?;
        }
        let _ = std::fs::remove_file(lock_path(self, &ns));
        Ok(outcome)
    }
}
