//! Per-tool control and the context budget for the app: a server's tools with their switches,
//! hints and cost (the detail view's tool list), changes to them, and the budget of the
//! enabled servers with each client's tool cap (the Installed page's budget bar and each
//! card's cost). All logic is in [`crate::tools`] and [`crate::budget`]; this module only
//! shapes it for IPC, with the same figures the CLI prints.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Api, ApiError, ErrorCode};
use crate::budget::{Budget, budget};
use crate::clients::ClientKind;
use crate::config::{NewTools, StateReason};
use crate::tokens::{ESTIMATE_NOTE, TOKENIZER};
use crate::tools::{
    Annotated, ServerTools, ToolView, ToolsChange, ToolsError, change_tools, server_tools,
};

impl From<ToolsError> for ApiError {
    fn from(err: ToolsError) -> ApiError {
        match err {
            ToolsError::Config(e) => e.into(),
            ToolsError::UnknownTools { .. } | ToolsError::Conflict(_) => {
                ApiError::new(ErrorCode::Invalid, err.to_string())
            }
            ToolsError::NotTested { .. } => ApiError::new(ErrorCode::NotTested, err.to_string()),
            ToolsError::Pins(_) => ApiError::new(ErrorCode::Pin, err.to_string()),
            _ => ApiError::new(ErrorCode::Internal, err.to_string()),
        }
    }
}

/// What a tool's annotations say (untrusted hints; the spec's cautious defaults where absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct HintsView {
    /// Whether the server sent any hint at all.
    pub annotated: bool,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// Not claimed read-only.
    pub may_change: bool,
    /// `read-only`, `may change things`, `destructive`, `… (no annotations)`.
    pub label: String,
}

/// One tool with its switch.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolStateView {
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    /// `chosen` (switched by name), `default`, `unreviewed` (appeared after the approval) or
    /// `flagged` (held by a critical finding until the tools are approved).
    pub reason: String,
    /// The annotations as the server sent them.
    pub annotations: Option<Value>,
    pub hints: HintsView,
    /// What its definition costs a model (an estimate), on or off.
    pub tokens: u32,
}

/// The tools of one server.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ServerToolsView {
    pub server: String,
    pub server_enabled: bool,
    /// When the tools were last listed (Unix ms); `None`: never tested.
    pub observed_at: Option<f64>,
    pub tools: Vec<ToolStateView>,
    /// The enabled tools' cost.
    pub tokens: u32,
    pub enabled: u32,
    /// `enabled` or `disabled`: what tools that appear later get.
    pub new_tools: String,
    /// Whether that was chosen (else automatic).
    pub new_tools_chosen: bool,
    /// How the figures were made (`o200k_base`, an estimate).
    pub tokenizer: String,
    pub estimate_note: String,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn tool_view(tool: &ToolView) -> ToolStateView {
    let h = &tool.hints;
    ToolStateView {
        name: tool.name.clone(),
        description: tool.description.clone(),
        enabled: tool.enabled,
        reason: match tool.reason {
            StateReason::Chosen => "chosen",
            StateReason::Default => "default",
            StateReason::Unreviewed => "unreviewed",
            StateReason::Flagged => "flagged",
        }
        .into(),
        annotations: tool.annotations.clone(),
        hints: HintsView {
            annotated: h.annotated,
            read_only: h.read_only,
            destructive: h.destructive,
            idempotent: h.idempotent,
            open_world: h.open_world,
            may_change: h.may_change(),
            label: h.label(),
        },
        tokens: count(tool.tokens),
    }
}

impl From<&ServerTools> for ServerToolsView {
    fn from(s: &ServerTools) -> ServerToolsView {
        ServerToolsView {
            server: s.server.clone(),
            server_enabled: s.server_enabled,
            observed_at: s.observed_at_ms.map(|t| t as f64),
            tools: s.tools.iter().map(tool_view).collect(),
            tokens: count(s.tokens),
            enabled: count(s.enabled),
            new_tools: s.new_tools.as_str().into(),
            new_tools_chosen: s.new_tools_chosen,
            tokenizer: TOKENIZER.into(),
            estimate_note: ESTIMATE_NOTE.into(),
        }
    }
}

/// A change from the tool list: names to switch, bulk actions, the default for new tools.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, specta::Type)]
pub struct ToolsChangeInput {
    #[serde(default)]
    pub disable: Vec<String>,
    #[serde(default)]
    pub enable: Vec<String>,
    /// `true`: every tool on; `false`: every tool off.
    #[serde(default)]
    pub all: Option<bool>,
    /// These on, every other off.
    #[serde(default)]
    pub only: Option<Vec<String>>,
    /// `destructive`, `open-world` or `not-read-only`.
    #[serde(default)]
    pub disable_annotated: Option<String>,
    /// `enabled`, `disabled` or `auto`.
    #[serde(default)]
    pub new_tools: Option<String>,
}

/// The tools after a change, and what it means for clients that are running.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolsChangeResult {
    pub tools: ServerToolsView,
    /// For the toast: how the change reaches the clients running the server now (told at once,
    /// or only at their next start).
    pub notice: String,
}

/// One server's share of the budget; `None`s when it was never tested.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ServerBudgetView {
    pub name: String,
    pub tokens: Option<u32>,
    pub tools: Option<u32>,
    /// Its last test failed: its figures are not in the totals.
    pub failing: bool,
}

/// One client that launches Plugboard servers, against its tool cap.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ClientBudgetView {
    pub client: String,
    pub label: String,
    pub tools: u32,
    pub cap: Option<u32>,
    pub over: bool,
}

/// The context budget of the enabled servers (the same figures as `plugboard budget`).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct BudgetView {
    pub tokens: u32,
    pub tools: u32,
    pub servers: Vec<ServerBudgetView>,
    pub clients: Vec<ClientBudgetView>,
    /// The caps of the clients that have one, for the bar's marks, whether or not they launch
    /// Plugboard servers yet.
    pub caps: Vec<ClientBudgetView>,
    pub estimate_note: String,
}

impl From<&Budget> for BudgetView {
    fn from(b: &Budget) -> BudgetView {
        let label = |id: &str| {
            ClientKind::from_id(id)
                .map(|k| k.label().to_string())
                .unwrap_or_else(|| id.to_string())
        };
        let caps = ClientKind::KNOWN
            .iter()
            .filter_map(|kind| {
                let cap = crate::budget::tool_cap(*kind)?;
                Some(ClientBudgetView {
                    client: kind.id().into(),
                    label: kind.label().into(),
                    tools: count(b.tools),
                    cap: Some(count(cap)),
                    over: b.tools > cap,
                })
            })
            .collect();
        BudgetView {
            tokens: count(b.tokens),
            tools: count(b.tools),
            servers: b
                .servers
                .iter()
                .map(|s| ServerBudgetView {
                    name: s.name.clone(),
                    tokens: s.tokens.map(count),
                    tools: s.tools.map(count),
                    failing: s.failing,
                })
                .collect(),
            clients: b
                .clients
                .iter()
                .map(|c| ClientBudgetView {
                    client: c.client.clone(),
                    label: label(&c.client),
                    tools: count(c.tools),
                    cap: c.cap.map(count),
                    over: c.over,
                })
                .collect(),
            caps,
            estimate_note: ESTIMATE_NOTE.into(),
        }
    }
}

fn change_of(input: &ToolsChangeInput) -> Result<ToolsChange, ApiError> {
    let disable_annotated = match input.disable_annotated.as_deref() {
        None => None,
        Some(id) => Some(Annotated::from_id(id).ok_or_else(|| {
            ApiError::new(
                ErrorCode::Invalid,
                format!("`{id}` is not destructive, open-world or not-read-only"),
            )
        })?),
    };
    let new_tools = match input.new_tools.as_deref() {
        None => None,
        Some("enabled") => Some(Some(NewTools::Enabled)),
        Some("disabled") => Some(Some(NewTools::Disabled)),
        Some("auto") => Some(None),
        Some(other) => {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("`{other}` is not enabled, disabled or auto"),
            ));
        }
    };
    Ok(ToolsChange {
        disable: input.disable.clone(),
        enable: input.enable.clone(),
        all: input.all,
        only: input.only.clone(),
        disable_annotated,
        new_tools,
    })
}

impl Api {
    /// The tools of `name` with their state, hints and cost, from its last test.
    pub fn server_tools(&self, name: &str) -> Result<ServerToolsView, ApiError> {
        Ok(ServerToolsView::from(&server_tools(&self.servers, name)?))
    }

    /// Change the tool state of `name`; unknown tool names change nothing.
    pub fn set_tools(
        &self,
        name: &str,
        input: &ToolsChangeInput,
    ) -> Result<ToolsChangeResult, ApiError> {
        let change = change_of(input)?;
        let tools = change_tools(&self.servers, name, &change)?;
        Ok(ToolsChangeResult {
            notice: crate::run::sessions::notice(self.servers.config().dir(), name),
            tools: ServerToolsView::from(&tools),
        })
    }

    /// The context budget of the enabled servers and the clients that launch them.
    pub fn budget(&self) -> Result<BudgetView, ApiError> {
        Ok(BudgetView::from(&budget(&self.servers, None)?))
    }
}
