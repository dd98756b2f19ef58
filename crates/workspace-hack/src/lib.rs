//! One feature set for every third-party dependency, whichever workspace members a build
//! selects. Cargo turns on a dependency's features according to the packages being built, so
//! `cargo build -p mcp-fixture`, `cargo test --workspace` and the desktop app's build would each
//! compile tokio, serde_json and every crate of ours above them with a feature set of their own.
//! Every member depends on this crate, whose dependencies ask for the union of those features:
//! each dependency is then compiled once for all of them. It has no code.
//!
//! Regenerate its dependencies after a change of dependencies or features:
//! `cargo hakari generate && cargo hakari manage-deps` (`cargo install cargo-hakari`).
