//! The real registry snapshot the registry fixture serves (fixtures/registry-fixture/data).

use plugboard::registry::RegistryRow;

/// Every row of the snapshot, as JSON values.
pub fn snapshot_values() -> Vec<serde_json::Value> {
    use std::io::Read;
    let path = super::repo_root()
        .join("fixtures/registry-fixture/data/registry-snapshot-2025-12-18.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("the snapshot"))
        .read_to_string(&mut text)
        .expect("gunzip the snapshot");
    serde_json::from_str(text.trim_start_matches('\u{feff}')).expect("the snapshot is JSON")
}

/// The latest version of each server.
pub fn latest_rows() -> Vec<RegistryRow> {
    snapshot_values()
        .iter()
        .map(|v| RegistryRow::from_value(v).expect("snapshot rows read"))
        .filter(|r| r.meta.official.is_latest)
        .collect()
}
