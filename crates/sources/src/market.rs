//! The marketplace: one list over every source of installable servers, the curated catalog
//! first where both match, then the registries' servers. A curated entry that names its
//! registry names (`registry_names`) stands for those rows, which are not listed again.
//! Searching is the ranked word search of [`crate::search`] over names and titles, keywords,
//! package identifiers, the namespace's owner and descriptions; filters narrow by source,
//! transport, runtime, installed state and category.

use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;

use serde::Serialize;

use crate::catalog::{Catalog, CatalogTransport, Entry};
use crate::config::{ServerConfig, TransportKind};
use crate::registry::cache::Brief;
use crate::registry::model::{Status, namespace_owner};
use crate::registry::{Listing, RowRef};
use crate::runtimes::runtime_of;
use crate::search::{Document, Index};

/// Where a marketplace item comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemSource {
    Curated,
    Registry,
}

/// One item of the marketplace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A curated entry (its position in the catalog).
    Curated(u32),
    /// A registry server.
    Registry(RowRef),
}

/// What runs a server locally (or that it is reached remotely).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeKind {
    Node,
    Python,
    Docker,
    Dotnet,
    Bun,
    Mcpb,
    Remote,
    Other,
}

impl RuntimeKind {
    const ALL: [RuntimeKind; 8] = [
        RuntimeKind::Node,
        RuntimeKind::Python,
        RuntimeKind::Docker,
        RuntimeKind::Dotnet,
        RuntimeKind::Bun,
        RuntimeKind::Mcpb,
        RuntimeKind::Remote,
        RuntimeKind::Other,
    ];

    fn bit(self) -> u16 {
        1 << RuntimeKind::ALL
            .iter()
            .position(|r| *r == self)
            .expect("listed")
    }

    pub fn label(self) -> &'static str {
        match self {
            RuntimeKind::Node => "Node.js",
            RuntimeKind::Python => "Python",
            RuntimeKind::Docker => "Docker",
            RuntimeKind::Dotnet => ".NET",
            RuntimeKind::Bun => "Bun",
            RuntimeKind::Mcpb => "MCPB",
            RuntimeKind::Remote => "Remote",
            RuntimeKind::Other => "Other",
        }
    }

    pub fn parse(text: &str) -> Option<RuntimeKind> {
        RuntimeKind::ALL.into_iter().find(|r| {
            format!("{r:?}").eq_ignore_ascii_case(text) || r.label().eq_ignore_ascii_case(text)
        })
    }

    /// The runtimes of a flag set.
    pub fn of(bits: u16) -> Vec<RuntimeKind> {
        RuntimeKind::ALL
            .into_iter()
            .filter(|r| bits & r.bit() != 0)
            .collect()
    }

    /// The runtime of a program (`npx` → Node.js).
    pub fn of_program(program: &str) -> RuntimeKind {
        match runtime_of(program).map(|r| r.program) {
            Some("node") => RuntimeKind::Node,
            Some("python3" | "uv") => RuntimeKind::Python,
            Some("docker") => RuntimeKind::Docker,
            Some("dotnet") => RuntimeKind::Dotnet,
            Some("bun") => RuntimeKind::Bun,
            _ => RuntimeKind::Other,
        }
    }
}

fn transport_bit(t: TransportKind) -> u8 {
    match t {
        TransportKind::Stdio => 1,
        TransportKind::Shttp | TransportKind::Auto => 2,
        TransportKind::Sse => 4,
    }
}

/// The transports of a flag set.
pub fn transports_of(bits: u8) -> Vec<TransportKind> {
    [
        TransportKind::Stdio,
        TransportKind::Shttp,
        TransportKind::Sse,
    ]
    .into_iter()
    .filter(|t| bits & transport_bit(*t) != 0)
    .collect()
}

/// Filters of a marketplace query (all optional).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    pub source: Option<ItemSource>,
    pub transport: Option<TransportKind>,
    pub runtime: Option<RuntimeKind>,
    /// `Some(true)`: installed only; `Some(false)`: not installed only.
    pub installed: Option<bool>,
    /// A curated category (registry servers have none).
    pub category: Option<String>,
}

/// Per item, what the filters look at.
#[derive(Clone, Copy, Debug, Default)]
struct Facets {
    transports: u8,
    runtimes: u16,
}

/// The installed servers, by what they were installed from.
#[derive(Clone, Debug, Default)]
pub struct Installed {
    /// Catalog entry id → server names.
    pub curated: BTreeMap<String, Vec<String>>,
    /// Registry name → server names.
    pub registry: BTreeMap<String, Vec<String>>,
}

impl Installed {
    /// From the installed servers' sources.
    pub fn of<'a>(servers: impl IntoIterator<Item = (String, &'a ServerConfig)>) -> Installed {
        let mut installed = Installed::default();
        for (name, server) in servers {
            let Some(source) = &server.source else {
                continue;
            };
            match &source.registry {
                Some(origin) => installed
                    .registry
                    .entry(origin.name.clone())
                    .or_default()
                    .push(name),
                None => installed
                    .curated
                    .entry(source.catalog.clone())
                    .or_default()
                    .push(name),
            }
        }
        installed
    }
}

/// Every installable server of every source, with its search index.
pub struct Market {
    catalog: Catalog,
    listing: Listing,
    items: Vec<Item>,
    facets: Vec<Facets>,
    /// Registry names stood for by curated entries (not listed as registry items).
    replaced: HashSet<String>,
    index: OnceLock<Index>,
}

impl Market {
    pub fn new(catalog: Catalog, listing: Listing) -> Market {
        let replaced: HashSet<String> = catalog
            .entries()
            .iter()
            .flat_map(|e| e.registry_names.iter().cloned())
            .collect();
        let positions: BTreeMap<&str, u32> = catalog
            .entries()
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i as u32))
            .collect();
        let mut items: Vec<Item> = catalog
            .ranked()
            .map(|e| Item::Curated(positions[e.id.as_str()]))
            .collect();
        let mut facets: Vec<Facets> = catalog.ranked().map(curated_facets).collect();
        let mut registry: Vec<(RowRef, Brief)> = listing
            .servers()
            .filter(|(_, b)| !replaced.contains(b.name))
            .collect();
        registry.sort_by_cached_key(|(_, b)| {
            (
                b.status != Status::Active,
                b.display_name().to_lowercase(),
                b.name,
            )
        });
        facets.extend(registry.iter().map(|(_, b)| brief_facets(b)));
        items.extend(registry.iter().map(|(r, _)| Item::Registry(*r)));
        Market {
            catalog,
            listing,
            items,
            facets,
            replaced,
            index: OnceLock::new(),
        }
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn listing(&self) -> &Listing {
        &self.listing
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn item(&self, at: u32) -> Item {
        self.items[at as usize]
    }

    /// Whether registry name `name` is stood for by a curated entry.
    pub fn replaced(&self, name: &str) -> bool {
        self.replaced.contains(name)
    }

    /// The curated entry standing for registry name `name`.
    pub fn curated_for(&self, name: &str) -> Option<&Entry> {
        self.catalog
            .entries()
            .iter()
            .find(|e| e.registry_names.iter().any(|n| n == name))
    }

    pub fn entry(&self, index: u32) -> &Entry {
        &self.catalog.entries()[index as usize]
    }

    /// The transports and runtimes of item `at`.
    pub fn facets(&self, at: u32) -> (Vec<TransportKind>, Vec<RuntimeKind>) {
        let f = self.facets[at as usize];
        (transports_of(f.transports), RuntimeKind::of(f.runtimes))
    }

    /// Build the search index now (the first search does otherwise).
    pub fn prepare(&self) {
        self.index();
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            /// The words of one item the index is built from (a [`Document`] borrows them).
            struct Texts<'t> {
                names: Vec<&'t str>,
                tags: Vec<&'t str>,
                description: &'t str,
                exact: Vec<&'t str>,
            }
            let texts: Vec<Texts> = self
                .items
                .iter()
                .map(|item| match *item {
                    Item::Curated(i) => {
                        let e = &self.catalog.entries()[i as usize];
                        Texts {
                            names: vec![e.name.as_str(), e.id.as_str()],
                            tags: e.keywords.iter().map(String::as_str).collect(),
                            description: e.description.as_str(),
                            exact: e.registry_names.iter().map(String::as_str).collect(),
                        }
                    }
                    Item::Registry(r) => {
                        let b = self.listing.brief(r);
                        let short = crate::registry::model::short_name(b.name);
                        let mut names = vec![short];
                        if let Some(title) = b.title {
                            names.insert(0, title);
                        }
                        let mut tags = vec![namespace_owner(b.name)];
                        tags.extend(b.packages().map(|p| p.identifier));
                        Texts {
                            names,
                            tags,
                            description: b.description,
                            exact: vec![b.name],
                        }
                    }
                })
                .collect();
            Index::build(texts.iter().map(|t| Document {
                names: &t.names,
                tags: &t.tags,
                description: t.description,
                exact: &t.exact,
            }))
        })
    }

    /// The items matching `query` and `filters`, best first.
    pub fn search(&self, query: &str, filters: &Filters, installed: &Installed) -> Vec<u32> {
        if *filters == Filters::default() {
            // No filter: a search with nothing to call per document.
            return self.index().search(query, |_| true);
        }
        let keep = |at: u32| {
            let item = self.items[at as usize];
            let facets = self.facets[at as usize];
            let source_ok = matches!(
                (filters.source, item),
                (None, _)
                    | (Some(ItemSource::Curated), Item::Curated(_))
                    | (Some(ItemSource::Registry), Item::Registry(_))
            );
            source_ok
                && filters
                    .transport
                    .is_none_or(|t| facets.transports & transport_bit(t) != 0)
                && filters
                    .runtime
                    .is_none_or(|r| facets.runtimes & r.bit() != 0)
                && filters.category.as_deref().is_none_or(|c| match item {
                    Item::Curated(i) => self.catalog.entries()[i as usize]
                        .categories
                        .iter()
                        .any(|x| x == c),
                    Item::Registry(_) => false,
                })
                && filters
                    .installed
                    .is_none_or(|want| self.installed_as(at, installed).is_empty() != want)
        };
        self.index().search(query, keep)
    }

    /// The installed servers that came from item `at`.
    pub fn installed_as<'a>(&self, at: u32, installed: &'a Installed) -> &'a [String] {
        let names = match self.items[at as usize] {
            Item::Curated(i) => installed
                .curated
                .get(&self.catalog.entries()[i as usize].id),
            Item::Registry(r) => installed.registry.get(self.listing.brief(r).name),
        };
        names.map_or(&[], Vec::as_slice)
    }
}

fn curated_facets(entry: &Entry) -> Facets {
    let mut f = Facets::default();
    for option in &entry.options {
        match &option.transport {
            CatalogTransport::Stdio { command, .. } => {
                f.transports |= transport_bit(TransportKind::Stdio);
                f.runtimes |= RuntimeKind::of_program(command).bit();
            }
            CatalogTransport::Shttp(_) => {
                f.transports |= transport_bit(TransportKind::Shttp);
                f.runtimes |= RuntimeKind::Remote.bit();
            }
            CatalogTransport::Sse(_) => {
                f.transports |= transport_bit(TransportKind::Sse);
                f.runtimes |= RuntimeKind::Remote.bit();
            }
        }
    }
    f
}

/// The runtime of a registry package.
pub fn package_runtime(registry_type: &str, hint: Option<&str>) -> RuntimeKind {
    match (registry_type, hint) {
        ("npm", Some("bun" | "bunx")) => RuntimeKind::Bun,
        ("npm", _) => RuntimeKind::Node,
        ("pypi", _) => RuntimeKind::Python,
        ("oci" | "docker", _) => RuntimeKind::Docker,
        ("nuget", _) => RuntimeKind::Dotnet,
        ("mcpb", _) => RuntimeKind::Mcpb,
        _ => RuntimeKind::Other,
    }
}

fn brief_facets(b: &Brief) -> Facets {
    let mut f = Facets::default();
    for p in b.packages() {
        let kind = crate::form::engine::transport_kind(p.transport).unwrap_or(TransportKind::Stdio);
        f.transports |= transport_bit(kind);
        f.runtimes |= package_runtime(p.registry_type, p.runtime_hint).bit();
    }
    for r in b.remotes() {
        let kind = crate::form::engine::transport_kind(r).unwrap_or(TransportKind::Shttp);
        f.transports |= transport_bit(kind);
        f.runtimes |= RuntimeKind::Remote.bit();
    }
    f
}

/// A server found by its catalog id or registry name.
#[derive(Debug)]
pub enum Found<'a> {
    Curated(&'a Entry),
    Registry {
        row: crate::registry::RegistryRow,
        /// The registry's base URL.
        registry: String,
    },
}

/// Why a server could not be found or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FindError {
    #[error(
        "no catalog entry or registry server named `{0}` (the registry listing is the cached one); `plugboard catalog {0}` searches, `plugboard registry sync` refreshes the listing"
    )]
    Unknown(String),
    #[error(transparent)]
    Cache(#[from] crate::registry::cache::CacheProblem),
    #[error("{0}")]
    Fetch(String),
}

impl Market {
    /// Catalog entry `id`, or registry server `id` (a name a curated entry stands for finds that
    /// entry). `version` asks the registry for that version (network); `None` is the cached
    /// latest.
    pub async fn find(&self, id: &str, version: Option<&str>) -> Result<Found<'_>, FindError> {
        if let Some(entry) = self.catalog.get(id) {
            return Ok(Found::Curated(entry));
        }
        if version.is_none()
            && let Some(entry) = self.curated_for(id)
        {
            return Ok(Found::Curated(entry));
        }
        let cached = self.listing.find(id);
        if let Some(at) = cached {
            let row = self.listing.row(at)?;
            if version.is_none_or(|v| v == row.server.version || v == "latest") {
                return Ok(Found::Registry {
                    row,
                    registry: self.listing.registry_url(at).to_owned(),
                });
            }
        }
        let Some(version) = version else {
            return Err(FindError::Unknown(id.to_owned()));
        };
        // Another version: ask the registry that lists the server (or each in turn).
        let registries: Vec<(String, crate::registry::ApiVersion)> = match cached {
            Some(at) => vec![self.registry_api(at)],
            None => self
                .listing
                .registries
                .iter()
                .map(|r| {
                    let api = r
                        .cache
                        .as_ref()
                        .and_then(|c| crate::registry::ApiVersion::parse(&c.header.api))
                        .unwrap_or(crate::registry::ApiVersion::V0_1);
                    (r.source.url.clone(), api)
                })
                .collect(),
        };
        let mut last = None;
        for (url, api) in registries {
            let client = crate::registry::RegistryClient::new(&url, api)
                .map_err(|e| FindError::Fetch(e.to_string()))?;
            match client.version(id, version).await {
                Ok(row) => return Ok(Found::Registry { row, registry: url }),
                Err(e) => last = Some(format!("{url}: {e} ({})", e.hint())),
            }
        }
        Err(FindError::Fetch(
            last.unwrap_or_else(|| format!("no registry lists `{id}`")),
        ))
    }

    fn registry_api(&self, at: RowRef) -> (String, crate::registry::ApiVersion) {
        let loaded = &self.listing.registries[at.registry as usize];
        let api = loaded
            .cache
            .as_ref()
            .and_then(|c| crate::registry::ApiVersion::parse(&c.header.api))
            .unwrap_or(crate::registry::ApiVersion::V0_1);
        (loaded.source.url.clone(), api)
    }
}

/// The marketplace of this installation: the default catalog and the cached listings of the
/// configured registries (no network).
pub fn load(config_dir: &std::path::Path) -> Result<Market, LoadError> {
    let catalog = Catalog::load_default()?;
    let registries = crate::registry::sources::registries(config_dir)?;
    Ok(Market::new(catalog, Listing::load(config_dir, &registries)))
}

/// Why the marketplace could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error(transparent)]
    Sources(#[from] crate::registry::sources::SourcesError),
}
