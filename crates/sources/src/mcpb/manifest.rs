//! An MCPB bundle's `manifest.json`, read leniently: `manifest_version` (or the older
//! `dxt_version`) 0.1–0.4 is understood, a newer one is refused with a reason, fields Plugboard
//! does not use are tolerated (real bundles carry `_meta`, icons, localisation, …), and a field
//! of the wrong type is treated as absent unless Plugboard needs it (`server`, its command).
//!
//! What Plugboard uses: `name`, `display_name`, `version`, `description`, `author`, `server`
//! (`type`, `entry_point`, `mcp_config` with `platform_overrides`), `compatibility` (platforms,
//! runtimes), `user_config`, `tools`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// The newest manifest version this Plugboard understands.
pub const NEWEST_MANIFEST_VERSION: (u32, u32) = (0, 4);

/// A manifest that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    #[error("manifest.json is not valid JSON: {0}")]
    Json(String),
    #[error("manifest.json {0}")]
    Invalid(String),
    #[error(
        "the bundle's manifest_version {found} is newer than this Plugboard understands (0.1 to \
         {}.{}): update Plugboard to install it",
        NEWEST_MANIFEST_VERSION.0,
        NEWEST_MANIFEST_VERSION.1
    )]
    TooNew { found: String },
}

/// The manifest, as far as Plugboard uses it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    pub manifest_version: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    pub version: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    pub server: ServerSpec,
    pub compatibility: Compatibility,
    /// In the manifest's order.
    pub user_config: Vec<UserConfigOption>,
    /// The tools the bundle declares (names), for information.
    pub tools: Vec<String>,
    /// Top-level fields Plugboard does not know (tolerated, listed for `--json`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_fields: Vec<String>,
}

/// `server`: what kind of server and how to launch it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSpec {
    /// `node`, `python`, `binary`, `uv` (or what the data says, lower-cased).
    pub kind: String,
    pub entry_point: Option<String>,
    /// Absent only for `uv` servers, whose launch the host chooses.
    pub mcp_config: Option<McpConfig>,
}

/// `server.mcp_config`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpConfig {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// By platform (`darwin`, `win32`, `linux`): each part given replaces the base one.
    pub platform_overrides: BTreeMap<String, ConfigOverride>,
}

/// One platform's replacements of `command`, `args` and `env`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConfigOverride {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
}

impl McpConfig {
    /// The config for `platform` (a Node.js `process.platform` name): the override's command,
    /// args and env each replace the base one when given.
    pub fn for_platform(&self, platform: &str) -> McpConfig {
        let mut out = McpConfig {
            platform_overrides: BTreeMap::new(),
            ..self.clone()
        };
        if let Some(o) = self.platform_overrides.get(platform) {
            if let Some(c) = o.command.clone().filter(|c| !c.trim().is_empty()) {
                out.command = c;
            }
            if let Some(a) = o.args.clone() {
                out.args = a;
            }
            if let Some(e) = o.env.clone() {
                out.env = e;
            }
        }
        out
    }
}

/// `compatibility`: where the bundle runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Compatibility {
    /// Empty: every platform.
    pub platforms: Vec<String>,
    /// `node` / `python` → a version range such as `>=16.0.0` or `>=3.8,<4.0`.
    pub runtimes: BTreeMap<String, String>,
}

/// The kind of a `user_config` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionKind {
    String,
    Number,
    Boolean,
    Directory,
    File,
}

/// One `user_config` option.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserConfigOption {
    pub key: String,
    pub kind: OptionKind,
    pub title: String,
    pub description: Option<String>,
    pub required: bool,
    /// As written: several for a `multiple` option (system variables not yet expanded).
    pub default: Vec<String>,
    pub multiple: bool,
    pub sensitive: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

const KNOWN_FIELDS: &[&str] = &[
    "$schema",
    "manifest_version",
    "dxt_version",
    "name",
    "display_name",
    "version",
    "description",
    "long_description",
    "author",
    "repository",
    "homepage",
    "documentation",
    "support",
    "icon",
    "icons",
    "screenshots",
    "localization",
    "server",
    "tools",
    "tools_generated",
    "prompts",
    "prompts_generated",
    "keywords",
    "license",
    "privacy_policies",
    "compatibility",
    "user_config",
    "_meta",
];

fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect()
    })
}

fn string_map(value: Option<&Value>) -> Option<BTreeMap<String, String>> {
    value.and_then(Value::as_object).map(|map| {
        map.iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k.clone(), s.clone())),
                Value::Number(n) => Some((k.clone(), n.to_string())),
                Value::Bool(b) => Some((k.clone(), b.to_string())),
                _ => None,
            })
            .collect()
    })
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn number(map: &Map<String, Value>, key: &str) -> Option<f64> {
    match map.get(key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `"0.3"` → `(0, 3)`.
fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

impl Manifest {
    /// Read `manifest.json`'s bytes.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| ManifestError::Json(e.to_string()))?;
        Manifest::from_value(&value)
    }

    pub fn from_value(value: &Value) -> Result<Manifest, ManifestError> {
        let invalid = |what: &str| ManifestError::Invalid(what.to_owned());
        let map = value
            .as_object()
            .ok_or_else(|| invalid("is not a JSON object"))?;
        let manifest_version = text(map, "manifest_version")
            .or_else(|| text(map, "dxt_version"))
            .ok_or_else(|| invalid("has no manifest_version"))?;
        match parse_version(&manifest_version) {
            Some(v) if v > NEWEST_MANIFEST_VERSION => {
                return Err(ManifestError::TooNew {
                    found: manifest_version,
                });
            }
            Some(_) => {}
            None => {
                return Err(ManifestError::Invalid(format!(
                    "has manifest_version `{manifest_version}`, which is not a version"
                )));
            }
        }
        let name = text(map, "name").ok_or_else(|| invalid("has no name"))?;
        let server = map
            .get("server")
            .and_then(Value::as_object)
            .ok_or_else(|| invalid("has no `server` object"))?;
        let kind = text(server, "type")
            .map(|t| t.to_ascii_lowercase())
            .unwrap_or_default();
        let mcp_config = match server.get("mcp_config").and_then(Value::as_object) {
            Some(config) => Some(McpConfig::from_object(config)?),
            None if kind == "uv" => None,
            None => {
                return Err(invalid(
                    "has no `server.mcp_config`: nothing says how to start it",
                ));
            }
        };
        let compatibility = map
            .get("compatibility")
            .and_then(Value::as_object)
            .map(|c| Compatibility {
                platforms: strings(c.get("platforms")).unwrap_or_default(),
                runtimes: string_map(c.get("runtimes")).unwrap_or_default(),
            })
            .unwrap_or_default();
        let user_config = map
            .get("user_config")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(key, v)| Some(UserConfigOption::from_object(key, v.as_object()?)))
            .collect();
        let tools = map
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| text(t.as_object()?, "name"))
            .collect();
        let author = match map.get("author") {
            Some(Value::Object(a)) => text(a, "name"),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        Ok(Manifest {
            version: text(map, "version").unwrap_or_else(|| "0.0.0".into()),
            display_name: text(map, "display_name"),
            description: text(map, "description").unwrap_or_default(),
            author,
            server: ServerSpec {
                kind,
                entry_point: text(server, "entry_point"),
                mcp_config,
            },
            compatibility,
            user_config,
            tools,
            unknown_fields: map
                .keys()
                .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()))
                .cloned()
                .collect(),
            manifest_version,
            name,
        })
    }

    /// The name to show: `display_name`, else `name`.
    pub fn title(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.name)
    }
}

impl McpConfig {
    fn from_object(map: &Map<String, Value>) -> Result<McpConfig, ManifestError> {
        let command = text(map, "command").ok_or_else(|| {
            ManifestError::Invalid("has no `server.mcp_config.command`".to_owned())
        })?;
        let platform_overrides = map
            .get("platform_overrides")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(platform, o)| {
                let o = o.as_object()?;
                Some((
                    platform.clone(),
                    ConfigOverride {
                        command: text(o, "command"),
                        args: strings(o.get("args")),
                        env: string_map(o.get("env")),
                    },
                ))
            })
            .collect();
        Ok(McpConfig {
            command,
            args: strings(map.get("args")).unwrap_or_default(),
            env: string_map(map.get("env")).unwrap_or_default(),
            platform_overrides,
        })
    }
}

impl UserConfigOption {
    fn from_object(key: &str, map: &Map<String, Value>) -> UserConfigOption {
        let kind = match text(map, "type").map(|t| t.to_ascii_lowercase()).as_deref() {
            Some("number" | "integer") => OptionKind::Number,
            Some("boolean" | "bool") => OptionKind::Boolean,
            Some("directory") => OptionKind::Directory,
            Some("file") => OptionKind::File,
            _ => OptionKind::String,
        };
        let default = match map.get("default") {
            Some(Value::Array(_)) => strings(map.get("default")).unwrap_or_default(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Number(n)) => vec![n.to_string()],
            Some(Value::Bool(b)) => vec![b.to_string()],
            _ => vec![],
        };
        UserConfigOption {
            key: key.to_owned(),
            kind,
            title: text(map, "title").unwrap_or_else(|| key.to_owned()),
            description: text(map, "description"),
            required: flag(map, "required"),
            default,
            multiple: flag(map, "multiple"),
            sensitive: flag(map, "sensitive"),
            min: number(map, "min"),
            max: number(map, "max"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "manifest_version": "0.3", "name": "files", "version": "1.2.0",
            "description": "Files", "author": {"name": "A"},
            "server": {"type": "node", "entry_point": "server/index.js", "mcp_config": {
                "command": "node", "args": ["${__dirname}/server/index.js", "${user_config.dirs}"],
                "env": {"API_KEY": "${user_config.api_key}"},
                "platform_overrides": {"win32": {"command": "node.exe"}, "linux": {"env": {"X": "1"}}}
            }},
            "user_config": {
                "dirs": {"type": "directory", "title": "Dirs", "description": "d", "multiple": true,
                         "required": true, "default": ["${HOME}/Desktop"]},
                "api_key": {"type": "string", "title": "API key", "description": "k", "sensitive": true},
                "size": {"type": "number", "title": "Size", "description": "s", "default": 10, "min": 1, "max": 100}
            },
            "compatibility": {"platforms": ["linux", "darwin"], "runtimes": {"node": ">=16.0.0"}}
        })
    }

    #[test]
    fn reads_the_fields_plugboard_uses() {
        let m = Manifest::from_value(&base()).unwrap();
        assert_eq!(m.name, "files");
        assert_eq!(m.author.as_deref(), Some("A"));
        let keys: Vec<_> = m.user_config.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["dirs", "api_key", "size"], "manifest order kept");
        assert!(m.user_config[0].multiple && m.user_config[0].required);
        assert_eq!(m.user_config[0].default, ["${HOME}/Desktop"]);
        assert!(m.user_config[1].sensitive);
        assert_eq!(m.user_config[2].default, ["10"]);
        assert_eq!(
            (m.user_config[2].min, m.user_config[2].max),
            (Some(1.0), Some(100.0))
        );
        let config = m.server.mcp_config.unwrap();
        assert_eq!(config.for_platform("win32").command, "node.exe");
        let linux = config.for_platform("linux");
        assert_eq!(linux.command, "node");
        assert_eq!(linux.env, BTreeMap::from([("X".into(), "1".into())]));
        assert_eq!(m.compatibility.platforms, ["linux", "darwin"]);
    }

    #[test]
    fn unknown_fields_are_tolerated_and_newer_versions_refused() {
        let mut v = base();
        v["future_thing"] = json!({"a": 1});
        v["user_config"]["dirs"]["new_flag"] = json!(true);
        let m = Manifest::from_value(&v).unwrap();
        assert_eq!(m.unknown_fields, ["future_thing"]);
        for newer in ["0.5", "1.0", "0.10"] {
            v["manifest_version"] = json!(newer);
            let err = Manifest::from_value(&v).unwrap_err();
            assert!(
                matches!(err, ManifestError::TooNew { .. }),
                "{newer}: {err}"
            );
            assert!(err.to_string().contains("update Plugboard"), "{err}");
        }
        v["manifest_version"] = json!("0.2");
        assert!(Manifest::from_value(&v).is_ok());
        v.as_object_mut().unwrap().remove("manifest_version");
        v["dxt_version"] = json!("0.1");
        assert_eq!(Manifest::from_value(&v).unwrap().manifest_version, "0.1");
    }

    #[test]
    fn what_it_cannot_do_without_is_refused_with_a_reason() {
        let mut v = base();
        v["server"].as_object_mut().unwrap().remove("mcp_config");
        assert!(
            Manifest::from_value(&v)
                .unwrap_err()
                .to_string()
                .contains("mcp_config")
        );
        v["server"]["type"] = json!("uv");
        assert!(
            Manifest::from_value(&v)
                .unwrap()
                .server
                .mcp_config
                .is_none()
        );
        assert!(
            Manifest::parse(b"{nope")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(Manifest::parse(b"[]").is_err());
        let mut v = base();
        v["manifest_version"] = json!("banana");
        assert!(
            Manifest::from_value(&v)
                .unwrap_err()
                .to_string()
                .contains("not a version")
        );
    }
}
