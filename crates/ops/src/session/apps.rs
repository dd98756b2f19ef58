//! MCP Apps (the `io.modelcontextprotocol/ui` extension) in a session: a tool whose `_meta.ui`
//! names a `ui://` resource has an interactive view, an HTML page the host shows in a sandbox
//! beside the call's result.
//!
//! This module reads that page ([`Session::app_view`]) and decides what it may do:
//! - the Content-Security-Policy it runs under, built from the domains its resource declares
//!   (`_meta.ui.csp`: `connectDomains`, `resourceDomains`, `frameDomains`, `baseUriDomains`),
//!   nothing else: no declaration means no network at all. A declared entry that is not a plain
//!   origin (`https://host`, `https://*.host`, with a port) is dropped and named, so no entry
//!   can add a directive or a keyword;
//! - the browser features it may ask for (`_meta.ui.permissions`: camera, microphone,
//!   geolocation, clipboard write), as an iframe `allow` list;
//! - which tools the view itself may call ([`Session::view_may_call`]): only this server's, and
//!   only those whose `visibility` includes `app`.

use serde::Serialize;
use serde_json::Value;

use super::{Session, SessionError};

/// The MIME type of an MCP Apps page.
pub const APP_MIME: &str = "text/html;profile=mcp-app";
/// The largest page shown.
const MAX_PAGE: usize = 8 * 1024 * 1024;

/// A tool's interactive UI, as its definition declares it.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ToolUi {
    /// The `ui://` resource holding the page.
    pub resource_uri: String,
    /// Who may call the tool: `model` (an agent), `app` (its view). Both when not declared.
    pub visibility: Vec<String>,
}

impl ToolUi {
    /// The UI a tool definition declares (`_meta.ui`, or the earlier `_meta["ui/resourceUri"]`).
    pub fn of(tool: &Value) -> Option<ToolUi> {
        let resource_uri = crate::probe::ui_resource_of(tool)?;
        let visibility = tool
            .pointer("/_meta/ui/visibility")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_else(|| vec!["model".to_owned(), "app".to_owned()]);
        Some(ToolUi {
            resource_uri,
            visibility,
        })
    }
}

/// A view's page and what it may do.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppView {
    pub tool: String,
    pub resource_uri: String,
    /// The page (HTML).
    pub html: String,
    /// The Content-Security-Policy it is served with.
    pub csp: String,
    /// The iframe `allow` list for the features it declared (`camera; microphone`), if any.
    pub allow: String,
    /// Whether it asked for a border around it.
    pub prefers_border: bool,
    /// Domains it may reach or load from, for the user to see.
    pub domains: Vec<String>,
    /// What was left out of its declaration, and why.
    pub notes: Vec<String>,
}

/// A declared domain entry, if it is a plain origin: a scheme (`https`, `http`, `wss`, `ws`),
/// a host (a leading `*.` allowed) and an optional port, nothing else.
fn origin_entry(entry: &str) -> Option<&str> {
    let (scheme, rest) = entry.split_once("://")?;
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return None;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let host = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    (host_ok && port_ok).then_some(entry.strip_suffix('/').unwrap_or(entry))
}

/// The `_meta.ui` block of a resource content (or `meta.ui`, as some SDKs write it).
fn ui_meta(content: &Value) -> Option<&Value> {
    content
        .pointer("/_meta/ui")
        .or_else(|| content.pointer("/meta/ui"))
}

/// The CSP for a page whose resource declared `ui` (its `_meta.ui`), the domains it allows,
/// and notes on the entries dropped.
pub fn content_security_policy(ui: Option<&Value>) -> (String, Vec<String>, Vec<String>) {
    let mut notes = vec![];
    let mut domains = vec![];
    let mut list = |key: &str| -> Vec<String> {
        let Some(entries) = ui.and_then(|u| u.pointer(&format!("/csp/{key}"))) else {
            return vec![];
        };
        let Some(entries) = entries.as_array() else {
            notes.push(format!("`{key}` is not a list; ignored"));
            return vec![];
        };
        let mut kept = vec![];
        for entry in entries {
            match entry.as_str().and_then(origin_entry) {
                Some(origin) => {
                    if !domains.iter().any(|d| d == origin) {
                        domains.push(origin.to_owned());
                    }
                    kept.push(origin.to_owned());
                }
                None => notes.push(format!(
                    "the {key} entry {} is not a plain origin; left out",
                    crate::connect::truncate_chars(&entry.to_string(), 80)
                )),
            }
        }
        kept
    };
    let connect = list("connectDomains");
    let resource = list("resourceDomains");
    let frame = list("frameDomains");
    let base = list("baseUriDomains");
    let join = |fixed: &str, extra: &[String]| {
        std::iter::once(fixed.to_owned())
            .chain(extra.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let or_none = |extra: &[String], none: &str| {
        if extra.is_empty() {
            none.to_owned()
        } else {
            extra.join(" ")
        }
    };
    let csp = [
        "default-src 'none'".to_owned(),
        format!("script-src {}", join("'self' 'unsafe-inline'", &resource)),
        format!("style-src {}", join("'self' 'unsafe-inline'", &resource)),
        format!("connect-src {}", or_none(&connect, "'none'")),
        format!("img-src {}", join("'self' data:", &resource)),
        format!("font-src {}", join("'self'", &resource)),
        format!("media-src {}", join("'self' data:", &resource)),
        format!("frame-src {}", or_none(&frame, "'none'")),
        "object-src 'none'".to_owned(),
        format!("base-uri {}", or_none(&base, "'self'")),
        "form-action 'none'".to_owned(),
    ]
    .join("; ");
    (csp, domains, notes)
}

/// The iframe `allow` list for the features a page's resource declared.
fn allow_list(ui: Option<&Value>) -> String {
    let Some(permissions) = ui
        .and_then(|u| u.get("permissions"))
        .and_then(Value::as_object)
    else {
        return String::new();
    };
    [
        ("camera", "camera"),
        ("microphone", "microphone"),
        ("geolocation", "geolocation"),
        ("clipboardWrite", "clipboard-write"),
    ]
    .iter()
    .filter(|(key, _)| permissions.contains_key(*key))
    .map(|(_, feature)| *feature)
    .collect::<Vec<_>>()
    .join("; ")
}

impl Session {
    /// The interactive UI of `tool`, if its definition declares one.
    pub fn tool_ui(&self, tool: &str) -> Option<ToolUi> {
        self.tool(tool)
            .ok()
            .and_then(|definition| ToolUi::of(&definition))
    }

    /// Whether a view of this session may call `tool`: the tool exists here and its
    /// `visibility` includes `app`.
    pub fn view_may_call(&self, tool: &str) -> bool {
        match self.tool(tool) {
            Ok(definition) => ToolUi::of(&definition)
                .map(|ui| ui.visibility.iter().any(|v| v == "app"))
                // A tool without a UI of its own keeps the default visibility (both).
                .unwrap_or(true),
            Err(_) => false,
        }
    }

    /// Read the page of `tool`'s UI and decide what it may do.
    pub async fn app_view(&self, tool: &str) -> Result<AppView, SessionError> {
        let ui = self
            .tool_ui(tool)
            .ok_or_else(|| SessionError::Failed(format!("`{tool}` has no interactive UI")))?;
        let mut params = serde_json::Map::new();
        params.insert("uri".into(), Value::String(ui.resource_uri.clone()));
        let call_id = self.new_call_id();
        let result = self
            .forward(
                "resources/read",
                &params,
                super::DEFAULT_CALL_TIMEOUT,
                &call_id,
            )
            .await?;
        let content = result
            .get("contents")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .ok_or_else(|| SessionError::Failed(format!("{} has no content", ui.resource_uri)))?;
        let mime = content
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !mime.to_ascii_lowercase().starts_with("text/html") {
            return Err(SessionError::Failed(format!(
                "{} is `{mime}`, not an MCP Apps page ({APP_MIME})",
                ui.resource_uri
            )));
        }
        let html = match (
            content.get("text").and_then(Value::as_str),
            content.get("blob"),
        ) {
            (Some(text), _) => text.to_owned(),
            (None, Some(Value::String(blob))) => {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|e| SessionError::Failed(format!("the page is not base64: {e}")))?;
                String::from_utf8(bytes)
                    .map_err(|_| SessionError::Failed("the page is not UTF-8 text".into()))?
            }
            _ => {
                return Err(SessionError::Failed(format!(
                    "{} has no page",
                    ui.resource_uri
                )));
            }
        };
        if html.len() > MAX_PAGE {
            return Err(SessionError::Failed(format!(
                "the page is {} MiB; at most {} MiB is shown",
                html.len() / (1024 * 1024),
                MAX_PAGE / (1024 * 1024)
            )));
        }
        let meta = ui_meta(content);
        let (csp, domains, notes) = content_security_policy(meta);
        Ok(AppView {
            tool: tool.to_owned(),
            resource_uri: ui.resource_uri,
            html,
            csp,
            allow: allow_list(meta),
            prefers_border: meta
                .and_then(|m| m.get("prefersBorder"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            domains,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_declaration_means_no_network() {
        let (csp, domains, notes) = content_security_policy(None);
        assert!(csp.contains("default-src 'none'"));
        assert!(csp.contains("connect-src 'none'"));
        assert!(csp.contains("frame-src 'none'"));
        assert!(domains.is_empty() && notes.is_empty());
    }

    #[test]
    fn declared_origins_are_kept_and_anything_else_is_dropped() {
        let ui = json!({"csp": {
            "connectDomains": ["https://api.example.com", "wss://*.example.com:8443", "https://x.test; script-src *", "'unsafe-eval'", "*"],
            "resourceDomains": ["https://cdn.example.com/"],
        }});
        let (csp, domains, notes) = content_security_policy(Some(&ui));
        assert!(
            csp.contains("connect-src https://api.example.com wss://*.example.com:8443;"),
            "{csp}"
        );
        assert!(
            csp.contains("script-src 'self' 'unsafe-inline' https://cdn.example.com;"),
            "{csp}"
        );
        assert!(
            !csp.contains("unsafe-eval") && !csp.contains(" * ") && !csp.contains("x.test"),
            "{csp}"
        );
        assert_eq!(domains.len(), 3);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert_eq!(
            allow_list(Some(
                &json!({"permissions": {"microphone": {}, "clipboardWrite": {}}})
            )),
            "microphone; clipboard-write"
        );
    }

    #[test]
    fn a_tool_s_ui_and_who_may_call_it() {
        let tool = json!({"name": "t", "_meta": {"ui": {"resourceUri": "ui://x/page.html", "visibility": ["app"]}}});
        assert_eq!(ToolUi::of(&tool).unwrap().visibility, ["app"]);
        let legacy = json!({"name": "t", "_meta": {"ui/resourceUri": "ui://x/page.html"}});
        assert_eq!(ToolUi::of(&legacy).unwrap().visibility, ["model", "app"]);
        assert!(ToolUi::of(&json!({"_meta": {"ui": {"resourceUri": "https://x"}}})).is_none());
    }
}
