//! Tool calls that run as tasks, in both forms servers use:
//!
//! - **Task-augmented calls (protocol 2025-11-25).** A server may require a call to carry a
//!   `task` parameter; it then answers at once with a task (`{"task": {"taskId", "status",
//!   "pollInterval"}}`) and does the work in the background. The session follows it:
//!   `tasks/get` until the task needs input, ends or fails; then `tasks/result`, which delivers
//!   the questions the task queued (elicitations, answered by the session's asker like any
//!   other) and returns the call's result. Which tools need a task is declared in `tools/list`
//!   (`execution.taskSupport`), which the rmcp model this session is built on does not keep; a
//!   call is therefore made plainly first and made again as a task when the server's answer
//!   says the tool requires one.
//! - **The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28).** A session declares
//!   the extension in every request; the server decides per call whether to answer with a task
//!   (`resultType: "task"`, `taskId`, `status`, `pollIntervalMs`). The session polls `tasks/get`,
//!   whose answer carries the result inline when `completed`, the JSON-RPC error when `failed`,
//!   and `inputRequests` when `input_required`; those are answered by the session's asker and
//!   sent back with `tasks/update` (each key once).
//!
//! In both, each new status is reported as an event of the call, and a call given up
//! (cancelled, timed out) cancels its task with `tasks/cancel`.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::Peer;
use serde_json::{Map, Value, json};

use super::{Session, SessionError, SessionEvent};

/// How long the server should keep a task's result (milliseconds).
const TASK_TTL_MS: u64 = 10 * 60 * 1000;
/// Bounds on how often `tasks/get` is sent, whatever the server's `pollInterval` says.
const POLL_FASTEST: Duration = Duration::from_millis(250);
const POLL_SLOWEST: Duration = Duration::from_secs(5);

/// Whether a `tools/call` answer says the tool must be called as a task: a JSON-RPC style
/// "requires task augmentation" error, carried in an error result (the TypeScript SDK's form).
pub(super) fn asks_for_task(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
        && result
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items.iter().any(|item| {
                    item.get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.contains("requires task augmentation"))
                })
            })
}

/// The same request as a task-augmented `tools/call`.
pub(super) fn as_task(request: ClientRequest) -> ClientRequest {
    let value = serde_json::to_value(&request).unwrap_or_default();
    let mut params = value
        .get("params")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    params.insert("task".into(), json!({ "ttl": TASK_TTL_MS }));
    ClientRequest::CustomRequest(CustomRequest::new(
        "tools/call",
        Some(Value::Object(params)),
    ))
}

/// The task (2025-11-25 form) a `tools/call` answer hands back instead of a result: its id and
/// poll interval.
pub(super) fn created_task(result: &Value) -> Option<(String, Option<u64>)> {
    let task = result.get("task")?;
    let id = task.get("taskId")?.as_str()?.to_owned();
    Some((id, task.get("pollInterval").and_then(Value::as_u64)))
}

/// Whether a `tools/call` answer is a task of the tasks extension (`resultType: "task"`).
pub(super) fn is_extension_task(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("task")
}

/// How long to wait before the next `tasks/get`, from the server's suggestion (milliseconds).
fn poll_interval(suggested: Option<u64>) -> Duration {
    Duration::from_millis(suggested.unwrap_or(1000)).clamp(POLL_FASTEST, POLL_SLOWEST)
}

/// Cancels the task it holds when dropped (the call was given up) unless disarmed.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    task_id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let request =
                    CustomRequest::new("tasks/cancel", Some(json!({ "taskId": task_id })));
                let _ = peer
                    .send_request(ClientRequest::CustomRequest(request))
                    .await;
            });
        }
    }
}

impl Session {
    /// Follow task `task_id` (2025-11-25 form) of call `call_id` to its result.
    pub(super) async fn follow_task(
        &self,
        call_id: &str,
        task_id: &str,
        poll: Option<u64>,
    ) -> Result<Value, SessionError> {
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            task_id: Some(task_id.to_owned()),
        };
        let interval = poll_interval(poll);
        let mut shown = None;
        loop {
            let task = self
                .task_request("tasks/get", json!({ "taskId": task_id }))
                .await?;
            let status = self.report_task_status(call_id, &task, &mut shown);
            match status.as_str() {
                "completed" | "failed" | "input_required" => {
                    let result = self
                        .task_request("tasks/result", json!({ "taskId": task_id }))
                        .await;
                    guard.task_id = None;
                    return result;
                }
                "cancelled" => {
                    guard.task_id = None;
                    return Err(SessionError::Failed("the server cancelled the task".into()));
                }
                _ => tokio::time::sleep(interval).await,
            }
        }
    }

    /// Follow the task of the tasks extension that call `call_id` was answered with
    /// (`created`, the `CreateTaskResult`) to its result: poll `tasks/get`, answer its input
    /// requests with `tasks/update`, end with its inline result or error.
    pub(super) async fn follow_extension_task(
        &self,
        call_id: &str,
        created: &Value,
    ) -> Result<Value, SessionError> {
        let task_id = created
            .get("taskId")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                SessionError::Failed("the server answered with a task but gave it no id".into())
            })?
            .to_owned();
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            task_id: Some(task_id.clone()),
        };
        let mut shown = None;
        let mut answered = BTreeSet::new();
        let mut task = created.clone();
        loop {
            let status = self.report_task_status(call_id, &task, &mut shown);
            let interval = poll_interval(task.get("pollIntervalMs").and_then(Value::as_u64));
            match status.as_str() {
                "completed" => {
                    guard.task_id = None;
                    return match task.get("result") {
                        Some(result @ Value::Object(_)) => Ok(result.clone()),
                        _ => Err(SessionError::Failed(
                            "the server said the task completed but sent no result".into(),
                        )),
                    };
                }
                "failed" => {
                    guard.task_id = None;
                    let error = task.get("error");
                    return Err(SessionError::Rpc {
                        code: error
                            .and_then(|e| e.get("code"))
                            .and_then(Value::as_i64)
                            .and_then(|c| i32::try_from(c).ok())
                            .unwrap_or(-32603),
                        message: self.redactor().redact(
                            error
                                .and_then(|e| e.get("message"))
                                .and_then(Value::as_str)
                                .unwrap_or("the task failed without saying why"),
                        ),
                    });
                }
                "cancelled" => {
                    guard.task_id = None;
                    return Err(SessionError::Failed("the server cancelled the task".into()));
                }
                "input_required" => {
                    let requests: Map<String, Value> = task
                        .get("inputRequests")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                        .filter(|(key, _)| !answered.contains(*key))
                        .map(|(key, request)| (key.clone(), request.clone()))
                        .collect();
                    if requests.is_empty() {
                        tokio::time::sleep(interval).await;
                    } else {
                        let responses = self
                            .shared
                            .questions
                            .fulfil(&self.shared, &requests, call_id)
                            .await
                            .map_err(SessionError::Unanswerable)?;
                        answered.extend(requests.into_iter().map(|(key, _)| key));
                        self.task_request(
                            "tasks/update",
                            json!({ "taskId": task_id, "inputResponses": responses }),
                        )
                        .await?;
                    }
                }
                _ => tokio::time::sleep(interval).await,
            }
            task = self
                .task_request("tasks/get", json!({ "taskId": task_id }))
                .await?;
        }
    }

    /// Reports `task`'s status (and message) as an event of call `call_id` when it differs
    /// from the one `shown` last; returns the status.
    fn report_task_status(
        &self,
        call_id: &str,
        task: &Value,
        shown: &mut Option<(String, String)>,
    ) -> String {
        let status = task
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("working")
            .to_owned();
        let message = task
            .get("statusMessage")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if shown.as_ref() != Some(&(status.clone(), message.clone())) {
            self.shared.emit(SessionEvent::TaskStatus {
                call_id: call_id.to_owned(),
                status: self.redactor().redact(&status),
                message: (!message.is_empty()).then(|| self.redactor().redact(&message)),
            });
            *shown = Some((status.clone(), message));
        }
        status
    }

    /// A `tasks/*` request with `params`, its answer as JSON.
    async fn task_request(&self, method: &str, params: Value) -> Result<Value, SessionError> {
        let request = CustomRequest::new(method, Some(params));
        let result = self
            .peer
            .send_request(ClientRequest::CustomRequest(request))
            .await
            .map_err(|e| self.service_error(e))?;
        Ok(serde_json::to_value(&result).unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequest, CallToolRequestParams};

    #[test]
    fn a_required_task_is_recognised_and_the_call_made_again_as_one() {
        let refused = json!({"content": [{"type": "text", "text":
            "MCP error -32601: Tool simulate-research-query requires task augmentation (taskSupport: 'required')"}],
            "isError": true});
        assert!(asks_for_task(&refused));
        assert!(!asks_for_task(
            &json!({"content": [{"type": "text", "text": "requires task augmentation"}]})
        ));
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("simulate-research-query")
                .with_arguments(json!({"topic": "x"}).as_object().unwrap().clone()),
        ));
        let sent = serde_json::to_value(as_task(request)).unwrap();
        assert_eq!(sent["method"], "tools/call");
        assert_eq!(sent["params"]["name"], "simulate-research-query");
        assert_eq!(sent["params"]["arguments"]["topic"], "x");
        assert_eq!(sent["params"]["task"]["ttl"], TASK_TTL_MS);
        assert_eq!(
            created_task(
                &json!({"task": {"taskId": "t-1", "status": "working", "pollInterval": 500}})
            ),
            Some(("t-1".to_owned(), Some(500)))
        );
        assert_eq!(created_task(&json!({"content": []})), None);
    }
}
