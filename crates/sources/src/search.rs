//! Ranked word search over many documents: the marketplace's search (curated entries and
//! registry servers together) and the catalog's.
//!
//! A document has name-like fields (its name, title, id), tags (keywords, package
//! identifiers, the namespace's owner) and a description. Text is lower-cased and cut into
//! words at every character that is not a letter or a digit (`mcp-server-time` is `mcp`,
//! `server`, `time`); a query is cut the same way, and **every** term must match. A term scores
//! by where it is found and how: in a name, as a whole word 12, as a word's start 10, inside a
//! word 6; in a tag 5, 4, 3; in the description 2, 2, 1 (the best place counts). A query equal
//! to a whole name or title (or a registry server's full name) ranks above everything else. An
//! entry's score is the sum over the terms; ties keep the order the documents were given in
//! (the caller puts curated entries first, then by popularity, then by name).
//!
//! The index is built once, when its owner first needs it, and holds each distinct word once,
//! all in one text, with the documents that have it and in which field. A term is looked for
//! once in that text; a one-letter term (the first keystroke) is answered from a byte per
//! document saying in which fields that letter occurs, and starts a word.

/// One document's text, by field.
pub struct Document<'a> {
    pub names: &'a [&'a str],
    pub tags: &'a [&'a str],
    pub description: &'a str,
    /// Other texts that, typed whole, find this document first (a registry name).
    pub exact: &'a [&'a str],
}

const NAME: u32 = 2;
const TAG: u32 = 1;
const DESCRIPTION: u32 = 0;

/// Score by field (description, tag, name) and match (whole word, word start, inside a word).
const SCORES: [[u16; 3]; 3] = [[2, 2, 1], [5, 4, 3], [12, 10, 6]];
/// Added when the whole query is a document's name.
const WHOLE_NAME: u16 = 1000;
/// The most a document's terms add up to, below [`WHOLE_NAME`]'s room.
const MOST: u16 = u16::MAX - WHOLE_NAME;

/// The search index of a list of documents.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// The number of documents.
    docs: usize,
    /// Per letter or digit (36 rows, in [`letter_bit`]'s order), per document: bit `field` when
    /// a word of that field contains the letter, bit `3 + field` when one starts with it, and
    /// bits [`WHOLE_LETTER`] (a name) and `WHOLE_LETTER + 1` (a tag) when it is a word of its
    /// own. A one-letter query reads its letter's row alone.
    letters: Vec<u8>,
    /// Every distinct word, each followed by a newline.
    words: String,
    /// Where each word starts in `words`, and the end of the last one.
    word_starts: Vec<u32>,
    /// Word `w` is in the documents `postings[posting_starts[w]..posting_starts[w + 1]]`, each
    /// `doc << 2 | field`, documents ascending, each once with its best field.
    posting_starts: Vec<u32>,
    postings: Vec<u32>,
    /// Hashes of whole names (normalised) with their documents, sorted: a query equal to a
    /// name is found by its hash (a 64-bit hash: no two names of a marketplace collide).
    whole: Vec<(u64, u32)>,
}

/// The search terms of a query: its lower-cased words.
pub fn terms(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = lowercase(query);
    for_each_word(&lower, |_, w| out.push(w.to_owned()));
    out
}

fn normalised(text: &str) -> String {
    terms(text).join(" ")
}

fn lowercase(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.to_lowercase()
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Calls `f(offset, word)` for each word of `text` (runs of letters and digits).
fn for_each_word<'t>(text: &'t str, mut f: impl FnMut(usize, &'t str)) {
    if text.is_ascii() {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if !bytes[at].is_ascii_alphanumeric() {
                at += 1;
                continue;
            }
            let start = at;
            while at < bytes.len() && bytes[at].is_ascii_alphanumeric() {
                at += 1;
            }
            f(start, &text[start..at]);
        }
    } else {
        let mut start = None;
        for (i, c) in text.char_indices() {
            match (is_word_char(c), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    f(s, &text[s..i]);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            f(s, &text[s..]);
        }
    }
}

/// The lower-case ASCII letters and the digits.
const LETTERS: usize = 36;

/// A bit for each lower-case ASCII letter and digit.
fn letter_bit(b: u8) -> u64 {
    match b {
        b'a'..=b'z' => 1 << (b - b'a'),
        b'0'..=b'9' => 1 << (26 + b - b'0'),
        _ => 0,
    }
}

impl Index {
    /// The index of `docs`; ties in a search keep this order.
    pub fn build<'a>(docs: impl IntoIterator<Item = Document<'a>>) -> Index {
        let mut table = WordTable::default();
        let mut occurrences: Vec<(u32, u32)> = Vec::new();
        let mut masks = Vec::new();
        let mut whole: Vec<(u64, u32)> = Vec::new();
        let mut text = String::new();
        for (doc, d) in docs.into_iter().enumerate() {
            let doc = doc as u32;
            let mut mask = [0u64; 8];
            let fields = d
                .names
                .iter()
                .map(|t| (*t, NAME))
                .chain(d.tags.iter().map(|t| (*t, TAG)))
                .chain(std::iter::once((d.description, DESCRIPTION)));
            for (field_text, field) in fields {
                text.clear();
                text.push_str(&lowercase(field_text));
                for_each_word(&text, |_, word| {
                    let w = table.insert(word);
                    let info = &mut table.info[w as usize];
                    mask[field as usize] |= info.mask;
                    mask[3 + field as usize] |= letter_bit(word.as_bytes()[0]);
                    if word.len() == 1 && field != DESCRIPTION {
                        mask[WHOLE_LETTER + (NAME - field) as usize] |= info.mask;
                    }
                    let posting = doc << 2 | field;
                    if info.last_doc == doc {
                        let slot = &mut occurrences[info.last_occurrence as usize].1;
                        *slot = (*slot).max(posting);
                    } else {
                        info.last_doc = doc;
                        info.last_occurrence = occurrences.len() as u32;
                        occurrences.push((w, posting));
                    }
                });
            }
            for name in d.names.iter().chain(d.exact) {
                let key = normalised(name);
                if !key.is_empty() {
                    whole.push((word_hash(key.as_bytes()), doc));
                }
            }
            masks.push(mask);
        }
        let docs = masks.len();
        let mut letters = vec![0u8; LETTERS * docs];
        for (doc, mask) in masks.into_iter().enumerate() {
            for (i, mut bits) in mask.into_iter().enumerate() {
                while bits != 0 {
                    letters[bits.trailing_zeros() as usize * docs + doc] |= 1 << i;
                    bits &= bits - 1;
                }
            }
        }
        whole.sort_unstable();
        whole.dedup();
        whole.shrink_to_fit();
        // Postings grouped by word (a counting sort: documents stay ascending).
        let mut posting_starts = vec![0u32; table.info.len() + 1];
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
        drop(table.slots);
        let mut word_starts: Vec<u32> = table.info.iter().map(|w| w.start).collect();
        word_starts.push(table.text.len() as u32);
        let mut words = table.text;
        words.shrink_to_fit();
        Index {
            docs,
            letters,
            words,
            word_starts,
            posting_starts,
            postings,
            whole,
        }
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.docs
    }

    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// The documents matching every term of `query` for which `keep` holds, best first, ties
    /// in build order. An empty query matches everything.
    pub fn search(&self, query: &str, keep: impl Fn(u32) -> bool) -> Vec<u32> {
        let terms = terms(query);
        if terms.is_empty() {
            return (0..self.len() as u32).filter(|&d| keep(d)).collect();
        }
        // Each document's total so far; 0 once a term does not match it.
        let mut totals = vec![0u16; self.len()];
        self.term_scores(&terms[0], &mut totals);
        if terms.len() > 1 {
            let mut scores = vec![0u16; self.len()];
            for term in &terms[1..] {
                self.term_scores(term, &mut scores);
                for (total, &score) in totals.iter_mut().zip(&scores) {
                    let sum = total.saturating_add(score).min(MOST);
                    *total = if *total == 0 || score == 0 { 0 } else { sum };
                }
            }
        }
        let hash = word_hash(terms.join(" ").as_bytes());
        let from = self.whole.partition_point(|&(h, _)| h < hash);
        for &(h, d) in &self.whole[from..] {
            if h != hash {
                break;
            }
            if totals[d as usize] != 0 {
                totals[d as usize] += WHOLE_NAME;
            }
        }
        for (d, total) in totals.iter_mut().enumerate() {
            if *total != 0 && !keep(d as u32) {
                *total = 0;
            }
        }
        let (mut top, mut hits) = (0, 0);
        // Counted in blocks, in 16 bits, so that the count vectorises.
        for block in totals.chunks(u16::MAX as usize) {
            let mut found = 0u16;
            for &total in block {
                top = top.max(total);
                found += u16::from(total != 0);
            }
            hits += usize::from(found);
        }
        if hits < totals.len() / 8 {
            rank_few(&totals, top, hits)
        } else {
            // Padded with totals of 0 (no hits) to whole lanes.
            totals.resize(totals.len().next_multiple_of(LANES), 0);
            rank_many(&totals, top, hits)
        }
    }

    /// Each document's score for one lower-cased term, 0 when it does not match.
    fn term_scores(&self, term: &str, scores: &mut [u16]) {
        if let &[b @ (b'a'..=b'z' | b'0'..=b'9')] = term.as_bytes() {
            let row = letter_bit(b).trailing_zeros() as usize;
            let found = &self.letters[row * self.docs..][..self.docs];
            for (score, &found) in scores.iter_mut().zip(found) {
                *score = LETTER_SCORES[found as usize];
            }
            return;
        }
        scores.fill(0);
        let mut word = 0;
        let mut seen = usize::MAX;
        for at in memchr::memmem::find_iter(self.words.as_bytes(), term.as_bytes()) {
            let at = at as u32;
            word += self.word_starts[word..].partition_point(|&s| s <= at) - 1;
            if word == seen {
                continue;
            }
            seen = word;
            // The first match in a word is its leftmost: at its start if it starts with it.
            let start = self.word_starts[word];
            let len = self.word_starts[word + 1] - start - 1;
            let kind = if start != at {
                2
            } else if len as usize == term.len() {
                0
            } else {
                1
            };
            let postings =
                self.posting_starts[word] as usize..self.posting_starts[word + 1] as usize;
            for &posting in &self.postings[postings] {
                let score = SCORES[(posting & 3) as usize][kind];
                let slot = &mut scores[(posting >> 2) as usize];
                *slot = (*slot).max(score);
            }
        }
    }
}

/// The bit of [`Index::letters`] for a one-letter word in a name; the next one is for a tag.
const WHOLE_LETTER: usize = 6;

/// The score of a one-letter term by where a document has the letter (a byte of
/// [`Index::letters`]): the best place counts.
const LETTER_SCORES: [u16; 256] = {
    // The bits from the best place to the worst, with the score of each.
    const ORDER: [(usize, u16); 8] = [
        (WHOLE_LETTER, SCORES[NAME as usize][0]),
        (3 + NAME as usize, SCORES[NAME as usize][1]),
        (NAME as usize, SCORES[NAME as usize][2]),
        (WHOLE_LETTER + 1, SCORES[TAG as usize][0]),
        (3 + TAG as usize, SCORES[TAG as usize][1]),
        (TAG as usize, SCORES[TAG as usize][2]),
        (3 + DESCRIPTION as usize, SCORES[DESCRIPTION as usize][1]),
        (DESCRIPTION as usize, SCORES[DESCRIPTION as usize][2]),
    ];
    let mut table = [0u16; 256];
    let mut found = 1;
    while found < 256 {
        let mut i = 0;
        while found & (1 << ORDER[i].0) == 0 {
            i += 1;
        }
        table[found] = ORDER[i].1;
        found += 1;
    }
    table
};

/// The documents with a nonzero total, highest first, ties ascending, when they are few
/// (`hits` of them): a counting sort over the hits alone.
fn rank_few(totals: &[u16], top: u16, hits: usize) -> Vec<u32> {
    let mut found = Vec::with_capacity(hits);
    // Most of the documents are no hit: skip them a block at a time.
    const BLOCK: usize = 32;
    for (b, block) in totals.chunks(BLOCK).enumerate() {
        if block.iter().fold(0, |any, &t| any | t) == 0 {
            continue;
        }
        for (i, &total) in block.iter().enumerate() {
            if total != 0 {
                found.push((b * BLOCK + i) as u32);
            }
        }
    }
    let mut next = vec![0u32; top as usize + 1];
    for &d in &found {
        next[totals[d as usize] as usize] += 1;
    }
    let mut at = 0;
    for slot in next.iter_mut().rev() {
        let count = *slot;
        *slot = at;
        at += count;
    }
    let mut ranked = vec![0u32; hits];
    for d in found {
        let slot = &mut next[totals[d as usize] as usize];
        ranked[*slot as usize] = d;
        *slot += 1;
    }
    ranked
}

/// Lanes of [`rank_many`]: the documents in this many runs, sorted side by side.
const LANES: usize = 4;

/// The same as [`rank_few`] for many hits (a one-letter query matches most documents): a
/// counting sort without branches over every document, in [`LANES`] runs side by side so that
/// no count waits on the one before (`totals` is as long as whole runs). A document that is not
/// a hit goes to one spare slot past the hits.
fn rank_many(totals: &[u16], top: u16, hits: usize) -> Vec<u32> {
    assert_eq!(totals.len() % LANES, 0, "totals padded to whole lanes");
    let run = totals.len() / LANES;
    let runs: [&[u16]; LANES] = std::array::from_fn(|lane| &totals[lane * run..][..run]);
    let mut next = vec![[0u32; LANES]; top as usize + 1];
    for i in 0..run {
        for (lane, run_totals) in runs.iter().enumerate() {
            next[run_totals[i] as usize][lane] += 1;
        }
    }
    // Highest total first; within a total, lane by lane (the runs are in document order).
    let mut at = 0;
    for bucket in next[1..].iter_mut().rev() {
        for slot in bucket.iter_mut() {
            let count = *slot;
            *slot = at;
            at += count;
        }
    }
    next[0] = [hits as u32; LANES];
    let mut ranked = vec![0u32; hits + 1];
    for i in 0..run {
        for (lane, run_totals) in runs.iter().enumerate() {
            let total = run_totals[i];
            let slot = &mut next[total as usize][lane];
            ranked[*slot as usize] = (lane * run + i) as u32;
            *slot += u32::from(total != 0);
        }
    }
    ranked.truncate(hits);
    ranked
}

/// The distinct words, numbered in the order first seen: an open-addressing hash table over
/// one text, so a word seen again costs no allocation.
#[derive(Default)]
struct WordTable {
    /// Each word followed by a newline.
    text: String,
    info: Vec<WordInfo>,
    /// Per slot the word number + 1 (0 for a free slot) and the low half of its hash; a power
    /// of two long, at most half full.
    slots: Vec<(u32, u32)>,
}

struct WordInfo {
    start: u32,
    len: u32,
    /// The word's letter bits.
    mask: u64,
    /// The last document the word was seen in, and its occurrence there.
    last_doc: u32,
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
            start: u32::try_from(self.text.len()).expect("an index under 4 GiB"),
            len: word.len() as u32,
            mask: word.bytes().fold(0, |m, b| m | letter_bit(b)),
            last_doc: u32::MAX,
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

/// A multiplicative hash of a word (the text is not adversarial input).
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
pub(crate) mod tests {
    use super::*;

    /// A document as owned text, for tests.
    pub struct Doc {
        pub names: Vec<String>,
        pub tags: Vec<String>,
        pub description: String,
    }

    /// The same search, the slow way: every term against every field of every document.
    pub fn reference(docs: &[Doc], query: &str) -> Vec<u32> {
        let terms = terms(query);
        let words = |text: &str| super::terms(text);
        let mut scored: Vec<(u32, u32)> = vec![];
        for (d, doc) in docs.iter().enumerate() {
            if terms.is_empty() {
                scored.push((0, d as u32));
                continue;
            }
            let fields: Vec<(Vec<String>, usize)> = doc
                .names
                .iter()
                .map(|n| (words(n), 2))
                .chain(doc.tags.iter().map(|t| (words(t), 1)))
                .chain(std::iter::once((words(&doc.description), 0)))
                .collect();
            let mut total = 0u32;
            let mut all = true;
            for term in &terms {
                let mut best = 0u16;
                for (ws, field) in &fields {
                    for w in ws {
                        let kind = if w == term {
                            Some(0)
                        } else if w.starts_with(term.as_str()) {
                            Some(1)
                        } else if w.contains(term.as_str()) {
                            Some(2)
                        } else {
                            None
                        };
                        if let Some(kind) = kind {
                            best = best.max(SCORES[*field][kind]);
                        }
                    }
                }
                if best == 0 {
                    all = false;
                }
                total += u32::from(best);
            }
            if !all {
                continue;
            }
            if doc.names.iter().any(|n| normalised(n) == terms.join(" ")) {
                total += u32::from(WHOLE_NAME);
            }
            scored.push((total, d as u32));
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, d)| d).collect()
    }

    pub fn index_of(docs: &[Doc]) -> Index {
        let names: Vec<Vec<&str>> = docs
            .iter()
            .map(|d| d.names.iter().map(String::as_str).collect())
            .collect();
        let tags: Vec<Vec<&str>> = docs
            .iter()
            .map(|d| d.tags.iter().map(String::as_str).collect())
            .collect();
        Index::build(docs.iter().enumerate().map(|(i, d)| Document {
            names: &names[i],
            tags: &tags[i],
            description: &d.description,
            exact: &[],
        }))
    }

    fn doc(names: &[&str], tags: &[&str], description: &str) -> Doc {
        Doc {
            names: names.iter().map(|s| s.to_string()).collect(),
            tags: tags.iter().map(|s| s.to_string()).collect(),
            description: description.into(),
        }
    }

    #[test]
    fn relevance_ranks_before_order() {
        let docs = vec![
            doc(
                &["Notion", "notion"],
                &["docs", "databases"],
                "Pages and databases.",
            ),
            doc(
                &["Airtable", "airtable"],
                &["spreadsheet", "database"],
                "Bases.",
            ),
            doc(&["Postgres Database", "postgres"], &[], "SQL."),
            doc(&["Weather"], &[], "A database of weather."),
        ];
        let index = index_of(&docs);
        // A whole word in the name, then a whole keyword, then a keyword's start, then the
        // description.
        assert_eq!(index.search("database", |_| true), [2, 1, 0, 3]);
        assert_eq!(index.search("notion", |_| true), [0]);
        assert_eq!(index.search("DATA base", |_| true), [2, 0, 1, 3]);
        assert!(index.search("zzz", |_| true).is_empty());
        assert_eq!(index.search("", |d| d != 1), [0, 2, 3]);
        assert_eq!(index.search("d", |_| true), reference(&docs, "d"));
    }

    /// Many documents, so that both rankings run (a query that hits few of them, and one
    /// that hits most), with a count that does not divide into the lanes.
    #[test]
    fn many_documents_rank_as_the_reference_does() {
        const WORDS: [&str; 14] = [
            "server", "git", "data", "base", "slack", "post", "time", "a", "api", "x", "xray",
            "mcp", "search", "é",
        ];
        let mut seed = 7u32;
        let mut pick = |n: usize| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as usize % n
        };
        let mut phrase = |len: usize| -> String {
            (0..len)
                .map(|_| WORDS[pick(WORDS.len())])
                .collect::<Vec<_>>()
                .join(["-", " ", "_"][pick(3)])
        };
        let docs: Vec<Doc> = (0..1_003)
            .map(|i| Doc {
                names: vec![phrase(1 + i % 3), format!("id{i}")],
                tags: (0..i % 3).map(|_| phrase(1)).collect(),
                description: phrase(i % 7),
            })
            .collect();
        let index = index_of(&docs);
        let queries = [
            "a",
            "s",
            "g",
            "x",
            "1",
            "e",
            "er",
            "se",
            "server",
            "git data",
            "a a",
            "ser ver",
            "data base",
            "id1",
            "id10",
            "time",
            "mcp search",
            "zzz",
            "é",
            "server git",
        ];
        for q in queries {
            assert_eq!(
                index.search(q, |_| true),
                reference(&docs, q),
                "query {q:?}"
            );
            assert_eq!(
                index.search(q, |d| d % 3 != 0),
                reference(&docs, q)
                    .into_iter()
                    .filter(|d| d % 3 != 0)
                    .collect::<Vec<_>>(),
                "query {q:?}, a third kept out"
            );
        }
    }

    #[test]
    fn words_split_at_punctuation_and_every_term_must_match() {
        let docs = vec![
            doc(&["mcp-server-time"], &["io.github.owner"], "Time zones"),
            doc(&["time-tracker"], &[], "Tracks"),
            doc(&["server"], &[], "A timeless server"),
        ];
        let index = index_of(&docs);
        assert_eq!(index.search("time", |_| true), [0, 1, 2]);
        assert_eq!(index.search("server time", |_| true), [0, 2]);
        assert_eq!(index.search("mcp-server-time", |_| true), [0]);
        assert_eq!(index.search("owner", |_| true), [0]);
    }
}
