//! Loading the catalog: the entries embedded in the binary, plus an optional directory of extra
//! entries (`PLUGBOARD_CATALOG_DIR`). Every file is parsed strictly and checked; an error names
//! the file and the field.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::model::{CatalogAuth, CatalogTransport, Entry, Field, FieldKind};
use crate::config::{validate_env_key, validate_header_name};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_catalog.rs"));
}

/// The categories an entry may use.
pub const CATEGORIES: &[&str] = &[
    "developer-tools",
    "productivity",
    "communication",
    "data",
    "search",
    "browser",
    "ai",
    "cloud",
    "design",
    "finance",
    "crm",
    "monitoring",
    "security",
    "knowledge",
    "files",
    "marketing",
];

/// A catalog file that could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    #[error("catalog file {file}: {detail}")]
    Invalid { file: String, detail: String },
    #[error("could not read the catalog directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The entries compiled into this binary.
pub fn embedded_entries() -> Result<Vec<Entry>, CatalogError> {
    embedded::EMBEDDED
        .iter()
        .map(|(name, text)| parse_entry(name, text))
        .collect()
}

/// Every `*.json` file in `dir` (not recursive), sorted by name.
pub fn dir_entries(dir: &Path) -> Result<Vec<Entry>, CatalogError> {
    let io_err = |source| CatalogError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name().is_some_and(|n| n != "catalog.schema.json")
        })
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Io {
                path: path.clone(),
                source,
            })?;
            parse_entry(&path.display().to_string(), &text)
        })
        .collect()
}

/// Parse and check one catalog file. `file` is used in errors and must end in `<id>.json`.
pub fn parse_entry(file: &str, text: &str) -> Result<Entry, CatalogError> {
    let invalid = |detail: String| CatalogError::Invalid {
        file: file.to_string(),
        detail,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let entry: Entry = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            invalid(inner.to_string())
        } else {
            invalid(format!("field `{path}`: {inner}"))
        }
    })?;
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if entry.id != stem {
        return Err(invalid(format!(
            "field `id`: `{}` must match the file name `{stem}.json`",
            entry.id
        )));
    }
    check_entry(&entry).map_err(invalid)?;
    Ok(entry)
}

fn is_slug(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The rules serde cannot express: patterns, uniqueness, https links, secret fields with help.
fn check_entry(entry: &Entry) -> Result<(), String> {
    if !is_slug(&entry.id, 63) {
        return Err(format!(
            "field `id`: `{}` must be lower-case letters, digits and `-`",
            entry.id
        ));
    }
    if !entry.docs_url.starts_with("https://") {
        return Err("field `docs_url`: must be an https:// URL".into());
    }
    if entry.categories.is_empty() {
        return Err("field `categories`: needs at least one category".into());
    }
    for (i, category) in entry.categories.iter().enumerate() {
        if !CATEGORIES.contains(&category.as_str()) {
            return Err(format!(
                "field `categories[{i}]`: unknown category `{category}` (known: {})",
                CATEGORIES.join(", ")
            ));
        }
    }
    if entry.options.is_empty() {
        return Err("field `options`: needs at least one connection option".into());
    }
    let mut option_ids = HashSet::new();
    for (i, option) in entry.options.iter().enumerate() {
        let at = |field: &str| format!("options[{i}].{field}");
        if !is_slug(&option.id, 31) || !option_ids.insert(option.id.as_str()) {
            return Err(format!(
                "field `{}`: `{}` must be a unique lower-case slug",
                at("id"),
                option.id
            ));
        }
        let mut keys = HashSet::new();
        let mut check_fields =
            |fields: &[Field], what: &str, rule: fn(&str) -> Result<(), String>| {
                for (j, field) in fields.iter().enumerate() {
                    let here = at(&format!("transport.{what}[{j}]"));
                    rule(&field.key).map_err(|e| format!("field `{here}.key`: {e}"))?;
                    if !keys.insert(field.key.clone()) {
                        return Err(format!("field `{here}.key`: `{}` is used twice", field.key));
                    }
                    check_field(field).map_err(|e| format!("field `{here}`: {e}"))?;
                }
                Ok::<(), String>(())
            };
        match &option.transport {
            CatalogTransport::Stdio {
                command,
                env_fields,
                arg_fields,
                ..
            } => {
                if command.trim().is_empty() {
                    return Err(format!(
                        "field `{}`: must not be empty",
                        at("transport.command")
                    ));
                }
                check_fields(env_fields, "env_fields", validate_env_key)?;
                check_fields(arg_fields, "arg_fields", validate_arg_key)?;
            }
            CatalogTransport::Shttp(remote) | CatalogTransport::Sse(remote) => {
                if !remote.url.starts_with("https://") {
                    return Err(format!(
                        "field `{}`: must be an https:// URL",
                        at("transport.url")
                    ));
                }
                check_fields(&remote.header_fields, "header_fields", validate_header_name)?;
            }
        }
        match &option.auth {
            CatalogAuth::ApiKey { credential, .. } | CatalogAuth::Bearer { credential } => {
                validate_env_key(&credential.secret_name)
                    .map_err(|e| format!("field `{}`: {e}", at("auth.credential.secret_name")))?;
                if keys.contains(&credential.secret_name) {
                    return Err(format!(
                        "field `{}`: `{}` is also a field key",
                        at("auth.credential.secret_name"),
                        credential.secret_name
                    ));
                }
                if matches!(option.transport, CatalogTransport::Stdio { .. }) {
                    return Err(format!(
                        "field `{}`: a stdio server takes its credentials in env fields; use auth type `none`",
                        at("auth")
                    ));
                }
            }
            CatalogAuth::Oauth2 { .. }
                if matches!(option.transport, CatalogTransport::Stdio { .. }) =>
            {
                return Err(format!(
                    "field `{}`: OAuth needs a remote transport",
                    at("auth")
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn validate_arg_key(key: &str) -> Result<(), String> {
    let ok = key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{key}` must be lower-case letters, digits and `_`"
        ))
    }
}

fn check_field(field: &Field) -> Result<(), String> {
    if field.kind == FieldKind::Password {
        if field.help.as_deref().is_none_or(str::is_empty) {
            return Err("a password field needs `help` saying where to get the value".into());
        }
        if field.default.is_some() {
            return Err("a password field cannot have a default".into());
        }
    }
    Ok(())
}
