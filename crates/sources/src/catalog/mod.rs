//! The integration catalog: entries, loading and validation, search.

mod load;
mod model;
mod search;

pub use crate::probe::{AuthErrorMatch, CredentialProbe};
pub use load::{CATEGORIES, CatalogError, dir_entries, embedded_entries, parse_entry};
pub use model::{
    CatalogAuth, CatalogOAuth, CatalogTransport, ConnectionOption, Credential, Entry, Field,
    FieldKind, Registration, RemoteTransport,
};
pub use search::Catalog;

/// The environment variable naming a directory of extra catalog entries.
pub const CATALOG_DIR_ENV: &str = "PLUGBOARD_CATALOG_DIR";
