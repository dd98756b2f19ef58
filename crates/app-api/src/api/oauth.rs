//! OAuth sign-in for the app, driven the same way as `plugboard auth`: start a job, poll its
//! status (the UI polls every second), open the authorization URL once the job is awaiting the
//! user, or complete it with a pasted redirect URL; cancel it. Tokens never leave the core.

use std::sync::OnceLock;

use super::{Api, ApiError, ErrorCode};
use crate::oauth::{JobStatus, OAuthContext, OAuthError, OAuthJobs};

impl From<OAuthError> for ApiError {
    fn from(err: OAuthError) -> ApiError {
        let code = match &err {
            OAuthError::Config(_) => ErrorCode::Invalid,
            OAuthError::UnknownJob(_) => ErrorCode::NotFound,
            OAuthError::BadRedirect(_) => {
                return ApiError::field("redirect_url", err.to_string());
            }
            _ => ErrorCode::Oauth,
        };
        let message = err.to_string();
        ApiError::new(code, message)
    }
}

/// The app's sign-in jobs, created on first use (they need the keyring).
#[derive(Default)]
pub(super) struct OAuth {
    jobs: OnceLock<OAuthJobs>,
}

impl Api {
    fn oauth_jobs(&self) -> Result<&OAuthJobs, ApiError> {
        if let Some(jobs) = self.oauth.jobs.get() {
            return Ok(jobs);
        }
        let store = self.servers.secrets()?.clone();
        let context = OAuthContext::new(store, self.servers.config().dir())?;
        Ok(self.oauth.jobs.get_or_init(|| OAuthJobs::new(context)))
    }

    /// Start signing in to installed server `name`. Must run inside a Tokio runtime (the job
    /// runs there). Returns the first status.
    pub fn oauth_start(&self, name: &str) -> Result<JobStatus, ApiError> {
        let server = self.servers.config().load()?.server(name)?;
        let jobs = self.oauth_jobs()?;
        jobs.forget_finished();
        let job = jobs.start(name, &server)?;
        self.oauth_status(&job)
    }

    /// Where a sign-in job is.
    pub fn oauth_status(&self, job: &str) -> Result<JobStatus, ApiError> {
        self.oauth_jobs()?
            .status(job)
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no sign-in `{job}`")))
    }

    /// Open the job's authorization URL in the browser. The URL comes from the core (validated
    /// there: https, or http on loopback), never from the UI.
    pub fn oauth_open(&self, job: &str) -> Result<(), ApiError> {
        let status = self.oauth_status(job)?;
        let url = status.authorization_url.ok_or_else(|| {
            ApiError::new(
                ErrorCode::Invalid,
                "the sign-in is not waiting for the browser",
            )
        })?;
        super::open_in_browser(&url)
    }

    /// Complete a job with the URL the browser was redirected to (when it could not reach the
    /// loopback listener).
    pub async fn oauth_paste(&self, job: &str, redirect_url: &str) -> Result<JobStatus, ApiError> {
        self.oauth_jobs()?
            .complete_with_redirect_url(job, redirect_url.trim())
            .await?;
        self.oauth_status(job)
    }

    /// After job `job` succeeded: switch its server to OAuth when it had no auth (a 401 that
    /// advertised OAuth led the user here), so the test that follows uses the new token.
    /// Returns the server's view. Refused unless the job succeeded.
    pub fn oauth_complete(&self, job: &str) -> Result<super::ServerView, ApiError> {
        let status = self.oauth_status(job)?;
        if status.state != crate::oauth::JobState::Succeeded {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                "the sign-in has not succeeded; there is nothing to complete",
            ));
        }
        self.servers.adopt_oauth(&status.server)?;
        self.server(&status.server)
    }

    /// Cancel a job (closes its listener). Cancelling an ended job changes nothing.
    pub fn oauth_cancel(&self, job: &str) -> Result<JobStatus, ApiError> {
        self.oauth_jobs()?.cancel(job)?;
        self.oauth_status(job)
    }
}
