//! What the custom editor makes of a pasted text: a command line (split the way a shell would,
//! with `KEY=VALUE` assignments in front becoming environment variables), or a JSON snippet from
//! another client's config: `{"mcpServers": {…}}` (Claude Desktop, Cursor, Windsurf), VS Code's
//! `{"servers": {…}}` (or `{"mcp": {"servers": …}}` of its settings), a map of named entries, or
//! one bare entry. Values whose names look secret are marked for the keyring, and an
//! `Authorization: Bearer …` header becomes bearer auth.

use serde_json::{Map, Value};

use super::dto::{CustomAuth, CustomServer, KeyValue, Transport};
use super::error::ApiError;
use crate::manage::looks_secret;

pub use crate::command_line::split_command_line;

fn blank(name: &str, transport: Transport) -> CustomServer {
    CustomServer {
        name: name.to_string(),
        transport,
        command: String::new(),
        args: vec![],
        cwd: String::new(),
        url: String::new(),
        env: vec![],
        headers: vec![],
        auth: CustomAuth::None,
        headers_helper: None,
        timeout: None,
    }
}

fn value(key: &str, value: String) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        secret: looks_secret(key) && !value.is_empty(),
        value: Some(value),
        set: None,
    }
}

/// A stdio server from a pasted command line (`KEY=V npx -y pkg --flag`). Its name is left
/// empty: the editor keeps the one the user typed.
fn from_command_line(text: &str) -> Result<CustomServer, ApiError> {
    let line = text.trim().trim_start_matches("$ ");
    let mut words = split_command_line(line)
        .map_err(|m| ApiError::field("paste", format!("the command line cannot be read: {m}")))?
        .into_iter()
        .peekable();
    let mut server = blank("", Transport::Stdio);
    while let Some(word) = words.peek() {
        match word.split_once('=') {
            Some((key, _)) if crate::config::validate_env_key(key).is_ok() => {
                let word = words.next().unwrap_or_default();
                let (key, v) = word.split_once('=').unwrap_or_default();
                server.env.push(value(key, v.to_string()));
            }
            _ => break,
        }
    }
    server.command = words
        .next()
        .ok_or_else(|| ApiError::field("paste", "the pasted text has no command"))?;
    server.args = words.collect();
    Ok(server)
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Vec<(String, String)> {
    entry
        .get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One entry of a client's config as the editor's model.
fn from_entry(name: &str, entry: &Map<String, Value>) -> Result<CustomServer, String> {
    let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    let kind = text("type")
        .or_else(|| text("transport"))
        .unwrap_or_default();
    let url = text("url").or_else(|| text("serverUrl"));
    if let Some(command) = text("command") {
        let mut server = blank(name, Transport::Stdio);
        server.command = command;
        server.args = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        server.cwd = text("cwd").unwrap_or_default();
        server.env = string_map(entry, "env")
            .into_iter()
            .map(|(k, v)| value(&k, v))
            .collect();
        return Ok(server);
    }
    let Some(url) = url else {
        return Err(format!("`{name}` has neither a `command` nor a `url`"));
    };
    let transport = match kind.to_ascii_lowercase().as_str() {
        "sse" => Transport::Sse,
        "http" | "streamable-http" | "streamablehttp" | "shttp" => Transport::Shttp,
        _ => Transport::Auto,
    };
    let mut server = blank(name, transport);
    server.url = url;
    for (key, v) in string_map(entry, "headers") {
        let bearer = v
            .strip_prefix("Bearer ")
            .or_else(|| v.strip_prefix("bearer "));
        match bearer {
            Some(token)
                if key.eq_ignore_ascii_case("authorization") && server.auth == CustomAuth::None =>
            {
                server.auth = CustomAuth::Bearer {
                    token: Some(token.trim().to_string()),
                    set: None,
                };
            }
            _ => server.headers.push(value(&key, v)),
        }
    }
    Ok(server)
}

fn is_entry(value: &Value) -> bool {
    value.as_object().is_some_and(|o| {
        o.contains_key("command") || o.contains_key("url") || o.contains_key("serverUrl")
    })
}

/// The servers in a pasted text, in its order. A command line gives one (with an empty name).
pub fn parse(text: &str) -> Result<Vec<CustomServer>, ApiError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ApiError::field("paste", "nothing was pasted"));
    }
    if !trimmed.starts_with('{') {
        return Ok(vec![from_command_line(trimmed)?]);
    }
    // Snippets are often copied without their enclosing braces' neighbours, or with comments.
    let cleaned = crate::clients::jsonc::strip(trimmed);
    let doc: Value = serde_json::from_str(&cleaned)
        .or_else(|_| serde_json::from_str(&format!("{{{cleaned}}}")))
        .map_err(|e| ApiError::field("paste", format!("the pasted JSON cannot be read: {e}")))?;
    let Value::Object(doc) = doc else {
        return Err(ApiError::field("paste", "the pasted JSON is not an object"));
    };
    let entries: Map<String, Value> = if is_entry(&Value::Object(doc.clone())) {
        let mut one = Map::new();
        one.insert(String::new(), Value::Object(doc));
        one
    } else if let Some(Value::Object(m)) = doc.get("mcpServers").or_else(|| doc.get("servers")) {
        m.clone()
    } else if let Some(Value::Object(m)) = doc.get("mcp").and_then(|m| m.get("servers")) {
        m.clone()
    } else {
        doc.into_iter().filter(|(_, v)| is_entry(v)).collect()
    };
    let mut out = vec![];
    let mut problems = vec![];
    for (name, entry) in &entries {
        match entry.as_object().map(|e| from_entry(name, e)) {
            Some(Ok(server)) => out.push(server),
            Some(Err(m)) => problems.push(m),
            None => problems.push(format!("`{name}` is not an object")),
        }
    }
    if out.is_empty() {
        return Err(ApiError::field(
            "paste",
            if problems.is_empty() {
                "the pasted JSON holds no server (expected `mcpServers`, `servers`, or an entry with a `command` or `url`)".to_string()
            } else {
                problems.join("; ")
            },
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_command_line_becomes_command_and_arguments() {
        let s = &parse(
            "GITHUB_TOKEN=ghp_x DEBUG=1 npx -y @modelcontextprotocol/server-everything stdio",
        )
        .unwrap()[0];
        assert_eq!(s.transport, Transport::Stdio);
        assert_eq!(s.command, "npx");
        assert_eq!(
            s.args,
            ["-y", "@modelcontextprotocol/server-everything", "stdio"]
        );
        assert_eq!(s.env.len(), 2);
        assert!(s.env[0].secret, "a token goes to the keyring");
        assert!(!s.env[1].secret);
    }

    #[test]
    fn client_snippets_fill_the_editor() {
        let claude = r#"{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "pkg"], "env": {"API_KEY": "k"}},
                        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer tok", "X-Team": "t"}}}}"#;
        let servers = parse(claude).unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "everything");
        assert_eq!(servers[0].args, ["-y", "pkg"]);
        assert!(servers[0].env[0].secret);
        assert_eq!(servers[1].transport, Transport::Auto);
        assert_eq!(
            servers[1].auth,
            CustomAuth::Bearer {
                token: Some("tok".into()),
                set: None
            }
        );
        assert_eq!(servers[1].headers.len(), 1);

        let vscode = r#"{ // VS Code mcp.json
            "servers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}}}"#;
        let s = &parse(vscode).unwrap()[0];
        assert_eq!((s.name.as_str(), s.transport), ("gh", Transport::Shttp));

        let settings =
            r#"{"mcp": {"servers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}}"#;
        assert_eq!(parse(settings).unwrap()[0].transport, Transport::Sse);

        let bare = r#"{"command": "uvx", "args": ["mcp-server-time"]}"#;
        assert_eq!(parse(bare).unwrap()[0].command, "uvx");

        let err = parse(r#"{"mcpServers": {"x": {"nothing": 1}}}"#).unwrap_err();
        assert!(err.message.contains("neither"), "{}", err.message);
        assert!(parse("{ not json").is_err());
    }
}
