//! Secret redaction for every piece of text that leaves the core.
//!
//! Error messages, a server's stderr tail, tool output and logs all pass through a
//! [`Redactor`] before they are shown, stored or sent anywhere. A redactor is built once per
//! operation from everything secret about the servers being handled: every value in the
//! secret store and every env and header value of those servers (users paste tokens into
//! plain env fields). It replaces with [`REDACTED`]:
//!
//! * each known value, wherever it appears, in these forms: as is; JSON-escaped (as inside
//!   a JSON string literal, in any escaping style: `\"`, `\u00e9`, `\/`, …, and escaped
//!   twice, as in JSON nested in a JSON string); percent-encoded (any set of escaped
//!   characters, either hex case, `%20` or `+` for spaces); base64 (standard and URL-safe,
//!   with and without padding);
//! * without knowing any value: URL userinfo (`https://user:pass@host`), secret-looking
//!   query and `NAME=value` parameters (`?access_token=…`, `GITHUB_TOKEN=…`), `Bearer` and
//!   `Basic` credentials, `Authorization:` headers, JSON members named like secrets
//!   (`"client_secret": "…"`), well-known token shapes (GitHub, Slack, OpenAI, Anthropic,
//!   Stripe, Linear, AWS, JWT, PostHog, Tavily, Google) and PEM private key blocks.
//!
//! Where a match overlaps or touches another, they are redacted as one, so a value that
//! contains another value is removed whole, whatever order they are found in. A match that
//! cuts through an escape sequence (`\n`, `%2F`) takes all of it, so that redacted JSON
//! stays valid. The result is a fixpoint: redacting redacted text changes nothing.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use base64::Engine as _;
use base64::alphabet;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use regex::Match;
use serde_json::Value;

use crate::regex_rules::{self, LazyRegex, Triggers, white_space};

/// The text that replaces every redacted secret.
pub const REDACTED: &str = "***";

/// Known values with fewer characters than this are ignored: they would destroy ordinary text.
const MIN_VALUE_CHARS: usize = 4;

/// Any run of this many characters of a secret (a value of the secret store, not a plain
/// setting) is redacted wherever it appears: a server that logs the first 20 characters of its
/// 40-character token, or a cut through the middle of one, does not get them past.
pub const FRAGMENT_CHARS: usize = 12;

/// Known values with fewer characters than this are only redacted where they stand alone:
/// not preceded or followed by a letter or digit.
const STANDALONE_BELOW_CHARS: usize = 8;

/// All-digit known values with fewer digits than this are ignored: they are ports and
/// counts, not secrets.
const MIN_NUMBER_DIGITS: usize = 6;

/// Known values that are ignored whatever their length (compared case-insensitively):
/// settings that users put in env fields and that are never secret, but would wreck
/// ordinary text if redacted everywhere.
const NON_SECRET_VALUES: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "enabled",
    "disabled",
    "debug",
    "info",
    "warn",
    "warning",
    "error",
    "trace",
    "test",
    "default",
    "localhost",
    "127.0.0.1",
    "0.0.0.0",
    "staging",
    "production",
    "development",
];

/// JSON object keys whose values are secret, after normalisation by [`normalize_key`].
const SECRET_KEYS: &[&str] = &[
    "authorization",
    "proxy_authorization",
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "cookie",
    "set_cookie",
];

/// Suffixes of normalised JSON object keys whose values are secret.
const SECRET_KEY_SUFFIXES: &[&str] = &["_token", "_key", "_secret", "_password"];

/// Percent-encoding that keeps RFC 3986's unreserved characters (`-._~`), as most URL
/// libraries encode a query value; the other literal styles are [`NON_ALPHANUMERIC`] and
/// form encoding.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Upper bound on redaction passes. Every pass that changes the text removes at least one
/// byte that is not `*`, so real text settles in two passes, the second one light; this
/// only bounds the work on adversarial input.
const MAX_PASSES: usize = 8;

/// Decodes base64 credentials with or without padding, as `Basic` senders vary.
const LENIENT_BASE64: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const LENIENT_STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT_BASE64);
const LENIENT_URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT_BASE64);

/// Removes secrets from text; cheap to clone and share between threads.
///
/// ```
/// use plugboard_store::redact::Redactor;
///
/// let redactor = Redactor::new(["hunter2-is-my-password"]);
/// assert_eq!(
///     redactor.redact("login failed for hunter2-is-my-password at https://me:pw@example.com"),
///     "login failed for *** at https://***@example.com",
/// );
/// ```
#[derive(Clone, Default)]
pub struct Redactor {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The accepted known values, kept so that [`Redactor::with_values`] can rebuild.
    values: Vec<String>,
    /// The values among them that are secrets, whose fragments count too.
    secrets: Vec<String>,
    /// Finds every literal form of `values`, and every run of [`FRAGMENT_CHARS`] characters
    /// of `secrets`.
    literals: Literals,
    /// The same for `secrets` alone (what [`Redactor::holds_secret`] looks for), built on its
    /// first use and kept: the gateway asks it of every call.
    secrets_only: std::sync::OnceLock<Literals>,
}

impl Redactor {
    /// A redactor that knows no values and applies only the pattern rules.
    #[must_use]
    pub fn empty() -> Self {
        Self::default()
    }

    /// A redactor for the given known secret values, plus the pattern rules.
    ///
    /// A value is ignored when, trimmed of surrounding whitespace, it is shorter than 4
    /// characters (so also when empty or whitespace), made only of `*` (already masked), all
    /// digits and shorter than 6 (a port or a count), or a common setting word (`true`,
    /// `localhost`, `production`, …). Otherwise both the value and its trimmed form are
    /// redacted: those of 4 to 7 characters only where no letter or digit touches them,
    /// longer ones everywhere. Values are matched literally: regex and JSON special
    /// characters in them have no special meaning.
    #[must_use]
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Self::build(values, Vec::new())
    }

    fn build<I, S>(values: I, secrets: Vec<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut accepted = BTreeSet::new();
        for value in values
            .into_iter()
            .map(|v| v.as_ref().to_owned())
            .chain(secrets.clone())
        {
            if is_redactable(value.trim()) {
                accepted.insert(value.trim().to_owned());
                accepted.insert(value);
            }
        }
        let values: Vec<String> = accepted.into_iter().collect();
        let literals = Literals::new(&values, &secrets);
        Self {
            inner: Arc::new(Inner {
                values,
                secrets,
                literals,
                secrets_only: std::sync::OnceLock::new(),
            }),
        }
    }

    /// This redactor with more known values.
    #[must_use]
    pub fn with_values<I, S>(self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut all = self.inner.values.clone();
        all.extend(values.into_iter().map(|value| value.as_ref().to_owned()));
        Self::build(all, self.inner.secrets.clone())
    }

    /// This redactor with more secrets: known values (as [`Redactor::with_values`]) of which
    /// every run of [`FRAGMENT_CHARS`] or more characters is redacted too. For values of the
    /// secret store and tokens, not for plain settings (a URL in an env field would take every
    /// text that shares 12 characters with it).
    #[must_use]
    pub fn with_secrets<I, S>(self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut all = self.inner.secrets.clone();
        all.extend(
            secrets
                .into_iter()
                .map(|value| value.as_ref().to_owned())
                .filter(|value| is_redactable(value.trim())),
        );
        all.sort();
        all.dedup();
        Self::build(self.inner.values.clone(), all)
    }

    /// Whether this redactor knows no values (it still applies the pattern rules).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.values.is_empty()
    }

    /// `text` with every secret replaced by [`REDACTED`] (query parameter names, `Bearer`
    /// and other schemes, and URL schemes and hosts are kept).
    ///
    /// Idempotent: `redact(&redact(x)) == redact(x)`. Never panics.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        let mut current = Cow::Borrowed(text);
        let mut pass = Pass::First;
        for _ in 0..MAX_PASSES {
            match self.redact_once(&current, pass) {
                Some(next) => current = Cow::Owned(next),
                None => break,
            }
            pass = Pass::Again;
        }
        current.into_owned()
    }

    /// Whether `text` holds one of this redactor's secrets (or a run of one long enough to
    /// count), as written or JSON- or percent-escaped; plain known values and the pattern
    /// rules do not count. What the gateway refuses to send in a call's arguments.
    #[must_use]
    pub fn holds_secret(&self, text: &str) -> bool {
        if self.inner.secrets.is_empty() {
            return false;
        }
        let only_secrets = self.inner.secrets_only.get_or_init(|| {
            let values: Vec<String> = self
                .inner
                .secrets
                .iter()
                .filter(|s| is_redactable(s.trim()))
                .flat_map(|s| [s.trim().to_owned(), s.clone()])
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            Literals::new(&values, &self.inner.secrets)
        });
        let found = |text: &str| {
            let mut spans = Vec::new();
            only_secrets.find(text, Pass::First, &mut spans);
            !spans.is_empty()
        };
        found(text)
            || [Decoded::json(text), Decoded::percent(text)]
                .into_iter()
                .flatten()
                .any(|decoded| found(&decoded.text))
    }

    /// Redacts every string in `value` in place, as [`Redactor::redact`] does.
    ///
    /// Object keys are kept, but a string whose key is named like a secret
    /// (`authorization`, `token`, `password`, `api_key`, `secret`, `cookie`, `*_token`,
    /// `*_key`, `*_secret`, `*_password`, in any case, `-` or camelCase style:
    /// `X-Api-Key`, `accessToken`) is replaced whole by [`REDACTED`] unless it is empty.
    pub fn redact_json(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.redact(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact_json(item)),
            Value::Object(members) => {
                for (key, member) in members.iter_mut() {
                    match member {
                        Value::String(text) if !text.is_empty() && is_secret_key(key) => {
                            REDACTED.clone_into(text);
                        }
                        _ => self.redact_json(member),
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// One redaction pass, or `None` when `text` has nothing (left) to redact.
    fn redact_once(&self, text: &str, pass: Pass) -> Option<String> {
        let mut spans = Vec::new();
        let mut escapes = Vec::new();
        self.find_spans(text, pass, &mut spans);
        for decoded in [Decoded::json(text), Decoded::percent(text)]
            .into_iter()
            .flatten()
        {
            self.find_decoded_spans(text, &decoded, pass, &mut spans);
            escapes.extend(decoded.escapes);
        }
        replace_spans(text, spans, escapes)
    }

    /// Collects the byte ranges of `text` to redact: known values, then the pattern rules.
    fn find_spans(&self, text: &str, pass: Pass, spans: &mut Vec<Range<usize>>) {
        self.inner.literals.find(text, pass, spans);
        userinfo_spans(text, spans);
        let candidates = triggers().in_text(text);
        for (index, rule) in RULES.iter().enumerate() {
            if regex_rules::has(candidates, index) {
                rule.find(text, spans);
            }
        }
    }

    /// Collects what [`Self::find_spans`] finds in text decoded from `source`, as ranges of
    /// `source`. Skips matches that take in a `"` that was not escaped: where `source` is
    /// JSON, that is structure that decoding mixed up with string contents.
    fn find_decoded_spans(
        &self,
        source: &str,
        decoded: &Decoded,
        pass: Pass,
        spans: &mut Vec<Range<usize>>,
    ) {
        let mut found = Vec::new();
        self.find_spans(&decoded.text, pass, &mut found);
        spans.extend(found.into_iter().filter_map(|span| {
            let takes_bare_quote = decoded.text[span.clone()]
                .match_indices('"')
                .any(|(at, _)| source.as_bytes()[decoded.source_offset(span.start + at)] == b'"');
            (!takes_bare_quote).then(|| decoded.source_range(span))
        }));
    }
}

/// Which redaction pass of a text this is.
///
/// The first pass finds everything. Each later one runs on the text that the one before
/// redacted, where every replaced span starts and ends outside escape sequences, so that
/// outside the `***` markers the text and its decoded forms are as before: a literal form
/// can only newly match there if it contains `*`, or if it is a short value's form whose
/// neighbour became a marker. Later passes look for only those, and apply every rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    First,
    Again,
}

impl fmt::Debug for Redactor {
    /// Shows how many values the redactor knows, never the values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("values", &self.inner.values.len())
            .finish()
    }
}

/// Whether a trimmed known value is worth redacting (see [`Redactor::new`]).
fn is_redactable(value: &str) -> bool {
    let is_short_number =
        value.len() < MIN_NUMBER_DIGITS && value.bytes().all(|b| b.is_ascii_digit());
    !(value.chars().count() < MIN_VALUE_CHARS
        || value.bytes().all(|b| b == b'*')
        || is_short_number
        || NON_SECRET_VALUES
            .iter()
            .any(|word| word.eq_ignore_ascii_case(value)))
}

/// The literal forms in which a known value is searched for. Other JSON escaping and
/// percent-encoding styles are found through [`Decoded`] text.
fn literal_forms(value: &str) -> Vec<String> {
    let json = json_escaped(value);
    let json_in_json = json.as_deref().and_then(json_escaped);
    let mut forms = vec![
        value.to_owned(),
        utf8_percent_encode(value, NON_ALPHANUMERIC).to_string(),
        utf8_percent_encode(value, URI_COMPONENT).to_string(),
        url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        STANDARD.encode(value),
        STANDARD_NO_PAD.encode(value),
        URL_SAFE.encode(value),
        URL_SAFE_NO_PAD.encode(value),
    ];
    forms.extend(json.into_iter().chain(json_in_json));
    forms
}

/// `value` as it appears inside a JSON string literal.
fn json_escaped(value: &str) -> Option<String> {
    let quoted = serde_json::to_string(value).ok()?;
    Some(quoted[1..quoted.len() - 1].to_owned())
}

/// Finds every occurrence of the literal forms of known values, overlapping ones included,
/// in time linear in the text and the number of occurrences.
#[derive(Default)]
struct Literals {
    /// Forms of values of 8 or more characters, and every run of [`FRAGMENT_CHARS`] characters
    /// of the secrets: these count anywhere (overlapping runs merge into one span, so a longer
    /// piece of a secret goes whole).
    anywhere: Option<AhoCorasick>,
    /// Whether a form in `anywhere` contains `*`: only then can it newly match after a pass.
    anywhere_has_star: bool,
    /// Forms of shorter values, which count only where no letter or digit touches them.
    standalone: Option<AhoCorasick>,
}

impl Literals {
    fn new(values: &[String], secrets: &[String]) -> Self {
        let mut forms: HashMap<String, bool> = HashMap::new();
        for value in values {
            let standalone = value.chars().count() < STANDALONE_BELOW_CHARS;
            for form in literal_forms(value) {
                *forms.entry(form).or_insert(standalone) &= standalone;
            }
        }
        for window in secrets.iter().flat_map(|secret| fragments(secret)) {
            forms.insert(window.to_owned(), false);
        }
        let (standalone, anywhere): (Vec<_>, Vec<_>) =
            forms.into_iter().partition(|(_, standalone)| *standalone);
        let anywhere: Vec<String> = anywhere.into_iter().map(|(form, _)| form).collect();
        let standalone: Vec<String> = standalone.into_iter().map(|(form, _)| form).collect();
        Self {
            anywhere_has_star: anywhere.iter().any(|form| form.contains('*')),
            anywhere: automaton(&anywhere),
            standalone: automaton(&standalone),
        }
    }

    fn find(&self, text: &str, pass: Pass, spans: &mut Vec<Range<usize>>) {
        if let Some(anywhere) = &self.anywhere
            && (pass == Pass::First || self.anywhere_has_star)
        {
            spans.extend(
                anywhere
                    .find_overlapping_iter(text)
                    .map(|found| found.range()),
            );
        }
        if let Some(standalone) = &self.standalone {
            // Patterns and text are UTF-8, so matches start and end on character boundaries.
            spans.extend(
                standalone
                    .find_overlapping_iter(text)
                    .map(|found| found.range())
                    .filter(|span| {
                        !(text[..span.start].ends_with(char::is_alphanumeric)
                            || text[span.end..].starts_with(char::is_alphanumeric))
                    }),
            );
        }
    }
}

/// Every run of [`FRAGMENT_CHARS`] characters of `secret` (none when it is not longer).
fn fragments(secret: &str) -> impl Iterator<Item = &str> {
    let starts: Vec<usize> = secret.char_indices().map(|(at, _)| at).collect();
    let count = if starts.len() > FRAGMENT_CHARS {
        starts.len() + 1 - FRAGMENT_CHARS
    } else {
        0
    };
    (0..count).map(move |first| {
        let end = starts
            .get(first + FRAGMENT_CHARS)
            .copied()
            .unwrap_or(secret.len());
        &secret[starts[first]..end]
    })
}

/// An automaton that finds every occurrence of `patterns`, or `None` if there are none.
fn automaton(patterns: &[String]) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    // Not a DFA: building one takes quadratic time for long repetitive values. Dense
    // transitions for the start state only: a deeper dense prefix allocates more than twice
    // the memory (new pages for a short-lived process to fault in) and searches no faster.
    let automaton = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .dense_depth(1)
        .build(patterns)
        .expect("an automaton for the known values fits in memory");
    Some(automaton)
}

/// A secret-finding regex (compiled only once a text has one of its triggers: see
/// [`crate::regex_rules`]), and a function that tells which part of a match is the secret,
/// if it is one; the rest of the match is context that stays.
struct Rule {
    regex: LazyRegex,
    secret: fn(&str, Match<'_>) -> Option<Range<usize>>,
}

impl Rule {
    const fn new(
        pattern: &'static str,
        triggers: &'static [&'static str],
        secret: fn(&str, Match<'_>) -> Option<Range<usize>>,
    ) -> Self {
        Self {
            regex: LazyRegex::new(pattern, triggers),
            secret,
        }
    }

    fn find(&self, text: &str, spans: &mut Vec<Range<usize>>) {
        spans.extend(
            self.regex
                .get()
                .find_iter(text)
                .filter_map(|found| (self.secret)(text, found)),
        );
    }
}

/// The pattern rules, which need no known value. They use no capture groups, which would
/// make matching several times slower. Every match of a rule contains one of its triggers.
static RULES: [Rule; 8] = [
    // PEM private key blocks (never across a `"`, which would break JSON), also when a
    // stderr tail cuts one off at the end: then the base64 lines after the header go,
    // but not ordinary text…
    Rule::new(
        concat!(
            r#"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[^"]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"#,
            r"|(?:(?:[",
            white_space!(),
            r"]|\\[rn])*[A-Za-z0-9+/=]{16,})*(?:(?:[",
            white_space!(),
            r"]|\\[rn])*[A-Za-z0-9+/=]+\z)?)",
        ),
        &["PRIVATE KEY-----"],
        whole,
    ),
    // … or at the start.
    Rule::new(
        r"(?m:(?:^[A-Za-z0-9+/=]{16,}\r?\n)*)-----END [A-Z0-9 ]*PRIVATE KEY-----",
        &["PRIVATE KEY-----"],
        whole,
    ),
    // Secret-looking parameters, keeping the name: `token=***`. In a query or fragment
    // any of the names; elsewhere (env dumps, logs) only the unmistakable ones.
    Rule::new(
        concat!(
            r#"(?i-u:[?&#;](?:(?:[a-z0-9]+[_.\-])*(?:token|secret|key|apikey|password|passwd|signature)|pass|pwd|auth|sig|code)|\b(?:(?:[a-z0-9]+[_\-])*(?:token|secret|apikey|password|passwd)|(?:[a-z0-9]+[_\-])+key))=[^&#"#,
            white_space!(),
            r#""'<>\\]+"#,
        ),
        &[
            "token=",
            "secret=",
            "key=",
            "password=",
            "passwd=",
            "signature=",
            "pass=",
            "pwd=",
            "auth=",
            "sig=",
            "code=",
        ],
        |_, found| Some(found.start() + found.as_str().find('=')? + 1..found.end()),
    ),
    // `Authorization:` headers, keeping the scheme: `Authorization: Basic ***`.
    Rule::new(
        concat!(
            r#"(?i-u:authorization)(?:"[ \t]*:[ \t]*"|'[ \t]*:[ \t]*'|[ \t]*[:=][ \t]*)[^"#,
            white_space!(),
            r#""'\\][^\r\n"'\\]*"#,
        ),
        &["authorization"],
        header_credentials,
    ),
    // `Bearer <token>` anywhere, keeping the scheme.
    Rule::new(
        r"(?i-u)\bbearer[ \t]+[a-z0-9\-._~+/=]+",
        &["bearer"],
        bearer_token,
    ),
    // `Basic <base64 of user:password>` anywhere, keeping the scheme.
    Rule::new(
        r"(?i-u)\bbasic[ \t]+[a-z0-9+/_\-=]+",
        &["basic"],
        basic_credentials,
    ),
    // JSON members named like secrets: `"client_secret": "***"`. The match starts at
    // the end of the key, which is much quicker to find than its start.
    Rule::new(
        r#"(?i-u:token|secret|key|password|passwd|authorization|cookie)"[ \t]*:[ \t]*"(?:[^"\\\r\n]|\\.)+""#,
        &[
            "token\"",
            "secret\"",
            "key\"",
            "password\"",
            "passwd\"",
            "authorization\"",
            "cookie\"",
        ],
        json_secret_member,
    ),
    // Well-known token shapes.
    Rule::new(
        concat!(
            r"gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}",
            r"|xox[abprs]-[A-Za-z0-9\-]{10,}|xapp-[A-Za-z0-9\-]{10,}",
            r"|(?-u:\b)(?:sk-(?:ant-)?[A-Za-z0-9_\-]{20,}|[rs]k_(?:live|test)_[A-Za-z0-9]{10,})",
            r"|lin_api_[A-Za-z0-9]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}",
            r"|eyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*",
            r"|phx_[A-Za-z0-9]{16,}|tvly-[A-Za-z0-9\-]{16,}|AIza[0-9A-Za-z_\-]{35}",
        ),
        &[
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "xoxa-",
            "xoxb-",
            "xoxp-",
            "xoxr-",
            "xoxs-",
            "xapp-",
            "sk-",
            "k_live_",
            "k_test_",
            "lin_api_",
            "AKIA",
            "ASIA",
            "eyJ",
            "phx_",
            "tvly-",
            "AIza",
        ],
        whole,
    ),
];

/// URL userinfo, up to the last `@` of the authority: `https://***@host`. What the regex
/// `://[^\s/?#"'<>\\]+@` would find, without compiling one: its Unicode class would cost
/// more than all the rest of a test, and URLs are in most texts.
fn userinfo_spans(text: &str, spans: &mut Vec<Range<usize>>) {
    let ends_authority = |c: char| c.is_whitespace() || "/?#\"'<>\\".contains(c);
    let mut from = 0;
    while let Some(at) = text[from..].find("://") {
        let start = from + at + "://".len();
        let end = text[start..]
            .find(ends_authority)
            .map_or(text.len(), |run| start + run);
        match text[start..end].rfind('@') {
            Some(last) if last > 0 => {
                spans.push(start..start + last);
                from = start + last + 1;
            }
            _ => from = start,
        }
    }
}

/// Finds the [`RULES`] that may match a text.
fn triggers() -> &'static Triggers {
    static TRIGGERS: LazyLock<Triggers> =
        LazyLock::new(|| Triggers::new(RULES.iter().map(|rule| &rule.regex)));
    &TRIGGERS
}

fn whole(_: &str, found: Match<'_>) -> Option<Range<usize>> {
    Some(found.range())
}

/// The part of a match after its leading scheme word (`Bearer`, `Basic`) and the spaces or
/// tabs after that, and where it starts.
fn after_scheme(found: Match<'_>) -> (usize, &str) {
    let credentials = found
        .as_str()
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_start_matches([' ', '\t']);
    (found.end() - credentials.len(), credentials)
}

/// The credentials of an `Authorization` header, without a leading scheme word such as
/// `Bearer`, `Basic`, `token` or `Digest` when more follows it.
fn header_credentials(_: &str, found: Match<'_>) -> Option<Range<usize>> {
    let header = found.as_str();
    let value = header[header.find([':', '='])? + 1..].trim_start_matches([' ', '\t', '"', '\'']);
    let credentials = value
        .split_once([' ', '\t'])
        .filter(|(scheme, _)| {
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        .map(|(_, rest)| rest.trim_start_matches([' ', '\t']))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(value);
    Some(found.end() - credentials.len()..found.end())
}

/// The token of a `Bearer` match, unless it is an auth parameter such as `Bearer realm=x`
/// or `Bearer resource_metadata="…"`, or a word such as in "bearer authentication" (a token
/// has 8+ characters and a digit or symbol, or 20+).
fn bearer_token(text: &str, found: Match<'_>) -> Option<Range<usize>> {
    let (start, token) = after_scheme(found);
    let is_auth_param = token.split_once('=').is_some_and(|(name, value)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            && if value.is_empty() {
                text[found.end()..].starts_with('"')
            } else {
                // Not base64 padding.
                value.bytes().any(|b| b != b'=')
            }
    });
    let looks_like_token =
        token.len() >= 20 || (token.len() >= 8 && token.bytes().any(|b| !b.is_ascii_alphabetic()));
    (looks_like_token && !is_auth_param).then_some(start..found.end())
}

/// The credentials of a `Basic` match if they are base64 of `user:password` (and not, say,
/// "basic usage").
fn basic_credentials(_: &str, found: Match<'_>) -> Option<Range<usize>> {
    let (start, credentials) = after_scheme(found);
    let is_user_password = |engine: &GeneralPurpose| {
        engine
            .decode(credentials)
            .is_ok_and(|raw| raw.contains(&b':'))
    };
    [LENIENT_STANDARD, LENIENT_URL_SAFE]
        .iter()
        .any(is_user_password)
        .then_some(start..found.end())
}

/// The string value of a `…key": "value"` match, if a `"` and key characters come before it
/// and the whole key names a secret.
fn json_secret_member(text: &str, found: Match<'_>) -> Option<Range<usize>> {
    let is_key_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let key_start = text[..found.start()]
        .trim_end_matches(is_key_char)
        .strip_suffix('"')?
        .len()
        + 1;
    let member = found.as_str();
    let key_end = found.start() + member.find('"')?;
    let value_start = key_end + 1 + text[key_end + 1..].find('"')? + 1;
    is_secret_key(&text[key_start..key_end]).then_some(value_start..found.end() - 1)
}

/// Whether a JSON object key names a secret (see [`Redactor::redact_json`]).
fn is_secret_key(key: &str) -> bool {
    let key = normalize_key(key);
    SECRET_KEYS.contains(&key.as_str())
        || SECRET_KEY_SUFFIXES
            .iter()
            .any(|suffix| key.ends_with(suffix))
}

/// `X-Api-Key`, `apiKey` and `API_KEY` all become `x_api_key`/`api_key`: lower case, with
/// `_` for `-`, `.`, spaces and camelCase humps.
fn normalize_key(key: &str) -> String {
    let mut normalized = String::with_capacity(key.len() + 4);
    let mut after_lower = false;
    for c in key.chars() {
        if c.is_uppercase() && after_lower {
            normalized.push('_');
        }
        after_lower = c.is_lowercase() || c.is_ascii_digit();
        match c {
            '-' | '.' | ' ' => normalized.push('_'),
            _ => normalized.extend(c.to_lowercase()),
        }
    }
    normalized
}

/// Widens spans that start or end inside one of the `escapes` sequences to take all of it,
/// merges overlapping and touching ones and replaces each with [`REDACTED`]. `None` when
/// that changes nothing (no spans, or each is already a run of `*`).
fn replace_spans(
    text: &str,
    mut spans: Vec<Range<usize>>,
    mut escapes: Vec<Range<usize>>,
) -> Option<String> {
    if spans.is_empty() {
        return None;
    }
    // JSON and percent escape sequences never overlap: neither contains the other's `\`/`%`.
    escapes.sort_unstable_by_key(|escape| escape.start);
    let containing = |offset: usize| {
        let index = escapes.partition_point(|escape| escape.end <= offset);
        escapes.get(index).filter(|escape| escape.start < offset)
    };
    for span in &mut spans {
        if let Some(escape) = containing(span.start) {
            span.start = escape.start;
        }
        if let Some(escape) = containing(span.end) {
            span.end = escape.end;
        }
    }
    spans.sort_unstable_by_key(|span| span.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in merged {
        if text[span.clone()].bytes().all(|b| b == b'*') {
            continue;
        }
        out.push_str(&text[copied..span.start]);
        out.push_str(REDACTED);
        copied = span.end;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Text with one layer of encoding decoded, and where in the source text each part of it
/// came from, so that matches in the decoded text map back to whole escape sequences.
struct Decoded {
    text: String,
    /// Where each part of `text` starts, in `text` and in the source, in order: a copied
    /// run, which maps byte for byte, or one decoded character. Then both lengths.
    parts: Vec<Part>,
    /// The source range of every escape sequence that was decoded, in order.
    escapes: Vec<Range<usize>>,
}

#[derive(Clone, Copy)]
struct Part {
    decoded: usize,
    source: usize,
}

impl Decoded {
    /// Decodes JSON string escapes (`\"`, `\\`, `\/`, `\n`, `\u00e9`, surrogate pairs…);
    /// anything else, such as an invalid escape, stays as it is. `None` if nothing decodes.
    fn json(source: &str) -> Option<Self> {
        Self::decode(source, '\\', false, |rest| {
            let simple = match rest.as_bytes().get(1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => return json_unicode_escape(rest),
                _ => return None,
            };
            Some((simple, 2))
        })
    }

    /// Decodes percent-encoding (`%XX` sequences that form UTF-8, either hex case) and `+`
    /// as a space. `None` if no `%XX` sequence decodes: literal forms cover `+` alone.
    fn percent(source: &str) -> Option<Self> {
        Self::decode(source, '%', true, percent_escape)
    }

    /// Builds decoded text from `source`, where `escape` decodes the escape sequence at the
    /// start of its argument, which starts with the ASCII `marker`, into a character and the
    /// sequence's length. `None` if no escape sequence decodes.
    fn decode(
        source: &str,
        marker: char,
        plus_as_space: bool,
        escape: impl Fn(&str) -> Option<(char, usize)>,
    ) -> Option<Self> {
        let mut decoded: Option<Self> = None;
        let mut copied = 0;
        let mut at = 0;
        while let Some(offset) = source[at..].find(marker) {
            let start = at + offset;
            at = start + 1;
            if let Some((c, len)) = escape(&source[start..]) {
                let decoded = decoded.get_or_insert_with(|| Self {
                    text: String::with_capacity(source.len()),
                    parts: Vec::new(),
                    escapes: Vec::new(),
                });
                decoded.push_run(&source[copied..start], copied, plus_as_space);
                decoded.parts.push(Part {
                    decoded: decoded.text.len(),
                    source: start,
                });
                decoded.escapes.push(start..start + len);
                decoded.text.push(c);
                copied = start + len;
                at = copied;
            }
        }
        let mut decoded = decoded?;
        decoded.push_run(&source[copied..], copied, plus_as_space);
        decoded.parts.push(Part {
            decoded: decoded.text.len(),
            source: source.len(),
        });
        Some(decoded)
    }

    /// Appends text between escape sequences, which maps byte for byte.
    fn push_run(&mut self, run: &str, source: usize, plus_as_space: bool) {
        if run.is_empty() {
            return;
        }
        self.parts.push(Part {
            decoded: self.text.len(),
            source,
        });
        if plus_as_space && run.contains('+') {
            self.text.push_str(&run.replace('+', " "));
        } else {
            self.text.push_str(run);
        }
    }

    /// The source range that a range of the decoded text (on character boundaries) came from.
    fn source_range(&self, span: Range<usize>) -> Range<usize> {
        self.source_offset(span.start)..self.source_offset(span.end)
    }

    /// Where a character boundary of the decoded text is in the source: inside a copied run,
    /// or at the start of a part.
    fn source_offset(&self, offset: usize) -> usize {
        let index = self.parts.partition_point(|part| part.decoded <= offset) - 1;
        let part = self.parts[index];
        part.source + (offset - part.decoded)
    }
}

/// Decodes `\uXXXX`, or a `\uXXXX\uXXXX` surrogate pair, at the start of `rest`.
fn json_unicode_escape(rest: &str) -> Option<(char, usize)> {
    let high = hex_number(rest.get(2..6)?)?;
    if !(0xD800..0xDC00).contains(&high) {
        return Some((char::from_u32(high)?, 6));
    }
    let low = rest.get(6..12)?.strip_prefix("\\u").and_then(hex_number)?;
    if !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    let c = char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?;
    Some((c, 12))
}

/// Decodes the `%XX` sequences of one UTF-8 character at the start of `rest`.
fn percent_escape(rest: &str) -> Option<(char, usize)> {
    let byte_at = |index: usize| {
        let escape = rest.get(index * 3..index * 3 + 3)?.strip_prefix('%')?;
        u8::try_from(hex_number(escape)?).ok()
    };
    let first = byte_at(0)?;
    let width = match first {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let mut bytes = [first, 0, 0, 0];
    for (index, byte) in bytes.iter_mut().enumerate().take(width).skip(1) {
        *byte = byte_at(index)?;
    }
    let c = std::str::from_utf8(&bytes[..width]).ok()?.chars().next()?;
    Some((c, width * 3))
}

/// Parses hex digits only (no sign, unlike `from_str_radix`).
fn hex_number(digits: &str) -> Option<u32> {
    digits
        .chars()
        .try_fold(0, |number, c| Some(number * 16 + c.to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn any_long_enough_piece_of_a_secret_is_redacted() {
        let token = "ghx_0123456789abcdefghijKLMNOPQRSTUVWXYZ";
        let redactor = Redactor::new(["https://api.example.com/v1/search"]).with_secrets([token]);
        // The first 20 characters, as a server might log them.
        assert_eq!(
            redactor.redact(&format!("token {}…", &token[..20])),
            "token ***…"
        );
        // A piece from the middle, and the two halves of a cut.
        assert_eq!(redactor.redact(&format!("x{}y", &token[7..26])), "x***y");
        assert_eq!(redactor.redact(&token[..19]), "***");
        assert_eq!(redactor.redact(&token[19..]), "***");
        // Eleven characters are not enough to count.
        assert_eq!(redactor.redact(&token[3..14]), &token[3..14]);
        // A plain setting redacts whole, never by its pieces.
        let text = "see https://api.example.com/v2/other";
        assert_eq!(redactor.redact(text), text);
        // More values keep the secrets.
        let more = redactor.with_values(["another-known-value"]);
        assert_eq!(more.redact(&token[5..25]), "***");
    }

    fn redact(values: &[&str], text: &str) -> String {
        Redactor::new(values).redact(text)
    }

    /// The encoded forms of `secret` that the module promises to catch from literal text.
    fn encoded_forms(secret: &str) -> Vec<String> {
        let json = serde_json::to_string(secret).unwrap();
        vec![
            secret.to_owned(),
            json[1..json.len() - 1].to_owned(),
            utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string(),
            url::form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
            STANDARD.encode(secret),
            STANDARD_NO_PAD.encode(secret),
            URL_SAFE.encode(secret),
            URL_SAFE_NO_PAD.encode(secret),
        ]
    }

    #[test]
    fn known_value_in_a_stderr_line() {
        assert_eq!(
            redact(
                &["s3cr3t-Value-123"],
                "fatal: auth failed with key s3cr3t-Value-123 (401)"
            ),
            "fatal: auth failed with key *** (401)"
        );
    }

    #[test]
    fn slack_token_in_a_stderr_line() {
        let line = "[ERROR] slack: invalid_auth for xoxb-2837465019-5647382910123-AbCdEfGhIjKlMnOpQrStUvWx, retrying";
        assert_eq!(
            Redactor::empty().redact(line),
            "[ERROR] slack: invalid_auth for ***, retrying"
        );
    }

    #[test]
    fn json_body_with_an_escaped_secret() {
        let secret = r#"pa"ss\wo{rd}.*$"#;
        let body = serde_json::to_string(&json!({
            "error": format!("bad credentials: {secret}"),
            "line": format!("a\n{secret}\tb"),
        }))
        .unwrap();
        assert!(body.contains(r#"pa\"ss\\wo{rd}"#), "{body}");
        let out = redact(&[secret], &body);
        let parsed: Value = serde_json::from_str(&out).expect("still valid JSON");
        assert_eq!(parsed["error"], "bad credentials: ***");
        assert_eq!(parsed["line"], "a\n***\tb");
    }

    #[test]
    fn json_nested_in_json_and_ascii_escaped_json() {
        let secret = "pässwörd\"-🔑-42";
        let inner = serde_json::to_string(&json!({ "text": secret })).unwrap();
        let outer = serde_json::to_string(&json!({ "result": inner })).unwrap();
        let out = redact(&[secret], &outer);
        let inner_out: Value = serde_json::from_str(
            serde_json::from_str::<Value>(&out).unwrap()["result"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(inner_out["text"], "***");
        // What Python's json.dumps writes by default, and `\/` as PHP writes it.
        let python = r#"{"v": "p\u00e4ssw\u00f6rd\"-\ud83d\udd11-42", "w": "x\/y-secret-\/z"}"#;
        assert_eq!(
            redact(&[secret, "x/y-secret-/z"], python),
            r#"{"v": "***", "w": "***"}"#
        );
    }

    #[test]
    fn matches_take_whole_escape_sequences() {
        // The known value starts inside `\n` and `%41`: the whole escape goes, so that the
        // JSON stays valid and nothing dangles.
        let out = redact(&["nabc-secret-1"], r#"{"m":"x\nabc-secret-1"}"#);
        assert_eq!(out, r#"{"m":"x***"}"#);
        assert!(serde_json::from_str::<Value>(&out).is_ok());
        assert_eq!(redact(&["1abc-secret"], "q=%41abc-secret&x"), "q=***&x");
    }

    #[test]
    fn url_userinfo_and_access_token() {
        assert_eq!(
            Redactor::empty().redact(
                "GET https://alice:s3cr@t@api.example.com/v1/items?page=2&access_token=abc123XYZ&x=1#top failed"
            ),
            "GET https://***@api.example.com/v1/items?page=2&access_token=***&x=1#top failed"
        );
        assert_eq!(
            Redactor::empty().redact("clone git+ssh://deploy@example.com/repo.git"),
            "clone git+ssh://***@example.com/repo.git"
        );
        // No userinfo: nothing to do.
        assert_eq!(
            Redactor::empty().redact(r#"{"url":"https:\/\/bob:pw@example.com\/x"}"#),
            r#"{"url":"https:\/\/***@example.com\/x"}"#
        );
        let plain = "see https://example.com/a@b and mail me@example.com";
        assert_eq!(Redactor::empty().redact(plain), plain);
    }

    #[test]
    fn query_and_env_parameters() {
        let cases = [
            (
                "https://x.io/cb?code=4/0AfJohX&state=ok",
                "https://x.io/cb?code=***&state=ok",
            ),
            (
                "https://x.io/#access_token=ya29.a0Af&expires_in=3599",
                "https://x.io/#access_token=***&expires_in=3599",
            ),
            (
                "?API_KEY=k-123&Signature=abc%2Bdef",
                "?API_KEY=***&Signature=***",
            ),
            (
                "s3.amazonaws.com/f?X-Amz-Signature=9f2c&X-Amz-Date=2024",
                "s3.amazonaws.com/f?X-Amz-Signature=***&X-Amz-Date=2024",
            ),
            (
                "/login?user=bob&pwd=hunter22&pass=x\"",
                "/login?user=bob&pwd=***&pass=***\"",
            ),
            (
                "env: GITHUB_TOKEN=abc123 OPENAI_API_KEY=sk-x",
                "env: GITHUB_TOKEN=*** OPENAI_API_KEY=***",
            ),
            (
                "PASSWORD=hunter2\nclient_secret=shh",
                "PASSWORD=***\nclient_secret=***",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(Redactor::empty().redact(text), expected, "{text}");
        }
        // Not parameters of a query, and not unmistakable names: left alone.
        let plain = "exit code=1, key=value, max_tokens=100, tokenize=yes, monkey=5";
        assert_eq!(Redactor::empty().redact(plain), plain);
    }

    #[test]
    fn authorization_headers() {
        let cases = [
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZA==",
                "Authorization: Basic ***",
            ),
            (
                "> authorization: bearer abc.def\r\n> accept: */*",
                "> authorization: bearer ***\r\n> accept: */*",
            ),
            (
                "Proxy-Authorization: Digest username=bob, response=6629fae4",
                "Proxy-Authorization: Digest ***",
            ),
            ("Authorization: ghp_short", "Authorization: ***"),
            // As a JSON member named like a secret, the whole value goes.
            (
                r#"{"Authorization": "token abc123", "Accept": "x"}"#,
                r#"{"Authorization": "***", "Accept": "x"}"#,
            ),
            (
                r#"headers: {\"authorization\":\"Bearer abc\"}"#,
                r#"headers: {\"authorization\":\"***\"}"#,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(Redactor::empty().redact(text), expected, "{text}");
        }
        let plain = "missing \"Authorization\" header; see authorization_endpoint";
        assert_eq!(Redactor::empty().redact(plain), plain);
    }

    #[test]
    fn bearer_and_basic_anywhere() {
        let cases = [
            (
                "curl -H 'X-Token: Bearer 0123456789abcdef' https://x",
                "curl -H 'X-Token: Bearer ***' https://x",
            ),
            ("sent BEARER eyJhbGciOiJIUzI1NiJ9", "sent BEARER ***"),
            (
                "proxy said: Basic YWxhZGRpbjpvcGVuc2VzYW1l then",
                "proxy said: Basic *** then",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(Redactor::empty().redact(text), expected, "{text}");
        }
        let plain = concat!(
            "Basic usage: pass a bearer token. Bearer authentication is basic stuff. ",
            r#"WWW-Authenticate: Bearer resource_metadata="https://x/.well-known/oauth", Bearer realm="mcp""#,
        );
        assert_eq!(Redactor::empty().redact(plain), plain);
    }

    #[test]
    fn token_shapes() {
        let tokens = [
            "ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz",
            "gho_16C7e42F292c6912E7710c838347Ae178B4a",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "xoxp-1234567890-1234567890123-abcdef",
            "xapp-1-A0123456789-1234567890123-abcdef0123456789",
            "sk-proj-AbCdEf0123456789GhIjKlMn",
            "sk-ant-api03-AbCdEf0123456789GhIjKlMnOp-QrSt",
            "sk_live_51HABCDEFabcdef0123456789",
            "rk_test_51HABCDEFabcdef0123456789",
            "lin_api_AbCdEf0123456789GhIjKlMnOpQrStUvWxYz01",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "phx_AbCdEf0123456789GhIjKl",
            "tvly-dev-AbCdEf0123456789GhIj",
            "AIzaSyA-1234567890abcdefghijklmnopqrstu",
        ];
        for token in tokens {
            for text in [
                format!("using {token} now"),
                format!("\"{token}\""),
                format!("x\\n{token}\\n"),
            ] {
                let out = Redactor::empty().redact(&text);
                assert_eq!(out, text.replace(token, REDACTED), "{text}");
            }
        }
        let plain = "desk-top risk-management-service-abcdef sk-learn task_live_thing";
        assert_eq!(Redactor::empty().redact(plain), plain);
    }

    #[test]
    fn pem_private_key_blocks() {
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaGBir/JXHFOqX3\n-----END RSA PRIVATE KEY-----";
        let text = format!("loaded key:\n{key}\nstarting");
        assert_eq!(
            Redactor::empty().redact(&text),
            "loaded key:\n***\nstarting"
        );
        let escaped = serde_json::to_string(&json!({ "key": key, "ok": true })).unwrap();
        assert_eq!(
            Redactor::empty().redact(&escaped),
            r#"{"key":"***","ok":true}"#
        );
        // A tail cut through the middle of a key, at either end.
        assert_eq!(
            Redactor::empty()
                .redact("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA"),
            "x\n***"
        );
        assert_eq!(
            Redactor::empty().redact("AAAAB3NzaC1yc2EAAAADAQABAAABAQ\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n-----END PRIVATE KEY-----\ndone"),
            "***\ndone"
        );
        assert_eq!(
            Redactor::empty().redact("error: no -----BEGIN PRIVATE KEY----- line found in key.pem"),
            "error: no *** line found in key.pem"
        );
        let public = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----";
        assert_eq!(Redactor::empty().redact(public), public);
    }

    #[test]
    fn short_values_only_where_they_stand_alone() {
        let redactor = Redactor::new(["abcd", "Zq9-x"]);
        assert_eq!(
            redactor.redact("abcdef xabcd abcd (abcd) abcd. key=abcd; Zq9-x Zq9-xy é-abcd-é éabcd"),
            "abcdef xabcd *** (***) ***. key=***; *** Zq9-xy é-***-é éabcd"
        );
    }

    #[test]
    fn ordinary_values_are_ignored() {
        let redactor = Redactor::new([
            "8080",
            "12345",
            "abc",
            "",
            "   ",
            "true",
            "LocalHost",
            "production",
            "****",
        ]);
        assert!(redactor.is_empty());
        let text = "listening on localhost:8080 (12345 requests, abc=true) in production ****";
        assert_eq!(redactor.redact(text), text);
        // Six digits and more may be a PIN or an account number.
        assert_eq!(
            redact(&["123456"], "pin 123456, port 1234567"),
            "pin ***, port 1234567"
        );
    }

    #[test]
    fn values_are_literal_and_trimmed() {
        let redactor = Redactor::new(["  .*(a|b)+[x]{2}$ \n"]);
        assert_eq!(
            redactor.redact("re: .*(a|b)+[x]{2}$ ok; aaaa"),
            "re: *** ok; aaaa"
        );
    }

    #[test]
    fn a_value_containing_another_is_removed_whole() {
        let redactor =
            Redactor::new(["token-part", "my-token-part-and-more", "part-and-more-tail"]);
        assert_eq!(redactor.redact("a my-token-part-and-more b"), "a *** b");
        assert_eq!(
            redactor.redact("a my-token-part-and-more-tail b"),
            "a *** b"
        );
        assert_eq!(redactor.redact("a token-part b"), "a *** b");
    }

    #[test]
    fn encoded_forms_of_known_values() {
        let secret = "my sécret/value+1?";
        let redactor = Redactor::new([secret]);
        for form in encoded_forms(secret) {
            let text = format!("[{form}]");
            assert_eq!(redactor.redact(&text), "[***]", "{form}");
        }
        // Other encoders: lower-case hex, `encodeURIComponent`, Go's `\u003c`.
        for form in [
            "my%20s%c3%a9cret%2fvalue%2b1%3f",
            "my%20s%C3%A9cret%2Fvalue%2B1%3F",
            r"my s\u00e9cret\/value\u002b1?",
        ] {
            assert_eq!(redactor.redact(&format!("q={form}&")), "q=***&", "{form}");
        }
    }

    #[test]
    fn redacts_json_values() {
        let redactor = Redactor::new(["known-secret-value"]);
        let mut value = json!({
            "name": "github",
            "env": { "GITHUB_TOKEN": "anything", "LOG_LEVEL": "debug", "empty_secret": "" },
            "headers": { "X-Api-Key": "k", "Authorization": "Bearer abc" },
            "oauth": { "accessToken": "t", "clientSecret": "s", "refresh_token": "r", "max_tokens": 5 },
            "password": "hunter2",
            "log": ["started", "using known-secret-value", 42, null],
            "known-secret-value": "keys are kept",
        });
        redactor.redact_json(&mut value);
        assert_eq!(
            value,
            json!({
                "name": "github",
                "env": { "GITHUB_TOKEN": "***", "LOG_LEVEL": "debug", "empty_secret": "" },
                "headers": { "X-Api-Key": "***", "Authorization": "***" },
                "oauth": { "accessToken": "***", "clientSecret": "***", "refresh_token": "***", "max_tokens": 5 },
                "password": "***",
                "log": ["started", "using ***", 42, null],
                "known-secret-value": "keys are kept",
            })
        );
    }

    #[test]
    fn json_members_named_like_secrets_in_text() {
        let body = r#"token endpoint said {"access_token":"opaque.value.1","token_type":"bearer","expires_in":3600,"apiKey":"k1","monkey":"banana"}"#;
        assert_eq!(
            Redactor::empty().redact(body),
            r#"token endpoint said {"access_token":"***","token_type":"bearer","expires_in":3600,"apiKey":"***","monkey":"banana"}"#
        );
        // Nested in a JSON string.
        assert_eq!(
            Redactor::empty().redact(r#"{"msg":"{\"access_token\":\"abc123\"}"}"#),
            r#"{"msg":"{\"access_token\":\"***\"}"}"#
        );
        // Only looks like a member once unescaped: the JSON stays valid.
        let tricky = r#"{"a":"\"token\": \"\\","b":"c"}"#;
        assert_eq!(Redactor::empty().redact(tricky), tricky);
    }

    #[test]
    fn unicode_and_odd_input_does_not_panic() {
        let redactor = Redactor::new(["ключ-секрет", "🔑🔑🔑🔑", "abcd"]);
        let text =
            "é ключ-секрет 🔑🔑🔑🔑 %E2%82 %F0%9F%94%91 \\ud83d \\u12 \\ % + bearer \u{0} abcd€";
        assert_eq!(
            redactor.redact(text),
            "é *** *** %E2%82 %F0%9F%94%91 \\ud83d \\u12 \\ % + bearer \u{0} ***€"
        );
        for text in [
            "",
            "%",
            "\\",
            "\\u",
            "é%",
            "-----BEGIN PRIVATE KEY-----",
            "https://@",
            "Basic ====",
        ] {
            let out = redactor.redact(text);
            assert_eq!(redactor.redact(&out), out);
        }
    }

    #[test]
    fn redaction_is_idempotent_on_tricky_neighbours() {
        let redactor = Redactor::new(["abcd", "LONGSECRET1", "**abc12345", "se/cret-pass"]);
        for text in [
            "abcdLONGSECRET1",
            "Q-LONGSECRET1*abc12345",
            "https://user:se/cret-pass@host/x",
            "token=abcd&x",
            "Bearer ab***",
        ] {
            let once = redactor.redact(text);
            assert_eq!(redactor.redact(&once), once, "{text}");
        }
        assert_eq!(
            redactor.redact("https://user:se/cret-pass@host/x"),
            "https://***@host/x"
        );
    }

    #[test]
    fn sharing_and_building_up() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<Redactor>();
        let redactor = Redactor::empty();
        assert!(redactor.is_empty());
        let redactor = redactor
            .with_values(["first-secret"])
            .with_values(vec![String::from("second-secret")]);
        assert!(!redactor.is_empty());
        let shared = redactor.clone();
        let handle = std::thread::spawn(move || shared.redact("first-secret second-secret"));
        assert_eq!(handle.join().unwrap(), "*** ***");
        let debug = format!("{redactor:?}");
        assert!(!debug.contains("secret"), "{debug}");
    }

    #[test]
    fn very_long_values() {
        let secret: String = (0..100_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let redactor = Redactor::new([secret.as_str(), "small-secret"]);
        let text = format!("x {secret} y {} z small-secret", STANDARD.encode(&secret));
        assert_eq!(redactor.redact(&text), "x *** y *** z ***");
    }

    #[test]
    fn a_large_stderr_tail_is_linear() {
        let secrets: Vec<String> = (0..50)
            .map(|i| format!("secret-{i:02}-{}", "Xy7".repeat(i % 7 + 2)))
            .collect();
        let mut redactor_values: Vec<&str> = secrets.iter().map(String::as_str).collect();
        redactor_values.push("abcd");
        let redactor = Redactor::new(&redactor_values);
        let mut tail = String::new();
        let mut i = 0;
        while tail.len() < 64 * 1024 {
            tail.push_str(&format!(
                "line {i}: abcd did {} at https://x.io/?token=t{i} 100% ok\\n\n",
                secrets[i % 50]
            ));
            i += 1;
        }
        let start = Instant::now();
        let out = redactor.redact(&tail);
        let elapsed = start.elapsed();
        assert!(secrets.iter().all(|secret| !out.contains(secret.as_str())));
        assert!(!out.contains("abcd"));
        // Generous, for unoptimised builds: quadratic behaviour would take far longer.
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    }

    fn secret_char() -> impl Strategy<Value = char> {
        prop_oneof![
            4 => prop::char::range('a', 'z'),
            2 => prop::char::range('0', '9'),
            4 => prop::sample::select(r#".*+?()[]{}|^$\"/%&=#@:;,' "#.chars().collect::<Vec<_>>()),
            1 => prop::char::range('\u{0}', '\u{1f}'),
            2 => any::<char>(),
        ]
    }

    fn secret() -> impl Strategy<Value = String> {
        prop::collection::vec(secret_char(), 8..40)
            .prop_map(String::from_iter)
            .prop_filter("a redactable value", |s| is_redactable(s.trim()))
    }

    /// Random text around secrets: any characters, with the ones that matter to the
    /// decoders and rules made frequent.
    fn filler() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                3 => any::<char>(),
                3 => prop::char::range('a', 'z'),
                2 => prop::sample::select(r#" %+\"=&?@:/*-_"#.chars().collect::<Vec<_>>()),
            ],
            0..30,
        )
        .prop_map(String::from_iter)
    }

    /// Pieces of text that trigger the pattern rules and the decoders.
    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            filler(),
            prop::sample::select(vec![
                "Bearer ",
                "Basic ",
                "Authorization: ",
                "token=",
                "?code=",
                "https://",
                "@",
                ":",
                "-----BEGIN PRIVATE KEY-----\n",
                "\n-----END PRIVATE KEY-----",
                "ghp_",
                "xoxb-",
                "eyJ",
                ".",
                "\\",
                "\\n",
                "\\u00",
                "%",
                "%2",
                "\"",
                "\"token\": \"",
                "*",
                "***",
                "\n",
            ])
            .prop_map(str::to_owned),
            "[A-Za-z0-9+/=_-]{4,24}",
        ]
    }

    #[test]
    fn every_rule_compiles() {
        for rule in &RULES {
            rule.regex.get();
        }
    }

    /// Text made of the rules' words in random ASCII case, Unicode look-alikes (Kelvin sign,
    /// long s) and rule syntax, where the rules match often.
    fn rule_text() -> impl Strategy<Value = String> {
        let words = vec![
            "token",
            "secret",
            "key",
            "apikey",
            "password",
            "passwd",
            "signature",
            "pass",
            "pwd",
            "auth",
            "sig",
            "code",
            "authorization",
            "bearer",
            "basic",
            "cookie",
            "-----BEGIN ",
            "-----END ",
            "PRIVATE KEY-----",
            "\n",
            "://",
            "@",
            "=",
            "\"",
            ":",
            "?",
            "&",
            ";",
            "_",
            "-",
            ".",
            " ",
            "ghp_",
            "github_pat_",
            "xoxb-",
            "xapp-",
            "sk-",
            "sk-ant-",
            "rk_live_",
            "sk_test_",
            "lin_api_",
            "AKIA",
            "ASIA",
            "eyJ",
            "phx_",
            "tvly-",
            "AIza",
            "\u{212a}",
            "\u{17f}",
            "\u{2003}",
            "@@",
            "user:pass@",
            "a@",
            "@b",
        ];
        let around = |options: &'static [&'static str]| prop::sample::select(options.to_vec());
        let word = (
            around(&["", "?", "&", " ", "x_", "a.b-", "\u{212a}_"]),
            prop::sample::select(words),
            around(&["", "=", "\"", "\": \"", " ", "_", "@"]),
            any::<u64>(),
        )
            .prop_map(|(before, word, after, cases)| {
                format!("{before}{word}{after}")
                    .chars()
                    .enumerate()
                    .map(|(at, c)| {
                        if cases >> (at % 64) & 1 == 1 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect::<String>()
            });
        let piece = prop_oneof![
            3 => word,
            2 => "[A-Za-z0-9]{1,24}",
            1 => filler(),
        ];
        prop::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat())
    }

    #[test]
    fn rule_patterns_need_no_unicode_tables() {
        for rule in &RULES {
            plugboard_test_support::unicode_check::assert_needs_no_unicode_tables(
                rule.regex.pattern(),
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn userinfo_is_found_as_the_regex_finds_it(text in rule_text()) {
            let regex =
                regex::Regex::new(concat!("://[^", white_space!(), r#"/?#"'<>\\]+@"#)).unwrap();
            let expected: Vec<_> = regex
                .find_iter(&text)
                .map(|found| found.start() + 3..found.end() - 1)
                .collect();
            let mut found = Vec::new();
            userinfo_spans(&text, &mut found);
            prop_assert_eq!(found, expected, "in {:?}", text);
        }

        #[test]
        fn a_rule_matches_only_text_with_one_of_its_triggers(text in rule_text()) {
            let candidates = triggers().in_text(&text);
            for (index, rule) in RULES.iter().enumerate() {
                prop_assert!(
                    regex_rules::has(candidates, index) || !rule.regex.get().is_match(&text),
                    "rule {index} matches {text:?} without a trigger"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn a_secret_never_survives_in_any_form(
            secret in secret(),
            before in filler(),
            after in filler(),
            form in 0..8usize,
        ) {
            let forms = encoded_forms(&secret);
            let text = format!("{before}{}{after}", forms[form]);
            let out = Redactor::new([&secret]).redact(&text);
            for encoded in &forms {
                prop_assert!(!out.contains(encoded.as_str()), "{encoded:?} in {out:?}");
            }
        }

        #[test]
        fn redaction_is_idempotent(
            secrets in prop::collection::vec(
                prop_oneof![secret(), "[a-z0-9]{4,7}", "[a-z]{8,12}"], 0..4),
            pieces in prop::collection::vec((fragment(), 0..12usize), 0..12),
        ) {
            let redactor = Redactor::new(&secrets);
            let mut text = String::new();
            for (piece, pick) in pieces {
                match secrets.get(pick % 4) {
                    Some(secret) if pick < 8 => text.push_str(&encoded_forms(secret)[pick]),
                    _ => text.push_str(&piece),
                }
            }
            let once = redactor.redact(&text);
            prop_assert_eq!(redactor.redact(&once), once.clone());
            let long = |secret: &&String| {
                is_redactable(secret.trim()) && secret.trim().chars().count() >= STANDALONE_BELOW_CHARS
            };
            for secret in secrets.iter().filter(long) {
                for encoded in encoded_forms(secret) {
                    prop_assert!(!once.contains(&encoded), "{encoded:?} in {once:?}");
                }
            }
            let mut value = json!({ "text": text, "token": "t", "list": [once] });
            redactor.redact_json(&mut value);
        }

        #[test]
        fn redacted_json_stays_valid(
            secrets in prop::collection::vec(secret(), 1..3),
            members in prop::collection::vec(
                ("[a-z_]{1,12}", prop::collection::vec((fragment(), 0..6usize), 0..6)), 0..6),
        ) {
            let redactor = Redactor::new(&secrets);
            let mut object = serde_json::Map::new();
            for (key, pieces) in members {
                let mut text = String::new();
                for (piece, pick) in pieces {
                    match secrets.get(pick) {
                        Some(secret) => text.push_str(secret),
                        None => text.push_str(&piece),
                    }
                }
                object.insert(key, Value::String(text));
            }
            let value = Value::Object(object);
            for text in [value.to_string(), serde_json::to_string_pretty(&value).unwrap()] {
                let out = redactor.redact(&text);
                prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "{text:?} became {out:?}");
            }
        }

        #[test]
        fn plain_words_are_unchanged(text in "[a-z ]{0,200}") {
            prop_assert_eq!(Redactor::empty().redact(&text), text);
        }

        #[test]
        fn nested_secrets_are_all_removed(
            outer in secret(),
            cut in (0..20usize, 8..20usize),
            affixes in ("[a-z]{1,5}", "[a-z]{1,5}"),
            order in Just(()).prop_perturb(|_, mut rng| rng.random::<u32>()),
            separator in filler(),
        ) {
            let chars: Vec<char> = outer.chars().collect();
            let start = cut.0.min(chars.len() - 8);
            let end = (start + cut.1).min(chars.len());
            let inner: String = chars[start..end].iter().collect();
            let wider = format!("{}{outer}{}", affixes.0, affixes.1);
            prop_assume!(is_redactable(&inner));
            let mut secrets = vec![inner, outer, wider];
            secrets.rotate_left(order as usize % 3);
            let redactor = Redactor::new(&secrets);
            let text = secrets.join(&separator);
            let out = redactor.redact(&text);
            for secret in &secrets {
                prop_assert!(!out.contains(secret.as_str()), "{secret:?} in {out:?}");
            }
        }
    }
}
