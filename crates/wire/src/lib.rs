//! Talking to MCP servers: connections over stdio, streamable HTTP and SSE in both protocol eras,
//! OAuth, command resolution, the schema engine and the staged probe.
//!
//! Modules of the layers below are reachable here as `crate::<module>`, like this crate's own.

pub mod connect;
pub mod credential_probe;
pub mod headers_helper;
pub mod oauth;
pub mod probe;
pub mod resolve;
pub mod runtimes;
pub mod schema;

use plugboard_base::{failure, pin_report, tls};
use plugboard_store::{config, redact, secrets};
