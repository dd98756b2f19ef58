//! Section `catalog`: the divan benchmark of catalog load and search (benches/catalog.rs), run
//! through cargo, its table parsed into rows (fastest, median, slowest).

use std::time::Duration;

use super::cargo_bench;
use crate::options::Options;
use crate::paths::Paths;
use crate::row::Row;

pub fn measure(paths: &Paths, _options: &Options, rows: &mut Vec<Row>) -> Result<(), String> {
    eprintln!("[bench] catalog: cargo bench --bench catalog");
    let out = cargo_bench(paths, "catalog")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "cargo bench --bench catalog failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let results = parse_divan(&text);
    if results.is_empty() {
        return Err(format!("no results in the divan output:\n{text}"));
    }
    for r in results {
        // The report reads a catalog row's three samples as fastest, median, slowest.
        rows.push(Row::times(
            "catalog",
            r.path,
            "Catalog (divan)",
            vec![r.fastest, r.median, r.slowest],
            format!("{} samples", r.samples),
        ));
    }
    Ok(())
}

/// One benchmark of divan's table.
struct DivanResult {
    /// Its name, after the names of the groups it is in (`group / name`).
    path: String,
    fastest: Duration,
    slowest: Duration,
    median: Duration,
    samples: u64,
}

/// The benchmarks of divan's table. Group rows without numbers give their name as a prefix to
/// the rows below them.
fn parse_divan(text: &str) -> Vec<DivanResult> {
    let mut out = vec![];
    let mut groups: Vec<(usize, String)> = vec![];
    for line in text.lines() {
        // The tree drawing before a name (`│  ├─ `) gives the depth; the columns follow it.
        let is_tree = |c: char| matches!(c, ' ' | '├' | '╰' | '─' | '│');
        let Some((body_start, _)) = line.char_indices().find(|(_, c)| !is_tree(*c)) else {
            continue;
        };
        let depth = line[..body_start].chars().count();
        if line.contains("fastest") {
            groups.clear();
            continue;
        }
        let cols: Vec<&str> = line[body_start..].split('│').collect();
        let words: Vec<&str> = cols[0].split_whitespace().collect();
        // A row with numbers: the name (empty for an empty-string argument), then `fastest`.
        let numeric = cols.len() >= 6 && words.len() >= 2;
        let name_words = if numeric {
            &words[..words.len() - 2]
        } else {
            &words[..]
        };
        let name = match name_words.join(" ") {
            name if name.is_empty() && numeric => "(empty)".to_owned(),
            name => name,
        };
        if name.is_empty() {
            continue;
        }
        while groups.last().is_some_and(|(d, _)| *d >= depth) {
            groups.pop();
        }
        if !numeric {
            groups.push((depth, name));
            continue;
        }
        let column = |s: &str| parse_duration(&s.split_whitespace().collect::<Vec<_>>());
        let (Some(fastest), Some(slowest), Some(median)) = (
            parse_duration(&words[words.len() - 2..]),
            column(cols[1]),
            column(cols[2]),
        ) else {
            continue;
        };
        let path = groups
            .iter()
            .map(|(_, n)| n.as_str())
            .chain(std::iter::once(name.as_str()))
            .collect::<Vec<_>>()
            .join(" / ");
        out.push(DivanResult {
            path,
            fastest,
            slowest,
            median,
            samples: cols[4].trim().parse().unwrap_or(0),
        });
    }
    out
}

/// A divan duration, `[value, unit]` (`3.79 ms`).
fn parse_duration(words: &[&str]) -> Option<Duration> {
    let [value, unit] = words else {
        return None;
    };
    let value: f64 = value.parse().ok()?;
    let ns = match *unit {
        "ns" => value,
        "µs" | "us" => value * 1e3,
        "ms" => value * 1e6,
        "s" => value * 1e9,
        _ => return None,
    };
    Some(Duration::from_nanos(ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divan_tables_are_parsed_with_group_paths() {
        let text = "\
Timer precision: 20 ns
catalog              fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ index_10k         3.365 ms      │ 5.514 ms      │ 3.79 ms       │ 3.828 ms      │ 100     │ 100
├─ load_embedded     247.1 µs      │ 7.977 ms      │ 251 µs        │ 332.6 µs      │ 100     │ 100
╰─ search_10k                      │               │               │               │         │
   ├─ data           787.7 µs      │ 1.002 ms      │ 825.2 µs      │ 832.6 µs      │ 100     │ 100
   ╰─ google sheets  667.9 µs      │ 1.239 ms      │ 676.2 µs      │ 689.6 µs      │ 100     │ 100
";
        let results = parse_divan(text);
        let paths: Vec<&str> = results.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "index_10k",
                "load_embedded",
                "search_10k / data",
                "search_10k / google sheets"
            ]
        );
        assert_eq!(results[1].fastest, Duration::from_nanos(247_100));
        assert_eq!(results[1].median, Duration::from_nanos(251_000));
        assert_eq!(results[3].slowest, Duration::from_nanos(1_239_000));
        assert_eq!(results[3].samples, 100);
    }
}
