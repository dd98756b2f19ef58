//! What a secret looks like when nobody labelled it: a name that says so (`…_TOKEN`, `API_KEY`),
//! the token shapes the redactor knows (`ghp_…`, `sk_live_…`, `xoxb-…`, JSON Web Tokens, …) and
//! long random-looking runs. Used where a value arrives without a field that says "secret"
//! (another client's file on import, a plain env value, a form field nobody marked).
//! A guess on the safe side: a non-secret taken for one is only kept in the keyring.

use crate::redact::Redactor;

/// Whether a plain value's name (an environment variable, a header, a form field) suggests it
/// holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "_KEY",
        "AUTH",
        "CREDENTIAL",
        "PRIVATE",
    ]
    .iter()
    .any(|w| upper.contains(w))
        || upper.ends_with("KEY")
}

/// Whether `value` looks like a credential: a provider's token or a JSON Web Token (the
/// shapes the redactor knows), or a long run of letters and digits mixed like random bytes.
pub fn looks_like_secret_value(value: &str) -> bool {
    let value = value.trim();
    if value.len() < 16 || value.contains(char::is_whitespace) {
        return false;
    }
    Redactor::empty().redact(value) != value || looks_random(value)
}

/// At least 24 characters of `[A-Za-z0-9_-+/=]`, with digits, lower- and upper-case letters
/// mixed, or at least 32 hexadecimal digits mixing digits and letters (a word, a path or a
/// version number is neither).
fn looks_random(value: &str) -> bool {
    let digits = value.chars().filter(char::is_ascii_digit).count();
    if value.len() >= 32
        && value.chars().all(|c| c.is_ascii_hexdigit())
        && digits >= 3
        && value.len() - digits >= 3
    {
        return true;
    }
    if value.len() < 24
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_+/=".contains(c))
    {
        return false;
    }
    let upper = value.chars().filter(char::is_ascii_uppercase).count();
    let lower = value.chars().filter(char::is_ascii_lowercase).count();
    digits >= 3 && upper >= 3 && lower >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_tokens_jwts_and_random_runs_are_secrets() {
        for secret in [
            "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
            "sk_live_51H8abcdefghijklmnop",
            "xoxb-1234567890-abcdefghij",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "Zq8vR2mK9xP4tL7wB3nC6yH1",
            "88d279e71cd37f09d38f8d6cde14d821",
        ] {
            assert!(looks_like_secret_value(secret), "{secret}");
        }
    }

    #[test]
    fn words_paths_urls_and_versions_are_not() {
        for plain in [
            "/home/user/projects/notes",
            "@modelcontextprotocol/server-filesystem",
            "https://example.com/mcp",
            "1.2.3-beta.4",
            "mcp-server-everything-2026",
            "sk-short",
            "ALLCAPSWITHNODIGITSATALLHERE",
        ] {
            assert!(!looks_like_secret_value(plain), "{plain}");
        }
    }
}
