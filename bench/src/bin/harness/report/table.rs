//! The printed report: one table of every row (median, min, max, CPU time, n, note), a note on
//! noisy rounds, then the ratios, one line per plugboard build and server.

use crate::report::ratios::Ratio;
use crate::rounds::noisy_rounds;
use crate::row::{Row, median};

/// The header of the rows table.
const HEADER: [&str; 9] = [
    "section",
    "subject",
    "client / case",
    "median",
    "min",
    "max",
    "cpu",
    "n",
    "note",
];

/// The ratio columns of the client ratios table (a ratio's name ends with one).
const RATIO_COLUMNS: [&str; 4] = [
    "/ floor",
    "/ floor (CPU time)",
    "/ inspector",
    "/ python-sdk",
];

pub fn print(rows: &[Row], ratios: &[Ratio]) {
    print_rows(rows);
    let noisy = noisy_rounds();
    if noisy > 0 {
        println!("\nnote: {noisy} timed round(s) started while other processes kept the CPU busy");
    }
    if ratios.is_empty() {
        return;
    }
    println!();
    println!("ratios of medians (wall time; \"CPU\": user + system time, the server's included)");
    print_client_ratios(ratios);
    print_other_ratios(ratios);
}

fn print_rows(rows: &[Row]) {
    let mut lines = vec![HEADER.map(str::to_owned)];
    lines.extend(rows.iter().map(row_cells));
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, line) in lines.iter().enumerate() {
        println!("{}", aligned(line, &widths));
        if i == 0 {
            println!("{}", "-".repeat(widths.iter().sum::<usize>() + 16));
        }
    }
}

/// A row's cells under [`HEADER`].
fn row_cells(row: &Row) -> [String; 9] {
    let ms = row.sorted_ms();
    let mib = row.sorted_mib();
    let (median, min, max) = spread(row, &ms, &mib);
    let n = if row.section == "catalog" || ms.len() + mib.len() <= 1 {
        String::new()
    } else {
        (ms.len() + mib.len()).to_string()
    };
    [
        row.section.to_owned(),
        row.subject.clone(),
        row.client.clone(),
        median,
        min,
        max,
        row.cpu_median_ms().map(format_ms).unwrap_or_default(),
        n,
        row.note.clone(),
    ]
}

/// Median, min and max of a row, from its sorted times (`ms`) or sizes (`mib`).
fn spread(row: &Row, ms: &[f64], mib: &[f64]) -> (String, String, String) {
    if let (Some(m), Some(min), Some(max)) = (median(mib), mib.first(), mib.last()) {
        return (
            format!("{m:.1} MiB"),
            format!("{min:.1} MiB"),
            format!("{max:.1} MiB"),
        );
    }
    match (row.section, median(ms)) {
        // divan rows hold fastest, median, slowest
        ("catalog", _) if ms.len() == 3 => (format_ms(ms[1]), format_ms(ms[0]), format_ms(ms[2])),
        (_, Some(m)) => (format_ms(m), format_ms(ms[0]), format_ms(ms[ms.len() - 1])),
        (_, None) => ("—".into(), "—".into(), "—".into()),
    }
}

/// Cells padded to `widths`, separated by two spaces: the number columns (median … n) aligned
/// right, the others left, the last one unpadded.
fn aligned(cells: &[String; 9], widths: &[usize]) -> String {
    let last = cells.len() - 1;
    let mut out = String::new();
    for (c, cell) in cells.iter().enumerate() {
        let pad = " ".repeat(widths[c] - cell.chars().count());
        if (3..last).contains(&c) {
            out.push_str(&pad);
            out.push_str(cell);
        } else {
            out.push_str(cell);
            if c < last {
                out.push_str(&pad);
            }
        }
        if c < last {
            out.push_str("  ");
        }
    }
    out.trim_end().to_owned()
}

/// A time in ms, in the unit that suits it.
fn format_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 0.1 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.2} µs", ms * 1000.0)
    }
}

/// One line per plugboard build and server: its ratios to each other client.
fn print_client_ratios(ratios: &[Ratio]) {
    let mut keys: Vec<(&str, &str, &str)> = vec![];
    for r in ratios {
        if !RATIO_COLUMNS
            .iter()
            .any(|c| r.name.ends_with(&format!(" {c}")))
        {
            continue;
        }
        if let Some((client, _)) = r.name.split_once(" / ") {
            let key = (r.section, r.subject.as_str(), client);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let width = keys.iter().map(|k| k.2.len()).max().unwrap_or(9).max(9);
    println!(
        "  {:<7} {:<18} {:<width$}  {:>8}  {:>8}  {:>11}  {:>11}",
        "section", "subject", "client", "/ floor", "CPU", "/ inspector", "/ python-sdk"
    );
    for (section, subject, client) in keys {
        let cell = |column: &str| {
            ratios
                .iter()
                .find(|r| {
                    r.section == section
                        && r.subject == subject
                        && r.name == format!("{client} {column}")
                })
                .map(|r| format!("{:.2}×", r.value))
                .unwrap_or_default()
        };
        println!(
            "  {:<7} {:<18} {:<width$}  {:>8}  {:>8}  {:>11}  {:>11}",
            section,
            subject,
            client,
            cell(RATIO_COLUMNS[0]),
            cell(RATIO_COLUMNS[1]),
            cell(RATIO_COLUMNS[2]),
            cell(RATIO_COLUMNS[3])
        );
    }
}

/// The ratios that are not to another client, one a line.
fn print_other_ratios(ratios: &[Ratio]) {
    for r in ratios.iter().filter(|r| {
        !r.name.contains(" / floor")
            && !r.name.contains(" / inspector")
            && !r.name.contains(" / python-sdk")
    }) {
        println!(
            "  {:<7} {:<18} {} {:.2}×",
            r.section, r.subject, r.name, r.value
        );
    }
}
