//! The gateway: one MCP endpoint in front of a profile's servers (`plugboard serve`), what a
//! client launches instead of one `plugboard run` per server.
//!
//! - [`profiles`]: named sets of servers with their permission rules (`default`: every enabled
//!   server), following renames and removals;
//! - [`permissions`]: `allow | ask | deny` per call, the most specific rule winning;
//! - [`hub`]: the profile's servers as sessions, started at once, failures isolated and
//!   restarted with backoff, namespaced lists, the call pipeline;
//! - [`hooks`]: commands a profile runs before and after the calls they match;
//! - [`activity`]: the record of every call (its shape, never its values);
//! - [`serve`]: the client's side on stdio, in either protocol era;
//! - [`status`]: the gateways running now.

pub mod activity;
pub mod hooks;
pub mod hub;
pub mod permissions;
pub mod profiles;
pub mod serve;
pub mod status;

pub use permissions::Permission;
pub use profiles::{DEFAULT_PROFILE, Profile, ProfileError, ProfileStore, servers_of};
