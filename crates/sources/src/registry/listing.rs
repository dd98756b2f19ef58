//! The registries' caches merged into one listing, in the order of the registry list: a server
//! listed by two registries is taken from the first (a company's registry put first overrides
//! the official one). Deleted servers are never cached (their removals are kept beside, for
//! installed servers to be told why they are gone); deprecated ones are listed, flagged.

use std::collections::HashSet;
use std::path::Path;

use super::cache::{Brief, CacheProblem, CachedRegistry, cache_path};
use super::model::RegistryRow;
use super::sources::RegistrySource;

/// Where a listed server's row is: which registry, which position in its cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowRef {
    pub registry: u16,
    pub index: u32,
}

/// One registry and its cache (or why there is none).
#[derive(Debug)]
pub struct LoadedRegistry {
    pub source: RegistrySource,
    pub cache: Option<CachedRegistry>,
    pub problem: Option<CacheProblem>,
    /// The servers it deleted ([`super::removed`]).
    pub removed: super::removed::Removals,
}

/// Every cached server of every registry, first registry first.
#[derive(Debug, Default)]
pub struct Listing {
    pub registries: Vec<LoadedRegistry>,
    visible: Vec<RowRef>,
}

impl Listing {
    /// Load the caches of `sources` from `config_dir`. Caches that cannot be read are
    /// reported in their registry's `problem` and listed as empty.
    pub fn load(config_dir: &Path, sources: &[RegistrySource]) -> Listing {
        let registries: Vec<LoadedRegistry> = sources
            .iter()
            .map(|source| {
                let path = cache_path(config_dir, &source.url);
                let (cache, problem) = match CachedRegistry::load(&path) {
                    Ok(cache) => (cache, None),
                    Err(problem) => (None, Some(problem)),
                };
                LoadedRegistry {
                    source: source.clone(),
                    cache,
                    problem,
                    removed: super::removed::load(&path),
                }
            })
            .collect();
        Listing::from_registries(registries)
    }

    pub fn from_registries(registries: Vec<LoadedRegistry>) -> Listing {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut visible = Vec::new();
        for (r, loaded) in registries.iter().enumerate() {
            let Some(cache) = &loaded.cache else { continue };
            for (i, brief) in cache.briefs().enumerate() {
                if seen.insert(brief.name) {
                    visible.push(RowRef {
                        registry: r as u16,
                        index: i as u32,
                    });
                }
            }
        }
        Listing {
            registries,
            visible,
        }
    }

    /// Why server `name` is gone, when a registry deleted it and none lists it.
    pub fn removal(&self, name: &str) -> Option<&super::removed::Removal> {
        if self.find(name).is_some() {
            return None;
        }
        self.registries.iter().find_map(|r| r.removed.get(name))
    }

    /// The listed servers (one per name).
    pub fn servers(&self) -> impl ExactSizeIterator<Item = (RowRef, Brief<'_>)> + '_ {
        self.visible.iter().map(|&r| (r, self.brief(r)))
    }

    pub fn len(&self) -> usize {
        self.visible.len()
    }

    pub fn is_empty(&self) -> bool {
        self.visible.is_empty()
    }

    pub fn brief(&self, at: RowRef) -> Brief<'_> {
        let cache = self.registries[at.registry as usize]
            .cache
            .as_ref()
            .expect("a listed row's registry has a cache");
        cache.brief(at.index as usize)
    }

    /// The registry base URL of a listed row.
    pub fn registry_url(&self, at: RowRef) -> &str {
        &self.registries[at.registry as usize].source.url
    }

    /// Server `name`, from the first registry that lists it.
    pub fn find(&self, name: &str) -> Option<RowRef> {
        self.registries.iter().enumerate().find_map(|(r, loaded)| {
            let index = loaded.cache.as_ref()?.find(name)?;
            Some(RowRef {
                registry: r as u16,
                index: index as u32,
            })
        })
    }

    /// The full row of a listed server, read from its cache.
    pub fn row(&self, at: RowRef) -> Result<RegistryRow, CacheProblem> {
        self.registries[at.registry as usize]
            .cache
            .as_ref()
            .expect("a listed row's registry has a cache")
            .row(at.index as usize)
    }

    /// When the oldest of the caches was synced (Unix seconds), if any cache exists.
    pub fn oldest_sync(&self) -> Option<i64> {
        self.registries
            .iter()
            .filter_map(|r| r.cache.as_ref().map(|c| c.header.synced_at))
            .min()
    }
}

/// What the policy's registries publish, answered from their caches.
impl crate::policy::Published for Listing {
    fn lists(&self, registry: &str, name: &str) -> bool {
        self.registries.iter().any(|r| {
            same_registry(&r.source.url, registry)
                && r.cache.as_ref().is_some_and(|c| c.find(name).is_some())
        })
    }

    fn bundle(&self, registry: &str, sha256: &str) -> Option<String> {
        let loaded = self
            .registries
            .iter()
            .find(|r| same_registry(&r.source.url, registry))?;
        let cache = loaded.cache.as_ref()?;
        cache
            .briefs()
            .enumerate()
            .filter(|(_, b)| b.packages().any(|p| p.registry_type == "mcpb"))
            .find_map(|(i, b)| {
                let row = cache.row(i).ok()?;
                row.server
                    .packages
                    .iter()
                    .any(|p| {
                        p.file_sha256
                            .as_deref()
                            .is_some_and(|d| d.eq_ignore_ascii_case(sha256))
                    })
                    .then(|| b.name.to_string())
            })
    }
}

fn same_registry(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}
