//! The lists a session shows: tools, resources, resource templates and prompts, every page
//! (at most [`MAX_PAGES`]), kept as the server sent them. Fetched when the session opens
//! (those the server declares, at the same time) and again after a `list_changed`.

use std::collections::HashSet;

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::{Peer, ServiceError};
use serde_json::Value;

use super::shared::{Lists, Shared};

/// At most this many pages of one list.
pub const MAX_PAGES: usize = 100;

/// One of the lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl ListKind {
    fn key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::Templates => "resourceTemplates",
            ListKind::Prompts => "prompts",
        }
    }

    /// The name in a `ListChanged` event.
    pub fn name(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources | ListKind::Templates => "resources",
            ListKind::Prompts => "prompts",
        }
    }

    fn request(self, cursor: Option<String>) -> ClientRequest {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        match self {
            ListKind::Tools => {
                ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params))
            }
            ListKind::Resources => {
                ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params))
            }
            ListKind::Templates => ClientRequest::ListResourceTemplatesRequest(
                ListResourceTemplatesRequest::with_param(params),
            ),
            ListKind::Prompts => {
                ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params))
            }
        }
    }
}

/// Every item of `kind`. `-32601` (the server has no such method) is an empty list.
pub async fn fetch(peer: &Peer<RoleClient>, kind: ListKind) -> Result<Vec<Value>, ServiceError> {
    let mut items = vec![];
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let result = match peer.send_request(kind.request(cursor.clone())).await {
            Ok(result) => result,
            Err(ServiceError::McpError(e)) if e.code.0 == -32601 => return Ok(items),
            Err(e) => return Err(e),
        };
        let json = serde_json::to_value(&result).unwrap_or(Value::Null);
        if let Some(Value::Array(page)) = json.get(kind.key()) {
            items.extend(page.iter().cloned());
        }
        match json.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() && seen.insert(next.to_string()) => {
                cursor = Some(next.to_string())
            }
            _ => break,
        }
    }
    Ok(items)
}

/// The lists the server declares, fetched at the same time. A list that fails is empty
/// (the failure is the first of `Err`).
pub async fn fetch_declared(
    peer: &Peer<RoleClient>,
    capabilities: &ServerCapabilities,
) -> (Lists, Option<ServiceError>) {
    let tools = fetch(peer, ListKind::Tools);
    let resources = async {
        match capabilities.resources {
            Some(_) => fetch(peer, ListKind::Resources).await,
            None => Ok(vec![]),
        }
    };
    let templates = async {
        match capabilities.resources {
            Some(_) => fetch(peer, ListKind::Templates).await,
            None => Ok(vec![]),
        }
    };
    let prompts = async {
        match capabilities.prompts {
            Some(_) => fetch(peer, ListKind::Prompts).await,
            None => Ok(vec![]),
        }
    };
    let (tools, resources, templates, prompts) = futures::join!(
        Box::pin(tools),
        Box::pin(resources),
        Box::pin(templates),
        Box::pin(prompts)
    );
    let mut error = None;
    let mut take = |r: Result<Vec<Value>, ServiceError>| match r {
        Ok(items) => items,
        Err(e) => {
            error.get_or_insert(e);
            vec![]
        }
    };
    let lists = Lists {
        tools: take(tools),
        resources: take(resources),
        templates: take(templates),
        prompts: take(prompts),
    };
    (lists, error)
}

/// Fetch `kind` again (after `list_changed`) into the session's lists.
pub(super) async fn refresh(shared: &Shared, peer: &Peer<RoleClient>, kind: ListKind) -> bool {
    let kinds = match kind {
        ListKind::Resources | ListKind::Templates => vec![ListKind::Resources, ListKind::Templates],
        other => vec![other],
    };
    for kind in kinds {
        let Ok(items) = fetch(peer, kind).await else {
            return false;
        };
        let mut lists = shared.lists.write().unwrap_or_else(|p| p.into_inner());
        match kind {
            ListKind::Tools => lists.tools = items,
            ListKind::Resources => lists.resources = items,
            ListKind::Templates => lists.templates = items,
            ListKind::Prompts => lists.prompts = items,
        }
    }
    true
}
