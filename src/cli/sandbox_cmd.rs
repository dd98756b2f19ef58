//! `plugboard sandbox NAME`: what a server may touch, and changes to it (each followed by a
//! test of the server, so a grant that is missing shows at once).

use serde::Serialize;

use super::CliError;
use super::args::SandboxArgs;
use super::output::print_json;
use super::test_cmd::{installed_test, print_result, progress_printer, runtime};
use crate::catalog::Catalog;
use crate::manage::Servers;
use crate::probe::TestResult;
use crate::sandbox::{SandboxChange, SandboxState, SandboxView};

/// The JSON of `plugboard sandbox NAME --json`: the view, and the test a change ran.
#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    view: &'a SandboxView,
    #[serde(skip_serializing_if = "Option::is_none")]
    test: Option<&'a TestResult>,
}

pub fn sandbox(servers: &Servers, args: SandboxArgs) -> Result<(), CliError> {
    let change = SandboxChange {
        enabled: match (args.on, args.off) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        network: args
            .network
            .as_deref()
            .map(crate::sandbox::Network::parse)
            .transpose()
            .map_err(|e| CliError::usage(format!("--network: {e}")))?,
        allow_read: args.allow_read,
        allow_write: args.allow_write,
        deny: args.deny,
    };
    if change.is_empty() {
        let view = crate::sandbox::view(servers, &args.name)?;
        return show(&view, args.json.json);
    }
    let view = crate::sandbox::change(servers, &args.name, &change)?;
    if view.state == SandboxState::Off && change.enabled == Some(false) && !args.json.json {
        eprintln!(
            "warning: `{}` now runs with all of your rights: every file you can read and every \
             host you can reach.",
            args.name
        );
    }
    if args.no_test {
        return show(&view, args.json.json);
    }
    if !args.json.json {
        print_view(&view);
        eprintln!("Testing `{}` with its new sandbox", args.name);
    }
    let catalog = Catalog::load_default()?;
    let rt = runtime()?;
    let result = rt.block_on(installed_test(
        servers,
        &catalog,
        &args.name,
        None,
        progress_printer(!args.json.json),
    ));
    rt.shutdown_background();
    let result = result?;
    if args.json.json {
        print_json(&Output {
            view: &view,
            test: Some(&result),
        })?;
        return finish_quietly(&args.name, &result);
    }
    print_result(&args.name, &result);
    finish_quietly(&args.name, &result)
}

/// The view alone, as JSON or text.
fn show(view: &SandboxView, json: bool) -> Result<(), CliError> {
    if json {
        print_json(&Output { view, test: None })?;
    } else {
        print_view(view);
    }
    Ok(())
}

/// The exit status of a re-test already printed.
fn finish_quietly(name: &str, result: &TestResult) -> Result<(), CliError> {
    if result.ok {
        Ok(())
    } else {
        Err(CliError {
            code: 1,
            message: format!("the sandbox of `{name}` was changed, and its test failed"),
        })
    }
}

fn print_view(view: &SandboxView) {
    let state = match view.state {
        SandboxState::Enforced => format!("on, enforced (Landlock ABI {})", view.kernel_abi),
        SandboxState::NotEnforced => "on, NOT enforced".to_owned(),
        SandboxState::Off => "off".to_owned(),
        SandboxState::NotApplicable => "not applicable".to_owned(),
    };
    println!("Sandbox of `{}`: {state}", view.name);
    println!("  {}", view.summary);
    if let Some(problem) = &view.problem {
        println!("  problem: {problem}");
    }
    if view.state == SandboxState::NotApplicable {
        return;
    }
    println!("  network: {}", view.network);
    for (label, grants) in [("writes", &view.write), ("reads", &view.read)] {
        if grants.is_empty() {
            continue;
        }
        println!("  {label}:");
        for grant in grants.iter() {
            println!("    {:<48} {}", grant.path, grant.reason.replace('_', " "));
        }
    }
    for path in &view.missing {
        println!("  granted but missing (nothing granted): {path}");
    }
    for path in &view.deny {
        println!("  denied: {path}");
    }
}
