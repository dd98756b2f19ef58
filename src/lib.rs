//! The `plugboard` command line: argument parsing and output over the core's use cases.
//!
//! The core is a workspace of crates along its layers (ARCHITECTURE.md maps them); this crate
//! re-exports their modules under one name, so the command line and its integration tests
//! reach every layer as `plugboard::<module>`.

pub mod cli;

pub use plugboard_base::{clock, failure, fs, heap, pin_report, regex_rules, tls};
pub use plugboard_ops::{
    admission, browser, budget, checks, clients, credentials, custom, deps, diagnostics, doctor,
    gateway, health, install, launch_diff, lifecycle, local_http, manage, pinning, reconfigure,
    run, sandbox, session, tokens, tools, updates,
};
pub use plugboard_sources::{bundles, catalog, form, market, mcpb, policy, registry, search};
pub use plugboard_store::{config, redact, remembered_tools, secret_shapes, secrets};
pub use plugboard_wire::{connect, credential_probe, oauth, probe, resolve, runtimes, schema};
