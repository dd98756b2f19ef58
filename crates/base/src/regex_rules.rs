//! Regex rules over text from servers and users, compiled the first time a text may match
//! them and skipped on text that cannot.
//!
//! Redaction and tool flagging each apply a handful of regexes to every string of a test
//! result. Compiling them all (Unicode classes, case folding, bounded repetition) costs more
//! CPU than a whole connection test to a fast server, and most texts match none of them.
//! So each rule names its *triggers*: literals at least one of which every match of the
//! rule contains. A table lookup per byte finds the triggers in a text; only the rules with a
//! trigger present are compiled (once per process) and run.
//!
//! Triggers are compared ignoring ASCII case, as the rules ignore case.
//!
//! The patterns ask for none of `regex`'s Unicode tables: Unicode case folding, the Perl
//! classes and the property names make a regex many times costlier to compile. So patterns
//! ignore case the ASCII way (`(?i-u)`), use ASCII `\b`, `\d` and `\w` (`(?-u)`), and say
//! "white space" with [`white_space!`], Unicode's white space, since a non-ASCII space must not
//! hide a word from a rule. Each rule set has a test that its patterns need no table (see
//! `plugboard_test_support::unicode_check::assert_needs_no_unicode_tables`).

use std::sync::OnceLock;

use regex::Regex;

/// The characters of Unicode's `White_Space` property, written to go inside a character
/// class: `concat!("[", white_space!(), "]")`, or `(?u-i:[...])` inside an ASCII-only group.
#[macro_export]
macro_rules! white_space {
    () => {
        r"\t\n\x0B\x0C\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"
    };
}
pub use crate::white_space;

/// A regex compiled on first use, with the literals one of which every match contains.
pub struct LazyRegex {
    pattern: &'static str,
    triggers: &'static [&'static str],
    regex: OnceLock<Regex>,
}

impl LazyRegex {
    /// `triggers` must not be empty, and every match of `pattern` must contain one of them
    /// (ignoring ASCII case).
    pub const fn new(pattern: &'static str, triggers: &'static [&'static str]) -> Self {
        Self {
            pattern,
            triggers,
            regex: OnceLock::new(),
        }
    }

    /// The compiled regex. Panics if the pattern is invalid, which a test of each rule set
    /// catches.
    pub fn get(&self) -> &Regex {
        self.regex
            .get_or_init(|| Regex::new(self.pattern).expect("rule patterns are valid"))
    }

    pub fn pattern(&self) -> &'static str {
        self.pattern
    }

    pub fn triggers(&self) -> &'static [&'static str] {
        self.triggers
    }
}

/// Finds which of a list of rules (at most 64, with at most 128 triggers) can match a text.
///
/// Without an automaton: building one for these few dozen literals cost a short-lived
/// `plugboard test` more CPU than all its JSON parsing. A table of the (lower-cased) byte
/// pairs the triggers start with rules out almost every position of a text at the cost of a
/// lookup; at the rest, the triggers starting with that byte are compared in place.
pub struct Triggers {
    /// The triggers, lower-cased, each with the index of its rule.
    triggers: Vec<(&'static [u8], usize)>,
    /// For each lower-cased first byte, the triggers that start with it, as bits.
    by_first: [u128; 256],
    /// Bit `a * 256 + b` is set when a trigger starts with bytes `a b` (lower-cased); a
    /// one-byte trigger sets every pair it starts, and `a 0` for the end of the text.
    pairs: Box<[u64; 1024]>,
    all: u64,
}

impl Triggers {
    pub fn new<'a>(rules: impl IntoIterator<Item = &'a LazyRegex>) -> Self {
        let mut triggers = Vec::new();
        let mut count = 0;
        for (index, rule) in rules.into_iter().enumerate() {
            assert!(
                index < 64 && !rule.triggers.is_empty(),
                "at most 64 rules, each with a trigger"
            );
            for trigger in rule.triggers {
                assert!(
                    !trigger.is_empty() && trigger.is_ascii(),
                    "a trigger is ASCII text"
                );
                triggers.push((trigger.as_bytes(), index));
            }
            count = index + 1;
        }
        assert!(triggers.len() <= 128, "at most 128 triggers");
        let mut by_first = [0u128; 256];
        let mut pairs = Box::new([0u64; 1024]);
        let mut set = |a: u8, b: u8| {
            let bit = usize::from(a) << 8 | usize::from(b);
            pairs[bit / 64] |= 1 << (bit % 64);
        };
        for (number, (trigger, _)) in triggers.iter().enumerate() {
            let first = trigger[0].to_ascii_lowercase();
            by_first[usize::from(first)] |= 1 << number;
            match trigger.get(1) {
                Some(second) => set(first, second.to_ascii_lowercase()),
                None => (0..=u8::MAX).for_each(|b| set(first, b)),
            }
        }
        let all = if count == 64 {
            u64::MAX
        } else {
            (1 << count) - 1
        };
        Self {
            triggers,
            by_first,
            pairs,
            all,
        }
    }

    /// The rules that may match `text`, as bits by rule index: those with a trigger in it.
    pub fn in_text(&self, text: &str) -> u64 {
        let bytes = text.as_bytes();
        let mut found = 0;
        for (at, byte) in bytes.iter().enumerate() {
            let first = byte.to_ascii_lowercase();
            let second = bytes.get(at + 1).map_or(0, u8::to_ascii_lowercase);
            let bit = usize::from(first) << 8 | usize::from(second);
            if self.pairs[bit / 64] >> (bit % 64) & 1 == 0 {
                continue;
            }
            let mut candidates = self.by_first[usize::from(first)];
            while candidates != 0 {
                let (trigger, rule) = self.triggers[candidates.trailing_zeros() as usize];
                candidates &= candidates - 1;
                if bytes[at..]
                    .get(..trigger.len())
                    .is_some_and(|here| here.eq_ignore_ascii_case(trigger))
                {
                    found |= 1 << rule;
                }
            }
            if found == self.all {
                break;
            }
        }
        found
    }
}

/// Whether bit `index` is set in `rules` (from [`Triggers::in_text`]).
pub fn has(rules: u64, index: usize) -> bool {
    rules >> index & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugboard_test_support::unicode_check::{
        assert_needs_no_unicode_tables, unicode_tables_needed,
    };

    static RULES: [LazyRegex; 2] = [
        LazyRegex::new(r"(?i-u)secret=\w+", &["secret="]),
        LazyRegex::new(r"(?-u)\d{3}-\d{4}", &["-"]),
    ];

    #[test]
    fn only_rules_with_a_trigger_are_candidates() {
        let triggers = Triggers::new(&RULES);
        assert_eq!(triggers.in_text("nothing here"), 0);
        assert_eq!(triggers.in_text("SECRET=x"), 0b01);
        assert_eq!(triggers.in_text("call 555-1234"), 0b10);
        assert_eq!(triggers.in_text("secret=x 555-1234"), 0b11);
        assert!(has(0b10, 1) && !has(0b10, 0));
    }

    proptest::proptest! {
        #[test]
        fn triggers_are_found_exactly_where_they_occur(
            text in "(?s)(ke|KEY|y=|secret|SeCrEt=|-|=|x|\\n|é|[a-z ]{0,3}){0,12}"
        ) {
            static MANY: [LazyRegex; 3] = [
                LazyRegex::new("a", &["secret=", "key="]),
                LazyRegex::new("b", &["-"]),
                LazyRegex::new("c", &["ey=", "cret"]),
            ];
            let lower = text.to_ascii_lowercase();
            let mut expected = 0;
            for (index, rule) in MANY.iter().enumerate() {
                if rule.triggers().iter().any(|t| lower.contains(&t.to_ascii_lowercase())) {
                    expected |= 1 << index;
                }
            }
            proptest::prop_assert_eq!(Triggers::new(&MANY).in_text(&text), expected);
        }
    }

    #[test]
    fn the_rule_patterns_here_need_no_unicode_tables() {
        for rule in &RULES {
            assert_needs_no_unicode_tables(rule.pattern);
        }
    }

    #[test]
    fn patterns_that_need_unicode_tables_are_caught() {
        for pattern in [
            r"(?i)secret",
            r"\d+",
            r"[^\s]",
            r"\bword",
            r"\p{Greek}",
            r"(?i-u:a)(?i)b",
            r"(?-u:x)\w",
            concat!(r"(?i-u)a(?u:[", white_space!(), "])b"),
        ] {
            assert!(unicode_tables_needed(pattern).is_some(), "{pattern}");
        }
        for pattern in [
            r"(?i-u)secret",
            r"(?-u)\d+",
            r"(?-u:\b)word",
            concat!("[^", white_space!(), "]+"),
            concat!(r"(?i-u)a(?u-i:[", white_space!(), "])b"),
            r"(?i-u:a)[^x]",
        ] {
            assert_eq!(unicode_tables_needed(pattern), None, "{pattern}");
        }
    }
}
