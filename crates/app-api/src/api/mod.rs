//! The desktop app's API: plain functions (methods of [`Api`]) that the Tauri commands call, one
//! each, with transport types ([`dto`]) and one error shape ([`ApiError`]).
//!
//! Everything the app does is here, in the core, so the CLI and the core tests reach it too. No
//! function returns a stored secret value: secrets travel only from the UI into the core.

pub mod app_views;
mod bundles;
mod clients;
mod custom;
mod doctor;
mod dto;
mod edit;
mod error;
mod gateway;
pub mod gateway_asks;
mod hints;
mod market;
mod oauth;
mod paste;
mod pins;
mod sandbox;
pub mod startup;
mod testing;
mod tools;
mod tryit;
mod updates;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use crate::oauth::{JobState, JobStatus};
pub use clients::{
    ClientView, ClientsOverview, DriftView, ExportChangeView, ExportPreview, ExportResult,
    ExportSelection, ImportCandidate, ImportPreview, ImportResultView, OtherEntryView,
    RemovedEntry, UseIn, UseInClient,
};
pub use doctor::{FindingSeverity, FindingView, ServerDiagnosis};
pub use dto::*;
pub use error::{ApiError, ErrorCode, FieldError};
pub use gateway::{ActivityView, HookView, HooksChange, ProfileView, RunningGatewayView};
pub use gateway_asks::GatewayQuestionView;
pub use market::{MarketPage, MarketQuery, RegistryStatus, RegistryView, SyncProgressView};
pub use pins::{
    DiffLineView, PathChangeView, PinStateView, ToolChangeView, ToolDiff, ToolFlagView,
};
pub use sandbox::{SandboxGrant, SandboxPanel, SandboxRequest};
pub use startup::StartupStep;
pub use testing::{
    CacheHintView, HealthView, PromptView, ResourceView, ServerIdentity, StageProgress,
    StageTiming, TestReport, ToolView,
};
pub use tools::{
    BudgetView, ClientBudgetView, HintsView, ServerBudgetView, ServerToolsView, ToolStateView,
    ToolsChangeInput, ToolsChangeResult,
};
pub use tryit::{CallInput, SessionView, ToolForm};

use crate::catalog::{Catalog, CatalogTransport, ConnectionOption, Entry};
use crate::config::ConfigStore;
use crate::form::server_json::Pinning;
use crate::form::{self, FieldState, FormInput, field_states, form_for};
use crate::manage::{self, ServerPatch, Servers, ValuePatch};
use crate::secrets::{SecretStore, Sensitive};

/// The app's view of the core: the installed servers and the catalog.
pub struct Api {
    servers: Servers,
    catalog: Result<Catalog, String>,
    tests: testing::Tests,
    oauth: oauth::OAuth,
    sessions: tryit::Sessions,
    /// The `plugboard` CLI that exported launchers name, when set explicitly.
    cli: Option<std::path::PathBuf>,
    /// The marketplace over the catalog and the registries, and the registry sync.
    market: Arc<market::MarketState>,
    /// Bundles unpacked for an open install form.
    bundles: bundles::PendingBundles,
    /// Tested updates waiting for the user's go-ahead.
    updates: updates::PendingUpdates,
    /// The pages of open MCP Apps views.
    app_pages: app_views::AppPages,
}

impl Api {
    /// The user's config directory (`$PLUGBOARD_HOME` or the platform's), the OS keyring (opened
    /// on first use) and the default catalog (embedded + `$PLUGBOARD_CATALOG_DIR`). A catalog that
    /// fails to load is reported by the catalog calls; the installed servers still work.
    pub fn open_default() -> Result<Api, ApiError> {
        let servers = Servers::open_default()?;
        let catalog = Catalog::load_default().map_err(|e| e.to_string());
        Ok(Api {
            servers,
            catalog,
            tests: Default::default(),
            oauth: Default::default(),
            sessions: Default::default(),
            app_pages: Default::default(),
            cli: None,
            market: Default::default(),
            bundles: Default::default(),
            updates: Default::default(),
        })
    }

    pub fn new(servers: Servers, catalog: Catalog) -> Api {
        Api {
            servers,
            catalog: Ok(catalog),
            tests: Default::default(),
            oauth: Default::default(),
            sessions: Default::default(),
            app_pages: Default::default(),
            cli: None,
            market: Default::default(),
            bundles: Default::default(),
            updates: Default::default(),
        }
    }

    /// Servers in `dir` with secrets in `store`, and `catalog` (for tests).
    pub fn with_store(
        dir: impl Into<std::path::PathBuf>,
        store: Arc<dyn SecretStore>,
        catalog: Catalog,
    ) -> Api {
        Api::new(Servers::with_store(ConfigStore::new(dir), store), catalog)
    }

    pub fn servers(&self) -> &Servers {
        &self.servers
    }

    fn catalog(&self) -> Result<&Catalog, ApiError> {
        self.catalog
            .as_ref()
            .map_err(|e| ApiError::new(ErrorCode::Catalog, e.clone()))
    }

    fn entry(&self, id: &str) -> Result<&Entry, ApiError> {
        self.catalog()?.get(id).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("the catalog has no entry `{id}`"),
            )
        })
    }

    /// Installed server names by the catalog entry they came from.
    fn installed_by_entry(&self) -> Result<BTreeMap<String, Vec<String>>, ApiError> {
        let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for view in self.servers.views(false)? {
            if let Some(source) = view.source {
                map.entry(source.catalog).or_default().push(view.name);
            }
        }
        Ok(map)
    }

    /// About this installation.
    pub fn app_info(&self) -> AppInfo {
        AppInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            config_file: self.servers.config().path().display().to_string(),
            catalog_entries: self
                .catalog
                .as_ref()
                .map(|c| c.entries().len() as u32)
                .unwrap_or(0),
            catalog_error: self.catalog.as_ref().err().cloned(),
            can_test: true,
        }
    }

    /// A stamp of the config file (modification time and size): the app compares it to notice
    /// changes made outside it (the CLI, another window) and reloads the servers then.
    pub fn config_stamp(&self) -> String {
        match std::fs::metadata(self.servers.config().path()) {
            Ok(meta) => {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                format!("{modified}-{}", meta.len())
            }
            Err(_) => "absent".into(),
        }
    }

    /// Marketplace tiles matching `query` (name, description, id, keywords) and `category`, best
    /// match first, then most popular.
    pub fn catalog_cards(
        &self,
        query: &str,
        category: Option<&str>,
        filter: CatalogFilter,
    ) -> Result<Vec<CatalogCard>, ApiError> {
        let catalog = self.catalog()?;
        let installed = self.installed_by_entry()?;
        let category = category.filter(|c| !c.is_empty());
        Ok(catalog
            .search(query, category)
            .into_iter()
            .map(|e| market::curated_card(e, installed.get(&e.id).cloned().unwrap_or_default()))
            .filter(|c| match filter {
                CatalogFilter::All => true,
                CatalogFilter::Installed => !c.installed_as.is_empty(),
                CatalogFilter::Library => c.installed_as.is_empty(),
            })
            .collect())
    }

    /// Categories in use, by label, with their entry counts.
    pub fn categories(&self) -> Result<Vec<CategoryCount>, ApiError> {
        let mut out: Vec<CategoryCount> = self
            .catalog()?
            .categories()
            .into_iter()
            .map(|(id, count)| CategoryCount {
                id: id.to_string(),
                label: category_label(id),
                count: count as u32,
            })
            .collect();
        out.sort_by(|a, b| a.label.cmp(&b.label));
        Ok(out)
    }

    /// The install form of `option_id` (its default option when `None`: the first that can
    /// run here) of catalog entry or registry server `entry_id`.
    pub fn install_form(
        &self,
        entry_id: &str,
        option_id: Option<&str>,
    ) -> Result<InstallForm, ApiError> {
        let pinning = Pinning::browsing(crate::registry::sources::pinning_enabled(
            self.servers.config().dir(),
        ));
        let (mut blueprint, mut card) = self.blueprint_of(entry_id, &pinning)?;
        let mut spec = form::engine::form(&blueprint, option_id, crate::runtimes::system())?;
        let mut bundle_id = bundles::bundle_token(entry_id).map(str::to_owned);
        // A registry option that is an MCPB bundle: fetch it; its manifest gives the form.
        if let Some(url) = blueprint
            .option(&spec.option_id)
            .and_then(|o| o.bundle.as_ref())
            .map(|b| b.url.clone())
        {
            let id = self.fetch_registry_bundle(entry_id, &url)?;
            let (bp, bundle_card) = self.blueprint_of(&id, &pinning)?;
            spec = form::engine::form(&bp, None, crate::runtimes::system())?;
            // The chooser keeps the registry server's other options.
            spec.options = form::engine::summaries(&blueprint, crate::runtimes::system())
                .into_iter()
                .map(|mut o| {
                    if o.bundle {
                        o.id = spec.option_id.clone();
                    }
                    o
                })
                .collect();
            blueprint = bp;
            card.installed_as = bundle_card.installed_as;
            bundle_id = bundles::bundle_token(&id).map(str::to_owned);
        }
        let _ = &blueprint;
        let taken: BTreeSet<String> = self
            .servers
            .config()
            .load()?
            .names()
            .map(String::from)
            .collect();
        let suggested_name = unique_name(&spec.default_name, &taken);
        let entry = self.catalog()?.get(entry_id);
        let oauth = entry
            .and_then(|e| e.option(&spec.option_id))
            .and_then(|o| market::oauth_of_auth(&o.auth));
        Ok(InstallForm {
            entry: card,
            install_hint: entry.and_then(|e| e.install_hint.clone()),
            spec: spec_dto(&spec, oauth),
            suggested_name,
            bundle: bundle_id.and_then(|t| self.bundles.view(&t)),
        })
    }

    /// Check a filled install form and build the server, without saving anything. The values
    /// are wrapped as `Sensitive` at once; errors are scrubbed of every supplied value.
    pub fn prepare(&self, request: &InstallRequest) -> Result<form::PreparedServer, ApiError> {
        self.prepare_edit(request).map(|(prepared, _)| prepared)
    }

    /// [`Api::prepare`], with the installed server the request edits, if it edits one.
    fn prepare_edit(
        &self,
        request: &InstallRequest,
    ) -> Result<(form::PreparedServer, Option<crate::config::ServerConfig>), ApiError> {
        let scrub = |e: ApiError| e.scrub(request.values.values().map(String::as_str));
        let npm_check = |identifier: &str, version: &str, date: &str| {
            crate::deps::npm_before_allowed(identifier, version, date)
        };
        let pinning = Pinning {
            enabled: !request.no_pin
                && crate::registry::sources::pinning_enabled(self.servers.config().dir()),
            npm: Some(&npm_check),
        };
        let (blueprint, _) = self
            .blueprint_of(&request.entry_id, &pinning)
            .map_err(scrub)?;
        let spec = form::engine::form(
            &blueprint,
            Some(&request.option_id),
            crate::runtimes::system(),
        )
        .map_err(|e| scrub(e.into()))?;
        let name = request.name.trim();
        crate::config::validate_name(name).map_err(|m| scrub(ApiError::field("name", m)))?;
        let mut input = FormInput::default();
        for (key, value) in &request.values {
            input
                .values
                .insert(key.clone(), Sensitive::new(value.clone()));
        }
        input.store_as_secret = request.store_as_secret.clone();
        let edited = self.edited(request).map_err(scrub)?;
        if let Some(old) = edited {
            let prepared = self.rebuild(&old, request, (&blueprint, &spec), input)?;
            return Ok((prepared, Some(old)));
        }
        let bundle_dir = bundles::bundle_token(&request.entry_id).and_then(|t| self.bundles.dir(t));
        let choices = crate::install::Choices {
            allow_secret_args: request.allow_secret_args,
            no_sandbox: false,
            bundle_dir: bundle_dir.as_deref().map(std::path::Path::new),
        };
        let prepared = crate::install::prepare(&blueprint, &spec, &input, name, &choices)
            .map_err(|e| scrub(e.into()))?;
        Ok((prepared, None))
    }

    /// Install a catalog entry from its filled form: secrets to the keyring, the rest to the
    /// config; a form that edits an installed server is saved in its place. Returns the
    /// server's view.
    pub fn install(&self, request: &InstallRequest) -> Result<ServerView, ApiError> {
        self.allowed_install(&request.entry_id)?;
        let (prepared, edited) = self.prepare_edit(request)?;
        if let Some(old) = edited {
            return self.save_edit(&old, request, &prepared);
        }
        if let Err(taken) = self
            .servers
            .config()
            .load()?
            .check_free(&prepared.name, None)
        {
            return Err(ApiError {
                code: ErrorCode::Duplicate,
                message: taken.to_string(),
                fields: vec![FieldError {
                    field: "name".into(),
                    message: match taken {
                        crate::config::ConfigError::CaseCollision { existing, .. } => format!(
                            "this name differs only in case from “{existing}”, which exists already"
                        ),
                        _ => "this name is taken".into(),
                    },
                }],
            });
        }
        let pre_save_test = request
            .test_id
            .as_deref()
            .and_then(|id| self.tests.take_presave(id));
        crate::install::save(
            &self.servers,
            &prepared,
            pre_save_test
                .as_ref()
                .map(|(started, result)| (*started, result)),
        )
        .map_err(|e| ApiError::from(e).scrub(request.values.values().map(String::as_str)))?;
        if let Some(token) = bundles::bundle_token(&request.entry_id) {
            self.bundles.keep(token);
        }
        self.server(&prepared.name)
    }

    /// Whether the policy allows installing `entry_id` (a bundle was checked when opened).
    fn allowed_install(&self, entry_id: &str) -> Result<(), ApiError> {
        if bundles::bundle_token(entry_id).is_some() {
            return crate::policy::current().usable().map_err(Into::into);
        }
        if let Ok(entry) = self.entry(entry_id) {
            return self.allowed(crate::policy::Subject::Curated {
                entry_id: &entry.id,
                registry_names: &entry.registry_names,
            });
        }
        let market = self.market()?;
        let registry = market
            .listing()
            .find(entry_id)
            .map(|at| market.listing().registry_url(at).to_owned())
            .unwrap_or_default();
        self.allowed(crate::policy::Subject::Registry {
            registry: &registry,
            name: entry_id,
        })
    }

    /// Every installed server, in config order. Entries that cannot be read are listed with
    /// their error.
    pub fn list_servers(&self) -> Result<Vec<ServerView>, ApiError> {
        let views = self.servers.views(true)?;
        let config = self.servers.config().load()?;
        Ok(views
            .iter()
            .map(|v| self.server_view(v, config.server(&v.name).ok().as_ref()))
            .collect())
    }

    fn server(&self, name: &str) -> Result<ServerView, ApiError> {
        let view = self.servers.view(name)?;
        let config = self.servers.config().load()?.server(name).ok();
        Ok(self.server_view(&view, config.as_ref()))
    }

    fn server_view(
        &self,
        view: &manage::ServerView,
        config: Option<&crate::config::ServerConfig>,
    ) -> ServerView {
        let catalog = self.catalog.as_ref().ok();
        let mut out = server_view(view, catalog);
        out.health = self
            .last_test_of(&view.name, config)
            .map(|r| HealthView::from_report(&r));
        if view.error.is_none() {
            out.pin_state = self.pin_state(&view.name);
        }
        if let Some(config) = config {
            out.sandbox = sandbox::state_name(crate::sandbox::state_of(config)).to_owned();
        }
        out
    }

    /// One server in full: its view, the credentials that can be replaced, catalog text.
    pub fn server_detail(&self, name: &str) -> Result<ServerDetail, ApiError> {
        let server = self.server(name)?;
        let config = self.servers.config().load()?.server(name)?;
        let entry = config
            .source
            .as_ref()
            .and_then(|s| self.catalog.as_ref().ok()?.get(&s.catalog));
        let spec = entry.and_then(|e| {
            let option = config.source.as_ref().map(|s| s.option.as_str());
            form_for(e, option).ok()
        });
        let credentials = credential_slots(&server, spec.as_ref(), &config);
        Ok(ServerDetail {
            last_test: self.last_test(name),
            server,
            credentials,
            install_hint: entry.and_then(|e| e.install_hint.clone()),
            description: entry.map(|e| e.description.clone()),
        })
    }

    /// Turn a server on or off. Nothing else about it changes.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<ServerView, ApiError> {
        self.servers.config().set_enabled(name, enabled)?;
        self.server(name)
    }

    /// Rename a server atomically; refuses a name that is taken. Its secrets follow it.
    pub fn rename(&self, name: &str, new_name: &str) -> Result<ServerView, ApiError> {
        let new_name = new_name.trim();
        crate::lifecycle::rename_server(&self.servers, name, new_name)?;
        self.server(new_name)
    }

    /// Remove a server, delete its secrets, revoke its OAuth tokens and take its launchers out
    /// of other apps' files.
    pub fn remove(&self, name: &str) -> Result<RemoveResult, ApiError> {
        // On a thread of its own with its own runtime: this may be called from a runtime's
        // thread, and revoking a token is a request.
        let (outcome, launchers) = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| ApiError::new(ErrorCode::Io, e.to_string()))?;
                    rt.block_on(crate::lifecycle::remove_server(&self.servers, name))
                        .map_err(ApiError::from)
                })
                .join()
        })
        .map_err(|_| {
            ApiError::new(
                ErrorCode::Internal,
                "removing the server failed unexpectedly",
            )
        })??;
        let mut warnings = outcome.secret_errors;
        warnings.extend(launchers.iter().filter(|l| l.action == "left").map(|l| {
            format!(
                "{} ({}) still has an entry `{}` for it: {}",
                l.client,
                l.path.display(),
                l.entry,
                l.detail.as_deref().unwrap_or_default()
            )
        }));
        Ok(RemoveResult {
            name: name.to_string(),
            secrets_deleted: outcome.secrets_deleted as u32,
            warnings,
        })
    }

    /// Replace one credential of a server (an env variable, a header, or its API key / token)
    /// with `value`, stored in the keyring. Other values and secrets are kept.
    pub fn update_credentials(
        &self,
        name: &str,
        key: &str,
        value: &str,
    ) -> Result<ServerView, ApiError> {
        let scrub = |e: ApiError| e.scrub([value]);
        let value = value.trim();
        if value.is_empty() {
            return Err(ApiError::field(key, "enter the new value"));
        }
        if value.contains(['\r', '\n']) {
            return Err(ApiError::field(key, "the value cannot contain line breaks"));
        }
        let config = self.servers.config().load()?.server(name)?;
        let mut patch = ServerPatch::default();
        let secret = || ValuePatch::Secret(Sensitive::new(value.to_string()));
        let auth_secret = config.auth.secret_names().first().map(|s| s.to_string());
        if auth_secret.as_deref() == Some(key)
            && !matches!(config.auth, crate::config::Auth::Oauth2(_))
        {
            patch.credential = Some(Some(Sensitive::new(value.to_string())));
        } else if config.env.contains_key(key) {
            patch.env.insert(key.to_string(), secret());
        } else if config.headers.contains_key(key) {
            patch.headers.insert(key.to_string(), secret());
        } else if config.transport == crate::config::TransportKind::Stdio
            && crate::config::validate_env_key(key).is_ok()
            && self.is_form_field(&config, key)
        {
            patch.env.insert(key.to_string(), secret());
        } else if config.transport.is_remote() && self.is_form_field(&config, key) {
            patch.headers.insert(key.to_string(), secret());
        } else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("server `{name}` has no credential `{key}`"),
            ));
        }
        self.servers
            .edit(name, patch)
            .map_err(|e| scrub(e.into()))?;
        self.server(name)
    }

    /// Whether `key` is an env/header field of the catalog form the server was installed from
    /// (so an optional credential left empty at install can be set later).
    fn is_form_field(&self, config: &crate::config::ServerConfig, key: &str) -> bool {
        let Some(source) = &config.source else {
            return false;
        };
        let Ok(catalog) = self.catalog.as_ref() else {
            return false;
        };
        catalog
            .get(&source.catalog)
            .and_then(|e| form_for(e, Some(&source.option)).ok())
            .is_some_and(|spec| {
                spec.fields.iter().any(|f| {
                    f.key == key
                        && matches!(f.target, form::FieldTarget::Env | form::FieldTarget::Header)
                })
            })
    }

    /// The custom editor's model of an installed server (no secret values).
    pub fn custom_server(&self, name: &str) -> Result<CustomServer, ApiError> {
        let config = self.servers.config().load()?.server(name)?;
        let store = self.servers.secrets().ok().map(|s| s.as_ref());
        Ok(custom::to_custom(name, &config, store))
    }

    /// Add a custom server (`original` = `None`) or change one (and rename it when
    /// `server.name` differs from `original`).
    /// The servers in a text pasted into the custom editor: a command line (split as a shell
    /// would) or a JSON snippet of another client's config.
    pub fn parse_custom_paste(&self, text: &str) -> Result<Vec<CustomServer>, ApiError> {
        paste::parse(text)
    }

    /// `test_id`: a passing pre-save test of exactly this model (`test_custom`), whose result
    /// becomes the server's health.
    pub fn save_custom_server(
        &self,
        original: Option<&str>,
        server: &CustomServer,
        test_id: Option<&str>,
    ) -> Result<ServerView, ApiError> {
        if original.is_none() {
            self.allowed(crate::policy::Subject::Custom { name: &server.name })?;
        }
        let name = custom::save(&self.servers, original, server)?;
        if let Some((started, result)) = test_id.and_then(|id| self.tests.take_presave(id)) {
            crate::checks::seed_health(&self.servers, &name, started, &result);
        }
        self.server(&name)
    }
}

/// Open an `https` URL (a docs or help link) in the user's browser. Anything else is refused:
/// the UI never gets to open arbitrary schemes or local files.
pub fn open_external(url: &str) -> Result<(), ApiError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| ApiError::field("url", format!("not a valid URL ({e})")))?;
    if parsed.scheme() != "https" || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(ApiError::field(
            "url",
            "only https links without credentials can be opened",
        ));
    }
    open_in_browser(parsed.as_str())
}

/// Hand `url` to the desktop's URL opener (already validated by the caller).
pub(crate) fn open_in_browser(url: &str) -> Result<(), ApiError> {
    plugboard_ops::browser::open_in_browser(url)
        .map_err(|e| ApiError::new(ErrorCode::Unsupported, e))
}

/// A word of a command line as a shell would need it: as it is when it is plain, else in single
/// quotes (the display of a stdio server's command; `'my dir'` reads as one argument).
fn shell_quoted(word: &str) -> std::borrow::Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.into()
    } else {
        format!("'{}'", word.replace('\'', r"'\''")).into()
    }
}

/// "developer-tools" → "Developer tools".
pub fn category_label(id: &str) -> String {
    let special = match id {
        "ai" => Some("AI"),
        "crm" => Some("CRM"),
        _ => None,
    };
    if let Some(s) = special {
        return s.into();
    }
    let text = id.replace('-', " ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

/// `base`, or `base-2`, `base-3`, … whichever is not in `taken`.
fn unique_name(base: &str, taken: &BTreeSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}-{i}"))
        .find(|n| !taken.contains(n))
        .expect("some suffix is free")
}

fn transport_of(option: &ConnectionOption) -> Transport {
    match option.transport {
        CatalogTransport::Stdio { .. } => Transport::Stdio,
        CatalogTransport::Shttp(_) => Transport::Shttp,
        CatalogTransport::Sse(_) => Transport::Sse,
    }
}

fn spec_dto(spec: &form::FormSpec, oauth: Option<OAuthKind>) -> FormSpec {
    let (source, version) = match &spec.source {
        form::FormSource::Curated { .. } => ("curated", None),
        form::FormSource::Registry { version, .. } => ("registry", Some(version.clone())),
        form::FormSource::Bundle { version, .. } => ("bundle", Some(version.clone())),
    };
    FormSpec {
        entry_id: spec.entry_id.clone(),
        option_id: spec.option_id.clone(),
        option_label: spec.option_label.clone(),
        transport: spec.transport.into(),
        transport_label: spec.transport.label().to_string(),
        command: spec.command.clone(),
        url: spec.url.clone(),
        oauth: if spec.oauth {
            oauth.or(Some(OAuthKind::Dynamic))
        } else {
            None
        },
        default_name: spec.default_name.clone(),
        fields: spec
            .fields
            .iter()
            .map(|f| FormField {
                key: f.key.clone(),
                label: f.label.clone(),
                target: f.target.into(),
                input: f.input.into(),
                required: f.required,
                secret: f.secret,
                secret_toggle: f.secret_toggle,
                placeholder: f.placeholder.clone(),
                help: f.help.clone(),
                default: f.default.clone(),
                choices: f.choices.clone(),
                picker: f.picker.map(|p| {
                    match p {
                        form::spec::Picker::File => "file",
                        form::spec::Picker::Directory => "directory",
                    }
                    .to_owned()
                }),
                access: f.access.map(|access| {
                    match access {
                        plugboard_sandbox::Access::Read => "read",
                        plugboard_sandbox::Access::Write => "write",
                    }
                    .to_owned()
                }),
                min: f.min,
                max: f.max,
            })
            .collect(),
        options: spec
            .options
            .iter()
            .map(|o| OptionSummary {
                id: o.id.clone(),
                label: o.label.clone(),
                transport: o.transport.into(),
                transport_label: o.transport.label().to_string(),
                runtime: o.runtime.clone(),
                installable: o.installable,
                unavailable: o.unavailable.as_ref().map(|u| Unavailable {
                    code: u.code.clone(),
                    reason: u.reason.clone(),
                    fix: u.fix.clone(),
                }),
                bundle: o.bundle,
            })
            .collect(),
        source: source.into(),
        version,
        pin: spec.pin.as_ref().map(|p| PinView {
            tool: p.tool.clone(),
            flag: p.flag.clone(),
            date: p.date.clone(),
            published_at: p.published_at.clone(),
        }),
        notes: spec.notes.clone(),
        warnings: spec.warnings.clone(),
        env: spec
            .env
            .iter()
            .map(|(key, value)| dto::KeyValueText {
                key: key.clone(),
                value: value.clone(),
            })
            .collect(),
    }
}

fn value_entry(key: &str, view: &manage::ValueView) -> ValueEntry {
    match view {
        manage::ValueView::Plain(v) => ValueEntry {
            key: key.into(),
            kind: ValueKind::Plain,
            value: Some(v.clone()),
            set: None,
        },
        manage::ValueView::Masked { .. } => ValueEntry {
            key: key.into(),
            kind: ValueKind::Masked,
            value: None,
            set: None,
        },
        manage::ValueView::Secret { secret, set } => ValueEntry {
            key: secret.clone(),
            kind: ValueKind::Secret,
            value: None,
            set: *set,
        },
    }
}

fn server_view(view: &manage::ServerView, catalog: Option<&Catalog>) -> ServerView {
    let entries = |map: &BTreeMap<String, manage::ValueView>| -> Vec<ValueEntry> {
        map.iter()
            .map(|(k, v)| ValueEntry {
                key: k.clone(),
                ..value_entry(k, v)
            })
            .collect()
    };
    let env = entries(&view.env);
    let headers = entries(&view.headers);
    let credential = view.auth.credential.as_ref().map(|c| value_entry("", c));
    let missing_secrets = env
        .iter()
        .chain(&headers)
        .filter(|e| e.kind == ValueKind::Secret && e.set == Some(false))
        .map(|e| e.key.clone())
        .chain(
            credential
                .iter()
                .filter(|c| c.set == Some(false))
                .map(|c| c.key.clone()),
        )
        .collect();
    let target = match (&view.url, &view.command) {
        (Some(url), _) => url.clone(),
        (None, Some(cmd)) => std::iter::once(cmd.as_str())
            .chain(view.args.iter().map(String::as_str))
            .map(shell_quoted)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    let source = view.source.as_ref().map(|s| {
        let entry = catalog.and_then(|c| c.get(&s.catalog));
        let registry = s.registry.as_ref();
        SourceView {
            catalog: s.catalog.clone(),
            option: s.option.clone(),
            registry_name: registry.map(|r| r.name.clone()),
            version: registry.map(|r| r.version.clone()),
            pinned: registry
                .and_then(|r| r.pinned.as_ref())
                .map(|p| p.date.clone()),
            entry_name: entry
                .map(|e| e.name.clone())
                .or_else(|| registry.map(|r| r.name.clone())),
            logo: entry.and_then(|e| e.logo.clone()),
            docs_url: entry.map(|e| e.docs_url.clone()),
        }
    });
    ServerView {
        name: view.name.clone(),
        transport: view.transport.map(Into::into),
        transport_label: view
            .transport
            .map(|t| t.label())
            .unwrap_or("unknown")
            .to_string(),
        enabled: view.enabled,
        command: view.command.clone(),
        args: view.args.clone(),
        cwd: view.cwd.clone(),
        url: view.url.clone(),
        target,
        env,
        headers,
        auth: AuthView {
            label: auth_label(&view.auth.kind).into(),
            kind: view.auth.kind.clone(),
            header: view.auth.header.clone(),
            username: view.auth.username.clone(),
            credential,
            client_id: view.auth.client_id.clone(),
            scopes: view.auth.scopes.clone(),
        },
        timeout: view.timeout.map(|t| t.min(u32::MAX as u64) as u32),
        source,
        missing_secrets,
        health: None,
        pin_state: None,
        error: view.error.clone(),
        sandbox: "off".to_owned(),
    }
}

fn auth_label(kind: &str) -> &'static str {
    match kind {
        "none" => "No auth",
        "api_key" => "API key",
        "bearer" => "Bearer token",
        "basic" => "Basic auth",
        "header" => "Custom header",
        "oauth2" => "OAuth",
        _ => "Unknown",
    }
}

/// The credentials of a server that "update credentials" offers: the secret fields of its
/// catalog form (with their labels), then any other secret it refers to.
fn credential_slots(
    server: &ServerView,
    spec: Option<&form::FormSpec>,
    config: &crate::config::ServerConfig,
) -> Vec<CredentialSlot> {
    let mut slots = Vec::new();
    let secret_set = |key: &str| -> Option<bool> {
        server
            .env
            .iter()
            .chain(&server.headers)
            .chain(server.auth.credential.iter())
            .find(|e| e.key == key && e.kind == ValueKind::Secret)
            .and_then(|e| e.set)
    };
    if let Some(spec) = spec {
        let states = field_states(spec, config);
        for f in &spec.fields {
            let relevant = matches!(
                f.target,
                form::FieldTarget::Env | form::FieldTarget::Header | form::FieldTarget::Credential
            ) && (f.input == form::InputKind::Password
                || states.get(&f.key) == Some(&FieldState::SecretRef));
            if !relevant {
                continue;
            }
            let set = match states.get(&f.key) {
                Some(FieldState::SecretRef) => secret_set(&f.key).or(None),
                _ => Some(false),
            };
            slots.push(CredentialSlot {
                key: f.key.clone(),
                label: f.label.clone(),
                target: f.target.into(),
                set,
                required: f.required,
                placeholder: f.placeholder.clone(),
                help: f.help.clone(),
            });
        }
    }
    let mut extra = |key: &str, target: FieldTarget, set: Option<bool>, label: String| {
        if !slots.iter().any(|s| s.key == key) {
            slots.push(CredentialSlot {
                key: key.into(),
                label,
                target,
                set,
                required: true,
                placeholder: None,
                help: None,
            });
        }
    };
    for e in server.env.iter().filter(|e| e.kind == ValueKind::Secret) {
        extra(&e.key, FieldTarget::Env, e.set, e.key.clone());
    }
    for e in server
        .headers
        .iter()
        .filter(|e| e.kind == ValueKind::Secret)
    {
        extra(
            &e.key,
            FieldTarget::Header,
            e.set,
            format!("Header {}", e.key),
        );
    }
    if server.auth.kind != "oauth2"
        && let Some(c) = &server.auth.credential
    {
        extra(
            &c.key,
            FieldTarget::Credential,
            c.set,
            server.auth.label.clone(),
        );
    }
    slots
}

#[cfg(test)]
mod tests;
