//! Plugboard's core: everything the CLI and the desktop app do, with no UI and no Tauri.
//!
//! Data flows one way: cli/app → [`config`] + [`catalog`] + [`secrets`] → connect → probe →
//! [`redact`] → result. See ARCHITECTURE.md for the map and the invariants.

pub mod api;
pub mod catalog;
pub mod checks;
pub mod cli;
pub mod clients;
pub mod config;
pub mod connect;
pub mod diagnostics;
pub mod doctor;
pub mod form;
pub mod health;
pub mod manage;
pub mod oauth;
pub mod pinning;
pub mod probe;
pub mod redact;
pub mod regex_rules;
pub mod resolve;
pub mod run;
pub mod schema;
pub mod secrets;
pub mod session;
pub mod tls;
