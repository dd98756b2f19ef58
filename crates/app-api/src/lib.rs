//! The desktop app's API: plain functions over the use cases with transport types (DTOs) and
//! `{code, message}` errors; the Tauri shell calls these.
//!
//! Modules of the layers below are reachable here as `crate::<module>`, like this crate's own.

pub mod api;

use plugboard_base::{clock, heap};
use plugboard_ops::{
    budget, checks, clients, command_line, custom, deps, diagnostics, doctor, gateway, install,
    launch_diff, launch_failure, lifecycle, manage, pinning, profile_overview, reconfigure, run,
    sandbox, session, tokens, tools, updates,
};
use plugboard_sources::{bundles, catalog, form, market, policy, registry};
use plugboard_store::{config, redact, secrets};
use plugboard_wire::{oauth, probe, runtimes, schema};
