//! What a local server's test result means: a server that logs to stdout, and a server that
//! says in its stderr that an environment variable is missing (named, with the command that
//! sets it).

use std::sync::OnceLock;

use regex::Regex;

use super::{Finding, failed_stage};
use crate::config::{ConfigValue, ServerConfig};
use crate::probe::{ErrorKind, TestResult};

/// The stdout-noise fix, as the issue words it.
pub const STDOUT_FIX: &str = "MCP stdio servers must log to stderr; check the server's logging \
                              flags (e.g. --quiet / LOG_LEVEL) or report it upstream";

fn var_patterns() -> &'static [Regex] {
    static P: OnceLock<Vec<Regex>> = OnceLock::new();
    P.get_or_init(|| {
        let var = r"`?'?\x22?([A-Z][A-Z0-9_]{2,})`?'?\x22?";
        [
            // "MY_API_KEY environment variable is required", "API_KEY is not set"
            format!(
                r"{var}\s+(?i:(?:environment\s+|env\s+)?variable\s+)?(?i:is\s+(?:not\s+set|required|missing|undefined|empty)|must\s+be\s+(?:set|provided)|not\s+(?:set|found|provided)|missing|required)"
            ),
            // "environment variable MY_API_KEY is required", "missing env var: API_KEY"
            format!(
                r"(?i:(?:missing|required|set|provide|no)\s+(?:the\s+)?(?:environment|env)\s*(?:variable|var)?s?)\s*:?\s*{var}"
            ),
            format!(r"(?i:(?:environment|env)\s+(?:variable|var))\s+{var}"),
            // "missing API key (set BRAVE_API_KEY)", "Missing GITHUB_TOKEN"
            format!(r"(?i:missing)\s+{var}"),
            // "Please set the OPENAI_API_KEY environment variable"
            format!(r"(?i:set|export|provide)\s+(?i:the\s+)?{var}\s+(?i:environment|env)"),
        ]
        .iter()
        // ASCII-only (`regex` has no Unicode tables here: see crate::regex_rules); logs name
        // variables in ASCII.
        .map(|p| Regex::new(&format!("(?-u){p}")).expect("env pattern"))
        .collect()
    })
}

const NOT_VARS: &[&str] = &[
    "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "FATAL", "HTTP", "HTTPS", "JSON", "MCP", "API",
    "URL", "NOTE", "TODO", "PATH_",
];

/// The environment variable a server's stderr says is missing, if any.
pub fn missing_var(stderr: &str) -> Option<String> {
    for line in stderr.lines() {
        for re in var_patterns() {
            for caps in re.captures_iter(line) {
                let name = caps.get(1)?.as_str();
                if !NOT_VARS.contains(&name) && (name.contains('_') || name.len() > 5) {
                    return Some(name.to_owned());
                }
            }
        }
    }
    None
}

fn logs_to_stdout(text: &str) -> bool {
    text.contains("not JSON-RPC to stdout")
}

/// Findings specific to a stdio server's result.
pub fn explain(name: &str, server: &ServerConfig, result: &TestResult) -> Vec<Finding> {
    let mut out = vec![];
    let stage = failed_stage(result);
    if result.ok {
        if let Some(w) = result.warnings.iter().find(|w| logs_to_stdout(w)) {
            out.push(Finding::warning(
                "stdio.logs_to_stdout",
                w.clone(),
                STDOUT_FIX,
            ));
        }
        return out;
    }
    let error = result.error.as_deref().unwrap_or("");
    if result.error_kind == Some(ErrorKind::Protocol) && logs_to_stdout(error) {
        let mut f = Finding::error(
            "stdio.logs_to_stdout",
            format!("the server logs to stdout, which breaks the protocol: {error}"),
            STDOUT_FIX,
        );
        f.stage = stage;
        out.push(f);
        return out;
    }
    let stderr = result.stderr_tail.as_deref().unwrap_or("");
    if let Some(var) = missing_var(stderr).or_else(|| missing_var(error)) {
        let configured = server.env.get(&var);
        let (message, fix) = match configured {
            None => (
                format!(
                    "the server needs the environment variable `{var}`, which its config does \
                     not set (its stderr says so)"
                ),
                format!(
                    "set it: `plugboard edit {name} --secret-env {var}` (the value is read from \
                     stdin or a prompt and kept in the keyring), or `--env {var}=VALUE` if it is \
                     not secret"
                ),
            ),
            Some(value) => (
                format!(
                    "the server says the environment variable `{var}` is missing or invalid, \
                     although the config sets it{}",
                    if matches!(value, ConfigValue::Plain(v) if v.is_empty()) {
                        " (to an empty value)"
                    } else {
                        ""
                    }
                ),
                format!(
                    "check its value and replace it: `plugboard edit {name} --secret-env {var}`"
                ),
            ),
        };
        let mut f = Finding::error("env.missing_var", message, fix);
        f.stage = stage;
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_patterns_need_no_unicode_tables() {
        for pattern in var_patterns() {
            plugboard_test_support::unicode_check::assert_needs_no_unicode_tables(pattern.as_str());
        }
    }

    #[test]
    fn missing_variables_are_named() {
        for (text, var) in [
            (
                "Error: MY_API_KEY environment variable is required",
                "MY_API_KEY",
            ),
            ("BRAVE_API_KEY is not set", "BRAVE_API_KEY"),
            (
                "error: environment variable GITHUB_TOKEN is required",
                "GITHUB_TOKEN",
            ),
            ("Missing env var: SLACK_BOT_TOKEN", "SLACK_BOT_TOKEN"),
            ("fatal: missing NOTION_TOKEN", "NOTION_TOKEN"),
            (
                "Please set the `OPENAI_API_KEY` environment variable",
                "OPENAI_API_KEY",
            ),
        ] {
            assert_eq!(missing_var(text).as_deref(), Some(var), "{text}");
        }
        assert_eq!(missing_var("ERROR: connection failed"), None);
        assert_eq!(missing_var("listening on stdio"), None);
    }
}
