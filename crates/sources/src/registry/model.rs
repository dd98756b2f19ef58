//! The registry's data: a `server.json` (packages, remotes, their arguments, environment
//! variables and headers) and the registry's own metadata of one listed version.
//!
//! Real data is looser than the schema (five `$schema` versions, formats such as `integer`,
//! runtime hints such as `bun`, `"isRequired": "true"`, argument types left empty, headers with
//! no value), so rows are read by hand from JSON values: a field of the wrong type is treated
//! as absent, never as a reason to drop the server. Only a row without a name or a version is
//! malformed ([`RegistryRow::from_value`] says why). What is kept is written back (for the
//! cache) in the schema's own field names.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// The key of the official registry's metadata in a row's `_meta`.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// One row of a listing: a version of a server and what the registry says about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RegistryRow {
    pub server: ServerJson,
    #[serde(rename = "_meta")]
    pub meta: RowMeta,
}

/// The `_meta` of a row: the official registry's block.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RowMeta {
    #[serde(rename = "io.modelcontextprotocol.registry/official")]
    pub official: OfficialMeta,
}

/// A version's lifecycle status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Active,
    Deprecated,
    Deleted,
}

/// The registry-managed metadata of one version.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfficialMeta {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    pub is_latest: bool,
}

/// A `server.json`, as far as Plugboard uses it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<Package>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<Transport>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subfolder: Option<String>,
}

/// A package that runs the server locally.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb`, or whatever the data says (lower-cased).
    pub registry_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_base_url: Option<String>,
    pub identifier: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_hint: Option<String>,
    pub transport: Transport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runtime_arguments: Vec<Argument>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub package_arguments: Vec<Argument>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub environment_variables: Vec<KeyValueInput>,
}

/// A transport: a package's (`stdio`, or local `streamable-http` / `sse` with a URL) or a
/// remote's (`streamable-http` / `sse`, with URL variables and headers).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transport {
    /// `stdio`, `streamable-http`, `sse` (lower-cased; empty when missing).
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<KeyValueInput>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, Input>,
}

/// What the user may be asked for (an argument, an environment variable, a header, a URL
/// variable).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_required: bool,
    /// `string`, `number`, `boolean`, `filepath`, or what the data says (lower-cased).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A fixed value (maybe a `{variable}` template): not the user's to change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_secret: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub variables: BTreeMap<String, Input>,
}

/// A command-line argument.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    #[serde(flatten)]
    pub kind: ArgumentKind,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_repeated: bool,
    #[serde(flatten)]
    pub input: Input,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ArgumentKind {
    /// Inserted as is; `valueHint` names it.
    Positional {
        #[serde(rename = "valueHint", skip_serializing_if = "Option::is_none")]
        value_hint: Option<String>,
    },
    /// `name value` (or `name` alone for a flag).
    Named { name: String },
}

/// An environment variable or a header.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyValueInput {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
}

impl RegistryRow {
    /// Read one row of a listing. `Err` says why the row cannot be used at all.
    pub fn from_value(value: &Value) -> Result<RegistryRow, String> {
        let object = value.as_object().ok_or("the row is not a JSON object")?;
        let server = object
            .get("server")
            .ok_or("the row has no `server`")
            .and_then(|s| s.as_object().ok_or("`server` is not an object"))?;
        let official = object
            .get("_meta")
            .and_then(|m| m.get(OFFICIAL_META))
            .and_then(Value::as_object);
        Ok(RegistryRow {
            server: ServerJson::from_object(server)?,
            meta: RowMeta {
                official: official.map(OfficialMeta::from_object).unwrap_or_default(),
            },
        })
    }

    pub fn name(&self) -> &str {
        &self.server.name
    }

    pub fn version(&self) -> &str {
        &self.server.version
    }

    pub fn status(&self) -> Status {
        self.meta.official.status
    }
}

fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::String(s) => {
            let s = s.trim();
            (!s.is_empty()).then(|| s.to_owned())
        }
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A value meant as a default or a fixed value: kept as written (no trimming of inner text),
/// numbers and booleans turned into their text.
fn raw_text(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::String(s) => (!s.is_empty()).then(|| s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn flag(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn objects<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a Map<String, Value>> {
    map.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

impl ServerJson {
    fn from_object(map: &Map<String, Value>) -> Result<ServerJson, String> {
        let name = text(map, "name").ok_or("the server has no `name`")?;
        let version =
            text(map, "version").ok_or_else(|| format!("server `{name}` has no `version`"))?;
        let repository = map
            .get("repository")
            .and_then(Value::as_object)
            .and_then(|r| {
                Some(Repository {
                    url: text(r, "url")?,
                    source: text(r, "source"),
                    subfolder: text(r, "subfolder"),
                })
            });
        Ok(ServerJson {
            title: text(map, "title"),
            description: text(map, "description").unwrap_or_default(),
            repository,
            website_url: text(map, "websiteUrl"),
            packages: objects(map, "packages").map(Package::from_object).collect(),
            remotes: objects(map, "remotes")
                .map(Transport::from_object)
                .collect(),
            name,
            version,
        })
    }

    /// The owner part of the namespace: `io.github.owner/x` → `owner`, `com.stripe/mcp` →
    /// `stripe`, `ai.smithery/x` → `smithery`.
    pub fn owner(&self) -> &str {
        namespace_owner(&self.name)
    }

    /// The name without its namespace (see [`short_name`]).
    pub fn short_name(&self) -> &str {
        short_name(&self.name)
    }
}

/// A registry name without its namespace (`io.github.acme/weather-mcp` → `weather-mcp`); when
/// that part says nothing but "mcp" or "server" (`com.gitlab/mcp`: over a hundred rows of the
/// registry), the namespace's owner instead (`gitlab`), so that such servers are not all "mcp".
pub fn short_name(name: &str) -> &str {
    let Some((_, short)) = name.split_once('/') else {
        return name;
    };
    let owner = namespace_owner(name);
    if only_filler(short) && !owner.is_empty() && !only_filler(owner) {
        owner
    } else {
        short
    }
}

/// Whether every word of `text` is "mcp" or "server(s)".
fn only_filler(text: &str) -> bool {
    text.split(['-', '_', '.', ' '])
        .filter(|w| !w.is_empty())
        .all(|w| ["mcp", "server", "servers"].contains(&w.to_ascii_lowercase().as_str()))
}

/// The owner part of a registry name's namespace (see [`ServerJson::owner`]).
pub fn namespace_owner(name: &str) -> &str {
    let namespace = name.split_once('/').map_or(name, |(ns, _)| ns);
    if let Some(owner) = namespace
        .strip_prefix("io.github.")
        .or_else(|| namespace.strip_prefix("io.gitlab."))
    {
        return owner;
    }
    // Reverse DNS: the second label is the organisation (`com.stripe`, `ai.smithery`).
    let mut labels = namespace.split('.');
    let first = labels.next().unwrap_or(namespace);
    labels.next().unwrap_or(first)
}

impl Package {
    fn from_object(map: &Map<String, Value>) -> Package {
        Package {
            registry_type: text(map, "registryType")
                .map(|t| t.to_ascii_lowercase())
                .unwrap_or_default(),
            registry_base_url: text(map, "registryBaseUrl"),
            identifier: text(map, "identifier").unwrap_or_default(),
            version: text(map, "version"),
            file_sha256: text(map, "fileSha256"),
            runtime_hint: text(map, "runtimeHint"),
            transport: map
                .get("transport")
                .and_then(Value::as_object)
                .map(Transport::from_object)
                .unwrap_or_else(|| Transport {
                    kind: "stdio".into(),
                    ..Transport::default()
                }),
            runtime_arguments: objects(map, "runtimeArguments")
                .filter_map(Argument::from_object)
                .collect(),
            package_arguments: objects(map, "packageArguments")
                .filter_map(Argument::from_object)
                .collect(),
            environment_variables: objects(map, "environmentVariables")
                .filter_map(KeyValueInput::from_object)
                .collect(),
        }
    }
}

impl Transport {
    fn from_object(map: &Map<String, Value>) -> Transport {
        Transport {
            kind: text(map, "type")
                .map(|t| t.to_ascii_lowercase())
                .unwrap_or_default(),
            url: text(map, "url"),
            headers: objects(map, "headers")
                .filter_map(KeyValueInput::from_object)
                .collect(),
            variables: variables(map),
        }
    }
}

fn variables(map: &Map<String, Value>) -> BTreeMap<String, Input> {
    map.get("variables")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), Input::from_object(v.as_object()?))))
        .collect()
}

impl Input {
    fn from_object(map: &Map<String, Value>) -> Input {
        let choices = map
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| match c {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect();
        Input {
            description: text(map, "description"),
            is_required: flag(map, "isRequired"),
            format: text(map, "format").map(|f| f.to_ascii_lowercase()),
            value: raw_text(map, "value"),
            is_secret: flag(map, "isSecret"),
            default: raw_text(map, "default"),
            placeholder: text(map, "placeholder"),
            choices,
            variables: variables(map),
        }
    }
}

impl Argument {
    /// `None` for an argument with neither a name nor anything to insert.
    fn from_object(map: &Map<String, Value>) -> Option<Argument> {
        let input = Input::from_object(map);
        let kind_name = text(map, "type").map(|t| t.to_ascii_lowercase());
        let name = text(map, "name");
        let kind = match (kind_name.as_deref(), name) {
            (Some("named"), Some(name)) => ArgumentKind::Named { name },
            // `type` missing or empty: a name makes it a flag, else it is positional.
            (Some("") | None, Some(name)) => ArgumentKind::Named { name },
            _ => ArgumentKind::Positional {
                value_hint: text(map, "valueHint"),
            },
        };
        if let ArgumentKind::Positional { value_hint: None } = &kind
            && input.value.is_none()
            && input.default.is_none()
            && input.description.is_none()
        {
            return None;
        }
        Some(Argument {
            kind,
            is_repeated: flag(map, "isRepeated"),
            input,
        })
    }
}

impl KeyValueInput {
    fn from_object(map: &Map<String, Value>) -> Option<KeyValueInput> {
        Some(KeyValueInput {
            name: text(map, "name")?,
            input: Input::from_object(map),
        })
    }
}

impl OfficialMeta {
    fn from_object(map: &Map<String, Value>) -> OfficialMeta {
        OfficialMeta {
            status: match text(map, "status")
                .as_deref()
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("deprecated") => Status::Deprecated,
                Some("deleted") => Status::Deleted,
                _ => Status::Active,
            },
            status_message: text(map, "statusMessage"),
            published_at: text(map, "publishedAt"),
            updated_at: text(map, "updatedAt"),
            is_latest: flag(map, "isLatest"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_name_that_says_only_mcp_is_shown_by_its_owner() {
        assert_eq!(short_name("io.github.acme/weather-mcp"), "weather-mcp");
        assert_eq!(short_name("com.gitlab/mcp"), "gitlab");
        assert_eq!(short_name("com.cloudflare.mcp/mcp"), "cloudflare");
        assert_eq!(short_name("io.github.someone/mcp-server"), "someone");
        assert_eq!(short_name("com.devopness.mcp/server"), "devopness");
        assert_eq!(short_name("mcp/mcp"), "mcp");
        assert_eq!(short_name("no-namespace"), "no-namespace");
    }

    #[test]
    fn loose_rows_are_read_and_bad_ones_say_why() {
        let row = RegistryRow::from_value(&json!({
            "server": {
                "name": "io.github.owner/weather", "version": "1.2.0", "description": "Weather",
                "repository": {}, "packages": [
                    {"registryType": "NPM", "identifier": "weather-mcp", "version": "1.2.0",
                     "transport": {"type": "stdio"},
                     "packageArguments": [{"type": "", "value": "mcp"}, {"type": "named", "name": "--port", "isRequired": "true", "default": 8080}],
                     "environmentVariables": [{"name": "KEY", "isSecret": true}, {"noname": 1}]},
                    "not an object"
                ],
                "remotes": [{"type": "sse", "url": "https://x/sse", "headers": [{"name": "Authorization", "value": "Bearer {token}"}]}]
            },
            "_meta": {OFFICIAL_META: {"status": "deprecated", "statusMessage": "use v2", "isLatest": true}}
        }))
        .unwrap();
        assert_eq!(row.server.repository, None);
        let package = &row.server.packages[0];
        assert_eq!(package.registry_type, "npm");
        assert_eq!(package.package_arguments.len(), 2);
        assert_eq!(
            package.package_arguments[0].kind,
            ArgumentKind::Positional { value_hint: None }
        );
        assert!(package.package_arguments[1].input.is_required);
        assert_eq!(
            package.package_arguments[1].input.default.as_deref(),
            Some("8080")
        );
        assert_eq!(package.environment_variables.len(), 1);
        assert_eq!(row.status(), Status::Deprecated);
        assert_eq!(row.meta.official.status_message.as_deref(), Some("use v2"));
        assert_eq!(row.server.owner(), "owner");

        assert!(
            RegistryRow::from_value(&json!({"server": {"version": "1"}}))
                .unwrap_err()
                .contains("name")
        );
        assert!(
            RegistryRow::from_value(&json!({"server": {"name": "a/b"}}))
                .unwrap_err()
                .contains("version")
        );
        assert!(RegistryRow::from_value(&json!([1])).is_err());
    }

    #[test]
    fn owners_of_namespaces() {
        assert_eq!(
            namespace_owner("io.github.AungMyoKyaw/betterprompt-mcp"),
            "AungMyoKyaw"
        );
        assert_eq!(namespace_owner("com.stripe/mcp"), "stripe");
        assert_eq!(namespace_owner("ai.smithery/x-y"), "smithery");
        assert_eq!(namespace_owner("local/x"), "local");
    }
}
