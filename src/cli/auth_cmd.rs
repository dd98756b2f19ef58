//! `plugboard auth NAME`: sign in to a remote server with OAuth. Drives the core's OAuth job
//! (discovering → awaiting_user → exchanging → succeeded | failed | expired | cancelled), shows
//! each state as it changes, prints the authorization URL (and opens a browser when there is a
//! display), accepts a pasted redirect URL with `--paste`, and ends with a real test.

use std::time::Duration;

use super::CliError;
use super::args::AuthArgs;
use super::test_cmd::{print_result, progress_printer, runtime};
use crate::catalog::Catalog;
use crate::checks;
use crate::manage::Servers;
use crate::oauth::{JobState, OAuthContext, OAuthError, OAuthJobs};

fn oauth_error(err: OAuthError) -> CliError {
    match err {
        OAuthError::Config(message) => CliError::usage(message),
        other => CliError::failed(other.to_string()),
    }
}

/// Open `url` in the user's browser when there is a display to show it on.
fn open_browser(url: &str) {
    let has_display = cfg!(any(target_os = "macos", target_os = "windows"))
        || std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if has_display {
        let _ = crate::browser::open_in_browser(url);
    }
}

/// `plugboard auth NAME --sign-out`: revoke the server's tokens where the authorization server
/// allows it and forget them (and with them the authorization server its client is bound to).
fn sign_out(servers: &Servers, name: &str) -> Result<(), CliError> {
    let server = servers.config().load()?.server(name)?;
    let store = servers.secrets()?.clone();
    let outcome = runtime()?
        .block_on(crate::oauth::revoke_and_forget(name, &server, store))
        .map_err(oauth_error)?;
    if !outcome.had_tokens {
        println!("`{name}` was not signed in.");
        return Ok(());
    }
    for warning in &outcome.warnings {
        eprintln!("warning: {warning}");
    }
    println!(
        "Signed out of `{name}`{}.",
        if outcome.revoked {
            ": its tokens were revoked and forgotten"
        } else {
            ": its tokens were forgotten (the authorization server did not revoke them)"
        }
    );
    Ok(())
}

pub fn auth(servers: &Servers, args: AuthArgs) -> Result<(), CliError> {
    let name = args.name.as_str();
    if args.sign_out {
        return sign_out(servers, name);
    }
    let server = servers.config().load()?.server(name)?;
    if !server.transport.is_remote() {
        return Err(CliError::usage(format!(
            "`{name}` is a stdio server; OAuth sign-in is for remote (HTTP) servers"
        )));
    }
    let store = servers.secrets()?.clone();
    let rt = runtime()?;
    rt.block_on(async {
        let context = OAuthContext::new(store, servers.config().dir()).map_err(oauth_error)?;
        let jobs = OAuthJobs::new(context);
        let job = jobs.start(name, &server).map_err(oauth_error)?;
        eprintln!("[{name}] discovering the authorization server…");
        let ready = jobs.wait_until_ready(&job).await.map_err(oauth_error)?;
        // A grant without a user (client credentials, enterprise-managed) ends right away.
        if ready.state == JobState::Succeeded {
            eprintln!("[{name}] {}", state_text(ready.state));
            return Ok(());
        }
        if ready.state != JobState::AwaitingUser {
            return Err(CliError::failed(ready.error.unwrap_or_else(|| {
                format!("the sign-in ended as {:?}", ready.state)
            })));
        }
        let url = ready.authorization_url.clone().unwrap_or_default();
        eprintln!(
            "[{name}] waiting for you to sign in (expires in {} s). Open this URL:",
            ready.expires_in_secs.unwrap_or(0)
        );
        println!("{url}");
        if !args.no_browser {
            open_browser(&url);
        }
        let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
        if args.paste {
            eprintln!(
                "[{name}] paste the address your browser ended on (it starts with {}):",
                ready.redirect_uri.as_deref().unwrap_or("http://127.0.0.1")
            );
            std::thread::spawn(move || {
                for line in std::io::stdin().lines().map_while(Result::ok) {
                    if lines_tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let mut last = ready.state;
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        loop {
            tokio::select! {
                _ = &mut ctrl_c => {
                    let _ = jobs.cancel(&job);
                    eprintln!("[{name}] cancelled");
                }
                Some(line) = lines.recv(), if args.paste => {
                    let line = line.trim();
                    if !line.is_empty()
                        && let Err(err) = jobs.complete_with_redirect_url(&job, line).await {
                            eprintln!("[{name}] {err}; paste the address again");
                        }
                }
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
            let Some(status) = jobs.status(&job) else {
                return Err(CliError::failed("the sign-in job disappeared"));
            };
            if status.state != last {
                last = status.state;
                eprintln!("[{name}] {}", state_text(status.state));
            }
            if status.state.is_final() {
                if status.state == JobState::Succeeded {
                    if !status.scopes.is_empty() {
                        eprintln!("[{name}] granted scopes: {}", status.scopes.join(" "));
                    }
                    return Ok(());
                }
                return Err(CliError::failed(status.error.unwrap_or_else(|| {
                    format!("the sign-in ended: {}", state_text(status.state))
                })));
            }
        }
    })?;
    servers.adopt_oauth(name)?;
    eprintln!("[{name}] signed in; testing the connection with the new token");
    let catalog = Catalog::load_default()?;
    let result = rt.block_on(checks::test_installed(
        servers,
        &catalog,
        name,
        None,
        progress_printer(true),
    ))?;
    print_result(name, &result);
    if result.ok {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "signed in, but the test of `{name}` failed"
        )))
    }
}

fn state_text(state: JobState) -> &'static str {
    match state {
        JobState::Discovering => "discovering the authorization server…",
        JobState::AwaitingUser => "waiting for you to sign in in the browser…",
        JobState::Exchanging => "exchanging the authorization code for tokens…",
        JobState::Succeeded => "signed in",
        JobState::Failed => "the sign-in failed",
        JobState::Expired => "the sign-in expired (nobody completed it in time)",
        JobState::Cancelled => "the sign-in was cancelled",
    }
}
