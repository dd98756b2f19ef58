//! The sign-in job state machine, driven the same way by the app and the CLI:
//! `start(server) → job id`, then the job moves `discovering → awaiting_user` (the loopback
//! listener is up and the authorization URL is known and validated) `→ exchanging →
//! succeeded | failed | expired | cancelled`. Callers poll [`OAuthJobs::status`] (or
//! [`OAuthJobs::wait`]) and open the authorization URL only once the job is `awaiting_user`.
//! A redirect URL pasted by the user ([`OAuthJobs::complete_with_redirect_url`]) completes a job
//! whose browser cannot reach the listener.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};

use super::authorize::{
    AuthorizationRequest, Pkce, authorization_url, random_token, select_scopes,
};
use super::callback::{CallbackParams, Delivery, Listener, Verdict, parse_pasted_redirect};
use super::discovery::{Discovery, discover};
use super::error::scrub;
use super::http::{now_millis, now_secs};
use super::refresh::RefreshLock;
use super::registration::{ClientChoice, ClientSource, client_identity};
use super::store::{
    StepUp, TokenRecord, configured_client_secret, load_client, load_tokens, namespace,
    save_client, save_tokens,
};
use super::token_endpoint::{TokenReply, exchange_code};
use super::{OAuthContext, OAuthError, oauth_settings};
use crate::config::{ServerConfig, TransportKind};

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Discovering,
    AwaitingUser,
    Exchanging,
    Succeeded,
    Failed,
    Expired,
    Cancelled,
}

impl JobState {
    /// Whether the job has ended (its listener is closed).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Expired | JobState::Cancelled
        )
    }
}

/// What a poll returns. Holds no token, code or secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct JobStatus {
    pub job: String,
    pub server: String,
    pub state: JobState,
    /// Set while `awaiting_user`: the validated URL to open in the browser.
    pub authorization_url: Option<String>,
    /// The loopback redirect URI (what a pasted URL must start with).
    pub redirect_uri: Option<String>,
    /// The scopes requested.
    pub scopes: Vec<String>,
    /// Seconds left before an `awaiting_user` job expires.
    pub expires_in_secs: Option<u32>,
    /// Why the job failed, expired or was cancelled (already free of secrets).
    pub error: Option<String>,
}

/// How a job starts.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// The `WWW-Authenticate` value of the 401/403 that made the caller start the job (saves a
    /// request, and its `scope` is used). Without it the job asks the server itself.
    pub challenge: Option<String>,
    /// Scopes to request in addition to the spec's selection and the configured ones.
    pub extra_scopes: Vec<String>,
}

enum Input {
    Paste(String, oneshot::Sender<Result<(), OAuthError>>),
    Cancel,
}

#[derive(Clone)]
struct Shared {
    status: JobStatus,
    deadline: Option<Instant>,
}

struct Handle {
    status: watch::Receiver<Shared>,
    input: mpsc::Sender<Input>,
}

/// The sign-in jobs of one process (the app keeps one for its lifetime; the CLI one per command).
#[derive(Clone)]
pub struct OAuthJobs {
    ctx: OAuthContext,
    jobs: Arc<Mutex<HashMap<String, Handle>>>,
}

impl OAuthJobs {
    pub fn new(ctx: OAuthContext) -> OAuthJobs {
        OAuthJobs {
            ctx,
            jobs: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    pub fn context(&self) -> &OAuthContext {
        &self.ctx
    }

    /// Start signing in to `server` (named `name`); returns the job id at once. Needs a Tokio
    /// runtime. Fails only when the server cannot use OAuth at all.
    pub fn start(&self, name: &str, server: &ServerConfig) -> Result<String, OAuthError> {
        self.start_with(name, server, StartOptions::default())
    }

    pub fn start_with(
        &self,
        name: &str,
        server: &ServerConfig,
        options: StartOptions,
    ) -> Result<String, OAuthError> {
        oauth_settings(server)?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| OAuthError::Config("OAuth jobs need a Tokio runtime".into()))?;
        let id = random_token(12);
        let initial = Shared {
            status: JobStatus {
                job: id.clone(),
                server: name.to_string(),
                state: JobState::Discovering,
                authorization_url: None,
                redirect_uri: None,
                scopes: vec![],
                expires_in_secs: None,
                error: None,
            },
            deadline: None,
        };
        let (status_tx, status_rx) = watch::channel(initial);
        let (input_tx, input_rx) = mpsc::channel(8);
        self.lock().insert(
            id.clone(),
            Handle {
                status: status_rx,
                input: input_tx,
            },
        );
        let job = Job {
            ctx: self.ctx.clone(),
            name: name.to_string(),
            server: server.clone(),
            options,
            status: status_tx,
            input: input_rx,
        };
        runtime.spawn(job.run());
        Ok(id)
    }

    /// The job's current status, or `None` for an unknown id.
    pub fn status(&self, job: &str) -> Option<JobStatus> {
        let jobs = self.lock();
        let shared = jobs.get(job)?.status.borrow().clone();
        Some(present(shared))
    }

    /// Wait until the job has ended and return its final status.
    pub async fn wait(&self, job: &str) -> Result<JobStatus, OAuthError> {
        let mut rx = self.receiver(job)?;
        loop {
            let shared = rx.borrow_and_update().clone();
            if shared.status.state.is_final() {
                return Ok(present(shared));
            }
            if rx.changed().await.is_err() {
                return Ok(present(rx.borrow().clone()));
            }
        }
    }

    /// Wait until the job leaves `discovering` (it is then awaiting the user, or has ended).
    pub async fn wait_until_ready(&self, job: &str) -> Result<JobStatus, OAuthError> {
        let mut rx = self.receiver(job)?;
        loop {
            let shared = rx.borrow_and_update().clone();
            if shared.status.state != JobState::Discovering {
                return Ok(present(shared));
            }
            if rx.changed().await.is_err() {
                return Ok(present(rx.borrow().clone()));
            }
        }
    }

    /// Cancel a job. Cancelling an ended job changes nothing.
    pub fn cancel(&self, job: &str) -> Result<(), OAuthError> {
        let input = self.input(job)?;
        let _ = input.try_send(Input::Cancel);
        Ok(())
    }

    /// Complete an `awaiting_user` job with the redirect URL the browser ended on (when it could
    /// not reach the loopback listener). A URL of another sign-in (wrong `state`) or another
    /// redirect URI is refused and the job keeps waiting; an error response from the
    /// authorization server ends the job.
    pub async fn complete_with_redirect_url(
        &self,
        job: &str,
        redirect_url: &str,
    ) -> Result<(), OAuthError> {
        let state = self
            .status(job)
            .ok_or_else(|| OAuthError::UnknownJob(job.to_string()))?
            .state;
        if state != JobState::AwaitingUser {
            return Err(OAuthError::JobState(format!(
                "the sign-in is {}, not waiting for the user; nothing to complete",
                state_label(state)
            )));
        }
        let input = self.input(job)?;
        let (tx, rx) = oneshot::channel();
        input
            .send(Input::Paste(redirect_url.to_string(), tx))
            .await
            .map_err(|_| OAuthError::JobState("the sign-in has already ended".into()))?;
        rx.await
            .map_err(|_| OAuthError::JobState("the sign-in has already ended".into()))?
    }

    /// Drop ended jobs from the table (their status can no longer be polled).
    pub fn forget_finished(&self) {
        self.lock()
            .retain(|_, h| !h.status.borrow().status.state.is_final());
    }

    fn receiver(&self, job: &str) -> Result<watch::Receiver<Shared>, OAuthError> {
        self.lock()
            .get(job)
            .map(|h| h.status.clone())
            .ok_or_else(|| OAuthError::UnknownJob(job.to_string()))
    }

    fn input(&self, job: &str) -> Result<mpsc::Sender<Input>, OAuthError> {
        self.lock()
            .get(job)
            .map(|h| h.input.clone())
            .ok_or_else(|| OAuthError::UnknownJob(job.to_string()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Handle>> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn present(shared: Shared) -> JobStatus {
    let mut status = shared.status;
    if status.state == JobState::AwaitingUser {
        status.expires_in_secs = shared.deadline.map(|d| {
            d.saturating_duration_since(Instant::now())
                .as_secs()
                .min(u32::MAX as u64) as u32
        });
    }
    status
}

fn state_label(state: JobState) -> &'static str {
    match state {
        JobState::Discovering => "still discovering",
        JobState::AwaitingUser => "waiting for the user",
        JobState::Exchanging => "exchanging the code",
        JobState::Succeeded => "already done",
        JobState::Failed => "failed",
        JobState::Expired => "expired",
        JobState::Cancelled => "cancelled",
    }
}

/// How a job ended, when not with success.
enum End {
    Failed(OAuthError),
    Expired,
    Cancelled,
}

impl From<OAuthError> for End {
    fn from(e: OAuthError) -> End {
        End::Failed(e)
    }
}

struct Job {
    ctx: OAuthContext,
    name: String,
    server: ServerConfig,
    options: StartOptions,
    status: watch::Sender<Shared>,
    input: mpsc::Receiver<Input>,
}

impl Job {
    async fn run(mut self) {
        let result = self.sign_in().await;
        let wait = self.ctx.options.wait_for_user;
        self.status.send_modify(|s| {
            // Every end state closes the sign-in: nothing should open the URL any more.
            s.deadline = None;
            s.status.expires_in_secs = None;
            s.status.authorization_url = None;
            match result {
                Ok(()) => s.status.state = JobState::Succeeded,
                Err(End::Failed(e)) => {
                    s.status.state = JobState::Failed;
                    s.status.error = Some(e.to_string());
                }
                Err(End::Expired) => {
                    s.status.state = JobState::Expired;
                    s.status.error = Some(format!(
                        "nobody completed the sign-in within {} s; start it again",
                        wait.as_secs()
                    ));
                }
                Err(End::Cancelled) => {
                    s.status.state = JobState::Cancelled;
                    s.status.error = Some("the sign-in was cancelled".into());
                }
            }
        });
    }

    fn set(&self, f: impl FnOnce(&mut Shared)) {
        self.status.send_modify(f);
    }

    async fn sign_in(&mut self) -> Result<(), End> {
        // A grant without a user has nothing to wait for: its tokens are obtained at once.
        if super::machine::without_user(&self.server) {
            let name = self.name.clone();
            let server = self.server.clone();
            let challenge = self.options.challenge.clone();
            let ns = namespace(&name, &server).to_string();
            let _lock = super::refresh::RefreshLock::acquire(&self.ctx, &ns).await?;
            tokio::select! {
                got = self.ctx.obtain_without_user(&name, &server, challenge.as_deref()) => got?,
                ended = until_cancelled(&mut self.input) => return Err(ended),
            };
            return Ok(());
        }
        let (settings, url) = oauth_settings(&self.server)?;
        let url = url.to_string();
        let store = self.ctx.store.clone();
        let ns = namespace(&self.name, &self.server).to_string();
        let sse = self.server.transport == TransportKind::Sse;

        // Discovery can take a while against a slow server; a cancel must still be honoured.
        let discovery = tokio::select! {
            d = discover(&self.ctx.http, &url, sse, self.options.challenge.as_deref(), &settings) => d?,
            ended = until_cancelled(&mut self.input) => return Err(ended),
        };

        let previous = load_tokens(store.as_ref(), &ns)?.filter(|r| r.server_url == url);
        let mut extra = self.options.extra_scopes.clone();
        let mut step_up_attempts = 0;
        let mut step_up_at = 0;
        if let Some(step) = previous.as_ref().and_then(|r| r.step_up.as_ref())
            && !step.scopes.is_empty()
        {
            // A step-up keeps what was granted and adds what the server asked for.
            extra.extend(
                previous
                    .as_ref()
                    .map(|r| r.scopes.clone())
                    .unwrap_or_default(),
            );
            extra.extend(step.scopes.iter().cloned());
            step_up_attempts = step.attempts;
            step_up_at = step.at;
        }
        let scopes = select_scopes(&discovery, &settings.scopes, &extra);

        let stored_client = load_client(store.as_ref(), &ns)?;
        let preferred_port = stored_client
            .as_ref()
            .filter(|c| c.issuer == discovery.auth_server.issuer)
            .and_then(|c| url::Url::parse(&c.redirect_uri).ok())
            .and_then(|u| u.port());
        let listener = Listener::bind(settings.callback_port, preferred_port).await?;
        let redirect_uri = listener.redirect_uri();

        let configured_secret = configured_client_secret(store.as_ref(), &self.name, &self.server)?;
        let previous = load_tokens(store.as_ref(), &ns)?;
        let bound_issuer = previous
            .as_ref()
            .filter(|t| t.client_source == ClientSource::PreRegistered)
            .map(|t| t.issuer.clone());
        let metadata_url = self.ctx.options.client_metadata_url.as_deref();
        let (client, registered) = client_identity(
            &self.ctx.http,
            &discovery.auth_server,
            ClientChoice {
                settings: &settings,
                configured_secret,
                metadata_document_url: metadata_url,
                stored: stored_client.as_ref(),
                bound_issuer: bound_issuer.as_deref(),
                redirect_uri: &redirect_uri,
                client_name: &self.ctx.options.client_name,
            },
        )
        .await?;
        if let Some(registration) = &registered {
            save_client(store.as_ref(), &ns, registration)?;
        }

        let pkce = Pkce::new();
        let state = random_token(24);
        let auth_url = authorization_url(&AuthorizationRequest {
            endpoint: &discovery.auth_server.authorization_endpoint,
            client_id: &client.client_id,
            redirect_uri: &redirect_uri,
            scopes: &scopes,
            state: &state,
            code_challenge: &pkce.challenge,
            resource: &discovery.resource,
        })?;

        let (deliveries_tx, mut deliveries) = mpsc::channel::<Delivery>(4);
        let server_task = tokio::spawn(listener.serve(deliveries_tx));
        let mut stop_listener = AbortOnDrop(Some(server_task));
        let deadline = Instant::now() + self.ctx.options.wait_for_user;
        self.set(|s| {
            s.status.state = JobState::AwaitingUser;
            s.status.authorization_url = Some(auth_url.to_string());
            s.status.redirect_uri = Some(redirect_uri.clone());
            s.status.scopes = scopes.clone();
            s.deadline = Some(deadline);
        });

        let code = loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline.into()) => return Err(End::Expired),
                input = self.input.recv() => match input {
                    None | Some(Input::Cancel) => return Err(End::Cancelled),
                    Some(Input::Paste(text, reply)) => {
                        let checked = parse_pasted_redirect(&text, &redirect_uri)
                            .and_then(|p| check_response(p, &state, &discovery));
                        match checked {
                            Ok(code) => {
                                let _ = reply.send(Ok(()));
                                break code;
                            }
                            Err(OAuthError::AuthorizationDenied(why)) => {
                                let _ = reply.send(Err(OAuthError::AuthorizationDenied(why.clone())));
                                return Err(End::Failed(OAuthError::AuthorizationDenied(why)));
                            }
                            Err(e) => {
                                let _ = reply.send(Err(e));
                            }
                        }
                    }
                },
                delivery = deliveries.recv() => {
                    let Some((params, verdict)) = delivery else { continue };
                    match check_response(params, &state, &discovery) {
                        Err(OAuthError::StateMismatch) => {
                            // Anyone on this machine (or any web page) can reach the listener:
                            // a response of another sign-in must not end this one.
                            let _ = verdict.send(Verdict::Ignored(
                                "This response's `state` does not match the sign-in Plugboard \
                                 is waiting for, so it was ignored; that sign-in goes on."
                                    .into(),
                            ));
                        }
                        Ok(code) => {
                            // The listener answers the browser and stops on its own.
                            let _ = verdict.send(Verdict::Accepted);
                            stop_listener.disarm();
                            break code;
                        }
                        Err(e) => {
                            let _ = verdict.send(Verdict::Fatal(e.to_string()));
                            stop_listener.disarm();
                            return Err(End::Failed(e));
                        }
                    }
                }
            }
        };
        drop(stop_listener);

        self.set(|s| {
            s.status.state = JobState::Exchanging;
            s.status.authorization_url = None;
            s.deadline = None;
        });
        let reply = tokio::select! {
            r = exchange_code(
                &self.ctx.http,
                &discovery.auth_server.token_endpoint,
                &client,
                &code,
                &pkce.verifier,
                &redirect_uri,
                &discovery.resource,
            ) => r?,
            ended = until_cancelled(&mut self.input) => return Err(ended),
        };
        let tokens = match reply {
            TokenReply::Issued(tokens) => tokens,
            TokenReply::Refused { message, .. } => {
                return Err(End::Failed(OAuthError::TokenEndpoint(message)));
            }
        };
        let now = now_secs();
        let now_ms = now_millis();
        let record = TokenRecord {
            access_token: tokens.access_token.expose().clone(),
            token_type: tokens.token_type,
            refresh_token: tokens.refresh_token.map(|r| r.into_inner()),
            expires_at_ms: tokens
                .expires_in
                .map(|s| now_ms.saturating_add(s.saturating_mul(1000))),
            obtained_at: now,
            scopes: tokens.scope.unwrap_or_else(|| scopes.clone()),
            token_endpoint: discovery.auth_server.token_endpoint.clone(),
            revocation_endpoint: discovery.auth_server.revocation_endpoint.clone(),
            issuer: discovery.auth_server.issuer.clone(),
            resource: discovery.resource.clone(),
            server_url: url.clone(),
            client_id: client.client_id.clone(),
            client_source: client.source,
            auth_method: client.auth_method,
            step_up: (step_up_attempts > 0).then_some(StepUp {
                scopes: vec![],
                attempts: step_up_attempts,
                at: step_up_at,
            }),
        };
        let _lock = RefreshLock::acquire(&self.ctx, &ns).await?;
        save_tokens(store.as_ref(), &ns, &record)?;
        Ok(())
    }
}

/// Resolves when the job is cancelled (or its owner went away).
async fn until_cancelled(input: &mut mpsc::Receiver<Input>) -> End {
    loop {
        match input.recv().await {
            None | Some(Input::Cancel) => return End::Cancelled,
            Some(Input::Paste(_, reply)) => {
                let _ = reply.send(Err(OAuthError::JobState(
                    "the sign-in is not waiting for the user yet".into(),
                )));
            }
        }
    }
}

/// Check an authorization response against this sign-in: `state` first (a response of another
/// sign-in is refused whatever it says), then an error response, then RFC 9207 `iss`, then the
/// code.
fn check_response(
    params: CallbackParams,
    state: &str,
    discovery: &Discovery,
) -> Result<crate::secrets::Sensitive<String>, OAuthError> {
    if params.state.as_deref() != Some(state) {
        return Err(OAuthError::StateMismatch);
    }
    let code_text = params
        .code
        .as_ref()
        .map(|c| c.expose().clone())
        .unwrap_or_default();
    if let Some(error) = params.error {
        let description = params
            .error_description
            .map(|d| format!(" ({})", scrub(&d, &[&code_text])))
            .unwrap_or_default();
        return Err(OAuthError::AuthorizationDenied(format!(
            "{}{description}",
            scrub(&error, &[&code_text])
        )));
    }
    // RFC 9207 §2.4: a simple string comparison with the issuer recorded from the metadata, no
    // normalisation (a trailing slash is another issuer).
    let issuer = &discovery.auth_server.issuer;
    match params.iss.as_deref() {
        Some(iss) if iss != issuer => {
            return Err(OAuthError::IssuerMismatch(format!(
                "expected `{issuer}`, got `{}`",
                scrub(iss, &[&code_text])
            )));
        }
        None if discovery
            .auth_server
            .authorization_response_iss_parameter_supported =>
        {
            return Err(OAuthError::IssuerMismatch(format!(
                "the server promises an `iss` parameter (RFC 9207) but sent none; expected \
                 `{issuer}`"
            )));
        }
        _ => {}
    }
    params
        .code
        .ok_or_else(|| OAuthError::BadRedirect("the authorization response carries no code".into()))
}

/// Aborts the listener task when dropped, unless disarmed (the listener then finishes its last
/// answer and stops by itself).
struct AbortOnDrop(Option<tokio::task::JoinHandle<()>>);

impl AbortOnDrop {
    fn disarm(&mut self) {
        self.0.take();
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}
