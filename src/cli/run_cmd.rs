//! `plugboard run NAME`: serve an installed server on stdio for another MCP client. Nothing but
//! MCP traffic is written to stdout; errors go to stderr.

use std::process::ExitCode;

use super::args::RunArgs;
use crate::manage::Servers;

/// Run the server and return the exit code to end with: the server's own for a stdio server,
/// 2 when it cannot be run (disabled, misconfigured, missing secret), 1 when running failed.
pub fn run(args: RunArgs) -> ExitCode {
    let fail = |code: u8, message: String| {
        eprintln!("error: {message}");
        ExitCode::from(code)
    };
    let servers = match Servers::open_default() {
        Ok(servers) => servers,
        Err(err) => return fail(2, err.to_string()),
    };
    // A current-thread runtime: the server process is spawned from this (the main) thread, so
    // its parent-death signal fires only when this process ends.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(1, format!("could not start the async runtime: {e}")),
    };
    // What the server leaves behind outside its process group is ended when it is done.
    let adopts = crate::connect::orphans::adopt_orphans();
    let result = runtime.block_on(crate::run::run(&servers, &args.name, args.allow_unapproved));
    // Reading stdin happens on a blocking thread that cannot be interrupted: don't wait for it.
    runtime.shutdown_background();
    if adopts {
        crate::connect::orphans::end_orphans();
    }
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(err) => fail(err.exit_code(), err.to_string()),
    }
}
