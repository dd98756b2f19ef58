//! The organisation policy after install: every edit that changes where a server's code or
//! endpoint comes from, and every launch (`run`, test, health, Try it), is judged again, so a
//! policy that changed since the install, or an edit that turned an allowed server into another,
//! never gets a server started. Without a policy file this reads nothing and allows all.

use std::path::Path;

use crate::catalog::Catalog;
use crate::config::ServerConfig;
use crate::policy::{PolicyState, Refusal, Subject};
use crate::registry::Listing;

/// What the policy judges `server` as: the registry version, curated entry or bundle it was
/// installed from, else a server the user made (a custom or imported one, or one whose launch
/// was edited away from its source).
pub fn subject_of<'a>(
    name: &'a str,
    server: &'a ServerConfig,
    catalog: &'a Catalog,
) -> Subject<'a> {
    let Some(source) = &server.source else {
        return Subject::Custom { name };
    };
    if let Some(registry) = &source.registry {
        return Subject::Registry {
            registry: &registry.url,
            name: &registry.name,
        };
    }
    if let Some(bundle) = &source.bundle {
        return Subject::LocalBundle {
            file: bundle.file.as_deref().unwrap_or(&bundle.name),
            sha256: &bundle.sha256,
        };
    }
    if !source.catalog.is_empty() {
        let registry_names = catalog
            .get(&source.catalog)
            .map(|entry| entry.registry_names.as_slice())
            .unwrap_or_default();
        return Subject::Curated {
            entry_id: &source.catalog,
            registry_names,
        };
    }
    Subject::Custom { name }
}

/// Whether the policy in force allows server `name` as configured now. A broken policy refuses
/// every server (fail closed); no policy allows every server without reading anything.
pub fn check(config_dir: &Path, name: &str, server: &ServerConfig) -> Result<(), Refusal> {
    check_with(&crate::policy::current(), config_dir, name, server)
}

/// [`check`] against a given policy state.
pub fn check_with(
    policy: &PolicyState,
    config_dir: &Path,
    name: &str,
    server: &ServerConfig,
) -> Result<(), Refusal> {
    let PolicyState::InForce(rules) = policy else {
        return policy.usable();
    };
    let unreadable = |what: String| Refusal {
        path: rules.path.clone(),
        reason: format!("`{name}` cannot be checked against the policy ({what}), so it is refused"),
    };
    let catalog = Catalog::load_default().map_err(|e| unreadable(e.to_string()))?;
    let registries =
        crate::registry::sources::registries(config_dir).map_err(|e| unreadable(e.to_string()))?;
    let listing = Listing::load(config_dir, &registries);
    policy
        .check(subject_of(name, server, &catalog), &listing)
        .map_err(|refusal| Refusal {
            path: refusal.path,
            reason: format!("`{name}` may not run here: {}", refusal.reason),
        })
}
