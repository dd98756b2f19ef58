//! Value templates: text with `{name}` placeholders, as `server.json` writes them in argument
//! values, environment variables, headers and URLs (`"Bearer {api_key}"`,
//! `"http://127.0.0.1:{port}/mcp"`). A placeholder is `{` + a name (letters, digits, `_`, `-`,
//! `.`, starting with a letter or `_`) + `}`; any other brace is text (JSON in a value stays
//! as it is).

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Var(String),
}

/// Text with placeholders.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Template {
    /// Read `text`, finding its placeholders.
    pub fn parse(text: &str) -> Template {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut literal = String::new();
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if is_name(&after[..close]) => {
                    literal.push_str(&rest[..open]);
                    if !literal.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Var(after[..close].to_owned()));
                    rest = &after[close + 1..];
                }
                _ => {
                    literal.push_str(&rest[..=open]);
                    rest = after;
                }
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Template { parts }
    }

    /// Text with no placeholders at all, even if it has braces.
    pub fn literal(text: &str) -> Template {
        Template {
            parts: if text.is_empty() {
                vec![]
            } else {
                vec![Part::Text(text.to_owned())]
            },
        }
    }

    /// Text and placeholders as given (a source that marks placeholders its own way).
    pub fn from_parts(parts: Vec<Part>) -> Template {
        Template {
            parts: parts
                .into_iter()
                .filter(|p| !matches!(p, Part::Text(t) if t.is_empty()))
                .collect(),
        }
    }

    /// Just the value of `name`.
    pub fn var(name: &str) -> Template {
        Template {
            parts: vec![Part::Var(name.to_owned())],
        }
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The placeholders, in order (repeats included).
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Text(_) => None,
        })
    }

    pub fn has_vars(&self) -> bool {
        self.vars().next().is_some()
    }

    /// Rename placeholder `from` to `to`.
    pub fn rename(&mut self, from: &str, to: &str) {
        for part in &mut self.parts {
            if let Part::Var(v) = part
                && v == from
            {
                *v = to.to_owned();
            }
        }
    }

    /// Replace each placeholder by `value(name)`; `Err` lists the placeholders that have none.
    pub fn render(
        &self,
        mut value: impl FnMut(&str) -> Option<String>,
    ) -> Result<String, Vec<String>> {
        let mut out = String::new();
        let mut missing = Vec::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Var(v) => match value(v) {
                    Some(text) => out.push_str(&text),
                    None => missing.push(v.clone()),
                },
            }
        }
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(missing)
        }
    }
}

impl std::fmt::Display for Template {
    /// The template as written (`Bearer {api_key}`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for part in &self.parts {
            match part {
                Part::Text(t) => f.write_str(t)?,
                Part::Var(v) => write!(f, "{{{v}}}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_found_and_other_braces_kept() {
        let t = Template::parse("Bearer {smithery_api_key}");
        assert_eq!(t.vars().collect::<Vec<_>>(), ["smithery_api_key"]);
        assert_eq!(t.to_string(), "Bearer {smithery_api_key}");
        let t = Template::parse(r#"{"a": 1} {x} {} { y } {1bad} {ok.name-2}"#);
        assert_eq!(t.vars().collect::<Vec<_>>(), ["x", "ok.name-2"]);
        assert_eq!(t.to_string(), r#"{"a": 1} {x} {} { y } {1bad} {ok.name-2}"#);
        let rendered = Template::parse("http://{host}:{port}/mcp")
            .render(|v| (v == "host").then(|| "127.0.0.1".to_owned()));
        assert_eq!(rendered, Err(vec!["port".to_owned()]));
        let rendered = Template::parse("a{b}c{b}").render(|_| Some("-".into()));
        assert_eq!(rendered.unwrap(), "a-c-");
        assert!(!Template::literal("{x}").has_vars());
        assert_eq!(Template::parse("{"), Template::literal("{"));
    }
}
