//! The app's updates of installed registry servers: which have a newer version (for the
//! "update available" badge), an update prepared and tested with its tool diff shown before it
//! is applied, applied or discarded by the user. A prepared update holds a fetched bundle,
//! removed again when the update is discarded.

use std::collections::HashMap;
use std::sync::Mutex;

use super::dto::{OutdatedView, UpdatePreview};
use super::testing::{StageProgress, TestReport};
use super::{Api, ApiError, ErrorCode, ServerView, ToolDiff};
use crate::clock::now_ms;
use crate::pinning::{DiffReport, Snapshot};
use crate::updates::{self, PendingUpdate, Standing, UpdateError};

/// Tested updates waiting for the user's go-ahead.
#[derive(Default)]
pub struct PendingUpdates {
    pending: Mutex<HashMap<String, PendingUpdate>>,
}

impl PendingUpdates {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, PendingUpdate>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl From<UpdateError> for ApiError {
    fn from(err: UpdateError) -> Self {
        match err {
            UpdateError::Policy(r) => r.into(),
            UpdateError::Bundle(e) => e.into(),
            UpdateError::Secrets(e) => e.into(),
            UpdateError::Manage(e) => e.into(),
            UpdateError::Config(e) => e.into(),
            UpdateError::Form(e) => e.into(),
            other => ApiError::new(ErrorCode::Update, other.to_string()),
        }
    }
}

fn standing(s: &Standing) -> &'static str {
    match s {
        Standing::Current => "current",
        Standing::UpdateAvailable => "update_available",
        Standing::NotListed => "not_listed",
        Standing::Removed => "removed",
    }
}

impl Api {
    /// Every installed registry server and where it stands, from the cached registry listings
    /// (the marketplace's sync keeps them fresh).
    pub fn outdated(&self) -> Result<Vec<OutdatedView>, ApiError> {
        let market = self.market()?;
        Ok(updates::outdated(&self.servers, market.listing())?
            .into_iter()
            .map(|r| OutdatedView {
                state: standing(&r.state).into(),
                name: r.name,
                registry_name: r.registry_name,
                installed: r.installed,
                latest: r.latest,
                deprecated: r.deprecated,
                removed: r.removed,
                bundle: r.bundle,
            })
            .collect())
    }

    /// Prepare `name`'s update to `to` (the latest when `None`): re-resolved with its values
    /// and secrets, tested; nothing is saved. The preview's token applies or discards it.
    /// When the new version would take the server's secrets to a new program, package or host,
    /// nothing is started unless `accept_new_destination`: the error `update_new_destination`
    /// says what changes, for the user to agree to.
    pub async fn prepare_update(
        &self,
        name: &str,
        to: Option<&str>,
        accept_new_destination: bool,
        mut progress: impl FnMut(StageProgress) + Send,
    ) -> Result<UpdatePreview, ApiError> {
        let market = self.market()?;
        let policy = crate::policy::current();
        let planned = updates::plan(&self.servers, &market, &policy, name, to, &[]).await?;
        if planned.launch.needs_consent() && !accept_new_destination {
            return Err(ApiError::new(
                ErrorCode::UpdateNewDestination,
                format!(
                    "{} {} would get this server's secrets, and it runs another program or \
                     package or talks to another host: {}. Nothing was started.",
                    name,
                    planned.to_version,
                    planned
                        .launch
                        .lines()
                        .iter()
                        .map(|l| l.trim())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ));
        }
        let launch = planned.launch.clone();
        let pending = planned
            .test(|e| {
                if let Some(p) = super::testing::progress_of(e) {
                    progress(p)
                }
            })
            .await;
        let snapshot = Snapshot::of(&pending.test.tools, pending.test.instructions.as_deref());
        let diff = ToolDiff::from(&DiffReport {
            name: name.to_owned(),
            state: if pending.changes.is_empty() {
                "approved".into()
            } else {
                "tools_changed".into()
            },
            approved_at_ms: None,
            observed_at_ms: Some(snapshot.observed_at_ms),
            changes: pending.changes.clone(),
            flags: snapshot.flags(),
        });
        let preview = UpdatePreview {
            token: format!("{:016x}", rand::random::<u64>()),
            name: name.to_owned(),
            from: pending.from_version.clone(),
            to: pending.to_version.clone(),
            passed: pending.passed(),
            test: TestReport::from_result(&pending.test, now_ms()),
            tools: diff,
            dropped_fields: pending.dropped_inputs.clone(),
            launch,
        };
        if pending.passed() {
            self.updates.lock().insert(preview.token.clone(), pending);
        }
        Ok(preview)
    }

    /// [`Api::prepare_update`] on a thread of its own: what the app's command awaits.
    pub fn prepare_update_task(
        self: &std::sync::Arc<Self>,
        name: String,
        to: Option<String>,
        accept_new_destination: bool,
        progress: impl FnMut(StageProgress) + Send + 'static,
    ) -> impl Future<Output = Result<UpdatePreview, ApiError>> + Send + 'static {
        let api = std::sync::Arc::clone(self);
        super::testing::on_own_thread(move || async move {
            api.prepare_update(&name, to.as_deref(), accept_new_destination, progress)
                .await
        })
    }

    /// Apply a prepared, passing update.
    pub fn apply_update(&self, token: &str) -> Result<ServerView, ApiError> {
        let pending = self.updates.lock().remove(token).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                "this update was discarded or applied already; check again",
            )
        })?;
        let name = pending.name.clone();
        updates::apply(&self.servers, pending)?;
        self.server(&name)
    }

    /// Drop a prepared update: nothing changes, its fetched bundle is removed.
    pub fn discard_update(&self, token: &str) -> bool {
        self.updates.lock().remove(token).is_some()
    }
}
