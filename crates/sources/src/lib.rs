//! Where installable servers come from: the curated catalog, the registries and their cache, MCPB
//! bundles, search, the marketplace, the organisation policy and the one form engine.
//!
//! Modules of the layers below are reachable here as `crate::<module>`, like this crate's own.

pub mod bundles;
pub mod catalog;
pub mod form;
pub mod market;
pub mod mcpb;
pub mod policy;
pub mod registry;
pub mod search;

use plugboard_base::tls;
use plugboard_store::{config, secrets};
use plugboard_wire::{connect, probe, runtimes};
