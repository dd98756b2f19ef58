//! The marketplace for the app: one paged, ranked list over the curated catalog and the
//! registries' cached servers (the UI asks for the window it shows, so thousands of entries
//! cost the window's worth of cards), the registries' state, and a sync that runs in the
//! background while the UI polls its progress.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use serde::{Deserialize, Serialize};

use super::{Api, ApiError, CatalogCard, CatalogFilter, ErrorCode, OAuthKind, Transport};
use crate::catalog::{CatalogAuth, Entry, Registration};
use crate::config::TransportKind;
use crate::form::engine::summaries;
use crate::form::server_json::{Pinning, blueprint};
use crate::form::{Blueprint, OptionSummary, curated};
use crate::market::{Filters, Installed, Item, ItemSource, Market, RuntimeKind};
use crate::registry::Listing;
use crate::registry::model::{RegistryRow, Status, namespace_owner};
use crate::registry::sources::{self, Origin, pinning_enabled};
use crate::registry::sync::{SyncProgress, SyncReport, cache_status, sync_registry};
use crate::registry::time::{describe_age, now_secs};
use crate::runtimes;

/// What the marketplace shows: a search and its filters.
#[derive(Clone, Debug, Deserialize, specta::Type)]
pub struct MarketQuery {
    pub text: String,
    /// `curated` or `registry`; everything when absent.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub transport: Option<Transport>,
    /// `node`, `python`, `docker`, `dotnet`, `bun`, `mcpb`, `remote`.
    #[serde(default)]
    pub runtime: Option<String>,
    #[serde(default = "all")]
    pub installed: CatalogFilter,
    #[serde(default)]
    pub category: Option<String>,
}

fn all() -> CatalogFilter {
    CatalogFilter::All
}

/// One window of the marketplace's list.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct MarketPage {
    /// Matches in all.
    pub total: u32,
    pub offset: u32,
    pub cards: Vec<CatalogCard>,
}

/// A registry and its cache, as the app shows it.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct RegistryView {
    pub url: String,
    /// `default`, `environment`, `settings`.
    pub origin: String,
    pub cached: bool,
    pub servers: u32,
    /// "3 hours" (ago), when it was synced.
    pub age: Option<String>,
    /// Why its cache cannot be used.
    pub problem: Option<String>,
    /// How its last sync in this session failed, and what to do.
    pub error: Option<String>,
    pub hint: Option<String>,
    /// Rows of its last sync that could not be read.
    pub skipped: u32,
}

/// A sync in progress.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct SyncProgressView {
    pub registry: String,
    pub full: bool,
    pub rows: u32,
    /// The servers it had last time (for a progress bar), if known.
    pub expected: Option<u32>,
}

/// The registries, their caches and the sync.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct RegistryStatus {
    pub registries: Vec<RegistryView>,
    pub syncing: bool,
    pub progress: Option<SyncProgressView>,
    /// The last sync could not reach a registry: the list is the cache.
    pub offline: bool,
    /// A sync is due (never synced, or the oldest cache is older than a day).
    pub stale: bool,
    /// Registry servers listed in all.
    pub servers: u32,
    pub pin_dependencies: bool,
}

/// The marketplace and the sync, shared with the background sync thread.
#[derive(Default)]
pub(super) struct MarketState {
    market: RwLock<Option<Arc<Market>>>,
    sync: Mutex<SyncState>,
}

#[derive(Default)]
struct SyncState {
    running: bool,
    progress: Option<SyncProgressView>,
    reports: Vec<SyncReport>,
}

/// A day: caches older than this are synced when the app starts.
const STALE_AFTER_SECS: i64 = 86_400;

impl Api {
    fn config_dir(&self) -> PathBuf {
        self.servers().config().dir().to_path_buf()
    }

    /// The marketplace, loaded on first use (catalog + cached registry listings; no network).
    pub(super) fn market(&self) -> Result<Arc<Market>, ApiError> {
        if let Some(market) = self
            .market
            .market
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Ok(market);
        }
        let catalog = self.catalog()?.clone();
        let sources = sources::registries(&self.config_dir())
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let market = Arc::new(Market::new(
            catalog,
            Listing::load(&self.config_dir(), &sources),
        ));
        // The search index is built now, so that what loading and indexing freed (many small
        // allocations, tens of MiB with 50,000 entries) can be given back at once.
        market.prepare();
        crate::heap::give_back_freed_memory();
        *self
            .market
            .market
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(market.clone());
        Ok(market)
    }

    fn installed(&self) -> Result<Installed, ApiError> {
        let config = self.servers().config().load()?;
        let servers: Vec<(String, crate::config::ServerConfig)> = config
            .servers()
            .into_iter()
            .filter_map(|(n, s)| s.ok().map(|s| (n, s)))
            .collect();
        Ok(Installed::of(servers.iter().map(|(n, s)| (n.clone(), s))))
    }

    /// One window (`offset`, at most `limit` cards) of the marketplace's matches for `query`.
    pub fn marketplace(
        &self,
        query: &MarketQuery,
        offset: u32,
        limit: u32,
    ) -> Result<MarketPage, ApiError> {
        let market = self.market()?;
        let installed = self.installed()?;
        let filters = Filters {
            source: match query.source.as_deref() {
                Some("curated") => Some(ItemSource::Curated),
                Some("registry") => Some(ItemSource::Registry),
                _ => None,
            },
            transport: query.transport.map(TransportKind::from),
            runtime: query.runtime.as_deref().and_then(RuntimeKind::parse),
            installed: match query.installed {
                CatalogFilter::All => None,
                CatalogFilter::Installed => Some(true),
                CatalogFilter::Library => Some(false),
            },
            category: query.category.clone().filter(|c| !c.is_empty()),
        };
        let found = market.search(&query.text, &filters, &installed);
        let pinning = Pinning::browsing(pinning_enabled(&self.config_dir()));
        let cards = found
            .iter()
            .skip(offset as usize)
            .take(limit.min(500) as usize)
            .map(|&at| market_card(&market, at, &installed, &pinning))
            .collect();
        Ok(MarketPage {
            total: found.len() as u32,
            offset,
            cards,
        })
    }

    /// The registries and their caches, and the sync's progress.
    pub fn registry_status(&self) -> RegistryStatus {
        let dir = self.config_dir();
        let registries = sources::registries(&dir).unwrap_or_default();
        let statuses = cache_status(&dir, &registries);
        let sync = self.market.sync.lock().unwrap_or_else(|p| p.into_inner());
        let now = now_secs();
        let views: Vec<RegistryView> = statuses
            .iter()
            .map(|s| {
                let report = sync.reports.iter().find(|r| r.registry == s.registry);
                RegistryView {
                    url: s.registry.clone(),
                    origin: match s.origin {
                        Origin::Default => "default",
                        Origin::Environment => "environment",
                        Origin::Settings => "settings",
                        Origin::Policy => "policy",
                    }
                    .into(),
                    cached: s.cached,
                    servers: s.servers as u32,
                    age: s.synced_at.map(|t| describe_age(t, now)),
                    problem: s.problem.clone(),
                    error: report.and_then(|r| r.error.clone()),
                    hint: report.and_then(|r| r.hint.clone()),
                    skipped: s.skipped as u32,
                }
            })
            .collect();
        let offline = sync.reports.iter().any(|r| !r.ok);
        let oldest = statuses.iter().map(|s| s.synced_at).min().flatten();
        RegistryStatus {
            stale: statuses.iter().any(|s| !s.cached)
                || oldest.is_none_or(|t| now - t > STALE_AFTER_SECS),
            servers: statuses.iter().map(|s| s.servers as u32).sum(),
            registries: views,
            syncing: sync.running,
            progress: sync.progress.clone(),
            offline,
            pin_dependencies: pinning_enabled(&dir),
        }
    }

    /// Start syncing every registry in the background (a full pull with `full`), unless a sync
    /// runs already. Poll [`Api::registry_status`] for progress; the marketplace is reloaded
    /// when it ends.
    pub fn registry_sync(&self, full: bool) -> RegistryStatus {
        {
            let mut sync = self.market.sync.lock().unwrap_or_else(|p| p.into_inner());
            if sync.running {
                drop(sync);
                return self.registry_status();
            }
            sync.running = true;
            sync.progress = None;
        }
        let dir = self.config_dir();
        let state = self.market.clone();
        std::thread::spawn(move || {
            let reports = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => {
                    let registries = sources::registries(&dir).unwrap_or_default();
                    let mut reports = vec![];
                    for registry in &registries {
                        let progress_state = state.clone();
                        let mut progress = move |event: SyncProgress| {
                            let mut sync = progress_state
                                .sync
                                .lock()
                                .unwrap_or_else(|p| p.into_inner());
                            match event {
                                SyncProgress::Started {
                                    registry,
                                    full,
                                    expected,
                                } => {
                                    sync.progress = Some(SyncProgressView {
                                        registry,
                                        full,
                                        rows: 0,
                                        expected: expected.map(|e| e as u32),
                                    })
                                }
                                SyncProgress::Page { rows, .. } => {
                                    if let Some(p) = sync.progress.as_mut() {
                                        p.rows = rows as u32;
                                    }
                                }
                            }
                        };
                        reports.push(rt.block_on(sync_registry(
                            &dir,
                            registry,
                            full,
                            &mut progress,
                        )));
                    }
                    reports
                }
                Err(_) => vec![],
            };
            // The new listings are read on the next request.
            *state.market.write().unwrap_or_else(|p| p.into_inner()) = None;
            let mut sync = state.sync.lock().unwrap_or_else(|p| p.into_inner());
            sync.running = false;
            sync.progress = None;
            sync.reports = reports;
            drop(sync);
            // A sync reads the old cache and thousands of rows: give back what it freed.
            crate::heap::give_back_freed_memory();
        });
        self.registry_status()
    }

    /// Read registry `url` too ("Add a registry"): kept with the others (`plugboard registry
    /// add`), then synced, so its servers join the marketplace.
    pub fn add_registry(&self, url: &str) -> Result<RegistryStatus, ApiError> {
        sources::add(&self.config_dir(), url).map_err(registry_list_error)?;
        self.reload_market();
        Ok(self.registry_sync(false))
    }

    /// Stop reading registry `url` (the official one included, as `plugboard registry
    /// remove`): its servers leave the marketplace; installed ones stay installed.
    pub fn remove_registry(&self, url: &str) -> Result<RegistryStatus, ApiError> {
        sources::remove(&self.config_dir(), url).map_err(registry_list_error)?;
        self.reload_market();
        Ok(self.registry_status())
    }

    /// Forget the loaded marketplace (after the catalog or the registry list changed).
    pub fn reload_market(&self) {
        *self
            .market
            .market
            .write()
            .unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The blueprint of catalog entry or registry server `id` (the cached latest version).
    pub(super) fn blueprint_of(
        &self,
        id: &str,
        pinning: &Pinning<'_>,
    ) -> Result<(Blueprint, CatalogCard), ApiError> {
        if let Some(token) = super::bundles::bundle_token(id) {
            let bp = self.bundles.blueprint(token).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotFound,
                    "this bundle's form was closed; open the bundle again",
                )
            })?;
            let view = self.bundles.view(token).expect("a pending bundle");
            return Ok((bp, bundle_card(&view)));
        }
        if let Ok(entry) = self.entry(id) {
            let installed = self.installed()?;
            let card = curated_card(
                entry,
                installed.curated.get(id).cloned().unwrap_or_default(),
            );
            return Ok((curated::blueprint(entry), card));
        }
        let market = self.market()?;
        let at = market.listing().find(id).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("the marketplace has no `{id}`"),
            )
        })?;
        let row = market
            .listing()
            .row(at)
            .map_err(|e| ApiError::new(ErrorCode::Registry, e.to_string()))?;
        let registry = market.listing().registry_url(at).to_owned();
        let bp = blueprint(&row, &registry, pinning);
        let installed = self.installed()?;
        let card = registry_card(
            &row,
            &registry,
            &bp,
            installed.registry.get(id).cloned().unwrap_or_default(),
        );
        Ok((bp, card))
    }
}

pub(super) fn oauth_of_auth(auth: &CatalogAuth) -> Option<OAuthKind> {
    match auth {
        CatalogAuth::Oauth2 { oauth } => Some(match oauth.registration {
            Registration::Dynamic => OAuthKind::Dynamic,
            Registration::PreRegistered => OAuthKind::PreRegistered,
        }),
        _ => None,
    }
}

fn default_of(options: &[OptionSummary]) -> Option<&OptionSummary> {
    options
        .iter()
        .find(|o| o.runs_here())
        .or_else(|| options.iter().find(|o| o.installable))
}

fn why_not(options: &[OptionSummary]) -> Option<String> {
    if options.iter().any(OptionSummary::runs_here) {
        return None;
    }
    let first = options.iter().find(|o| o.installable).or(options.first())?;
    first.unavailable.as_ref().map(|u| u.reason.clone())
}

/// The card of a curated entry (its default option: the first that can run here).
pub(super) fn curated_card(entry: &Entry, installed_as: Vec<String>) -> CatalogCard {
    let options = summaries(&curated::blueprint(entry), runtimes::system());
    let default = default_of(&options);
    let option = default
        .and_then(|o| entry.option(&o.id))
        .unwrap_or_else(|| entry.default_option());
    let transports: Vec<Transport> = {
        let mut t: Vec<Transport> = options.iter().map(|o| o.transport.into()).collect();
        t.dedup();
        t
    };
    let mut runtimes_: Vec<String> = options.iter().filter_map(|o| o.runtime.clone()).collect();
    runtimes_.dedup();
    if options.iter().any(|o| o.transport.is_remote()) {
        runtimes_.push("Remote".into());
    }
    CatalogCard {
        id: entry.id.clone(),
        name: entry.name.clone(),
        description: entry.description.clone(),
        categories: entry.categories.clone(),
        category_labels: entry
            .categories
            .iter()
            .map(|c| super::category_label(c))
            .collect(),
        keywords: entry.keywords.clone(),
        popularity: entry.popularity,
        logo: entry.logo.clone(),
        transport: super::transport_of(option),
        transport_label: option.transport_label().to_string(),
        option_label: option.label.clone(),
        option_count: entry.options.len() as u32,
        oauth: oauth_of_auth(&option.auth),
        installed_as,
        docs_url: entry.docs_url.clone(),
        source: "curated".into(),
        version: None,
        owner: None,
        github: false,
        repository: None,
        registry_names: entry.registry_names.clone(),
        transports,
        runtimes: runtimes_,
        deprecated: false,
        status_message: None,
        runs_here: options.iter().any(OptionSummary::runs_here),
        why_not: why_not(&options),
        registry: None,
    }
}

/// The card of a registry server, from its full row and blueprint.
pub(super) fn registry_card(
    row: &RegistryRow,
    registry: &str,
    bp: &Blueprint,
    installed_as: Vec<String>,
) -> CatalogCard {
    let server = &row.server;
    let options = summaries(bp, runtimes::system());
    let default = default_of(&options);
    let mut transports: Vec<Transport> = options.iter().map(|o| o.transport.into()).collect();
    transports.sort_by_key(|t| *t as u8);
    transports.dedup();
    let mut runtimes_: Vec<String> = vec![];
    for p in &server.packages {
        let label = crate::market::package_runtime(&p.registry_type, p.runtime_hint.as_deref())
            .label()
            .to_owned();
        if !runtimes_.contains(&label) {
            runtimes_.push(label);
        }
    }
    if !server.remotes.is_empty() {
        runtimes_.push("Remote".into());
    }
    let repository = server.repository.as_ref().map(|r| r.url.clone());
    CatalogCard {
        id: server.name.clone(),
        name: server
            .title
            .clone()
            .unwrap_or_else(|| server.short_name().to_owned()),
        description: server.description.clone(),
        categories: vec![],
        category_labels: vec![],
        keywords: vec![],
        popularity: None,
        logo: None,
        transport: default.map_or(Transport::Stdio, |o| o.transport.into()),
        transport_label: default.map_or("-", |o| o.transport.label()).to_string(),
        option_label: default.map(|o| o.label.clone()).unwrap_or_default(),
        option_count: options.len() as u32,
        oauth: None,
        installed_as,
        docs_url: server
            .website_url
            .clone()
            .or_else(|| repository.clone())
            .filter(|u| u.starts_with("https://"))
            .unwrap_or_default(),
        source: "registry".into(),
        version: Some(server.version.clone()),
        owner: Some(namespace_owner(&server.name).to_owned()),
        github: server.name.starts_with("io.github."),
        repository: repository.filter(|u| u.starts_with("https://")),
        registry_names: vec![server.name.clone()],
        transports,
        runtimes: runtimes_,
        deprecated: row.status() == Status::Deprecated,
        status_message: row.meta.official.status_message.clone(),
        runs_here: options.iter().any(OptionSummary::runs_here),
        why_not: why_not(&options).or_else(|| crate::form::engine::cannot_install(bp)),
        registry: Some(registry.to_owned()),
    }
}

fn market_card(
    market: &Market,
    at: u32,
    installed: &Installed,
    pinning: &Pinning<'_>,
) -> CatalogCard {
    let installed_as = market.installed_as(at, installed).to_vec();
    match market.item(at) {
        Item::Curated(i) => curated_card(market.entry(i), installed_as),
        Item::Registry(r) => {
            let registry = market.listing().registry_url(r);
            match market.listing().row(r) {
                Ok(row) => {
                    let bp = blueprint(&row, registry, pinning);
                    registry_card(&row, registry, &bp, installed_as)
                }
                Err(problem) => {
                    // A row that cannot be read: listed, and said so.
                    let b = market.listing().brief(r);
                    CatalogCard {
                        id: b.name.to_owned(),
                        name: b.display_name().to_owned(),
                        description: b.description.to_owned(),
                        categories: vec![],
                        category_labels: vec![],
                        keywords: vec![],
                        popularity: None,
                        logo: None,
                        transport: Transport::Stdio,
                        transport_label: "-".into(),
                        option_label: String::new(),
                        option_count: 0,
                        oauth: None,
                        installed_as,
                        docs_url: String::new(),
                        source: "registry".into(),
                        version: Some(b.version.to_owned()),
                        owner: Some(namespace_owner(b.name).to_owned()),
                        github: b.name.starts_with("io.github."),
                        repository: None,
                        registry_names: vec![b.name.to_owned()],
                        transports: vec![],
                        runtimes: vec![],
                        deprecated: b.status == Status::Deprecated,
                        status_message: b.status_message.map(str::to_owned),
                        runs_here: false,
                        why_not: Some(problem.to_string()),
                        registry: Some(registry.to_owned()),
                    }
                }
            }
        }
    }
}

/// The card of a bundle opened for install.
pub(super) fn bundle_card(view: &super::dto::BundleView) -> CatalogCard {
    CatalogCard {
        id: format!("{}{}", super::bundles::BUNDLE_PREFIX, view.token),
        name: view.title.clone(),
        description: view.description.clone(),
        categories: vec![],
        category_labels: vec![],
        keywords: vec![],
        popularity: None,
        logo: None,
        transport: Transport::Stdio,
        transport_label: "stdio".into(),
        option_label: format!("MCPB bundle {} {}", view.name, view.version),
        option_count: 1,
        oauth: None,
        installed_as: vec![],
        docs_url: String::new(),
        source: "bundle".into(),
        version: Some(view.version.clone()),
        owner: view.author.clone(),
        github: false,
        repository: None,
        registry_names: vec![],
        transports: vec![Transport::Stdio],
        runtimes: vec![],
        deprecated: false,
        status_message: None,
        runs_here: true,
        why_not: None,
        registry: None,
    }
}

/// A change of the registry list that was refused, as the app shows it.
fn registry_list_error(e: sources::SourcesError) -> ApiError {
    let code = match &e {
        sources::SourcesError::BadUrl { .. } => ErrorCode::Invalid,
        sources::SourcesError::FixedByPolicy { .. } => ErrorCode::Policy,
        _ => ErrorCode::Config,
    };
    ApiError::new(code, e.to_string())
}
