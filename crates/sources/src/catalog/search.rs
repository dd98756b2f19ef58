//! The loaded catalog and its search: the ranked word search of `crate::search` over each
//! entry's name and id (names), keywords (tags) and description, with a category filter. Ties
//! are broken by popularity, then name. The index is built by the first search (loading the
//! catalog does not pay for it).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use super::load::{CatalogError, dir_entries, embedded_entries};
use super::model::Entry;
use crate::search::{Document, Index};

/// All entries, with a search index built by the first search.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    index: OnceLock<Ranked>,
}

/// The index, over the entries in the order of an empty query.
#[derive(Clone, Debug)]
struct Ranked {
    /// Entry positions, most popular first, then by lower-cased name, then catalog order.
    order: Vec<u32>,
    index: Index,
}

impl Catalog {
    /// The embedded catalog plus the entries in `$PLUGBOARD_CATALOG_DIR`, if set.
    pub fn load_default() -> Result<Catalog, CatalogError> {
        let extra = std::env::var_os(super::CATALOG_DIR_ENV).filter(|v| !v.is_empty());
        Catalog::load(extra.as_deref().map(Path::new))
    }

    /// The embedded catalog plus the entries in `extra_dir`. An extra entry with the id of an
    /// embedded one replaces it.
    pub fn load(extra_dir: Option<&Path>) -> Result<Catalog, CatalogError> {
        let mut entries = embedded_entries()?;
        if let Some(dir) = extra_dir {
            for extra in dir_entries(dir)? {
                match entries.iter_mut().find(|e| e.id == extra.id) {
                    Some(slot) => *slot = extra,
                    None => entries.push(extra),
                }
            }
        }
        Ok(Catalog::from_entries(entries))
    }

    pub fn from_entries(entries: Vec<Entry>) -> Catalog {
        Catalog {
            entries,
            index: OnceLock::new(),
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The entries in the order ties keep: most popular first, then by name.
    pub fn ranked(&self) -> impl Iterator<Item = &Entry> {
        self.ranked_index()
            .order
            .iter()
            .map(|&i| &self.entries[i as usize])
    }

    fn ranked_index(&self) -> &Ranked {
        self.index.get_or_init(|| {
            let mut order: Vec<u32> = (0..self.entries.len() as u32).collect();
            let key = |e: &Entry| {
                (
                    std::cmp::Reverse(e.popularity.unwrap_or(0)),
                    e.name.to_lowercase(),
                )
            };
            order.sort_by_cached_key(|&i| key(&self.entries[i as usize]));
            let fields: Vec<([&str; 2], Vec<&str>)> = order
                .iter()
                .map(|&i| {
                    let e = &self.entries[i as usize];
                    (
                        [e.name.as_str(), e.id.as_str()],
                        e.keywords.iter().map(String::as_str).collect(),
                    )
                })
                .collect();
            let index =
                Index::build(
                    order
                        .iter()
                        .zip(&fields)
                        .map(|(&i, (names, tags))| Document {
                            names,
                            tags,
                            description: &self.entries[i as usize].description,
                            exact: &[],
                        }),
                );
            Ranked { order, index }
        })
    }

    /// Entries matching every word of `query` (in name, id, keywords or description) and the
    /// category, best match first (see `crate::search`), then most popular, then by name. An
    /// empty query lists all.
    pub fn search(&self, query: &str, category: Option<&str>) -> Vec<&Entry> {
        let ranked = self.ranked_index();
        let entry = |doc: u32| &self.entries[ranked.order[doc as usize] as usize];
        let in_category =
            |doc: u32| category.is_none_or(|c| entry(doc).categories.iter().any(|x| x == c));
        ranked
            .index
            .search(query, in_category)
            .into_iter()
            .map(entry)
            .collect()
    }

    /// Each category in use with its number of entries, by name.
    pub fn categories(&self) -> BTreeMap<&str, usize> {
        let mut counts = BTreeMap::new();
        for entry in &self.entries {
            let mut seen = std::collections::BTreeSet::new();
            for c in &entry.categories {
                if seen.insert(c.as_str()) {
                    *counts.entry(c.as_str()).or_insert(0) += 1;
                }
            }
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tests::{Doc, reference};

    fn entry(id: &str, name: &str, popularity: Option<u32>, keywords: &[&str]) -> Entry {
        serde_json::from_value(serde_json::json!({
            "id": id, "name": name, "description": format!("{name} integration for tests"),
            "docs_url": "https://example.com", "categories": ["data"],
            "keywords": keywords, "popularity": popularity,
            "options": [{"id": "none", "label": "Local", "transport": {"type": "stdio", "command": "x", "args": []}, "auth": {"type": "none"}}]
        }))
        .unwrap()
    }

    fn ids(entries: Vec<&Entry>) -> Vec<&str> {
        entries.iter().map(|e| e.id.as_str()).collect()
    }

    #[test]
    fn ranks_name_matches_then_popularity() {
        let catalog = Catalog::from_entries(vec![
            entry("alpha", "Alpha", Some(1), &["git"]),
            entry("github", "GitHub", Some(100), &[]),
            entry("gitlab", "GitLab", Some(50), &[]),
            entry("zeta", "Zeta", None, &[]),
        ]);
        assert_eq!(
            ids(catalog.search("git", None)),
            ["github", "gitlab", "alpha"]
        );
        assert_eq!(
            ids(catalog.search("", None)),
            ["github", "gitlab", "alpha", "zeta"]
        );
        assert_eq!(
            ids(catalog.search("git", Some("data"))),
            ["github", "gitlab", "alpha"]
        );
        assert!(catalog.search("git", Some("nope")).is_empty());
    }

    #[test]
    fn database_finds_databases_before_the_most_popular_entry() {
        let catalog = Catalog::load(None).unwrap();
        let found = ids(catalog.search("database", None));
        assert_ne!(found[0], "notion", "{found:?}");
        let notion = found.iter().position(|id| *id == "notion").unwrap();
        for id in ["sqlite", "supabase", "airtable", "mongodb", "redis"] {
            let at = found.iter().position(|f| f == &id).unwrap();
            assert!(at < notion, "{id} after notion: {found:?}");
        }
    }

    /// The index finds what the slow reference search finds, in the same order, for queries
    /// made of the real catalog's words, their prefixes and their insides.
    #[test]
    fn the_index_agrees_with_the_reference_on_the_real_catalog() {
        let catalog = Catalog::load(None).unwrap();
        let ranked: Vec<&Entry> = catalog.ranked().collect();
        let docs: Vec<Doc> = ranked
            .iter()
            .map(|e| Doc {
                names: vec![e.name.clone(), e.id.clone()],
                tags: e.keywords.clone(),
                description: e.description.clone(),
            })
            .collect();
        let mut words: Vec<String> = docs
            .iter()
            .flat_map(|d| {
                crate::search::terms(&format!(
                    "{} {} {}",
                    d.names.join(" "),
                    d.tags.join(" "),
                    d.description
                ))
            })
            .collect();
        words.sort();
        words.dedup();
        let mut queries: Vec<String> = vec![
            "".into(),
            "zzz".into(),
            "GIT hub".into(),
            "data base".into(),
            "Σ".into(),
        ];
        for w in &words {
            let chars: Vec<char> = w.chars().collect();
            for end in 1..=chars.len().min(6) {
                queries.push(chars[..end].iter().collect());
            }
            if chars.len() > 3 {
                queries.push(chars[1..chars.len() - 1].iter().collect());
            }
        }
        for pair in words.windows(2).step_by(5) {
            queries.push(format!("{} {}", pair[0], pair[1]));
        }
        assert!(queries.len() > 1000);
        for q in &queries {
            let expected: Vec<&str> = reference(&docs, q)
                .into_iter()
                .map(|d| ranked[d as usize].id.as_str())
                .collect();
            assert_eq!(ids(catalog.search(q, None)), expected, "query {q:?}");
        }
    }
}
