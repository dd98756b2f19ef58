//! Section `size`: the size of the release plugboard binary.

use crate::options::Options;
use crate::paths::Paths;
use crate::row::Row;

pub fn measure(paths: &Paths, _options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    let bytes = std::fs::metadata(&paths.plugboard)
        .map(|m| m.len())
        .unwrap_or(0);
    rows.push(Row::sizes(
        "size",
        "plugboard binary",
        "release build",
        vec![bytes as f64 / 1024.0 / 1024.0],
        format!("{bytes} bytes, target/release/plugboard"),
    ));
    Ok(())
}
