//! Plugboard's core: everything the CLI and the desktop app do, with no UI and no Tauri.
//!
//! Data flows one way: cli/app → [`config`] + [`catalog`] + [`secrets`] → connect → probe →
//! [`redact`] → result. See ARCHITECTURE.md for the map and the invariants.

pub mod catalog;
pub mod cli;
pub mod config;
pub mod form;
pub mod manage;
pub mod secrets;
