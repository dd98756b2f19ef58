//! Plugboard's core: everything the CLI and the desktop app do, with no UI and no Tauri.
//!
//! Data flows one way: cli/app → [`config`] + [`catalog`] + [`secrets`] → connect → probe →
//! [`redact`] → result. See ARCHITECTURE.md for the map and the invariants.

pub mod api;
pub mod budget;
pub mod bundles;
pub mod catalog;
pub mod checks;
pub mod cli;
pub mod clients;
pub mod clock;
pub mod config;
pub mod connect;
pub mod deps;
pub mod diagnostics;
pub mod doctor;
pub mod failure;
pub mod form;
pub mod health;
pub mod heap;
pub mod local_http;
pub mod manage;
pub mod market;
pub mod mcpb;
pub mod oauth;
pub mod pin_report;
pub mod pinning;
pub mod policy;
pub mod probe;
pub mod redact;
pub mod regex_rules;
pub mod registry;
pub mod remembered_tools;
pub mod resolve;
pub mod run;
pub mod runtimes;
pub mod schema;
pub mod search;
pub mod secrets;
pub mod session;
pub mod tls;
pub mod tokens;
pub mod tools;
pub mod updates;
