//! Turns tiktoken-rs's bundled o200k_base vocabulary into three flat little-endian tables
//! (token bytes in rank order, their offsets, the ranks sorted by bytes) and the split pattern's
//! first five alternatives into a pattern with explicit ranges instead of Unicode classes, all in
//! `OUT_DIR`. Flat integer tables need no relocations and no parsing at run time.

use std::path::PathBuf;

/// The two look-ahead alternatives the regex crate cannot express; `src/lib.rs` matches them
/// by hand.
const WHITESPACE_TAIL: &str = r"|\s+(?!\S)|\s+";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let bpe = tiktoken_rs::o200k_base().expect("tiktoken-rs bundles o200k_base");
    let mut bytes = Vec::new();
    let mut offsets: Vec<u32> = vec![0];
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    // Ordinary ranks are 0..n without gaps; the special tokens come after a gap.
    while let Ok(token) = bpe.decode_bytes(&[tokens.len() as u32]) {
        bytes.extend_from_slice(&token);
        offsets.push(bytes.len() as u32);
        tokens.push(token);
    }
    assert!(
        tokens.len() > 199_000,
        "only {} ranks decoded",
        tokens.len()
    );
    let mut sorted: Vec<u32> = (0..tokens.len() as u32).collect();
    sorted.sort_by(|a, b| tokens[*a as usize].cmp(&tokens[*b as usize]));
    let le = |values: &[u32]| {
        values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    std::fs::write(out.join("o200k_bytes.bin"), &bytes).unwrap();
    std::fs::write(out.join("o200k_offsets.bin"), le(&offsets)).unwrap();
    std::fs::write(out.join("o200k_sorted.bin"), le(&sorted)).unwrap();

    let pattern = tiktoken_rs::O200K_BASE_PAT_STR;
    let head = pattern
        .strip_suffix(WHITESPACE_TAIL)
        .expect("o200k_base's split pattern ends with its two whitespace alternatives");
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(head)
        .expect("the split pattern parses");
    std::fs::write(out.join("o200k_split.txt"), hir.to_string()).unwrap();
}
