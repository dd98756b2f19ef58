//! What one tool's definition costs a model: the JSON a client sends to the model for it,
//! counted with a real BPE tokenizer (OpenAI's `o200k_base`, embedded: see the
//! `plugboard-tokenizer` crate). Other models' tokenizers count differently, so every figure is
//! labelled an estimate.
//!
//! The definition is the shape Claude Code and Claude Desktop send, `{"name", "description",
//! "input_schema"}`, with the agent-facing name (`mcp__<server>__<tool>`). The clients Plugboard
//! exports to drop a tool's `outputSchema` before it reaches the model (Claude Code's tool
//! catalog carries name, description and input schema only), so it is not counted.
//!
//! The tokenizer has nothing to load; the first count compiles its split pattern once.

use serde_json::{Map, Value};

use crate::probe::ToolInfo;
use crate::probe::naming::adapted_name;

/// The tokenizer the figures come from, for labels.
pub const TOKENIZER: &str = plugboard_tokenizer::ENCODING;

/// How figures are labelled wherever they are shown.
pub const ESTIMATE_NOTE: &str =
    "estimated with the o200k_base tokenizer; other models' tokenizers count differently";

/// The JSON of `tool`'s definition as a client sends it to the model, for server `server`.
pub fn definition(server: &str, tool: &ToolInfo) -> String {
    let mut object = Map::new();
    object.insert(
        "name".into(),
        Value::String(adapted_name(server, &tool.name)),
    );
    if let Some(description) = &tool.description {
        object.insert("description".into(), Value::String(description.clone()));
    }
    object.insert("input_schema".into(), tool.input_schema.clone());
    serde_json::to_string(&Value::Object(object)).unwrap_or_default()
}

/// The number of tokens of `text`.
pub fn count(text: &str) -> usize {
    plugboard_tokenizer::count(text)
}

/// What `tool`'s definition costs, in tokens.
pub fn tool_tokens(server: &str, tool: &ToolInfo) -> usize {
    count(&definition(server, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_what_a_client_sends() {
        let tool = ToolInfo {
            name: "get env".into(),
            description: Some("Returns the environment".into()),
            input_schema: serde_json::json!({"type": "object", "properties": {}}),
            annotations: Some(serde_json::json!({"readOnlyHint": true})),
            adapted_name: "stale".into(),
            ui: None,
        };
        assert_eq!(
            definition("ev", &tool),
            r#"{"name":"mcp__ev__get_env","description":"Returns the environment","input_schema":{"type":"object","properties":{}}}"#
        );
        let tokens = tool_tokens("ev", &tool);
        assert!((10..60).contains(&tokens), "{tokens}");
        assert_eq!(tokens, count(&definition("ev", &tool)));
    }
}
