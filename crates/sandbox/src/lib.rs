//! The sandbox of a stdio server. [`Settings`] are what the user chose for a server (kept in
//! its config); [`plan`] turns them, with what the launch needs (its runtime, caches, the
//! folders its arguments name), into a [`Plan`] of grants; [`prepare`] builds the kernel's
//! Landlock ruleset for it in the parent, and [`Prepared::child_setup`] is the function that
//! runs in the child between fork and exec: no new privileges, then the ruleset, which binds
//! the server and everything it starts. [`Enforcement`] says what the kernel actually enforces,
//! so nothing claims a protection that is not in force.

mod enforce;
mod kernel;
mod plan;
mod settings;
mod summary;

pub use enforce::{Enforcement, NetworkEnforcement, Prepared, prepare};
pub use kernel::landlock_abi;
pub use plan::{Grant, Inputs, Plan, PlanError, Reason, plan, private_tmp};
pub use settings::{Access, HostPort, Network, Settings};
pub use summary::{display_path, summary};
