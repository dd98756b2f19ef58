//! The real registry snapshot the registry fixture serves, for the benchmarks: its latest rows.

use std::io::Read;

use plugboard::registry::RegistryRow;

/// The latest version of each server in `fixtures/registry-fixture/data`.
pub fn latest_rows() -> Vec<RegistryRow> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/registry-fixture/data/registry-snapshot-2025-12-18.json.gz"
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("the snapshot"))
        .read_to_string(&mut text)
        .expect("gunzip");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(text.trim_start_matches('\u{feff}')).expect("JSON");
    rows.iter()
        .filter_map(|v| RegistryRow::from_value(v).ok())
        .filter(|r| r.meta.official.is_latest)
        .collect()
}
