//! `plugboard catalog`: search the catalog, list categories, show one entry and its forms.

use serde::Serialize;

use super::CliError;
use super::args::{CatalogArgs, CatalogShow};
use super::output::{print_json, print_table, truncate};
use crate::catalog::{Catalog, Entry};
use crate::config::{ConfigStore, TransportKind, config_dir};
use crate::form::{FormSpec, InputKind, form_for};
use crate::secrets::secret_env_var;

/// One search hit as `--json` prints it.
#[derive(Serialize)]
struct Hit<'a> {
    id: &'a str,
    name: &'a str,
    description: &'a str,
    categories: &'a [String],
    popularity: Option<u32>,
    docs_url: &'a str,
    /// The transport of the option that `install` would use.
    transport: TransportKind,
    options: usize,
    installed_as: Vec<String>,
}

/// Names of installed servers per catalog id (empty when the config cannot be read).
fn installed_names(id: &str) -> Vec<String> {
    let Some(dir) = config_dir() else {
        return vec![];
    };
    let Ok(config) = ConfigStore::new(dir).load() else {
        return vec![];
    };
    config
        .servers()
        .into_iter()
        .filter_map(|(name, server)| {
            server
                .ok()
                .filter(|s| s.source.as_ref().is_some_and(|src| src.catalog == id))
                .map(|_| name)
        })
        .collect()
}

fn default_transport(entry: &Entry) -> TransportKind {
    form_for(entry, None)
        .map(|f| f.transport)
        .unwrap_or(TransportKind::Stdio)
}

pub fn run(args: CatalogArgs) -> Result<(), CliError> {
    let catalog = Catalog::load_default()?;
    if let Some(CatalogShow::Show(show)) = args.show {
        return show_entry(&catalog, &show.id, show.json.json);
    }
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
    if let Some(category) = &args.category {
        if !catalog.categories().contains_key(category.as_str()) {
            let known: Vec<_> = catalog.categories().into_keys().collect();
            return Err(CliError::usage(format!(
                "unknown category `{category}`; known: {}",
                known.join(", ")
            )));
        }
    }
    let query = args.query.join(" ");
    let hits = catalog.search(&query, args.category.as_deref());
    let hits: Vec<Hit> = hits
        .into_iter()
        .map(|e| Hit {
            id: &e.id,
            name: &e.name,
            description: &e.description,
            categories: &e.categories,
            popularity: e.popularity,
            docs_url: &e.docs_url,
            transport: default_transport(e),
            options: e.options.len(),
            installed_as: installed_names(&e.id),
        })
        .collect();
    if args.json.json {
        return print_json(&hits);
    }
    if hits.is_empty() {
        println!(
            "No catalog entry matches `{query}`. Try a shorter word, or `plugboard catalog` to list all."
        );
        return Ok(());
    }
    let mut rows = vec![vec![
        "ID".to_string(),
        "NAME".to_string(),
        "TRANSPORT".to_string(),
        "".to_string(),
        "DESCRIPTION".to_string(),
    ]];
    for hit in &hits {
        rows.push(vec![
            hit.id.to_string(),
            hit.name.to_string(),
            hit.transport.label().to_string(),
            if hit.installed_as.is_empty() {
                ""
            } else {
                "installed"
            }
            .to_string(),
            truncate(hit.description, 60),
        ]);
    }
    print_table(&rows);
    eprintln!(
        "\n{} {}. `plugboard catalog show ID` for details, `plugboard install ID` to install.",
        hits.len(),
        if hits.len() == 1 { "entry" } else { "entries" }
    );
    Ok(())
}

#[derive(Serialize)]
struct ShowEntry<'a> {
    #[serde(flatten)]
    entry: &'a Entry,
    forms: Vec<FormSpec>,
    installed_as: Vec<String>,
}

fn show_entry(catalog: &Catalog, id: &str, json: bool) -> Result<(), CliError> {
    let entry = catalog.get(id).ok_or_else(|| {
        CliError::usage(format!(
            "no catalog entry `{id}`; `plugboard catalog {id}` searches for it"
        ))
    })?;
    let forms = entry
        .options
        .iter()
        .map(|o| form_for(entry, Some(&o.id)))
        .collect::<Result<Vec<_>, _>>()?;
    let installed_as = installed_names(id);
    if json {
        return print_json(&ShowEntry {
            entry,
            forms,
            installed_as,
        });
    }
    println!("{} ({})", entry.name, entry.id);
    println!("{}", entry.description);
    println!("Categories: {}", entry.categories.join(", "));
    println!("Docs: {}", entry.docs_url);
    if let Some(hint) = &entry.install_hint {
        println!("Note: {hint}");
    }
    if !installed_as.is_empty() {
        println!("Installed as: {}", installed_as.join(", "));
    }
    for (i, form) in forms.iter().enumerate() {
        let preferred = if i == 0 { " (default)" } else { "" };
        println!(
            "\nOption `{}`{preferred}: {} — {}",
            form.option_id,
            form.option_label,
            form.transport.label()
        );
        if let Some(command) = &form.command {
            println!("  runs: {command}");
        }
        if let Some(url) = &form.url {
            println!("  url: {url}");
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
            println!("  {} — {} ({need}; {how})", field.key, field.label);
        }
    }
    Ok(())
}
