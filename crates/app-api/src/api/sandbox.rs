//! A server's sandbox for the app: the summary on its card, the panel in its detail (what it
//! may touch, whether the kernel enforces it) and changes to it. All logic is in
//! [`crate::sandbox`]; this module only shapes it for IPC. Paths are the user's own folders,
//! never secrets.

use serde::{Deserialize, Serialize};

use super::{Api, ApiError};
use crate::sandbox::{self, SandboxChange, SandboxState, SandboxView};

/// One granted path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct SandboxGrant {
    /// With the home as `~`.
    pub path: String,
    /// `system`, `runtime`, `cache`, `argument`, `environment`, `working_dir`, `temp`, `user`.
    pub reason: String,
}

/// A server's sandbox as its detail page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct SandboxPanel {
    /// `enforced`, `not_enforced` (on, but this kernel cannot: it runs unconfined), `off` or
    /// `not_applicable` (a remote server).
    pub state: String,
    /// One sentence: "Can read and write ~/notes; no network (…)".
    pub summary: String,
    /// `any`, `none` or `HOST:PORT,…`.
    pub network: String,
    pub write: Vec<SandboxGrant>,
    pub read: Vec<SandboxGrant>,
    /// What the user granted and denied by hand.
    pub allow_read: Vec<String>,
    pub allow_write: Vec<String>,
    pub deny: Vec<String>,
    pub kernel_abi: u32,
    pub problem: Option<String>,
}

/// A change to a server's sandbox; absent fields stay as they are.
#[derive(Clone, Debug, Default, Deserialize, specta::Type)]
pub struct SandboxRequest {
    pub enabled: Option<bool>,
    /// `any`, `none` or `HOST[:PORT],…`.
    pub network: Option<String>,
    #[serde(default)]
    pub allow_read: Vec<String>,
    #[serde(default)]
    pub allow_write: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The name of a sandbox state, as the app's IPC carries it.
pub(super) fn state_name(state: SandboxState) -> &'static str {
    match state {
        SandboxState::Enforced => "enforced",
        SandboxState::NotEnforced => "not_enforced",
        SandboxState::Off => "off",
        SandboxState::NotApplicable => "not_applicable",
    }
}

fn panel(view: SandboxView) -> SandboxPanel {
    let grants = |list: Vec<sandbox::GrantView>| {
        list.into_iter()
            .map(|g| SandboxGrant {
                path: g.path,
                reason: g.reason.to_owned(),
            })
            .collect()
    };
    SandboxPanel {
        state: state_name(view.state).to_owned(),
        summary: view.summary,
        network: view.network,
        write: grants(view.write),
        read: grants(view.read),
        allow_read: view.allow_read,
        allow_write: view.allow_write,
        deny: view.deny,
        kernel_abi: view.kernel_abi,
        problem: view.problem,
    }
}

impl Api {
    /// What server `name` may touch, and whether the kernel enforces it.
    pub fn server_sandbox(&self, name: &str) -> Result<SandboxPanel, ApiError> {
        Ok(panel(sandbox::view(&self.servers, name)?))
    }

    /// Change server `name`'s sandbox. Refused, with nothing saved, when it could not be
    /// enforced as asked. The app tests the server again afterwards.
    pub fn set_sandbox(
        &self,
        name: &str,
        request: SandboxRequest,
    ) -> Result<SandboxPanel, ApiError> {
        let network = request
            .network
            .as_deref()
            .map(sandbox::Network::parse)
            .transpose()
            .map_err(|m| ApiError::field("network", m))?;
        let change = SandboxChange {
            enabled: request.enabled,
            network,
            allow_read: request.allow_read,
            allow_write: request.allow_write,
            deny: request.deny,
        };
        Ok(panel(sandbox::change(&self.servers, name, &change)?))
    }
}
