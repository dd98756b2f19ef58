//! Reading and writing other clients' JSON files: JSONC tolerated on read (`//` and `/* */`
//! comments, trailing commas, as VS Code allows), key order kept, writes atomic (temp file,
//! fsync, rename) with the original's permissions and a timestamped backup of the old bytes.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ClientError, timestamp};

/// `text` without comments and trailing commas (strings are left alone).
pub fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    let mut start = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[start..i]);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                start = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[start..i]);
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[start.min(text.len())..]);
    remove_trailing_commas(&out)
}

fn remove_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if j < bytes.len() && (bytes[j] == b'}' || bytes[j] == b']') {
                out.push_str(&text[last..i]);
                last = i + 1;
            }
        }
        i += 1;
    }
    out.push_str(&text[last.min(text.len())..]);
    out
}

/// Parse a client's file as a JSON object (JSONC tolerated). An empty file is an empty object.
pub fn parse_object(path: &Path, text: &str) -> Result<Map<String, Value>, ClientError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => serde_json::from_str(&strip(text)).map_err(|e| {
            ClientError::file(
                path,
                format!("is not valid JSON ({e}); it was left untouched"),
            )
        })?,
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ClientError::file(
            path,
            "the top level is not a JSON object; it was left untouched",
        )),
    }
}

/// Read `path` as a JSON object.
pub fn read_object(path: &Path) -> Result<Map<String, Value>, ClientError> {
    let text = fs::read_to_string(path)
        .map_err(|e| ClientError::file(path, format!("cannot be read ({e})")))?;
    parse_object(path, &text)
}

/// Read `path` as a JSON object; a missing file is an empty object.
pub fn read_object_or_empty(path: &Path) -> Result<Map<String, Value>, ClientError> {
    if !path.exists() {
        return Ok(Map::new());
    }
    read_object(path)
}

/// Whether the file has comments or trailing commas that a rewrite will not keep.
pub fn has_comments(path: &Path) -> bool {
    fs::read_to_string(path)
        .map(|text| serde_json::from_str::<Value>(&text).is_err() && !text.trim().is_empty())
        .unwrap_or(false)
}

/// What rewriting a file of `text` would lose, if anything: its comments or trailing commas
/// (a rewrite writes plain JSON), or a number JSON readers keep only approximately (an integer
/// beyond 64 bits, more significant digits than a double holds).
pub fn rewrite_loss(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    if serde_json::from_str::<Value>(text).is_err() {
        return Some("has comments or trailing commas, which a rewrite does not keep".into());
    }
    inexact_number(text)
        .map(|n| format!("holds the number {n}, which a rewrite cannot keep exactly"))
}

/// The first number in the JSON `text` that does not survive a round trip through a 64-bit
/// integer or a double.
fn inexact_number(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let number = &text[start..i];
                let integer = !number.contains(['.', 'e', 'E']);
                let exact = if integer {
                    number.parse::<i64>().is_ok() || number.parse::<u64>().is_ok()
                } else {
                    let mantissa = number.split(['e', 'E']).next().unwrap_or_default();
                    let digits = mantissa
                        .chars()
                        .filter(char::is_ascii_digit)
                        .collect::<String>();
                    digits.trim_start_matches('0').trim_end_matches('0').len() <= 15
                };
                if !exact {
                    return Some(number);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The document as written: pretty JSON (two spaces), key order kept, final newline.
pub fn render(doc: &Map<String, Value>) -> String {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(doc.clone())).expect("JSON serializes");
    text.push('\n');
    text
}

/// How many backups of one file are kept: the oldest beyond these go with each new one.
pub const BACKUPS_KEPT: usize = 3;

/// Replace `path` with `doc`: first copy the current bytes to `<path>.plugboard-backup-<time>`
/// (returned), then write a temp file with the original's permissions, fsync, rename.
///
/// Unless `force`, a file whose rewrite would lose something ([`rewrite_loss`]) is left alone
/// with [`ClientError::WouldLose`].
pub fn write_with_backup(
    path: &Path,
    doc: &Map<String, Value>,
    force: bool,
) -> Result<Option<PathBuf>, ClientError> {
    write_with_backup_without(path, doc, &[], force)
}

/// [`write_with_backup`] for a rewrite that takes `secrets` out of the file (an import moved
/// them into the secret store): the backup holds the file as it was, less those values (`***`
/// wherever they stand in a string of the file), so no copy keeps them.
pub fn write_with_backup_without(
    path: &Path,
    doc: &Map<String, Value>,
    secrets: &[&str],
    force: bool,
) -> Result<Option<PathBuf>, ClientError> {
    if !force
        && let Ok(current) = fs::read_to_string(path)
        && let Some(what) = rewrite_loss(&current)
    {
        return Err(ClientError::WouldLose {
            path: path.to_path_buf(),
            what,
        });
    }
    let text = render(doc);
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|e| ClientError::file(dir, format!("cannot be created ({e})")))?;
    let existing = fs::metadata(path).ok();
    let backup = match &existing {
        Some(_) => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stamp = timestamp();
            let mut candidate = dir.join(format!("{name}.plugboard-backup-{stamp}"));
            let mut n = 2;
            while candidate.exists() {
                candidate = dir.join(format!("{name}.plugboard-backup-{stamp}-{n}"));
                n += 1;
            }
            let cannot = |e: std::io::Error| {
                ClientError::file(
                    path,
                    format!("cannot be backed up ({e}); nothing was written"),
                )
            };
            let old = fs::read(path).map_err(cannot)?;
            let mut kept = String::from_utf8_lossy(&old).into_owned();
            for secret in secrets.iter().filter(|s| !s.is_empty()) {
                // As the value is written inside a JSON string.
                let quoted = serde_json::to_string(secret).expect("a string serializes");
                kept = kept.replace(&quoted[1..quoted.len() - 1], "***");
            }
            // The old version may hold other plaintext secrets: only the user may read it.
            plugboard_base::fs::write_private(&candidate, kept.as_bytes()).map_err(cannot)?;
            prune_backups(dir, &name);
            Some(candidate)
        }
        None => None,
    };
    if let Err(e) = plugboard_base::fs::write_atomic(path, text.as_bytes()) {
        return Err(ClientError::file(path, format!("cannot be written ({e})")));
    }
    Ok(backup)
}

/// Delete the oldest backups of file `name` in `dir` beyond [`BACKUPS_KEPT`] (their names sort
/// by time).
fn prune_backups(dir: &Path, name: &str) {
    let prefix = format!("{name}.plugboard-backup-");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut backups: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let file_name = e.file_name().to_string_lossy().into_owned();
            file_name.starts_with(&prefix).then_some(())?;
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .collect();
    backups.sort();
    let excess = backups.len().saturating_sub(BACKUPS_KEPT);
    for (_, old) in backups.into_iter().take(excess) {
        let _ = fs::remove_file(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_tolerated() {
        let text = r#"{
            // a comment with "quotes"
            "servers": { /* block */ "a": {"url": "http://x//y", "s": "/* not a comment */",}, },
            "inputs": [1, 2,],
        }"#;
        let map = parse_object(Path::new("x"), text).unwrap();
        assert_eq!(map["servers"]["a"]["url"], "http://x//y");
        assert_eq!(map["servers"]["a"]["s"], "/* not a comment */");
        assert_eq!(map["inputs"], serde_json::json!([1, 2]));
    }
}
