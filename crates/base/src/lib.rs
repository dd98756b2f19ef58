//! Small shared pieces every layer uses: the clock, failure kinds, atomic file writes, TLS setup,
//! the heap settings, a JSON value's size, the kernel keyring, pin reports and the regex rules.
//! This crate depends on no other of ours.

pub mod clock;
pub mod failure;
pub mod fs;
pub mod heap;
pub mod json_size;
pub mod kernel_keyring;
pub mod pin_report;
pub mod regex_rules;
pub mod tls;
