//! Which registries Plugboard reads, in order: the official registry (or, when
//! `PLUGBOARD_REGISTRY_URL` is set, the comma-separated base URLs it names instead), then the
//! ones added with `plugboard registry add URL`, minus the ones removed with `plugboard
//! registry remove URL`; an organisation's policy that names registries replaces all of that
//! (`policy`). The choices live in `settings.json` under `"registries"` (`{"added":
//! [...], "removed": [...]}`), next to the other settings, which are kept as they are. A
//! server listed by two registries is taken from the first.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::secrets::selection::SETTINGS_FILE;
use plugboard_base::fs::write_private;

/// The official MCP Registry.
pub const OFFICIAL_REGISTRY: &str = "https://registry.modelcontextprotocol.io";
/// Comma-separated registry base URLs used instead of the official one.
pub const REGISTRY_URL_ENV: &str = "PLUGBOARD_REGISTRY_URL";
const KEY: &str = "registries";
const PINNING_KEY: &str = "pin_dependencies";

/// Where a registry in the list comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The official registry, used when nothing else is said.
    Default,
    /// `PLUGBOARD_REGISTRY_URL`.
    Environment,
    /// `plugboard registry add`.
    Settings,
    /// An organisation's policy file, which replaces every other choice.
    Policy,
}

/// One registry to read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegistrySource {
    /// The base URL, normalised (no trailing slash).
    pub url: String,
    pub origin: Origin,
}

/// A problem with the registry settings.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourcesError {
    #[error("`{url}` is not a registry base URL: {detail}")]
    BadUrl { url: String, detail: String },
    #[error(
        "the registry list is fixed by the organisation policy {}: it cannot be changed here",
        path.display()
    )]
    FixedByPolicy { path: std::path::PathBuf },
    #[error("{} cannot be used: {detail}; fix or remove that file", path.display())]
    Settings {
        path: std::path::PathBuf,
        detail: String,
    },
}

/// `url` checked and normalised: http(s), a host, no query or fragment, no trailing slash.
pub fn normalise_url(url: &str) -> Result<String, SourcesError> {
    let bad = |detail: &str| SourcesError::BadUrl {
        url: url.to_owned(),
        detail: detail.to_owned(),
    };
    let parsed = url::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad(
            "it must start with https:// (or http:// for a local registry)",
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(bad("give the base URL only, without `?…` or `#…`"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad("credentials do not belong in a registry URL"));
    }
    Ok(parsed.as_str().trim_end_matches('/').to_owned())
}

fn settings_path(config_dir: &Path) -> std::path::PathBuf {
    config_dir.join(SETTINGS_FILE)
}

fn read_settings(config_dir: &Path) -> Result<Map<String, Value>, SourcesError> {
    let path = settings_path(config_dir);
    let fail = |detail: String| SourcesError::Settings {
        path: path.clone(),
        detail,
    };
    match std::fs::read(&path) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(fail("it is not a JSON object".into())),
            Err(e) => Err(fail(e.to_string())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// Refuse to change the registry list while a policy fixes it.
fn not_fixed_by_policy() -> Result<(), SourcesError> {
    match crate::policy::current() {
        crate::policy::PolicyState::InForce(p) if p.registries.is_some() => {
            Err(SourcesError::FixedByPolicy { path: p.path })
        }
        _ => Ok(()),
    }
}

fn update_settings(
    config_dir: &Path,
    change: impl FnOnce(&mut Map<String, Value>),
) -> Result<(), SourcesError> {
    let mut settings = read_settings(config_dir)?;
    change(&mut settings);
    let mut text = serde_json::to_vec_pretty(&Value::Object(settings)).expect("JSON serializes");
    text.push(b'\n');
    let path = settings_path(config_dir);
    write_private(&path, &text).map_err(|e| SourcesError::Settings {
        path,
        detail: e.to_string(),
    })
}

fn url_list(settings: &Map<String, Value>, which: &str) -> Vec<String> {
    settings
        .get(KEY)
        .and_then(|r| r.get(which))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|u| normalise_url(u).ok())
        .collect()
}

/// The registries to read, in order. A bad URL in `PLUGBOARD_REGISTRY_URL` is an error (it was
/// typed by the user just now); bad ones in the settings file are skipped.
pub fn registries(config_dir: &Path) -> Result<Vec<RegistrySource>, SourcesError> {
    if let crate::policy::PolicyState::InForce(policy) = crate::policy::current()
        && let Some(list) = &policy.registries
    {
        return Ok(list
            .iter()
            .filter_map(|u| normalise_url(u).ok())
            .map(|url| RegistrySource {
                url,
                origin: Origin::Policy,
            })
            .collect());
    }
    let settings = read_settings(config_dir)?;
    let env = std::env::var(REGISTRY_URL_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let mut list: Vec<RegistrySource> = match env {
        Some(value) => value
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|u| {
                Ok(RegistrySource {
                    url: normalise_url(u)?,
                    origin: Origin::Environment,
                })
            })
            .collect::<Result<_, SourcesError>>()?,
        None => vec![RegistrySource {
            url: OFFICIAL_REGISTRY.to_owned(),
            origin: Origin::Default,
        }],
    };
    list.extend(
        url_list(&settings, "added")
            .into_iter()
            .map(|url| RegistrySource {
                url,
                origin: Origin::Settings,
            }),
    );
    let removed = url_list(&settings, "removed");
    let mut seen = std::collections::HashSet::new();
    list.retain(|r| !removed.contains(&r.url) && seen.insert(r.url.clone()));
    Ok(list)
}

/// `plugboard registry add URL`: read it after the others. Returns the normalised URL.
pub fn add(config_dir: &Path, url: &str) -> Result<String, SourcesError> {
    not_fixed_by_policy()?;
    let url = normalise_url(url)?;
    update_settings(config_dir, |settings| {
        let mut added = url_list(settings, "added");
        let mut removed = url_list(settings, "removed");
        removed.retain(|u| *u != url);
        if !added.contains(&url) {
            added.push(url.clone());
        }
        settings.insert(
            KEY.into(),
            serde_json::json!({"added": added, "removed": removed}),
        );
    })?;
    Ok(url)
}

/// `plugboard registry remove URL`: stop reading it (the official registry included).
/// Returns the normalised URL, and whether it was in the list.
pub fn remove(config_dir: &Path, url: &str) -> Result<(String, bool), SourcesError> {
    not_fixed_by_policy()?;
    let url = normalise_url(url)?;
    let listed = registries(config_dir)?.iter().any(|r| r.url == url);
    update_settings(config_dir, |settings| {
        let mut added = url_list(settings, "added");
        let mut removed = url_list(settings, "removed");
        added.retain(|u| *u != url);
        if !removed.contains(&url) {
            removed.push(url.clone());
        }
        settings.insert(
            KEY.into(),
            serde_json::json!({"added": added, "removed": removed}),
        );
    })?;
    Ok((url, listed))
}

/// Whether registry launches resolve their dependencies as of the version's publication date
/// (`"pin_dependencies"` in settings.json; on unless set to `false`).
pub fn pinning_enabled(config_dir: &Path) -> bool {
    read_settings(config_dir)
        .ok()
        .and_then(|s| s.get(PINNING_KEY).and_then(Value::as_bool))
        .unwrap_or(true)
}

/// Turn dependency pinning of registry launches on or off.
pub fn set_pinning(config_dir: &Path, on: bool) -> Result<(), SourcesError> {
    update_settings(config_dir, |settings| {
        settings.insert(PINNING_KEY.into(), Value::Bool(on));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalised_and_bad_ones_refused() {
        assert_eq!(
            normalise_url("https://registry.example.com/").unwrap(),
            "https://registry.example.com"
        );
        assert_eq!(
            normalise_url("http://127.0.0.1:9/sub/").unwrap(),
            "http://127.0.0.1:9/sub"
        );
        for bad in ["ftp://x", "nothing", "https://u:p@x", "https://x/?a=1"] {
            assert!(normalise_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn added_and_removed_registries_are_kept_with_other_settings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(SETTINGS_FILE),
            r#"{"secret_store":"keyring"}"#,
        )
        .unwrap();
        // The environment is the process's: only the settings part is checked here.
        let urls = |dir: &Path| -> Vec<String> {
            let settings = read_settings(dir).unwrap();
            url_list(&settings, "added")
        };
        add(dir.path(), "https://a.example/").unwrap();
        add(dir.path(), "https://b.example").unwrap();
        add(dir.path(), "https://a.example").unwrap();
        assert_eq!(urls(dir.path()), ["https://a.example", "https://b.example"]);
        remove(dir.path(), "https://a.example").unwrap();
        assert_eq!(urls(dir.path()), ["https://b.example"]);
        let settings = read_settings(dir.path()).unwrap();
        assert_eq!(url_list(&settings, "removed"), ["https://a.example"]);
        assert_eq!(settings["secret_store"], "keyring");
        assert!(pinning_enabled(dir.path()));
        set_pinning(dir.path(), false).unwrap();
        assert!(!pinning_enabled(dir.path()));
    }
}
