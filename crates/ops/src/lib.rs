//! Every use case, once: install and manage servers, test and health, tools and the budget,
//! sessions, `run`, the doctor, other clients' files, updates and diagnostics. The CLI and the app
//! call these.
//!
//! Modules of the layers below are reachable here as `crate::<module>`, like this crate's own.

pub mod admission;
pub mod browser;
pub mod budget;
pub mod checks;
pub mod clients;
pub mod command_line;
pub mod credentials;
pub mod custom;
pub mod deps;
pub mod diagnostics;
pub mod doctor;
pub mod gateway;
pub mod health;
pub mod install;
pub mod launch_diff;
pub mod launch_failure;
pub mod lifecycle;
pub mod local_http;
pub mod manage;
pub mod own_stdio;
pub mod pinning;
pub mod profile_overview;
pub mod reconfigure;
pub mod run;
pub mod sandbox;
pub mod session;
pub mod tokens;
pub mod tools;
pub mod traffic;
pub mod updates;

use plugboard_base::{clock, fs, pin_report, regex_rules, tls};
use plugboard_sources::{bundles, catalog, form, market, mcpb, policy, registry};
use plugboard_store::{config, redact, remembered_tools, secret_shapes, secrets};
use plugboard_wire::{connect, headers_helper, oauth, probe, resolve, runtimes, schema};
