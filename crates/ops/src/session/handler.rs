//! The client side of a session as rmcp sees it: what Plugboard tells the server it can do
//! (elicitation in form and URL mode, roots with change notices, sampling — which it then
//! declines), and what it does with the server's requests (the [`super::questions`]) and
//! notifications (progress and log messages become events; `list_changed` refetches the list).
// Sampling, roots and logging are deprecated by the modern era's SEP-2577 in rmcp, but legacy
// servers (most of them) use them: a session must still answer them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    CustomNotification, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult, ErrorCode,
    ErrorData, ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;

use super::events::SessionEvent;
use super::lists::{self, ListKind};
use super::questions::USER_REJECTED;
use super::shared::Shared;

/// The handler of one session.
#[derive(Clone)]
pub(super) struct SessionHandler {
    pub(super) shared: Arc<Shared>,
}

/// What the session offers the server: what Plugboard supports, as a test declares it too,
/// and the tasks extension, whose tasks a session follows to their results (a test makes no
/// call that could become one).
pub fn capabilities() -> ClientCapabilities {
    let mut capabilities = crate::connect::test_client::plugboard_capabilities();
    capabilities
        .extensions
        .get_or_insert_default()
        .insert(rmcp::model::TASKS_EXTENSION_ID.into(), Default::default());
    capabilities
}

/// How long after a `list_changed` the list is fetched again (a burst of them is fetched once).
const SETTLE_LIST: std::time::Duration = std::time::Duration::from_millis(50);

impl SessionHandler {
    fn refresh(&self, peer: rmcp::service::Peer<RoleClient>, kind: ListKind) {
        let shared = self.shared.clone();
        let notice = {
            let mut notices = shared
                .list_notices
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let count = notices.entry(kind.name()).or_insert(0);
            *count += 1;
            *count
        };
        tokio::spawn(async move {
            tokio::time::sleep(SETTLE_LIST).await;
            let latest = shared
                .list_notices
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(kind.name())
                .copied();
            if latest != Some(notice) {
                return;
            }
            if lists::refresh(&shared, &peer, kind).await {
                shared.emit(SessionEvent::ListChanged {
                    list: kind.name().to_string(),
                });
            }
        });
    }
}

/// What a session says about Plugboard: its identity, with the session's capabilities.
pub(super) fn client_info() -> ClientConfig {
    let mut info = crate::connect::client_config();
    info.capabilities = capabilities();
    info
}

impl ClientHandler for SessionHandler {
    /// What a test connection says about Plugboard, with the session's capabilities.
    fn get_info(&self) -> ClientConfig {
        client_info()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let call = self.shared.current_call();
        let result = self
            .shared
            .questions
            .elicit(&self.shared, &params, call)
            .await;
        serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let call = self.shared.current_call();
        let params = serde_json::to_value(&params).unwrap_or(Value::Null);
        match self
            .shared
            .questions
            .sample(&self.shared, &params, call)
            .await
        {
            Ok(result) => serde_json::from_value(result)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            Err(message) => Err(ErrorData::new(ErrorCode(USER_REJECTED), message, None)),
        }
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let call = self.shared.current_call();
        let roots = self
            .shared
            .questions
            .list_roots(&self.shared, call)
            .await
            .map_err(|why| ErrorData::internal_error(why, None))?;
        serde_json::from_value(roots).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// A request rmcp could not read as one it knows: an `elicitation/create` whose schema
    /// its types do not cover is still answered from the raw JSON.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != "elicitation/create" {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let params = request.params.unwrap_or(Value::Null);
        let call = self.shared.current_call();
        let result = self
            .shared
            .questions
            .elicit(&self.shared, &params, call)
            .await;
        Ok(CustomResult(result))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = match serde_json::to_value(&params.progress_token) {
            Ok(Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(_) => return,
        };
        let Some(call_id) = self.shared.call_of_token(&token) else {
            return;
        };
        self.shared.emit(SessionEvent::Progress {
            call_id,
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = match serde_json::to_value(params.level) {
            Ok(Value::String(level)) => level,
            _ => "info".to_string(),
        };
        let text = match params.data {
            Value::String(text) => text,
            other => other.to_string(),
        };
        self.shared.emit(SessionEvent::Log {
            level,
            logger: params.logger,
            text,
        });
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.refresh(context.peer, ListKind::Tools);
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.refresh(context.peer, ListKind::Resources);
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.refresh(context.peer, ListKind::Prompts);
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/elicitation/complete" {
            self.shared.emit(SessionEvent::Notice {
                call_id: self.shared.current_call(),
                text: "the server says the step in the browser is done".to_string(),
            });
        }
    }
}
