//! The loaded catalog and its search: terms over name, id, keywords and description, a category
//! filter, popularity order.

use std::collections::BTreeMap;
use std::path::Path;

use super::load::{CatalogError, dir_entries, embedded_entries};
use super::model::Entry;

/// All entries, with a lower-cased search index built once.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    index: Vec<Haystack>,
}

#[derive(Clone, Debug, Default)]
struct Haystack {
    name: String,
    id: String,
    keywords: String,
    description: String,
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
        let index = entries
            .iter()
            .map(|e| Haystack {
                name: e.name.to_lowercase(),
                id: e.id.to_lowercase(),
                keywords: e.keywords.join(" ").to_lowercase(),
                description: e.description.to_lowercase(),
            })
            .collect();
        Catalog { entries, index }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// Entries matching every term of `query` (in name, id, keywords or description) and the
    /// category, best match first, then most popular, then by name. An empty query lists all.
    pub fn search(&self, query: &str, category: Option<&str>) -> Vec<&Entry> {
        let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut hits: Vec<(u32, &Entry)> = self
            .entries
            .iter()
            .zip(&self.index)
            .filter(|(e, _)| category.is_none_or(|c| e.categories.iter().any(|ec| ec == c)))
            .filter_map(|(e, hay)| {
                terms
                    .iter()
                    .try_fold(0u32, |score, term| hay.score(term).map(|s| score + s))
                    .map(|score| (score, e))
            })
            .collect();
        hits.sort_by(|(sa, a), (sb, b)| {
            sb.cmp(sa)
                .then(b.popularity.unwrap_or(0).cmp(&a.popularity.unwrap_or(0)))
                .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
        });
        hits.into_iter().map(|(_, e)| e).collect()
    }

    /// Each category in use with its number of entries, by name.
    pub fn categories(&self) -> BTreeMap<&str, usize> {
        let mut counts = BTreeMap::new();
        for entry in &self.entries {
            for c in &entry.categories {
                *counts.entry(c.as_str()).or_insert(0) += 1;
            }
        }
        counts
    }
}

impl Haystack {
    /// How well one term matches, or `None` when it does not match at all.
    fn score(&self, term: &str) -> Option<u32> {
        if self.name.starts_with(term) || self.id.starts_with(term) {
            Some(8)
        } else if self.name.contains(term) || self.id.contains(term) {
            Some(4)
        } else if self.keywords.contains(term) {
            Some(2)
        } else if self.description.contains(term) {
            Some(1)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, name: &str, popularity: Option<u32>, keywords: &[&str]) -> Entry {
        serde_json::from_value(serde_json::json!({
            "id": id, "name": name, "description": format!("{name} integration for tests"),
            "docs_url": "https://example.com", "categories": ["data"],
            "keywords": keywords, "popularity": popularity,
            "options": [{"id": "none", "label": "Local", "transport": {"type": "stdio", "command": "x", "args": []}, "auth": {"type": "none"}}]
        }))
        .unwrap()
    }

    #[test]
    fn ranks_name_matches_then_popularity() {
        let catalog = Catalog::from_entries(vec![
            entry("alpha", "Alpha", Some(1), &["git"]),
            entry("github", "GitHub", Some(100), &[]),
            entry("gitlab", "GitLab", Some(50), &[]),
            entry("zeta", "Zeta", None, &[]),
        ]);
        let ids: Vec<_> = catalog
            .search("git", None)
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, ["github", "gitlab", "alpha"]);
        let all: Vec<_> = catalog
            .search("", None)
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(all, ["github", "gitlab", "alpha", "zeta"]);
        assert!(
            catalog
                .search("git lab", None)
                .iter()
                .all(|e| e.id == "gitlab")
        );
        assert!(catalog.search("GITHUB", Some("data")).len() == 1);
        assert!(catalog.search("github", Some("finance")).is_empty());
        assert!(catalog.search("integration tests", None).len() == 4);
    }
}
