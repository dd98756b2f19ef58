//! `plugboard catalog`: search the marketplace (the curated catalog and the cached registry
//! listings), list categories, show one entry or registry server with its options and forms.

use serde::Serialize;

use super::CliError;
use super::args::{CatalogArgs, CatalogShow, SourceArg};
use super::output::{print_json, print_table, truncate};
use super::test_cmd::runtime;
use crate::catalog::Entry;
use crate::config::{ConfigStore, TransportKind, config_dir};
use crate::form::engine::{form, summaries};
use crate::form::server_json::{Pinning, blueprint};
use crate::form::{Blueprint, FormSpec, InputKind, OptionSummary, curated};
use crate::market::{Filters, Found, Installed, Item, ItemSource, Market, RuntimeKind};
use crate::registry::Status;
use crate::registry::model::namespace_owner;
use crate::registry::sources::pinning_enabled;
use crate::registry::time::{describe_age, now_secs};
use crate::runtimes;
use crate::secrets::secret_env_var;

impl From<crate::market::LoadError> for CliError {
    fn from(err: crate::market::LoadError) -> Self {
        CliError::usage(err.to_string())
    }
}

impl From<crate::market::FindError> for CliError {
    fn from(err: crate::market::FindError) -> Self {
        match err {
            crate::market::FindError::Unknown(_) => CliError::usage(err.to_string()),
            _ => CliError::failed(err.to_string()),
        }
    }
}

/// The marketplace of this installation and what is installed.
pub fn load_market() -> Result<(Market, Installed), CliError> {
    let dir = config_dir().ok_or_else(|| {
        CliError::usage("no config directory: set PLUGBOARD_HOME or HOME so Plugboard knows where to keep its files")
    })?;
    let market = crate::market::load(&dir)?;
    let installed = ConfigStore::new(&dir)
        .load()
        .map(|config| {
            let servers: Vec<(String, crate::config::ServerConfig)> = config
                .servers()
                .into_iter()
                .filter_map(|(n, s)| s.ok().map(|s| (n, s)))
                .collect();
            Installed::of(servers.iter().map(|(n, s)| (n.clone(), s)))
        })
        .unwrap_or_default();
    Ok((market, installed))
}

/// One search hit as `--json` prints it.
#[derive(Serialize)]
struct Hit<'a> {
    source: ItemSource,
    /// The curated entry's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    /// The registry name (a curated entry's first registry name).
    #[serde(skip_serializing_if = "Option::is_none")]
    registry_name: Option<&'a str>,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    categories: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    popularity: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    docs_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    registry: Option<&'a str>,
    /// The transport of the option that `install` would use.
    #[serde(skip_serializing_if = "Option::is_none")]
    transport: Option<TransportKind>,
    transports: Vec<TransportKind>,
    runtimes: Vec<RuntimeKind>,
    deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_message: Option<&'a str>,
    /// Whether some option can be installed and run on this machine.
    runs_here: bool,
    options: Vec<OptionSummary>,
    installed_as: &'a [String],
}

/// The blueprint of a marketplace item: a curated entry's, or a registry row's (read from the
/// cache). `None` when the row cannot be read.
pub fn item_blueprint(market: &Market, at: u32, pinning: &Pinning<'_>) -> Option<Blueprint> {
    match market.item(at) {
        Item::Curated(i) => Some(curated::blueprint(market.entry(i))),
        Item::Registry(r) => {
            let row = market.listing().row(r).ok()?;
            Some(blueprint(&row, market.listing().registry_url(r), pinning))
        }
    }
}

fn hit<'a>(
    market: &'a Market,
    installed: &'a Installed,
    at: u32,
    pinning: &Pinning<'_>,
) -> Hit<'a> {
    let (transports, runtimes_) = market.facets(at);
    let options = item_blueprint(market, at, pinning)
        .map(|bp| summaries(&bp, runtimes::system()))
        .unwrap_or_default();
    let default = options
        .iter()
        .find(|o| o.runs_here())
        .or_else(|| options.iter().find(|o| o.installable));
    let mut h = Hit {
        source: ItemSource::Curated,
        id: None,
        registry_name: None,
        name: "",
        version: None,
        description: "",
        categories: None,
        popularity: None,
        docs_url: None,
        repository: None,
        owner: None,
        registry: None,
        transport: default.map(|o| o.transport),
        transports,
        runtimes: runtimes_,
        deprecated: false,
        status_message: None,
        runs_here: options.iter().any(OptionSummary::runs_here),
        installed_as: market.installed_as(at, installed),
        options,
    };
    match market.item(at) {
        Item::Curated(i) => {
            let e = market.entry(i);
            h.id = Some(&e.id);
            h.registry_name = e.registry_names.first().map(String::as_str);
            h.name = &e.name;
            h.description = &e.description;
            h.categories = Some(&e.categories);
            h.popularity = e.popularity;
            h.docs_url = Some(&e.docs_url);
        }
        Item::Registry(r) => {
            let b = market.listing().brief(r);
            h.source = ItemSource::Registry;
            h.registry_name = Some(b.name);
            h.name = b.display_name();
            h.version = Some(b.version);
            h.description = b.description;
            h.repository = b.repository;
            h.owner = Some(namespace_owner(b.name));
            h.registry = Some(market.listing().registry_url(r));
            h.deprecated = b.status == Status::Deprecated;
            h.status_message = b.status_message;
        }
    }
    h
}

fn filters_of(args: &CatalogArgs) -> Result<Filters, CliError> {
    Ok(Filters {
        source: match args.source {
            SourceArg::All => None,
            SourceArg::Curated => Some(ItemSource::Curated),
            SourceArg::Registry => Some(ItemSource::Registry),
        },
        transport: args.transport.map(|t| match t {
            super::args::TransportArg::Stdio => TransportKind::Stdio,
            super::args::TransportArg::Shttp => TransportKind::Shttp,
            super::args::TransportArg::Sse => TransportKind::Sse,
        }),
        runtime: match &args.runtime {
            None => None,
            Some(r) => Some(RuntimeKind::parse(r).ok_or_else(|| {
                CliError::usage(format!(
                    "unknown runtime `{r}`; one of: node, python, docker, dotnet, bun, mcpb, remote"
                ))
            })?),
        },
        installed: args.installed.then_some(true),
        category: args.category.clone(),
    })
}

pub fn run(args: CatalogArgs) -> Result<(), CliError> {
    if let Some(CatalogShow::Show(show)) = &args.show {
        let (market, installed) = load_market()?;
        return show_item(
            &market,
            &installed,
            &show.id,
            show.version.as_deref(),
            show.versions,
            show.json.json,
        );
    }
    let (market, installed) = load_market()?;
    let catalog = market.catalog();
    if args.categories {
        let counts = catalog.categories();
        if args.json.json {
            return print_json(&counts);
        }
        let mut rows = vec![vec!["CATEGORY".to_string(), "ENTRIES".to_string()]];
        rows.extend(
            counts
                .iter()
                .map(|(c, n)| vec![c.to_string(), n.to_string()]),
        );
        print_table(&rows);
        return Ok(());
    }
    if let Some(category) = &args.category
        && !catalog.categories().contains_key(category.as_str())
    {
        let known: Vec<_> = catalog.categories().into_keys().collect();
        return Err(CliError::usage(format!(
            "unknown category `{category}`; known: {}",
            known.join(", ")
        )));
    }
    let filters = filters_of(&args)?;
    let query = args.query.join(" ");
    let mut found = market.search(&query, &filters, &installed);
    let total = found.len();
    if let Some(limit) = args.limit {
        found.truncate(limit);
    }
    let pinning = Pinning::browsing(config_dir().is_none_or(|d| pinning_enabled(&d)));
    let hits: Vec<Hit> = found
        .iter()
        .map(|&at| hit(&market, &installed, at, &pinning))
        .collect();
    if args.json.json {
        print_registry_state(&market);
        return print_json(&hits);
    }
    if hits.is_empty() {
        println!(
            "Nothing matches `{query}`. Try fewer or other words, or `plugboard catalog` to list everything."
        );
    } else {
        let mut rows = vec![
            ["SOURCE", "ID", "VERSION", "TRANSPORT", "", "DESCRIPTION"]
                .map(String::from)
                .to_vec(),
        ];
        for h in &hits {
            let note = if !h.installed_as.is_empty() {
                "installed"
            } else if h.deprecated {
                "deprecated"
            } else if !h.runs_here {
                "can't run here"
            } else {
                ""
            };
            rows.push(vec![
                match h.source {
                    ItemSource::Curated => "curated",
                    ItemSource::Registry => "registry",
                }
                .into(),
                h.id.or(h.registry_name).unwrap_or_default().into(),
                h.version.unwrap_or("").into(),
                h.transport.map_or("-", |t| t.label()).into(),
                note.into(),
                truncate(h.description, 56),
            ]);
        }
        print_table(&rows);
    }
    let shown = if total > hits.len() {
        format!("{} of {total}", hits.len())
    } else {
        total.to_string()
    };
    eprintln!(
        "\n{shown} {}. `plugboard catalog show ID` for details, `plugboard install ID` to install.",
        if total == 1 { "match" } else { "matches" }
    );
    print_registry_state(&market);
    Ok(())
}

/// How old the cached registry listings are (or that there is none), on stderr.
fn print_registry_state(market: &Market) {
    let now = now_secs();
    for r in &market.listing().registries {
        match (&r.cache, &r.problem) {
            (Some(cache), _) => eprintln!(
                "Registry {}: {} servers, cached {} ago (`plugboard registry sync` refreshes it).",
                r.source.url,
                cache.len(),
                describe_age(cache.header.synced_at, now)
            ),
            (None, Some(problem)) => eprintln!("warning: {problem}"),
            (None, None) => eprintln!(
                "Registry {}: nothing cached yet; `plugboard registry sync` fetches its servers.",
                r.source.url
            ),
        }
    }
}

#[derive(Serialize)]
struct ShowEntry<'a> {
    #[serde(flatten)]
    entry: &'a Entry,
    forms: Vec<FormSpec>,
    installed_as: &'a [String],
}

#[derive(Serialize)]
struct ShowServer<'a> {
    source: ItemSource,
    registry: &'a str,
    server: &'a crate::registry::ServerJson,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    published_at: Option<&'a str>,
    owner: &'a str,
    /// Whether the server can be installed at all, and why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    cannot_install: Option<String>,
    options: Vec<OptionSummary>,
    forms: Vec<FormSpec>,
    installed_as: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    versions: Option<Vec<VersionRow>>,
}

#[derive(Serialize)]
struct VersionRow {
    version: String,
    status: Status,
    published_at: Option<String>,
    is_latest: bool,
}

fn show_item(
    market: &Market,
    installed: &Installed,
    id: &str,
    version: Option<&str>,
    versions: bool,
    json: bool,
) -> Result<(), CliError> {
    let rt = runtime()?;
    let found = rt.block_on(market.find(id, version))?;
    match found {
        Found::Curated(entry) => show_entry(market, installed, entry, json),
        Found::Registry { row, registry } => {
            let pinning = Pinning::browsing(config_dir().is_none_or(|d| pinning_enabled(&d)));
            let bp = blueprint(&row, &registry, &pinning);
            let options = summaries(&bp, runtimes::system());
            let forms: Vec<FormSpec> = bp
                .options
                .iter()
                .filter(|o| o.blocked.is_none())
                .filter_map(|o| form(&bp, Some(&o.id), runtimes::system()).ok())
                .collect();
            let version_rows = if versions {
                let client = crate::registry::RegistryClient::new(
                    &registry,
                    crate::registry::ApiVersion::V0_1,
                )
                .map_err(|e| CliError::failed(e.to_string()))?;
                let page = rt
                    .block_on(client.versions(&row.server.name))
                    .map_err(|e| CliError::failed(format!("{e}; {}", e.hint())))?;
                Some(
                    page.rows
                        .iter()
                        .map(|r| VersionRow {
                            version: r.server.version.clone(),
                            status: r.status(),
                            published_at: r.meta.official.published_at.clone(),
                            is_latest: r.meta.official.is_latest,
                        })
                        .collect(),
                )
            } else {
                None
            };
            let installed_as = installed
                .registry
                .get(&row.server.name)
                .map_or(&[][..], Vec::as_slice);
            let show = ShowServer {
                source: ItemSource::Registry,
                registry: &registry,
                server: &row.server,
                status: row.status(),
                status_message: row.meta.official.status_message.as_deref(),
                published_at: row.meta.official.published_at.as_deref(),
                owner: row.server.owner(),
                cannot_install: crate::form::engine::cannot_install(&bp),
                options,
                forms,
                installed_as,
                versions: version_rows,
            };
            if json {
                return print_json(&show);
            }
            print_server(&show);
            Ok(())
        }
    }
}

fn print_server(show: &ShowServer) {
    let s = show.server;
    println!(
        "{} {} ({})",
        s.title.as_deref().unwrap_or(s.short_name()),
        s.version,
        s.name
    );
    println!("{}", s.description);
    let github = s.name.starts_with("io.github.");
    println!(
        "From: {}{} · registry {}",
        show.owner,
        if github { " (GitHub)" } else { "" },
        show.registry
    );
    if let Some(repo) = &s.repository {
        println!("Repository: {}", repo.url);
    }
    if let Some(site) = &s.website_url {
        println!("Website: {site}");
    }
    if let Some(at) = show.published_at {
        println!("Published: {at}");
    }
    if show.status == Status::Deprecated {
        println!(
            "Deprecated{}",
            show.status_message
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
    }
    if !show.installed_as.is_empty() {
        println!("Installed as: {}", show.installed_as.join(", "));
    }
    if let Some(why) = &show.cannot_install {
        println!("\nCannot install: {why}.");
    }
    let default = show
        .options
        .iter()
        .find(|o| o.runs_here())
        .or_else(|| show.options.iter().find(|o| o.installable))
        .map(|o| o.id.clone());
    for option in &show.options {
        let default = if default.as_deref() == Some(option.id.as_str()) {
            " (default)"
        } else {
            ""
        };
        println!(
            "\nOption `{}`{default}: {} — {}{}",
            option.id,
            option.label,
            option.transport.label(),
            option
                .runtime
                .as_deref()
                .map(|r| format!(", needs {r}"))
                .unwrap_or_default()
        );
        if let Some(why) = &option.unavailable {
            let what = if option.installable {
                "cannot run here"
            } else {
                "cannot install"
            };
            println!("  {what}: {}", why.reason);
            if !why.fix.is_empty() {
                println!("  fix: {}", why.fix);
            }
        }
        if let Some(form) = show.forms.iter().find(|f| f.option_id == option.id) {
            print_form(form);
        }
    }
    if let Some(versions) = &show.versions {
        println!("\nVersions:");
        for v in versions {
            println!(
                "  {}{}{} {}",
                v.version,
                if v.is_latest { " (latest)" } else { "" },
                if v.status == Status::Deprecated {
                    " (deprecated)"
                } else {
                    ""
                },
                v.published_at.as_deref().unwrap_or("")
            );
        }
    }
}

fn print_form(form: &FormSpec) {
    if let Some(command) = &form.command {
        println!("  runs: {command}");
    }
    if let Some(url) = &form.url {
        println!("  url: {url}");
    }
    if let Some(pin) = &form.pin {
        println!(
            "  dependencies pinned: {} {} {} (published {})",
            pin.tool, pin.flag, pin.date, pin.published_at
        );
    }
    for (key, value) in &form.env {
        println!("  env: {key}={value}");
    }
    for warning in &form.warnings {
        println!("  WARNING: {warning}");
    }
    for note in &form.notes {
        println!("  note: {note}");
    }
    if form.oauth {
        println!("  signs in with OAuth after install (`plugboard auth NAME`)");
    }
    for field in &form.fields {
        let how = if field.secret || field.input == InputKind::Password {
            format!(
                "secret: --secret-stdin {} or {}",
                field.key,
                secret_env_var(&field.key)
            )
        } else {
            format!("--set {}=…", field.key)
        };
        let need = if field.required {
            "required"
        } else {
            "optional"
        };
        let extra = match field.input {
            InputKind::Select => format!(", one of {}", field.choices.join("|")),
            InputKind::Boolean => ", true|false".into(),
            InputKind::Number => ", a number".into(),
            InputKind::List if field.picker.is_some() => {
                ", absolute paths: repeat --set for each".into()
            }
            InputKind::List => ", one value per line (repeat --set for each)".into(),
            InputKind::FilePath if field.picker.is_some() => ", an absolute path".into(),
            _ => String::new(),
        };
        let default = field
            .default
            .as_deref()
            .map(|d| format!(", default {d}"))
            .unwrap_or_default();
        println!(
            "  {} — {} ({need}{extra}{default}; {how})",
            field.key, field.label
        );
    }
}

fn show_entry(
    market: &Market,
    installed: &Installed,
    entry: &Entry,
    json: bool,
) -> Result<(), CliError> {
    let bp = curated::blueprint(entry);
    let options = summaries(&bp, runtimes::system());
    let forms = entry
        .options
        .iter()
        .map(|o| form(&bp, Some(&o.id), runtimes::system()))
        .collect::<Result<Vec<_>, _>>()?;
    let installed_as = installed
        .curated
        .get(&entry.id)
        .map_or(&[][..], Vec::as_slice);
    if json {
        return print_json(&ShowEntry {
            entry,
            forms,
            installed_as,
        });
    }
    let _ = market;
    println!("{} ({})", entry.name, entry.id);
    println!("{}", entry.description);
    println!("Categories: {}", entry.categories.join(", "));
    println!("Docs: {}", entry.docs_url);
    if !entry.registry_names.is_empty() {
        println!(
            "In the MCP Registry as: {}",
            entry.registry_names.join(", ")
        );
    }
    if let Some(hint) = &entry.install_hint {
        println!("Note: {hint}");
    }
    if !installed_as.is_empty() {
        println!("Installed as: {}", installed_as.join(", "));
    }
    let default = crate::form::engine::default_option(&bp, &options).map(|o| o.id.clone());
    for (form, option) in forms.iter().zip(&options) {
        let preferred = if default.as_deref() == Some(form.option_id.as_str()) {
            " (default)"
        } else {
            ""
        };
        println!(
            "\nOption `{}`{preferred}: {} — {}",
            form.option_id,
            form.option_label,
            form.transport.label()
        );
        if let Some(why) = &option.unavailable {
            println!("  cannot run here: {}", why.reason);
            println!("  fix: {}", why.fix);
        }
        print_form(form);
    }
    Ok(())
}
