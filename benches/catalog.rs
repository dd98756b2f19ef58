//! Catalog benchmarks (divan): loading the embedded catalog, and search over a generated
//! 10,000-entry catalog for the prefixes a person types in the marketplace's search box.
//! Run with `cargo bench --bench catalog` (bench/run does); `cargo test` never builds it.

use divan::Bencher;
use plugboard::catalog::{Catalog, Entry, embedded_entries};

fn main() {
    divan::main();
}

/// Parse and check every embedded catalog file and build the search index.
#[divan::bench]
fn load_embedded() -> Catalog {
    Catalog::load(None).expect("the embedded catalog loads")
}

const ENTRIES: usize = 10_000;

/// Words for generated names and descriptions, so prefixes hit a realistic share of entries.
const WORDS: &[&str] = &[
    "git",
    "github",
    "gitlab",
    "slack",
    "data",
    "database",
    "graph",
    "google",
    "sheets",
    "drive",
    "search",
    "browser",
    "cloud",
    "storage",
    "notes",
    "tickets",
    "issues",
    "metrics",
    "logs",
    "deploy",
    "payments",
    "mail",
    "calendar",
    "docs",
    "files",
    "design",
    "crm",
    "sales",
    "chat",
    "vector",
    "queue",
    "stream",
    "secrets",
    "maps",
    "weather",
    "news",
    "finance",
    "analytics",
];

/// A 10,000-entry catalog made from the embedded entries with varied names and keywords.
fn generated() -> Catalog {
    let base = embedded_entries().expect("the embedded catalog loads");
    let entries: Vec<Entry> = (0..ENTRIES)
        .map(|i| {
            let mut e = base[i % base.len()].clone();
            let a = WORDS[i % WORDS.len()];
            let b = WORDS[(i / WORDS.len() + 7 * i) % WORDS.len()];
            e.id = format!("{}-{i}", e.id);
            e.name = format!("{} {a} {i}", e.name);
            e.keywords = vec![a.to_owned(), b.to_owned()];
            e.description = format!("{} Works with {b} and {a}.", e.description);
            e.popularity = Some((i * 7919 % 10_000) as u32);
            e
        })
        .collect();
    Catalog::from_entries(entries)
}

/// Making the catalog and building its search index (which the first search does), over
/// 10,000 entries: the embedded ones repeated, and the generated ones (distinct ids and names:
/// many more distinct words).
#[divan::bench]
fn index_10k(bencher: Bencher) {
    let base = embedded_entries().expect("the embedded catalog loads");
    let entries: Vec<Entry> = (0..ENTRIES).map(|i| base[i % base.len()].clone()).collect();
    bencher
        .with_inputs(|| entries.clone())
        .bench_values(first_search);
}

#[divan::bench]
fn index_10k_generated(bencher: Bencher) {
    let entries = generated().entries().to_vec();
    bencher
        .with_inputs(|| entries.clone())
        .bench_values(first_search);
}

/// The catalog of `entries` after its first search (an empty query, the marketplace's first).
fn first_search(entries: Vec<Entry>) -> Catalog {
    let catalog = Catalog::from_entries(entries);
    divan::black_box(catalog.search("", None).len());
    catalog
}

/// One query against the 10,000-entry catalog: matching, scoring and sorting. `""` is the
/// marketplace before anything is typed: every entry, most popular first.
#[divan::bench(args = [
    "", "g", "gi", "git", "github", "sl", "post", "data", "data base", "google sheets", "zzz",
])]
fn search_10k(bencher: Bencher, query: &str) {
    let catalog = generated();
    catalog.search("", None); // builds the index
    bencher.bench(|| catalog.search(divan::black_box(query), None).len());
}

/// The same with a category chosen (about 1,900 of the 10,000 entries are in `developer-tools`).
#[divan::bench(args = ["", "g", "git", "data base"])]
fn search_10k_in_category(bencher: Bencher, query: &str) {
    let catalog = generated();
    catalog.search("", None); // builds the index
    bencher.bench(|| {
        catalog
            .search(divan::black_box(query), Some("developer-tools"))
            .len()
    });
}
