//! Resource templates (RFC 6570 URI templates, as MCP's `resources/templates/list` gives
//! them): the variables a template has, and the URI it makes with values for them. Covers
//! the expressions servers use: `{var}`, `{+var}`, `{#var}`, `{/var}`, `{.var}`, `{;var}`,
//! `{?a,b}` and `{&a}`.

use std::collections::BTreeMap;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Characters left as they are in a plain `{var}` (RFC 6570's unreserved set).
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// `{+var}` and `{#var}` also keep reserved characters.
const RESERVED_KEPT: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'#')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// The expressions of `template`: (operator, variable names).
fn expressions(template: &str) -> Vec<(Option<char>, Vec<String>)> {
    let mut out = vec![];
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let body = &rest[start + 1..start + len];
        let (operator, names) = match body.chars().next() {
            Some(c @ ('+' | '#' | '/' | '.' | ';' | '?' | '&')) => (Some(c), &body[1..]),
            _ => (None, body),
        };
        let names = names
            .split(',')
            .map(|n| {
                n.trim_end_matches('*')
                    .split(':')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .filter(|n| !n.is_empty())
            .collect();
        out.push((operator, names));
        rest = &rest[start + len + 1..];
    }
    out
}

/// The variable names of `template`, in order, each once.
pub fn variables(template: &str) -> Vec<String> {
    let mut names: Vec<String> = vec![];
    for (_, vars) in expressions(template) {
        for var in vars {
            if !names.contains(&var) {
                names.push(var);
            }
        }
    }
    names
}

/// `template` with `values` put in (a variable without a value is left out).
pub fn expand(template: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    let mut expressions = expressions(template).into_iter();
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let (operator, names) = expressions.next().unwrap_or((None, vec![]));
        let set = match operator {
            Some('+' | '#') => RESERVED_KEPT,
            _ => UNRESERVED,
        };
        let present: Vec<(&String, String)> = names
            .iter()
            .filter_map(|n| {
                values
                    .get(n)
                    .map(|v| (n, utf8_percent_encode(v, set).to_string()))
            })
            .collect();
        if !present.is_empty() {
            let (first, separator, named) = match operator {
                None | Some('+') => ("", ",", false),
                Some('#') => ("#", ",", false),
                Some('/') => ("/", "/", false),
                Some('.') => (".", ".", false),
                Some(';') => (";", ";", true),
                Some('?') => ("?", "&", true),
                Some('&') => ("&", "&", true),
                Some(_) => ("", ",", false),
            };
            out.push_str(first);
            let parts: Vec<String> = present
                .iter()
                .map(|(name, value)| {
                    if named {
                        format!("{name}={value}")
                    } else {
                        value.clone()
                    }
                })
                .collect();
            out.push_str(&parts.join(separator));
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn variables_and_expansion() {
        let t = "demo://resource/dynamic/text/{resourceId}";
        assert_eq!(variables(t), ["resourceId"]);
        assert_eq!(
            expand(t, &values(&[("resourceId", "7")])),
            "demo://resource/dynamic/text/7"
        );
        assert_eq!(
            expand(
                "file:///{+path}{?rev,mode}",
                &values(&[("path", "a b/c.txt"), ("mode", "r")])
            ),
            "file:///a%20b/c.txt?mode=r"
        );
        assert_eq!(expand("x://{id}", &values(&[("id", "a/b")])), "x://a%2Fb");
        assert_eq!(
            expand(
                "x://h{/seg*}{#frag}",
                &values(&[("seg", "p"), ("frag", "f")])
            ),
            "x://h/p#f"
        );
        assert_eq!(variables("x://{a}/{b,c}{?a}"), ["a", "b", "c"]);
        assert_eq!(expand("x://{missing}/y", &values(&[])), "x:///y");
        assert_eq!(expand("broken{", &values(&[])), "broken{");
    }
}
