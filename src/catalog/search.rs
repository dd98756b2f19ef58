//! The loaded catalog and its search: terms over name, id, keywords and description, a category
//! filter, popularity order.
//!
//! Search runs on an index that the first search builds (a few milliseconds for 10,000 entries;
//! loading the catalog does not pay for it). A term matches a field when the field contains it,
//! and since a term has no whitespace, that is when one of the field's words (its
//! whitespace-separated tokens) contains it. So the index holds each distinct lower-cased word
//! once, all in one text, and for each word the entries that have it and where (first word of
//! the name or id, another word of them, a keyword, a word of the description). A term is looked
//! for once in that text, not in every entry's fields; a one-letter term (the first keystroke,
//! which most words contain) is answered from a mask of the letters in each entry's fields. The
//! entries are kept in the order of an empty query (most popular first, then by name), and a
//! counting sort by score keeps that order within a score.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::load::{CatalogError, dir_entries, embedded_entries};
use super::model::Entry;

/// All entries, with a search index built by the first search.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    index: OnceLock<SearchIndex>,
}

#[derive(Clone, Debug)]
struct SearchIndex {
    /// One per entry, in the order of an empty query: most popular first, then by lower-cased
    /// name, then in catalog order. Rows are numbered in this order.
    rows: Vec<Row>,
    /// Every distinct word of the lower-cased fields, each followed by a newline.
    words: String,
    /// Where each word starts in `words`, and the end of the last one.
    word_starts: Vec<u32>,
    /// Word `w` is in the rows `postings[posting_starts[w]..posting_starts[w + 1]]`, each
    /// `row << 2 | place` (a `PLACE_*`), rows ascending, each once with its best place.
    posting_starts: Vec<u32>,
    postings: Vec<u32>,
    /// The rows of the entries in each category, ascending.
    categories: HashMap<String, Vec<u32>>,
}

/// Where a word is in an entry: the first word of the name or of the id, another word of them,
/// a keyword, a word of the description.
const PLACE_START: u32 = 3;
const PLACE_NAME_ID: u32 = 2;
const PLACE_KEYWORDS: u32 = 1;
const PLACE_DESCRIPTION: u32 = 0;

#[derive(Clone, Copy, Debug)]
struct Row {
    /// The entry's position in `Catalog::entries`.
    entry: u32,
    /// `byte_mask` of the lower-cased name and id together, of the keywords, of the description.
    masks: [u64; 3],
    /// The first byte of the lower-cased name and of the id (0 when empty).
    first: [u8; 2],
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

    /// Entries matching every term of `query` (in name, id, keywords or description) and the
    /// category, best match first, then most popular, then by name. An empty query lists all.
    ///
    /// A term scores 8 when the name or id starts with it, else 4 when the name or id contains
    /// it, else 2 when the keywords do, else 1 when the description does; an entry's score is
    /// the sum over the terms, and an entry missing a term is left out. All of it lower-cased.
    /// Ties keep the catalog order.
    pub fn search(&self, query: &str, category: Option<&str>) -> Vec<&Entry> {
        let index = self.index.get_or_init(|| SearchIndex::build(&self.entries));
        let entry = |row: u32| &self.entries[index.rows[row as usize].entry as usize];
        let rows: Option<&[u32]> = match category {
            Some(c) => match index.categories.get(c) {
                Some(rows) => Some(rows),
                None => return Vec::new(),
            },
            None => None,
        };
        let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        if terms.is_empty() {
            // Every score is 0: the rows are already in the order of the answer.
            return match rows {
                Some(rows) => rows.iter().map(|&r| entry(r)).collect(),
                None => index
                    .rows
                    .iter()
                    .map(|r| &self.entries[r.entry as usize])
                    .collect(),
            };
        }

        // The sum of the terms' scores per row, `MISSING` once a term is not found.
        const MISSING: u32 = u32::MAX;
        let mut totals = vec![0u32; index.rows.len()];
        let mut scores = vec![0u8; index.rows.len()];
        for term in &terms {
            index.term_scores(term, &mut scores);
            for (total, &score) in totals.iter_mut().zip(&scores) {
                *total = if score == 0 || *total == MISSING {
                    MISSING
                } else {
                    *total + u32::from(score)
                };
            }
        }

        // The hits in row order, then a counting sort by score, highest first, which keeps
        // the row order within a score.
        let mut counts = vec![0usize; 8 * terms.len() + 1];
        let mut hits: Vec<u32> = Vec::new();
        let mut visit = |row: u32| {
            let total = totals[row as usize];
            if total != MISSING {
                counts[total as usize] += 1;
                hits.push(row);
            }
        };
        match rows {
            Some(rows) => rows.iter().for_each(|&r| visit(r)),
            None => (0..index.rows.len() as u32).for_each(visit),
        }
        let mut next = 0;
        for count in counts.iter_mut().rev() {
            let n = *count;
            *count = next;
            next += n;
        }
        let Some(&first) = hits.first() else {
            return Vec::new();
        };
        let mut sorted = vec![entry(first); hits.len()];
        for row in hits {
            let slot = &mut counts[totals[row as usize] as usize];
            sorted[*slot] = entry(row);
            *slot += 1;
        }
        sorted
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

impl SearchIndex {
    fn build(entries: &[Entry]) -> SearchIndex {
        // The lower-cased names, and the order of an empty query (stable: equal popularity and
        // name keep the catalog order).
        let mut names = String::with_capacity(entries.iter().map(|e| e.name.len()).sum());
        let mut name_ends = Vec::with_capacity(entries.len());
        for e in entries {
            push_lowercase(&mut names, &e.name);
            name_ends.push(names.len());
        }
        let name = |i: usize| {
            let start = if i == 0 { 0 } else { name_ends[i - 1] };
            &names[start..name_ends[i]]
        };
        let popularity: Vec<u32> = entries.iter().map(|e| e.popularity.unwrap_or(0)).collect();
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_by(|&a, &b| {
            (popularity[b].cmp(&popularity[a])).then_with(|| name(a).cmp(name(b)))
        });

        // Each row's words as (word, row << 2 | place), one per word and row with its best
        // place.
        let mut words = WordTable::default();
        let text_len: usize = entries
            .iter()
            .map(|e| e.name.len() + e.id.len() + e.description.len())
            .sum();
        let mut occurrences: Vec<(u32, u32)> = Vec::with_capacity(text_len / 6);
        let mut rows = Vec::with_capacity(entries.len());
        let mut categories: HashMap<String, Vec<u32>> = HashMap::new();
        // The row's lower-cased id, keywords (joined by spaces) and description.
        let mut fields = String::new();
        for (row, &i) in order.iter().enumerate() {
            let e = &entries[i];
            let row = row as u32;
            fields.clear();
            push_lowercase(&mut fields, &e.id);
            let id_end = fields.len();
            if e.keywords.iter().all(|k| k.is_ascii()) {
                for (n, k) in e.keywords.iter().enumerate() {
                    if n > 0 {
                        fields.push(' ');
                    }
                    fields.push_str(k);
                }
                fields[id_end..].make_ascii_lowercase();
            } else {
                fields.push_str(&e.keywords.join(" ").to_lowercase());
            }
            let keywords_end = fields.len();
            push_lowercase(&mut fields, &e.description);

            let mut masks = [0u64; 3];
            let parts = [
                (name(i), 0, PLACE_NAME_ID),
                (&fields[..id_end], 0, PLACE_NAME_ID),
                (&fields[id_end..keywords_end], 1, PLACE_KEYWORDS),
                (&fields[keywords_end..], 2, PLACE_DESCRIPTION),
            ];
            for (text, group, place) in parts {
                for_each_word(text, |offset, word| {
                    let w = words.insert(word);
                    let info = &mut words.info[w as usize];
                    masks[group] |= info.mask;
                    let place = if offset == 0 && place == PLACE_NAME_ID {
                        PLACE_START
                    } else {
                        place
                    };
                    if info.last_row == row {
                        let posting = &mut occurrences[info.last_occurrence as usize].1;
                        *posting = (*posting).max(row << 2 | place);
                    } else {
                        info.last_row = row;
                        info.last_occurrence = occurrences.len() as u32;
                        occurrences.push((w, row << 2 | place));
                    }
                });
            }
            let first = |f: &str| f.as_bytes().first().copied().unwrap_or(0);
            rows.push(Row {
                entry: i as u32,
                masks,
                first: [first(name(i)), first(&fields[..id_end])],
            });
            for c in &e.categories {
                let in_category = match categories.get_mut(c) {
                    Some(rows) => rows,
                    None => categories.entry(c.clone()).or_default(),
                };
                // An entry naming a category twice is listed once.
                if in_category.last() != Some(&row) {
                    in_category.push(row);
                }
            }
        }

        // The postings grouped by word (a counting sort, so rows stay ascending).
        let mut posting_starts = vec![0u32; words.info.len() + 1];
        for &(w, _) in &occurrences {
            posting_starts[w as usize + 1] += 1;
        }
        for w in 1..posting_starts.len() {
            posting_starts[w] += posting_starts[w - 1];
        }
        let mut next = posting_starts.clone();
        let mut postings = vec![0u32; occurrences.len()];
        for (w, posting) in occurrences {
            let slot = &mut next[w as usize];
            postings[*slot as usize] = posting;
            *slot += 1;
        }
        let mut word_starts: Vec<u32> = words.info.iter().map(|w| w.start).collect();
        word_starts.push(offset(words.text.len()));

        SearchIndex {
            rows,
            words: words.text,
            word_starts,
            posting_starts,
            postings,
            categories,
        }
    }

    /// Each row's score for one lower-cased term, 0 when it does not match, into `scores`.
    fn term_scores(&self, term: &str, scores: &mut [u8]) {
        scores.fill(0);
        if let &[b @ (b'a'..=b'z' | b'0'..=b'9')] = term.as_bytes() {
            // One letter or digit has a bit of its own in the masks: no need for the words.
            let bit = BYTE_BITS[b as usize];
            for (score, row) in scores.iter_mut().zip(&self.rows) {
                let [name_id, keywords, description] = row.masks.map(|m| m & bit != 0);
                *score = if row.first.contains(&b) {
                    8
                } else if name_id {
                    4
                } else if keywords {
                    2
                } else if description {
                    1
                } else {
                    0
                };
            }
            return;
        }
        // Each match in `words`, leftmost first and not overlapping; none crosses a newline.
        let searcher = AhoCorasick::new([term]).ok();
        let matches: Box<dyn Iterator<Item = usize>> = match &searcher {
            Some(searcher) => Box::new(searcher.find_iter(&self.words).map(|m| m.start())),
            None => Box::new(self.words.match_indices(term).map(|(at, _)| at)),
        };
        let mut word = 0;
        let mut seen = usize::MAX;
        for at in matches {
            let at = at as u32;
            word += self.word_starts[word..].partition_point(|&s| s <= at) - 1;
            if word == seen {
                continue;
            }
            seen = word;
            // The first match in a word is its leftmost, so at its start if the word starts with
            // the term.
            let prefix = self.word_starts[word] == at;
            let postings =
                self.posting_starts[word] as usize..self.posting_starts[word + 1] as usize;
            for &posting in &self.postings[postings] {
                let score = match posting & 3 {
                    PLACE_START if prefix => 8,
                    PLACE_START | PLACE_NAME_ID => 4,
                    PLACE_KEYWORDS => 2,
                    _ => 1,
                };
                let slot = &mut scores[(posting >> 2) as usize];
                *slot = (*slot).max(score);
            }
        }
    }
}

/// Calls `f(offset, word)` for each whitespace-separated word of `text` (as
/// `str::split_whitespace` finds them), with the word's byte offset.
fn for_each_word<'t>(text: &'t str, mut f: impl FnMut(usize, &'t str)) {
    if text.is_ascii() {
        // The ASCII characters `char::is_whitespace` accepts.
        let space = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if space(bytes[at]) {
                at += 1;
                continue;
            }
            let start = at;
            while at < bytes.len() && !space(bytes[at]) {
                at += 1;
            }
            f(start, &text[start..at]);
        }
    } else {
        for word in text.split_whitespace() {
            f(word.as_ptr() as usize - text.as_ptr() as usize, word);
        }
    }
}

/// Appends `s.to_lowercase()`, without an allocation when `s` is ASCII.
fn push_lowercase(out: &mut String, s: &str) {
    if s.is_ascii() {
        let start = out.len();
        out.push_str(s);
        out[start..].make_ascii_lowercase();
    } else {
        out.push_str(&s.to_lowercase());
    }
}

/// One bit per byte value that occurs in `s`: a bit of its own for each lower-case ASCII letter
/// and digit, the other bytes sharing the rest.
fn byte_mask(s: &str) -> u64 {
    s.bytes().fold(0, |mask, b| mask | BYTE_BITS[b as usize])
}

const BYTE_BITS: [u64; 256] = {
    let mut bits = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let bit = match b as u8 {
            c @ b'a'..=b'z' => (c - b'a') as u32,
            c @ b'0'..=b'9' => 26 + (c - b'0') as u32,
            c => 36 + (c as u32 % 28),
        };
        bits[b] = 1 << bit;
        b += 1;
    }
    bits
};

fn offset(n: usize) -> u32 {
    u32::try_from(n).expect("a catalog index under 4 GiB")
}

/// The distinct words, numbered in the order first seen: an open-addressing hash table over
/// one text, so a word seen again costs no allocation.
#[derive(Default)]
struct WordTable {
    /// Each word followed by a newline.
    text: String,
    info: Vec<WordInfo>,
    /// Per slot the word number + 1 (0 for a free slot) and the low half of its hash; a power
    /// of two long, at most half full. A word's first slot is given by the top bits of its hash.
    slots: Vec<(u32, u32)>,
}

struct WordInfo {
    start: u32,
    len: u32,
    /// `byte_mask` of the word.
    mask: u64,
    /// The last row the word was seen in, and its occurrence there.
    last_row: u32,
    last_occurrence: u32,
}

impl WordTable {
    /// The number of `word`, added if new.
    #[inline]
    fn insert(&mut self, word: &str) -> u32 {
        if 2 * (self.info.len() + 1) > self.slots.len() {
            self.grow();
        }
        let hash = word_hash(word.as_bytes());
        let mask = self.slots.len() - 1;
        let mut slot = (hash >> (64 - self.slots.len().trailing_zeros())) as usize;
        let tag = hash as u32;
        loop {
            match self.slots[slot] {
                (0, _) => break,
                (n, t) if t == tag && self.word(n - 1) == word.as_bytes() => return n - 1,
                _ => slot = (slot + 1) & mask,
            }
        }
        let n = self.info.len() as u32;
        self.info.push(WordInfo {
            start: offset(self.text.len()),
            len: word.len() as u32,
            mask: byte_mask(word),
            last_row: u32::MAX,
            last_occurrence: 0,
        });
        self.text.push_str(word);
        self.text.push('\n');
        self.slots[slot] = (n + 1, tag);
        n
    }

    fn word(&self, n: u32) -> &[u8] {
        let info = &self.info[n as usize];
        &self.text.as_bytes()[info.start as usize..][..info.len as usize]
    }

    fn grow(&mut self) {
        let len = (self.slots.len() * 2).max(1024);
        let mut slots = vec![(0, 0); len];
        for n in 0..self.info.len() as u32 {
            let hash = word_hash(self.word(n));
            let mut slot = (hash >> (64 - len.trailing_zeros())) as usize;
            while slots[slot].0 != 0 {
                slot = (slot + 1) & (len - 1);
            }
            slots[slot] = (n + 1, hash as u32);
        }
        self.slots = slots;
    }
}

/// A multiplicative hash of a word (the catalog is not adversarial input).
#[inline]
fn word_hash(word: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut hash = (word.len() as u64).wrapping_mul(K);
    let mut chunks = word.chunks_exact(8);
    for chunk in &mut chunks {
        let bytes = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        hash = (hash.rotate_left(26) ^ bytes).wrapping_mul(K);
    }
    let tail = chunks
        .remainder()
        .iter()
        .rev()
        .fold(0u64, |tail, &b| tail << 8 | u64::from(b));
    (hash.rotate_left(26) ^ tail).wrapping_mul(K)
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

    /// The search as it was before the index (lower-cased fields per entry, `starts_with` and
    /// `contains` on each, a sort of the hits): the specification the indexed search must match
    /// result for result, in the same order.
    struct Reference<'c> {
        entries: &'c [Entry],
        /// Name, id, keywords joined by spaces, description; lower-cased.
        fields: Vec<[String; 4]>,
    }

    impl<'c> Reference<'c> {
        fn new(entries: &'c [Entry]) -> Reference<'c> {
            let fields = entries
                .iter()
                .map(|e| {
                    [
                        e.name.to_lowercase(),
                        e.id.to_lowercase(),
                        e.keywords.join(" ").to_lowercase(),
                        e.description.to_lowercase(),
                    ]
                })
                .collect();
            Reference { entries, fields }
        }

        fn search(&self, query: &str, category: Option<&str>) -> Vec<&'c Entry> {
            let score = |[name, id, keywords, description]: &[String; 4], term: &str| {
                if name.starts_with(term) || id.starts_with(term) {
                    Some(8)
                } else if name.contains(term) || id.contains(term) {
                    Some(4)
                } else if keywords.contains(term) {
                    Some(2)
                } else if description.contains(term) {
                    Some(1)
                } else {
                    None
                }
            };
            let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
            let mut hits: Vec<(u32, &Entry)> = self
                .entries
                .iter()
                .zip(&self.fields)
                .filter(|(e, _)| category.is_none_or(|c| e.categories.iter().any(|ec| ec == c)))
                .filter_map(|(e, fields)| {
                    terms
                        .iter()
                        .try_fold(0u32, |total, t| score(fields, t).map(|s| total + s))
                        .map(|total| (total, e))
                })
                .collect();
            hits.sort_by(|(sa, a), (sb, b)| {
                sb.cmp(sa)
                    .then(b.popularity.unwrap_or(0).cmp(&a.popularity.unwrap_or(0)))
                    .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
            });
            hits.into_iter().map(|(_, e)| e).collect()
        }
    }

    fn assert_same(catalog: &Catalog, reference: &Reference, query: &str, category: Option<&str>) {
        let got: Vec<*const Entry> = catalog
            .search(query, category)
            .into_iter()
            .map(|e| e as *const Entry)
            .collect();
        let want: Vec<*const Entry> = reference
            .search(query, category)
            .into_iter()
            .map(|e| e as *const Entry)
            .collect();
        assert!(
            got == want,
            "query {query:?} in {category:?}: {} results, the reference has {}",
            got.len(),
            want.len()
        );
    }

    /// Queries from every word of the catalog: each prefix of each word, infixes, pairs of
    /// words, upper case, odd whitespace, misses.
    fn queries(entries: &[Entry]) -> Vec<String> {
        let mut words: Vec<String> = entries
            .iter()
            .flat_map(|e| {
                let text = format!(
                    "{} {} {} {}",
                    e.name,
                    e.id,
                    e.keywords.join(" "),
                    e.description
                );
                text.split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        words.sort();
        words.dedup();
        let mut queries: Vec<String> = vec![
            String::new(),
            " ".into(),
            "zzz".into(),
            "GIT hub".into(),
            "data base".into(),
            "  google\tsheets ".into(),
            "-".into(),
            ".".into(),
            "Σ".into(),
            "git git".into(),
        ];
        for w in &words {
            let chars: Vec<char> = w.chars().collect();
            for end in 1..=chars.len().min(8) {
                queries.push(chars[..end].iter().collect());
            }
            if chars.len() > 3 {
                queries.push(chars[1..chars.len() - 1].iter().collect());
            }
            queries.push(w.to_uppercase());
        }
        for pair in words.windows(2).step_by(7) {
            queries.push(format!("{} {}", pair[0], pair[1]));
            let short: String = pair[1].chars().take(2).collect();
            queries.push(format!("{} {short}", pair[0]));
        }
        queries.sort();
        queries.dedup();
        queries
    }

    fn assert_same_everywhere(catalog: &Catalog, queries: &[String]) {
        let reference = Reference::new(catalog.entries());
        let mut categories: Vec<&str> = catalog.categories().into_keys().collect();
        categories.push("no-such-category");
        for q in queries {
            assert_same(catalog, &reference, q, None);
        }
        for c in categories {
            for q in queries.iter().step_by(11) {
                assert_same(catalog, &reference, q, Some(c));
            }
        }
    }

    #[test]
    fn the_index_finds_what_the_plain_search_finds_in_the_real_catalog() {
        let catalog = Catalog::load(None).unwrap();
        let queries = queries(catalog.entries());
        assert!(queries.len() > 1000, "{} queries", queries.len());
        assert_same_everywhere(&catalog, &queries);
    }

    #[test]
    fn the_index_finds_what_the_plain_search_finds_in_a_generated_catalog() {
        // Like benches/catalog.rs, at 1,000 entries, with ties in popularity and name, upper
        // case, non-ASCII and entries without popularity.
        const WORDS: &[&str] = &[
            "git",
            "GitHub",
            "gitlab",
            "slack",
            "data",
            "database",
            "graph",
            "Google",
            "sheets",
            "postgres",
            "Straße",
            "ΣΊΣΥΦΟΣ",
            "İstanbul",
            "café",
            "naïve",
            "logs",
            "deploy",
        ];
        let base = embedded_entries().unwrap();
        let entries: Vec<Entry> = (0..1000)
            .map(|i| {
                let mut e = base[i % base.len()].clone();
                let a = WORDS[i % WORDS.len()];
                let b = WORDS[(i / WORDS.len() + 7 * i) % WORDS.len()];
                e.id = match i % 13 {
                    0 => format!("{}-{a}", e.id.to_uppercase()),
                    _ => format!("{}-{}", e.id, i % 300),
                };
                e.name = match i % 7 {
                    0 => format!("{a} {b}"),
                    1 => format!("{} {a}", e.name),
                    2 => format!(" {a}\u{a0}{b}"),
                    3 => format!("{a}{a} {a}"),
                    _ => format!("{} {a} {}", e.name, i % 40),
                };
                e.keywords = match i % 4 {
                    0 => vec![],
                    1 => vec![format!("{a} {b}"), "Data\tBase".into()],
                    _ => vec![a.to_owned(), b.to_owned()],
                };
                e.description = match i % 9 {
                    0 => format!("{a}\u{2003}{b}"),
                    _ => format!("{} Works with {b} and {a}.", e.description),
                };
                if i % 11 == 0 {
                    e.categories.push(e.categories[0].clone());
                }
                e.popularity = (i % 3 != 0).then_some((i % 50) as u32);
                e
            })
            .collect();
        let catalog = Catalog::from_entries(entries);
        let mut queries = queries(&catalog.entries()[..40]);
        queries.extend(
            [
                "σ",
                "ς",
                "σύφος",
                "i̇st",
                "STRASSE",
                "straße",
                "é",
                "ï",
                "git\u{a0}data",
                "ogleg",
                "hubgit",
                "data base",
                "b",
                "0",
                "9",
                "-1",
            ]
            .iter()
            .map(|q| q.to_string()),
        );
        assert_same_everywhere(&catalog, &queries);
    }

    #[test]
    fn words_are_split_as_split_whitespace_splits() {
        let texts = [
            String::new(),
            " ".into(),
            "a".into(),
            "  two  words ".into(),
            (0u8..128).map(char::from).collect::<String>(),
            "tab\tline\nfeed\x0bvt\x0cff\rcr\x1cfs".into(),
            "non-ascii\u{a0}nbsp\u{2003}em\u{3000}ideographic\u{85}nel café".into(),
        ];
        for text in &texts {
            let mut words = Vec::new();
            for_each_word(text, |offset, word| {
                assert_eq!(&text[offset..offset + word.len()], word);
                words.push(word);
            });
            assert_eq!(
                words,
                text.split_whitespace().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    /// The index relies on this: a term (no whitespace) lower-cased has no whitespace, so a
    /// match in a field lies within one of its words.
    #[test]
    fn lower_casing_never_makes_whitespace() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            if !c.is_whitespace() {
                assert!(!c.to_lowercase().any(char::is_whitespace), "{c:?}");
            }
        }
    }
}
