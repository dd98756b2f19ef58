//! Readable differences for the pin review: a line diff of texts (tool descriptions, server
//! instructions) and a path-level diff of JSON values (input schemas, annotations).

use serde_json::Value;

pub use crate::pin_report::{DiffLine, LineOp, PathChange, PathOp};

/// Above this many cells the LCS table is not built; the texts are shown as replaced whole.
const MAX_CELLS: usize = 4_000_000;

/// The line diff from `before` to `after` (longest common subsequence of lines).
pub fn line_diff(before: &str, after: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let line = |op, text: &str| DiffLine {
        op,
        text: text.to_owned(),
    };
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        return a
            .iter()
            .map(|t| line(LineOp::Removed, t))
            .chain(b.iter().map(|t| line(LineOp::Added, t)))
            .collect();
    }
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = vec![];
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(line(LineOp::Context, a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(line(LineOp::Removed, a[i]));
            i += 1;
        } else {
            out.push(line(LineOp::Added, b[j]));
            j += 1;
        }
    }
    out
}

/// The differences from `before` to `after`, key by key (objects) and index by index (arrays).
pub fn json_diff(before: &Value, after: &Value) -> Vec<PathChange> {
    let mut out = vec![];
    walk("$", before, after, &mut out);
    out
}

fn key_path(base: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{base}.{key}")
    } else {
        format!("{base}[{}]", Value::String(key.to_owned()))
    }
}

fn walk(path: &str, before: &Value, after: &Value, out: &mut Vec<PathChange>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let p = key_path(path, key);
                match b.get(key) {
                    Some(vb) => walk(&p, va, vb, out),
                    None => out.push(PathChange {
                        path: p,
                        change: PathOp::Removed,
                        before: Some(va.clone()),
                        after: None,
                    }),
                }
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    out.push(PathChange {
                        path: key_path(path, key),
                        change: PathOp::Added,
                        before: None,
                        after: Some(vb.clone()),
                    });
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let p = format!("{path}[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(va), Some(vb)) => walk(&p, va, vb, out),
                    (Some(va), None) => out.push(PathChange {
                        path: p,
                        change: PathOp::Removed,
                        before: Some(va.clone()),
                        after: None,
                    }),
                    (None, Some(vb)) => out.push(PathChange {
                        path: p,
                        change: PathOp::Added,
                        before: None,
                        after: Some(vb.clone()),
                    }),
                    (None, None) => {}
                }
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(PathChange {
            path: path.to_owned(),
            change: PathOp::Changed,
            before: Some(a.clone()),
            after: Some(b.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn line_diff_keeps_common_lines() {
        let d = line_diff("a\nb\nc", "a\nB\nc\nd");
        let ops: Vec<String> = d
            .iter()
            .map(|l| format!("{}{}", l.op.marker(), l.text))
            .collect();
        assert_eq!(ops, vec![" a", "-b", "+B", " c", "+d"]);
        assert!(
            line_diff("same", "same")
                .iter()
                .all(|l| l.op == LineOp::Context)
        );
    }

    #[test]
    fn json_diff_names_paths() {
        let a = json!({"type":"object","properties":{"m":{"type":"string"}},"required":["m"]});
        let b = json!({"type":"object","properties":{"m":{"type":"number"},"path":{"type":"string"}},"required":["m","path"]});
        let d = json_diff(&a, &b);
        let paths: Vec<(&str, PathOp)> = d.iter().map(|c| (c.path.as_str(), c.change)).collect();
        assert_eq!(
            paths,
            vec![
                ("$.properties.m.type", PathOp::Changed),
                ("$.properties.path", PathOp::Added),
                ("$.required[1]", PathOp::Added),
            ]
        );
        assert_eq!(
            json_diff(&json!({"a b":1}), &json!({}))[0].path,
            "$[\"a b\"]"
        );
    }
}
