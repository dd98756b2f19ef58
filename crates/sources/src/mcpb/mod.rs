//! MCPB bundles (the `.mcpb` zip files Claude Desktop installs with a double click): fetched
//! from a registry over https with their `fileSha256` checked (`fetch`), unpacked without
//! trusting them (`archive`), kept one directory per server in the config directory and
//! removed with it (`store`), their `manifest.json` read leniently (`manifest`) and their
//! declared `compatibility` checked before install (`compat`).
//!
//! The install form and the launch come from the manifest through the one form engine
//! (`form::mcpb`), like every other source.

pub mod archive;
pub mod compat;
pub mod fetch;
pub mod manifest;
pub mod store;

pub use archive::Limits;
pub use manifest::{Manifest, ManifestError};
pub use store::{BundleError, BundleStore, Unpacked};
