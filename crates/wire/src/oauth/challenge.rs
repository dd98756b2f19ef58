//! The `WWW-Authenticate` header of a 401 or 403 (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1):
//! the Bearer challenge's `resource_metadata`, `scope` and `error`.

use std::collections::BTreeMap;

/// The Bearer challenge of a `WWW-Authenticate` header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// RFC 9728: where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// The scopes the resource asks for (space-separated in the header).
    pub scope: Option<Vec<String>>,
    /// `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl BearerChallenge {
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Parse the Bearer challenge out of a `WWW-Authenticate` value. A header with no Bearer
/// challenge but parameters that look like one (some servers omit the scheme) is accepted too.
pub fn parse_bearer_challenge(header: &str) -> Option<BearerChallenge> {
    let challenges = parse_challenges(header);
    let params = challenges
        .iter()
        .find(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .or_else(|| challenges.first())
        .map(|(_, params)| params)?;
    let get = |name: &str| params.get(name).cloned().filter(|v| !v.is_empty());
    Some(BearerChallenge {
        resource_metadata: get("resource_metadata"),
        scope: get("scope").map(|s| split_scopes(&s)),
        error: get("error"),
        error_description: get("error_description"),
    })
}

/// Split a space-separated scope string.
pub(crate) fn split_scopes(scope: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for s in scope.split_ascii_whitespace() {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// Every challenge as (scheme, lower-cased parameter names → values).
fn parse_challenges(header: &str) -> Vec<(String, BTreeMap<String, String>)> {
    let mut out: Vec<(String, BTreeMap<String, String>)> = vec![];
    let chars: Vec<char> = header.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && (chars[*i] == ' ' || chars[*i] == '\t' || chars[*i] == ',') {
            *i += 1;
        }
    };
    let is_token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~/".contains(c);
    while i < chars.len() {
        skip_ws(&mut i);
        let start = i;
        while i < chars.len() && is_token(chars[i]) {
            i += 1;
        }
        if start == i {
            i += 1;
            continue;
        }
        let word: String = chars[start..i].iter().collect();
        // `word=` starts a parameter of the current challenge; a bare word starts a new one.
        let mut j = i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        if j < chars.len() && chars[j] == '=' {
            i = j + 1;
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            let value = if i < chars.len() && chars[i] == '"' {
                i += 1;
                let mut v = String::new();
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    v.push(chars[i]);
                    i += 1;
                }
                i += 1;
                v
            } else {
                let s = i;
                while i < chars.len() && chars[i] != ',' {
                    i += 1;
                }
                chars[s..i].iter().collect::<String>().trim().to_string()
            };
            if out.is_empty() {
                out.push((String::new(), BTreeMap::new()));
            }
            let params = &mut out.last_mut().expect("pushed").1;
            params.entry(word.to_ascii_lowercase()).or_insert(value);
        } else {
            out.push((word, BTreeMap::new()));
            // A token68 after the scheme (not used by Bearer challenges) is skipped.
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bearer_parameters() {
        let c = parse_bearer_challenge(
            r#"Bearer realm="mcp", error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scope.unwrap(), vec!["mcp:basic", "mcp:write"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn picks_bearer_among_several_challenges() {
        let c = parse_bearer_challenge(
            r#"Basic realm="x", Bearer scope="a", error_description="say \"hi\"""#,
        )
        .unwrap();
        assert_eq!(c.scope.unwrap(), vec!["a"]);
        assert_eq!(c.error_description.as_deref(), Some(r#"say "hi""#));
    }

    #[test]
    fn unquoted_values_and_bare_scheme() {
        let c = parse_bearer_challenge("Bearer error=invalid_token, scope=read").unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.unwrap(), vec!["read"]);
        let c = parse_bearer_challenge("Bearer").unwrap();
        assert_eq!(c, BearerChallenge::default());
    }
}
