//! Plugboard's integration tests: one binary, real processes (the `plugboard` CLI, fixture MCP
//! servers, third-party servers), a real Secret Service when the test needs one.

mod support;

mod api_tryit;
mod architecture;
mod bundles_cli;
mod catalog_files;
mod cli_call;
mod cli_input;
mod cli_servers;
mod cli_test;
mod clients_concurrency;
mod clients_files;
mod clients_follow;
mod clients_formats;
mod config_concurrency;
mod doctor;
mod eras;
mod file_store;
mod hostile_registry;
mod hostile_server;
mod keyring;
mod local_ports;
mod oauth_fixture;
mod oauth_flow;
mod oauth_keyring;
mod oauth_refusals;
mod one_door;
mod peers;
mod pinning;
mod policy_cli;
mod private_home;
mod probe_remote;
mod probe_stdio;
mod registry_cli;
mod registry_forms;
mod run_eras;
mod run_remote;
mod run_stdio;
mod secret_leaks;
mod session_everything;
mod session_fixture;
mod session_python;
mod terminal_output;
mod tools;
mod updates_cli;
