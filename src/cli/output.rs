//! Output helpers: one JSON document on stdout for `--json`, aligned tables for people, and
//! [`printable`], which every line the CLI prints passes through (the `println!` family is
//! shadowed in this module's parent to call it).

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;

use super::CliError;

/// Print `value` as one pretty JSON document on stdout.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::failed(format!("could not encode the output as JSON: {e}")))?;
    std::println!("{}", json_safe(&text));
    Ok(())
}

/// Text from outside (tool names and descriptions, server info, stderr tails, registry rows)
/// made safe for a terminal: a server must not be able to move the cursor, erase the tool diff
/// the user is about to approve, set the window title or write the clipboard (OSC 52). C0
/// controls other than newline and tab are shown in caret notation (`^[`), DEL as `^?`, C1
/// controls and the bidirectional overrides that reorder what is shown as `<U+202E>`. A `\r`
/// before a newline is dropped.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| shown_escaped(c) || c == '\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\u{7f}' => out.push_str("^?"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                out.push('^');
                out.push(char::from(c as u8 + 0x40));
            }
            c if shown_escaped(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Characters [`printable`] never lets through as they are.
fn shown_escaped(c: char) -> bool {
    let code = c as u32;
    (code < 0x20 && c != '\n' && c != '\t' && c != '\r')
        || (0x7f..=0x9f).contains(&code)
        || matches!(code, 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069)
}

/// A JSON document safe for a terminal, with the same content: serde escapes C0 controls
/// already; DEL, C1 controls and bidirectional overrides (which occur only inside strings) are
/// written as `\uXXXX` escapes too.
pub fn json_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\r' && shown_escaped(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shown_escaped(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Replace the progress line on a terminal's standard error with `text` (printable).
pub fn progress_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{}", printable(text));
    let _ = err.flush();
}

/// Print rows as columns padded to the widest cell; the first row is the header.
pub fn print_table(rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
            }
        }
        println!("{}", line.trim_end());
    }
}

/// Shorten `text` to `max` characters with an ellipsis.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_shown_not_obeyed() {
        let hostile =
            "ok\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u{9b}31m\u{202e}txt.exe\r\nnext\rover\tx\u{7f}";
        let shown = printable(hostile);
        assert_eq!(
            shown,
            "ok^[[2J^[]52;c;cm0gLXJmIH4=^G<U+009B>31m<U+202E>txt.exe\nnext^Mover\tx^?"
        );
        assert!(matches!(printable("plain — text\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_content_and_loses_its_controls() {
        let value = serde_json::json!({"d": "a\x1b[2Jb\u{9b}c\u{202e}d\u{7f}"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = json_safe(&text);
        assert!(
            !safe.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
