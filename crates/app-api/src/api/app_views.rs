//! MCP Apps views for Try it: a tool's page is read through its session and kept here under an
//! unguessable id; the app's window shows it in a sandboxed frame whose address names that id
//! (`mcp-app://localhost/ID`), served by the shell with the page's own Content-Security-Policy
//! ([`Api::app_view_page`]). The page itself never crosses IPC, and a view's calls to tools
//! go through [`Api::session_call_task`] with `from_view`, where the session checks the tool's
//! visibility.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::{Api, ApiError};

/// The scheme the shell serves view pages under.
pub const SCHEME: &str = "mcp-app";
/// Pages kept at once (the oldest is dropped first).
const KEPT: usize = 16;

/// A view as the app shows it (its page stays in the core).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct AppViewInfo {
    pub view_id: String,
    /// What the frame loads.
    pub url: String,
    pub tool: String,
    pub resource_uri: String,
    /// The frame's `allow` list (features the page declared).
    pub allow: String,
    pub prefers_border: bool,
    /// Domains the page may reach or load from.
    pub domains: Vec<String>,
    /// Parts of its declaration left out, and why.
    pub notes: Vec<String>,
}

/// A page and the policy it is served with.
#[derive(Clone, Debug)]
pub struct AppPage {
    pub html: Arc<str>,
    pub csp: String,
}

/// The pages of open views, by id.
#[derive(Default)]
pub(super) struct AppPages {
    pages: Mutex<Vec<(String, AppPage)>>,
}

impl AppPages {
    fn insert(&self, page: AppPage) -> String {
        let id = format!("{:032x}", rand::random::<u128>());
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        if pages.len() >= KEPT {
            pages.remove(0);
        }
        pages.push((id.clone(), page));
        id
    }

    fn get(&self, id: &str) -> Option<AppPage> {
        let pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        pages.iter().find(|(i, _)| i == id).map(|(_, p)| p.clone())
    }

    fn remove(&self, id: &str) {
        self.pages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(i, _)| i != id);
    }
}

impl Api {
    /// Read the page of `tool`'s UI in session `id` and keep it for the frame.
    pub fn session_app_view_task(
        self: &Arc<Self>,
        id: String,
        tool: String,
    ) -> impl Future<Output = Result<AppViewInfo, ApiError>> + Send + 'static {
        let api = Arc::clone(self);
        let work = self.sessions.spawn({
            let api = Arc::clone(self);
            async move {
                let open = api.sessions.get(&id)?;
                Ok(open.session.app_view(&tool).await?)
            }
        });
        async move {
            let view = work.await?;
            let view_id = api.app_pages.insert(AppPage {
                html: Arc::from(view.html.as_str()),
                csp: view.csp.clone(),
            });
            Ok(AppViewInfo {
                url: format!("{SCHEME}://localhost/{view_id}"),
                view_id,
                tool: view.tool,
                resource_uri: view.resource_uri,
                allow: view.allow,
                prefers_border: view.prefers_border,
                domains: view.domains,
                notes: view.notes,
            })
        }
    }

    /// The page of view `view_id` and its Content-Security-Policy, for the shell to serve.
    pub fn app_view_page(&self, view_id: &str) -> Option<AppPage> {
        self.app_pages.get(view_id)
    }

    /// Forget view `view_id` (its frame closed).
    pub fn close_app_view(&self, view_id: &str) {
        self.app_pages.remove(view_id);
    }
}
