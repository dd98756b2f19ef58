//! The `plugboard` command line: argument parsing and human/JSON output only. Every command calls
//! the core modules; nothing here decides anything the app would need too.
//!
//! Much of what the CLI prints comes from outside (servers, registries, other apps' files), so
//! every line goes through [`output::printable`]: the `println!` family is shadowed here, for
//! every module below, by macros that format and then make the text printable. JSON goes through
//! [`output::print_json`], whose escapes keep the content exact.

macro_rules! println {
    () => { ::std::println!() };
    ($($arg:tt)*) => {
        ::std::println!("{}", $crate::cli::output::printable(&::std::format!($($arg)*)))
    };
}
macro_rules! eprintln {
    () => { ::std::eprintln!() };
    ($($arg:tt)*) => {
        ::std::eprintln!("{}", $crate::cli::output::printable(&::std::format!($($arg)*)))
    };
}
macro_rules! eprint {
    ($($arg:tt)*) => {
        ::std::eprint!("{}", $crate::cli::output::printable(&::std::format!($($arg)*)))
    };
}

mod args;
mod ask;
mod auth_cmd;
mod call_cmd;
mod catalog_cmd;
mod clients_cmd;
mod diagnose_cmd;
mod doctor_cmd;
mod edit_form_cmd;
mod gateway_cmd;
mod input;
mod install_cmd;
mod output;
mod pin_cmd;
mod policy_cmd;
mod registry_cmd;
mod run_cmd;
mod sandbox_cmd;
mod secrets_cmd;
mod servers_cmd;
mod test_cmd;
mod tools_cmd;
mod tour;
mod update_cmd;

use std::process::ExitCode;

use crate::catalog::CatalogError;
use crate::config::ConfigError;
use crate::form::FormErrors;
use crate::manage::{ManageError, Servers};
use crate::secrets::SecretError;
use args::{Cli, Command};

/// A command's failure: the message for stderr and the exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    /// Exit 2: bad usage or configuration; nothing was changed.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: 2,
            message: message.into(),
        }
    }

    /// Exit 1: the operation ran and failed.
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            code: 1,
            message: message.into(),
        }
    }
}

impl From<ConfigError> for CliError {
    fn from(err: ConfigError) -> Self {
        match err {
            ConfigError::Io { .. } => CliError::failed(err.to_string()),
            _ => CliError::usage(err.to_string()),
        }
    }
}

impl From<SecretError> for CliError {
    fn from(err: SecretError) -> Self {
        CliError::usage(err.to_string())
    }
}

impl From<ManageError> for CliError {
    fn from(err: ManageError) -> Self {
        match err {
            ManageError::Config(e) => e.into(),
            ManageError::Secrets(e) => e.into(),
            other => CliError::usage(other.to_string()),
        }
    }
}

impl From<CatalogError> for CliError {
    fn from(err: CatalogError) -> Self {
        CliError::usage(err.to_string())
    }
}

impl From<FormErrors> for CliError {
    fn from(err: FormErrors) -> Self {
        CliError::usage(err.to_string())
    }
}

/// Parse the command line, run the command, print any error, and return the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse_args();
    if let Command::Run(args) = cli.command {
        // `run` passes its server's exit code through and writes nothing but MCP to stdout.
        return run_cmd::run(args);
    }
    if let Command::Serve(args) = cli.command {
        // Standard output carries MCP only.
        return match gateway_cmd::serve(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("error: {}", err.message);
                ExitCode::from(err.code)
            }
        };
    }
    quiet_on_closed_pipe();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli.command))) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            eprintln!("error: {}", err.message);
            ExitCode::from(err.code)
        }
        // The reader of stdout went away (`plugboard list | head`): stop quietly, as a program
        // killed by SIGPIPE would (the panic unwound, so every child process was stopped).
        Err(payload) if is_closed_pipe(panic_text(payload.as_ref())) => ExitCode::from(141),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// `println!` panics when stdout is a closed pipe (Rust ignores SIGPIPE). Keep that panic's
/// message and backtrace off stderr; [`main`] turns it into a quiet exit.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_closed_pipe(panic_text(info.payload())) {
            default(info);
        }
    }));
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("")
}

fn is_closed_pipe(panic: &str) -> bool {
    panic.contains("failed printing to stdout") && panic.contains("Broken pipe")
}

fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Catalog(args) => catalog_cmd::run(args),
        Command::Tour => tour::run(),
        Command::Secrets(command) => secrets_cmd::run(command),
        Command::Registry(command) => registry_cmd::run(command),
        Command::Policy(args) => policy_cmd::show(args.json),
        other => {
            let servers = Servers::open_default()?;
            // Commands whose children are all servers take in what a server leaves behind
            // (a grandchild that left its process group) and end it when they are done.
            let adopts = matches!(
                other,
                Command::Test(_)
                    | Command::Health(_)
                    | Command::Doctor(_)
                    | Command::Call(_)
                    | Command::Read(_)
                    | Command::Prompt(_)
            ) && crate::connect::orphans::adopt_orphans();
            let result = match other {
                Command::Install(args) => install_cmd::install(&servers, args),
                Command::Add(args) => install_cmd::add(&servers, args),
                Command::List(args) => servers_cmd::list(&servers, args.json),
                Command::Show(args) => servers_cmd::show(&servers, &args.name, args.json.json),
                Command::Edit(args) => servers_cmd::edit(&servers, args),
                Command::Enable(args) => servers_cmd::set_enabled(&servers, &args.name, true),
                Command::Disable(args) => servers_cmd::set_enabled(&servers, &args.name, false),
                Command::Rename(args) => servers_cmd::rename(&servers, &args.old, &args.new),
                Command::Remove(args) => servers_cmd::remove(&servers, &args.name),
                Command::Test(args) => test_cmd::test(&servers, args),
                Command::Health(args) => test_cmd::health(&servers, args),
                Command::Auth(args) => auth_cmd::auth(&servers, args),
                Command::Diff(args) => pin_cmd::diff(&servers, &args.name, args.json.json),
                Command::Approve(args) => pin_cmd::approve(&servers, &args.name, args.json.json),
                Command::Doctor(args) => doctor_cmd::doctor(&servers, args),
                Command::Export(args) => clients_cmd::export(&servers, args),
                Command::Import(args) => clients_cmd::import(&servers, args),
                Command::Clients(args) => clients_cmd::clients(&servers, args),
                Command::Outdated(args) => update_cmd::outdated(&servers, args),
                Command::Update(args) => update_cmd::update(&servers, args),
                Command::Tools(args) => tools_cmd::tools(&servers, args),
                Command::Budget(args) => tools_cmd::budget(&servers, args),
                Command::Call(args) => call_cmd::call(&servers, args),
                Command::Read(args) => call_cmd::read(&servers, args),
                Command::Prompt(args) => call_cmd::prompt(&servers, args),
                Command::Diagnose(args) => diagnose_cmd::diagnose(&servers, args),
                Command::Profile(command) => gateway_cmd::profile(&servers, command),
                Command::Activity(args) => gateway_cmd::activity(&servers, args),
                Command::Sandbox(args) => sandbox_cmd::sandbox(&servers, args),
                Command::Catalog(_)
                | Command::Tour
                | Command::Run(_)
                | Command::Serve(_)
                | Command::Secrets(_)
                | Command::Registry(_)
                | Command::Policy(_) => {
                    unreachable!("handled above")
                }
            };
            if adopts {
                crate::connect::orphans::end_orphans();
            }
            result
        }
    }
}
