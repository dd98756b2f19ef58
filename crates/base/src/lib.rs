//! Small shared pieces every layer uses: the clock, failure kinds, TLS setup, the heap settings,
//! pin reports and the regex rules.
//!
//! Modules of the layers below are reachable here as `crate::<module>`, like this crate's own.

pub mod clock;
pub mod failure;
pub mod fs;
pub mod heap;
pub mod pin_report;
pub mod regex_rules;
pub mod tls;
#[cfg(any(test, feature = "test-support"))]
pub mod unicode_check;
