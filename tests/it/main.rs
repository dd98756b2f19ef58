//! Plugboard's integration tests: one binary, real processes (the `plugboard` CLI, fixture MCP
//! servers, third-party servers), a real Secret Service when the test needs one.

mod support;

mod architecture;
mod catalog_files;
mod cli_servers;
mod config_concurrency;
mod keyring;
