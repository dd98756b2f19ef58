//! Diagnostics bundles: what a bug report about a server needs, in one JSON document a user
//! can attach — the shape of its config (no values that could be secret: env and header
//! values are described, not copied), its last test, the protocol trace of a session, the
//! server's stderr tail, and the Plugboard and OS versions. Everything in it went through the
//! server's redactor. `plugboard diagnose NAME --bundle FILE` and the app's "Copy
//! diagnostics" both build it here.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::clock::now_ms;
use crate::config::{ConfigValue, ServerConfig};
use crate::manage::Servers;
use crate::redact::Redactor;
use crate::session::{self, Session, SessionError, SessionInfo, SessionOptions, TraceEntry};

/// The bundle's format version.
pub const FORMAT: u32 = 1;

/// A diagnostics bundle.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct Bundle {
    pub format: u32,
    pub generated_at_ms: f64,
    pub plugboard_version: String,
    pub os: OsInfo,
    pub server: String,
    /// The server's config with its values described, not copied.
    pub config: Value,
    /// The stored last test (as `plugboard test --json` shows it).
    pub last_test: Option<Value>,
    pub session: Option<SessionSummary>,
    pub trace: Vec<TraceEntry>,
    pub stderr_tail: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct OsInfo {
    pub family: String,
    pub arch: String,
    /// `PRETTY_NAME` of /etc/os-release, where there is one.
    pub name: Option<String>,
    pub kernel: Option<String>,
}

/// The session the trace comes from.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct SessionSummary {
    pub info: Option<SessionInfo>,
    pub tools: u32,
    pub resources: u32,
    pub templates: u32,
    pub prompts: u32,
    /// Why it could not open, if it could not.
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub hint: Option<String>,
}

/// Connect to `name` (its questions declined), record the session, and bundle it.
pub async fn collect(
    servers: &Servers,
    name: &str,
    timeout: Option<Duration>,
) -> Result<Bundle, SessionError> {
    let server = load(servers, name)?;
    let options = SessionOptions {
        timeout,
        ..SessionOptions::default()
    };
    match session::open_installed(servers, name, options).await {
        Ok(session) => {
            session.close().await;
            Ok(of_session(servers, name, &session).await)
        }
        Err(SessionError::Open {
            failure,
            stderr_tail,
            trace,
        }) => {
            let redactor = Redactor::new(server.plain_values());
            let mut bundle = base(servers, name, &server, &redactor);
            bundle.session = Some(SessionSummary {
                info: None,
                tools: 0,
                resources: 0,
                templates: 0,
                prompts: 0,
                error_kind: Some(failure.kind.as_str().to_string()),
                error: Some(failure.error),
                hint: Some(failure.hint),
            });
            bundle.trace = trace;
            bundle.stderr_tail = stderr_tail;
            Ok(bundle)
        }
        Err(other) => Err(other),
    }
}

/// The bundle of an open (or just closed) session with `name`.
pub async fn of_session(servers: &Servers, name: &str, session: &Session) -> Bundle {
    let server = load(servers, name).unwrap_or_else(|_| ServerConfig::stdio("", vec![]));
    let mut bundle = base(servers, name, &server, session.redactor());
    let offer = session.offer();
    bundle.session = Some(SessionSummary {
        info: Some(session.info().clone()),
        tools: offer.tools.len() as u32,
        resources: offer.resources.len() as u32,
        templates: offer.templates.len() as u32,
        prompts: offer.prompts.len() as u32,
        error_kind: None,
        error: None,
        hint: None,
    });
    bundle.trace = session.trace();
    bundle.stderr_tail = session.stderr_tail().await;
    bundle
}

fn load(servers: &Servers, name: &str) -> Result<ServerConfig, SessionError> {
    servers
        .config()
        .load()
        .and_then(|c| c.server(name))
        .map_err(|e| SessionError::Config(e.to_string()))
}

fn base(servers: &Servers, name: &str, server: &ServerConfig, redactor: &Redactor) -> Bundle {
    let last_test = servers.health().get(name).and_then(|record| {
        let mut value = serde_json::to_value(&record.result).ok()?;
        redactor.redact_json(&mut value);
        Some(value)
    });
    Bundle {
        format: FORMAT,
        generated_at_ms: now_ms() as f64,
        plugboard_version: env!("CARGO_PKG_VERSION").to_string(),
        os: os_info(),
        server: name.to_string(),
        config: config_shape(server, redactor),
        last_test,
        session: None,
        trace: vec![],
        stderr_tail: None,
    }
}

/// `server` as JSON with every env and header value described instead of copied (a plain
/// value may be a token pasted into the wrong field), then redacted.
pub fn config_shape(server: &ServerConfig, redactor: &Redactor) -> Value {
    let mut value = serde_json::to_value(server).unwrap_or(Value::Null);
    redactor.redact_json(&mut value);
    let describe = |v: &ConfigValue| match v {
        ConfigValue::Plain(text) => json!(format!(
            "<plain value, {} characters>",
            text.chars().count()
        )),
        ConfigValue::Secret(r) => json!({"secret": r.secret}),
        ConfigValue::FromEnv(t) => json!({"from_env": t.names().collect::<Vec<_>>()}),
    };
    for (key, values) in [("env", &server.env), ("headers", &server.headers)] {
        let described: Map<String, Value> = values
            .iter()
            .map(|(k, v)| (k.clone(), describe(v)))
            .collect();
        if let Some(slot) = value.get_mut(key) {
            *slot = Value::Object(described);
        }
    }
    value
}

fn os_info() -> OsInfo {
    let release = std::fs::read_to_string("/etc/os-release").ok();
    let name = release.as_deref().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
    });
    OsInfo {
        family: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        name,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|k| k.trim().to_string()),
    }
}

/// Write a bundle to `path`, readable only by the user.
pub fn write_bundle(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    plugboard_base::fs::write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SecretRef;

    #[test]
    fn the_config_shape_describes_values_instead_of_copying_them() {
        let mut server = ServerConfig::stdio(
            "npx",
            vec![
                "-y".into(),
                "pkg".into(),
                "--token=ghp_abcdefghijklmnopqrstuvwxyz0123456789".into(),
            ],
        );
        server.env.insert(
            "PLAIN".into(),
            ConfigValue::Plain("pasted-token-98765".into()),
        );
        server
            .env
            .insert("KEY".into(), ConfigValue::Secret(SecretRef::new("KEY")));
        let redactor = Redactor::new(server.plain_values());
        let shape = config_shape(&server, &redactor);
        let text = shape.to_string();
        assert!(!text.contains("pasted-token-98765"), "{text}");
        assert!(
            !text.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "{text}"
        );
        assert_eq!(shape["env"]["PLAIN"], "<plain value, 18 characters>");
        assert_eq!(shape["env"]["KEY"], json!({"secret": "KEY"}));
        assert_eq!(shape["command"], "npx");
    }
}
