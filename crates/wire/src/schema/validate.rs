//! Validation of a value against the exact schema, with the `jsonschema` crate: the draft the
//! schema names (2020-12 when it names none, as MCP says), formats checked, `pattern`s run
//! with a backtracking limit, nothing fetched from the network. Each problem names the field
//! it is about ([`FieldIssue`]); messages never repeat the value (it may be a password).

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde::Serialize;
use serde_json::Value;

/// The longest message kept (an `enum` of 10,000 values would otherwise list them all).
const MESSAGE_CHARS: usize = 240;
/// At most this many problems are reported for one value.
const MAX_ISSUES: usize = 50;
/// Backtracking steps a `pattern` may take on one string before it counts as not matching.
const PATTERN_BACKTRACK_LIMIT: usize = 100_000;

/// A problem with one field of a value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct FieldIssue {
    /// The field as people read it: `items[2].name`; empty for the value itself.
    pub path: String,
    /// The same as a JSON pointer: `/items/2/name`.
    pub pointer: String,
    pub message: String,
}

impl FieldIssue {
    /// `items[2].name: is required` (or just the message for the value itself).
    pub fn describe(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }
}

/// A compiled schema, or why it could not be compiled (then values are not checked).
pub struct Validator {
    inner: Result<jsonschema::Validator, String>,
}

impl Validator {
    pub fn new(schema: &Value) -> Validator {
        let inner = jsonschema::options()
            .should_validate_formats(true)
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex().backtrack_limit(PATTERN_BACKTRACK_LIMIT),
            )
            .build(schema)
            .map_err(|e| crate::connect::truncate_chars(&e.masked().to_string(), MESSAGE_CHARS));
        Validator { inner }
    }

    /// Why the schema itself is unusable, if it is.
    pub fn schema_problem(&self) -> Option<&str> {
        self.inner.as_ref().err().map(String::as_str)
    }

    /// Every problem of `value` (none when the schema could not be compiled: see
    /// [`Validator::schema_problem`]).
    pub fn issues(&self, value: &Value) -> Vec<FieldIssue> {
        let Ok(validator) = &self.inner else {
            return vec![];
        };
        let mut issues: Vec<FieldIssue> = vec![];
        for error in validator.iter_errors(value).take(MAX_ISSUES) {
            collect(&error, &mut issues, 0);
        }
        issues
    }
}

/// The issues `error` stands for. A missing or unexpected property is about that property's
/// field; a value that fits none of a union's variants is explained by the variant it comes
/// closest to (its discriminator matched, else the fewest problems).
fn collect(error: &ValidationError<'_>, issues: &mut Vec<FieldIssue>, depth: usize) {
    let pointer = error.instance_path().as_str().to_string();
    let mut push = |pointer: String, message: String| {
        let issue = FieldIssue {
            path: readable_path(&pointer),
            message: crate::connect::truncate_chars(&message, MESSAGE_CHARS),
            pointer,
        };
        if issues.len() < MAX_ISSUES && !issues.contains(&issue) {
            issues.push(issue);
        }
    };
    match error.kind() {
        ValidationErrorKind::Required {
            property: Value::String(property),
        } => push(child(&pointer, property), "is required".into()),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for property in unexpected {
                push(
                    child(&pointer, property),
                    "is not a field of this object".into(),
                );
            }
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context }
            if depth < 8 =>
        {
            let closest = context
                .iter()
                .filter(|branch| !branch.is_empty())
                .min_by_key(|branch| {
                    let missed_tag = branch
                        .iter()
                        .any(|e| matches!(e.kind(), ValidationErrorKind::Constant { .. }));
                    (missed_tag, branch.len())
                });
            match closest {
                Some(branch) => {
                    for inner in branch {
                        collect(inner, issues, depth + 1);
                    }
                }
                None => push(pointer, error.masked_with("the value").to_string()),
            }
        }
        _ => push(pointer, error.masked_with("the value").to_string()),
    }
}

/// The pointer of property `key` inside `pointer`.
fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// `/items/2/name` → `items[2].name`; `/a~1b` → `a/b`.
pub fn readable_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out
}
