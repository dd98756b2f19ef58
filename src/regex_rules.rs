//! Regex rules over text from servers and users, compiled the first time a text may match
//! them and skipped on text that cannot.
//!
//! Redaction and tool flagging each apply a handful of regexes to every string of a test
//! result. Compiling them all (Unicode classes, case folding, bounded repetition) costs more
//! CPU than a whole connection test to a fast server, and most texts match none of them.
//! So each rule names its *triggers*: literals at least one of which every match of the
//! rule contains. One small automaton finds the triggers in a text; only the rules with a
//! trigger present are compiled (once per process) and run.
//!
//! Triggers are compared ignoring ASCII case. A rule that ignores case the Unicode way also
//! matches `ſ` (long s) for `s` and `K` (Kelvin sign) for `k`: a text containing either
//! of those runs every rule, so skipping a rule never changes what is found.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::Regex;

/// The characters that Unicode simple case folding maps to ASCII letters.
const FOLDS_TO_ASCII: [char; 2] = ['\u{17F}', '\u{212A}'];

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

    pub fn triggers(&self) -> &'static [&'static str] {
        self.triggers
    }
}

/// Finds which of a list of rules (at most 64) can match a text.
pub struct Triggers {
    automaton: AhoCorasick,
    /// The index of the rule of each trigger, by pattern ID.
    rule_of: Vec<usize>,
    all: u64,
}

impl Triggers {
    pub fn new<'a>(rules: impl IntoIterator<Item = &'a LazyRegex>) -> Self {
        let mut rule_of = Vec::new();
        let mut patterns = Vec::new();
        let mut count = 0;
        for (index, rule) in rules.into_iter().enumerate() {
            assert!(
                index < 64 && !rule.triggers.is_empty(),
                "at most 64 rules, each with a trigger"
            );
            for trigger in rule.triggers {
                rule_of.push(index);
                patterns.push(*trigger);
            }
            count = index + 1;
        }
        // A contiguous NFA builds in a fraction of the time of the DFA that would be
        // chosen for so few patterns, and finds them about as fast. Dense transitions only
        // for the start state: a deeper dense prefix allocates more than twice the memory
        // (new pages for a short-lived process to fault in) and searches no faster here.
        let automaton = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .dense_depth(1)
            .ascii_case_insensitive(true)
            .build(&patterns)
            .expect("rule triggers make a small automaton");
        let all = if count == 64 {
            u64::MAX
        } else {
            (1 << count) - 1
        };
        Self {
            automaton,
            rule_of,
            all,
        }
    }

    /// The rules that may match `text`, as bits by rule index: those with a trigger in it.
    pub fn in_text(&self, text: &str) -> u64 {
        if text.contains(FOLDS_TO_ASCII) {
            return self.all;
        }
        let mut found = 0;
        for matched in self.automaton.find_overlapping_iter(text) {
            found |= 1 << self.rule_of[matched.pattern().as_usize()];
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

    static RULES: [LazyRegex; 2] = [
        LazyRegex::new(r"(?i)secret=\w+", &["secret="]),
        LazyRegex::new(r"\d{3}-\d{4}", &["-"]),
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

    #[test]
    fn unicode_case_folding_runs_every_rule() {
        let triggers = Triggers::new(&RULES);
        let text = "\u{17F}ecret=x";
        assert!(RULES[0].get().is_match(text));
        assert_eq!(triggers.in_text(text), 0b11);
        assert_eq!(triggers.in_text("\u{212A}"), 0b11);
    }
}
