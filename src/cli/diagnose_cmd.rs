//! `plugboard diagnose NAME --bundle FILE`: a redacted diagnostics bundle of a server for a
//! bug report (see `crate::diagnostics`), written as one JSON file readable only by the user.

use std::time::Duration;

use super::CliError;
use super::args::DiagnoseArgs;
use super::test_cmd::runtime;
use crate::diagnostics;
use crate::manage::Servers;

pub fn diagnose(servers: &Servers, args: DiagnoseArgs) -> Result<(), CliError> {
    let rt = runtime()?;
    eprintln!("Connecting to `{}` to record a session…", args.name);
    let timeout = args.timeout.map(Duration::from_secs);
    let bundle = rt.block_on(Box::pin(diagnostics::collect(servers, &args.name, timeout)));
    rt.shutdown_background();
    let bundle = bundle?;
    let text = serde_json::to_string_pretty(&bundle)
        .map_err(|e| CliError::failed(format!("could not encode the bundle: {e}")))?;
    diagnostics::write_bundle(&args.bundle, text.as_bytes())
        .map_err(|e| CliError::failed(format!("could not write {}: {e}", args.bundle.display())))?;
    let session = match &bundle.session {
        Some(s) if s.error.is_none() => format!("a session of {} messages", bundle.trace.len()),
        Some(s) => format!(
            "a failed connection ({})",
            s.error.as_deref().unwrap_or("unknown")
        ),
        None => "no session".to_string(),
    };
    println!(
        "✓ wrote {} ({} bytes): the config's shape without secrets, the last test, {session}, \
         the stderr tail, versions. Every value was redacted; look it over before you attach it.",
        args.bundle.display(),
        text.len()
    );
    Ok(())
}
