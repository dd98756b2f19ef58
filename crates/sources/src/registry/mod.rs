//! The MCP Registry: its `server.json` model, its HTTP API (v0.1, falling back to v0), the list
//! of registries to read (the official one, `PLUGBOARD_REGISTRY_URL`, settings), a versioned
//! atomic cache per registry in the config directory for offline use, and the sync that fills
//! it (a full pull the first time, the changes since then afterwards).
//!
//! - [`model`]: rows and `server.json`, read leniently (the data is looser than the schema);
//! - [`client`]: the API, with per-registry error classification;
//! - [`sources`]: which registries, in which order, and the dependency-pinning setting;
//! - [`cache`]: the JSON Lines cache, brief records in memory, full rows read on demand;
//! - [`sync`]: full and incremental sync with progress;
//! - [`listing`]: the caches merged into one listing, first registry first;
//! - [`time`]: the RFC 3339 timestamps the registry writes.
//!
//! Turning a row into an install form is the form engine's job (`form::server_json`).

pub mod cache;
pub mod client;
pub mod listing;
pub mod model;
pub mod removed;
pub mod sources;
pub mod sync;
pub mod time;

pub use client::{ApiVersion, FetchError, RegistryClient};
pub use listing::{Listing, RowRef};
pub use model::{RegistryRow, ServerJson, Status};
pub use sources::{OFFICIAL_REGISTRY, REGISTRY_URL_ENV, RegistrySource};
pub use sync::{SyncProgress, SyncReport, sync_registry};
