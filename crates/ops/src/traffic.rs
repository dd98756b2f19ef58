//! What passes between a model and a server through `run` and the gateway, cleaned on the way
//! back: terminal controls (C0 except tab and line breaks, DEL, C1), bidirectional controls and
//! tag characters are taken out of the text a tool returns, so that a result cannot rewrite a
//! terminal or carry text a person reviewing it does not see. A server can keep them
//! (`keep_control_characters` in its config).

use serde_json::Value;

/// Whether `c` is taken out of a result's text.
pub fn is_stripped(c: char) -> bool {
    let u = c as u32;
    (u < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
        || u == 0x7F
        || (0x80..=0x9F).contains(&u)
        || matches!(u, 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069 | 0xE0000..=0xE007F)
}

/// `text` without the characters [`is_stripped`] names; `None` when it has none.
pub fn strip_text(text: &str) -> Option<String> {
    text.chars()
        .any(is_stripped)
        .then(|| text.chars().filter(|c| !is_stripped(*c)).collect())
}

/// Strip the text of a `tools/call` result in place: each text block, and the text of each
/// embedded resource. Returns how many strings changed.
pub fn strip_result(result: &mut Value) -> usize {
    let mut changed = 0;
    let Some(blocks) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return 0;
    };
    for block in blocks {
        for pointer in ["/text", "/resource/text"] {
            if let Some(Value::String(text)) = block.pointer_mut(pointer)
                && let Some(clean) = strip_text(text)
            {
                *text = clean;
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controls_bidi_and_tags_leave_text_blocks() {
        let mut result = json!({"content": [
            {"type": "text", "text": "ok\u{1b}]52;c;cGF5bG9hZA==\u{7}\tdone\n"},
            {"type": "text", "text": "abc\u{202e}fed\u{E0041}"},
            {"type": "resource", "resource": {"uri": "x://y", "text": "\u{9b}31mred"}},
            {"type": "image", "data": "\u{1b}"},
        ]});
        assert_eq!(strip_result(&mut result), 3);
        assert_eq!(result["content"][0]["text"], "ok]52;c;cGF5bG9hZA==\tdone\n");
        assert_eq!(result["content"][1]["text"], "abcfed");
        assert_eq!(result["content"][2]["resource"]["text"], "31mred");
        assert_eq!(
            result["content"][3]["data"], "\u{1b}",
            "only text is touched"
        );
        assert_eq!(strip_text("plain café ✓"), None);
    }
}
