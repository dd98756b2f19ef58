//! The gateway: one MCP endpoint in front of a profile's servers (`plugboard serve`), what a
//! client launches instead of one `plugboard run` per server.
//!
//! - [`profiles`]: named sets of servers with their permission rules (`default`: every enabled
//!   server), following renames and removals;
//! - [`permissions`]: `allow | ask | deny` per call, the most specific rule winning;
//! - [`hub`]: the profile's servers as sessions, started at once, failures isolated and
//!   restarted with backoff, namespaced lists, the call pipeline;
//! - [`app_asks`]: "may this call run?" put to the Plugboard app when the client cannot ask;
//! - [`known`]: what a server not started yet offers (its last test), and whether a server's
//!   tools are the approved ones;
//! - [`hooks`]: commands a profile runs before and after the calls they match;
//! - [`activity`]: the record of every call (its shape, never its values);
//! - [`serve`]: a client's side, in either protocol era, and serving it on stdio;
//! - [`server_logs`]: the servers' log messages on their way to the clients (levels, a limit);
//! - [`user_turns`]: a server's questions for the user, one at a time and a bounded number;
//! - [`http`]: serving clients over streamable HTTP on loopback (`serve --http`), and
//!   [`access`]: who may (the profile's bearer token, the host and origin checks);
//! - [`status`]: the gateways running now.

pub mod access;
pub mod activity;
pub mod app_asks;
pub mod hooks;
pub mod http;
pub mod hub;
pub mod known;
pub mod permissions;
pub mod profiles;
pub mod serve;
pub mod server_logs;
pub mod status;
pub mod user_turns;

pub use permissions::Permission;
pub use profiles::{DEFAULT_PROFILE, Profile, ProfileError, ProfileStore, servers_of};
