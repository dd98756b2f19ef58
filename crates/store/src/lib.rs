//! What Plugboard keeps: the config store, the secret stores and the redaction of everything that
//! leaves the core.
//!
//! Modules of the layers below are reachable here as `crate::<module>`, like this crate's own.

pub mod config;
pub mod redact;
pub mod remembered_tools;
pub mod secret_shapes;
pub mod secrets;

use plugboard_base::regex_rules;
