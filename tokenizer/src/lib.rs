//! OpenAI's `o200k_base` byte-pair encoding (GPT-4o, GPT-4.1, o-series, GPT-5), counting tokens
//! exactly as tiktoken's `encode_ordinary` does, with nothing to load at run time.
//!
//! The vocabulary (199,998 ranks) is embedded as three flat little-endian tables that `build.rs`
//! makes from the vocabulary tiktoken-rs bundles: the token bytes in rank order, their offsets,
//! and the ranks sorted by bytes (a lookup is a binary search). Flat integer tables cost a
//! program that links this crate no start-up work: no parsing, no hash table, no relocations.
//!
//! Text is first split as tiktoken splits it. The split pattern's first five alternatives are
//! compiled (once, on first use) from a form whose Unicode classes `build.rs` expanded into
//! explicit ranges, so the regex engine needs none of its Unicode tables, and searched anchored
//! where the previous piece ended (no reverse scan to find where a match starts); the last two
//! (`\s+(?!\S)|\s+`, a look-ahead the regex crate does not have) are matched by hand. Each piece
//! is then merged pair by pair, lowest rank first (leftmost on ties), until no adjacent pair is
//! in the vocabulary; the number of parts left is its token count.

use std::cmp::Ordering;
use std::sync::OnceLock;

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_bytes.bin"));
static OFFSETS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_offsets.bin"));
static SORTED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_sorted.bin"));
static SPLIT: &str = include_str!(concat!(env!("OUT_DIR"), "/o200k_split.txt"));

/// The name of the encoding, for labels.
pub const ENCODING: &str = "o200k_base";

fn u32_at(table: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]])
}

/// The number of ordinary (not special) tokens in the vocabulary.
pub fn vocabulary_size() -> usize {
    SORTED.len() / 4
}

fn token_bytes(rank: u32) -> &'static [u8] {
    let start = u32_at(OFFSETS, rank as usize) as usize;
    let end = u32_at(OFFSETS, rank as usize + 1) as usize;
    &BYTES[start..end]
}

/// The rank of `bytes` if they are one token.
pub fn rank(bytes: &[u8]) -> Option<u32> {
    let (mut low, mut high) = (0, vocabulary_size());
    while low < high {
        let middle = low + (high - low) / 2;
        let candidate = u32_at(SORTED, middle);
        match token_bytes(candidate).cmp(bytes) {
            Ordering::Less => low = middle + 1,
            Ordering::Greater => high = middle,
            Ordering::Equal => return Some(candidate),
        }
    }
    None
}

/// The compiled split pattern (its first five alternatives).
fn splitter() -> &'static Regex {
    static SPLITTER: OnceLock<Regex> = OnceLock::new();
    SPLITTER.get_or_init(|| Regex::new(SPLIT).expect("build.rs wrote a valid pattern"))
}

/// The pieces tiktoken's split pattern cuts `text` into.
pub fn pieces(text: &str) -> Vec<&str> {
    let splitter = splitter();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        // The first of the five alternatives that matches here (leftmost-first, as tiktoken's
        // backtracking engine), found by a forward search anchored at `pos`.
        let input = Input::new(text).range(pos..).anchored(Anchored::Yes);
        if let Some(m) = splitter.search(&input)
            && m.end() > pos
        {
            out.push(&text[pos..m.end()]);
            pos = m.end();
            continue;
        }
        let rest = &text[pos..];
        let first = rest.chars().next().expect("pos is inside the text");
        if !first.is_whitespace() {
            // Nothing matches here (tiktoken skips such text); the five alternatives cover
            // every character that is not white space, so this does not happen in practice.
            pos += first.len_utf8();
            continue;
        }
        // `\s+(?!\S)`: the white space run, less its last character when something that is
        // not white space follows; `\s+`: a run of one character followed by such text.
        let run_len = rest
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map_or(rest.len(), |(i, _)| i);
        let end = if run_len == rest.len() {
            run_len
        } else {
            let last = rest[..run_len]
                .chars()
                .next_back()
                .expect("the run is not empty");
            let shorter = run_len - last.len_utf8();
            if shorter > 0 { shorter } else { run_len }
        };
        out.push(&rest[..end]);
        pos += end;
    }
    out
}

/// How many tokens one piece of the split is.
fn piece_tokens(piece: &[u8]) -> usize {
    if piece.len() <= 1 || rank(piece).is_some() {
        return piece.len().min(1);
    }
    // Part boundaries; pair `i` is the bytes from boundary `i` to boundary `i + 2`.
    let mut bounds: Vec<usize> = (0..=piece.len()).collect();
    let pair_rank = |bounds: &[usize], i: usize| rank(&piece[bounds[i]..bounds[i + 2]]);
    let mut pairs: Vec<Option<u32>> = (0..bounds.len() - 2)
        .map(|i| pair_rank(&bounds, i))
        .collect();
    loop {
        let best = pairs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.map(|r| (r, i)))
            .min();
        let Some((_, i)) = best else {
            break;
        };
        bounds.remove(i + 1);
        pairs.remove(i);
        if i < pairs.len() {
            pairs[i] = pair_rank(&bounds, i);
        }
        if i > 0 {
            pairs[i - 1] = pair_rank(&bounds, i - 1);
        }
    }
    bounds.len() - 1
}

/// The number of `o200k_base` tokens of `text` (special-token text counts as ordinary text).
pub fn count(text: &str) -> usize {
    pieces(text)
        .into_iter()
        .map(|piece| piece_tokens(piece.as_bytes()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> &'static tiktoken_rs::CoreBPE {
        static BPE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
        BPE.get_or_init(|| tiktoken_rs::o200k_base().unwrap())
    }

    fn assert_same(text: &str) {
        assert_eq!(
            count(text),
            reference().encode_ordinary(text).len(),
            "token count of {text:?}"
        );
    }

    #[test]
    fn the_tables_hold_the_whole_vocabulary() {
        assert_eq!(vocabulary_size(), 199_998);
        assert_eq!(rank(b"!"), Some(0));
        assert_eq!(
            rank(b"hello"),
            reference().encode_ordinary("hello").first().copied()
        );
        assert_eq!(rank(b"\xff\xfe\xfd not a token"), None);
    }

    #[test]
    fn counts_match_tiktoken() {
        for text in [
            "",
            "a",
            "hello world",
            "Hello, World! It's 2026 and we'll see what they've done.",
            "  leading spaces and trailing   ",
            "tabs\tand\nnewlines\r\n\r\n  \n\tmixed   white space\u{a0}\u{2003}here",
            "numbers 1234567890 and 3.14159 and 1,000,000",
            "CamelCaseWords and ALLCAPS and mixedCASE words URLs https://example.com/a/b?c=d",
            "UPPER'S lower'S they'RE I'M you'LL we'D it'ſ",
            "ünïcödé, 日本語のテキスト, 한국어, العربية, emoji 🎉👍🏽 and combining e\u{301}",
            "{\"name\":\"get-env\",\"description\":\"Returns all environment variables\",\"input_schema\":{\"type\":\"object\",\"properties\":{}}}",
            "=====\n-----\n/////\\\\\\\\ ...... !!!??",
            "    indented code\n        more\n",
            "\u{1F600}\u{1F600}\u{1F600}",
            "trailing newline\n",
            "x\u{300}\u{301}\u{302} marks",
        ] {
            assert_same(text);
        }
    }

    #[test]
    fn counts_match_tiktoken_on_generated_text() {
        // A deterministic mix of the character kinds the split pattern tells apart.
        let alphabet: Vec<char> = "aZ9 \t\n\r'’.,{}\"_-/é日🎉\u{301}\u{a0}Ǆǅ"
            .chars()
            .collect();
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..400 {
            let mut text = String::new();
            for _ in 0..(state % 40) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            assert_same(&text);
        }
    }
}
