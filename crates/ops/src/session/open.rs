//! Opening a session. An installed server is resolved as a test resolves it ([`open_installed`]:
//! its secrets from the store, an OAuth token refreshed before expiry and once more after a
//! 401), with the era its last test found; then it is connected and its handshake (of either
//! era) done with the session's handler, its trace tapping the connection from the first
//! message ([`open_resolved`]), within the server's timeout. A failure is explained the way a
//! failed test is (`probe::classify`), redacted, with the server's stderr tail.

use std::time::Duration;

use tokio::time::Instant;

use super::{Session, SessionError, SessionOptions, ToolStates};
use crate::checks;
use crate::config::{Auth, ServerConfig};
use crate::connect::{Connection, Era, Monitor};
use crate::manage::Servers;
use crate::oauth::OAuthContext;
use crate::probe::classify::{self, Context};
use crate::probe::{ErrorKind, Failure, Stage};
use crate::redact::Redactor;
use crate::resolve::{ResolvedServer, Target, WithAccessToken, resolve};
use crate::secrets::SecretStore;

/// How long a failed start gets to tell why (its exit, its last stderr lines).
const SETTLE: Duration = Duration::from_millis(300);

/// A session with installed server `name`.
pub async fn open_installed(
    servers: &Servers,
    name: &str,
    options: SessionOptions,
) -> Result<Session, SessionError> {
    let server = servers
        .config()
        .load()
        .and_then(|c| c.server(name))
        .map_err(|e| SessionError::Config(e.to_string()))?;
    crate::admission::check(servers.config().dir(), name, &server)
        .map_err(|refusal| SessionError::Config(format!("refused: {refusal}")))?;
    let store = checks::store_for(servers, name, &server)
        .map_err(|failure| open_failure(&server, failure))?;
    // What its last test and its approved pin say: the era, and the reviewed tools (as
    // `plugboard run` reads them; an unreadable pin file counts as nothing approved).
    let remembered = || Remembered {
        known: checks::known_era(servers, name),
        review: crate::tools::review(servers.config().dir(), name).unwrap_or_default(),
    };
    if !matches!(server.auth, Auth::Oauth2(_)) {
        let started = std::time::Instant::now();
        let first = resolve_and_open(
            name,
            &server,
            store.as_ref(),
            None,
            remembered(),
            options.clone(),
        )
        .await;
        // Headers a helper printed earlier and the server now refuses: run it again, once.
        return match first {
            Err(SessionError::Open { failure, .. })
                if failure.kind == ErrorKind::Unauthorized
                    && let (Some(helper), Some(url)) = (&server.headers_helper, &server.url)
                    && crate::headers_helper::expire_if_got_before(name, url, helper, started) =>
            {
                resolve_and_open(name, &server, store.as_ref(), None, remembered(), options).await
            }
            other => other,
        };
    }
    let context = OAuthContext::new(store.clone(), servers.config().dir())
        .map_err(|e| open_failure(&server, checks::oauth_failure(name, e)))?;
    let token = match context.fresh_access_token(name, &server).await {
        Ok(Some(token)) => token,
        // Not signed in yet: resolving says so (`unauthorized`, "run `plugboard auth NAME`").
        Ok(None) => {
            return resolve_and_open(name, &server, store.as_ref(), None, remembered(), options)
                .await;
        }
        Err(e) => return Err(open_failure(&server, checks::oauth_failure(name, e))),
    };
    let namespace = server.secret_namespace(name).to_string();
    let with_token = WithAccessToken::new(store.clone(), &namespace, &token);
    let first = resolve_and_open(
        name,
        &server,
        &with_token,
        Some(token.expose()),
        remembered(),
        options.clone(),
    )
    .await;
    match first {
        Err(SessionError::Open { failure, .. }) if failure.kind == ErrorKind::Unauthorized => {
            let fresh = context
                .refresh_after_401(name, &server, &token)
                .await
                .map_err(|e| open_failure(&server, checks::oauth_failure(name, e)))?;
            let with_token = WithAccessToken::new(store, &namespace, &fresh);
            resolve_and_open(
                name,
                &server,
                &with_token,
                Some(fresh.expose()),
                remembered(),
                options,
            )
            .await
        }
        other => other,
    }
}

/// What is remembered of an installed server: the era its last test found, and the tools of
/// its approved pin.
struct Remembered {
    known: Option<Era>,
    review: crate::config::Review,
}

/// A failure before anything was connected, redacted with the config's plain values.
fn open_failure(server: &ServerConfig, failure: Failure) -> SessionError {
    let redactor = Redactor::new(server.plain_values());
    SessionError::Open {
        failure: Failure::new(
            failure.kind,
            redactor.redact(&failure.error),
            redactor.redact(&failure.hint),
        ),
        stderr_tail: None,
        trace: vec![],
    }
}

async fn resolve_and_open(
    name: &str,
    server: &ServerConfig,
    store: &dyn SecretStore,
    token: Option<&String>,
    remembered: Remembered,
    options: SessionOptions,
) -> Result<Session, SessionError> {
    let Remembered { known, review } = remembered;
    let mut resolved =
        resolve(name, server, store, None).map_err(|e| open_failure(server, e.failure()))?;
    resolved.set_known_era(known);
    let mut redactor = resolved.redactor().clone();
    if let Some(token) = token {
        redactor = redactor.with_secrets([token.as_str()]);
    }
    let tools = ToolStates::of(server, review);
    open_resolved(&resolved, redactor, options, tools).await
}

/// A session with a resolved server: connect and handshake within its timeout. The handshake
/// speaks the server's era (`resolved.known_era()` when a test found it, else the probe
/// decides), with the session's handler answering the server and its trace tapping every
/// transport tried.
pub async fn open_resolved(
    resolved: &ResolvedServer,
    redactor: Redactor,
    options: SessionOptions,
    tools: ToolStates,
) -> Result<Session, SessionError> {
    let timeout = options.timeout.unwrap_or(resolved.timeout());
    let preparing = Session::prepare(resolved.name(), redactor.clone(), options);
    let monitor = Monitor::new();
    let deadline = Instant::now() + timeout;
    let fail = |failure: Failure, stderr_tail: Option<String>| SessionError::Open {
        failure: Failure::new(
            failure.kind,
            redactor.redact(&failure.error),
            redactor.redact(&failure.hint),
        ),
        stderr_tail: stderr_tail
            .filter(|t| !t.trim().is_empty())
            .map(|t| redactor.redact(&t)),
        trace: preparing.trace(),
    };
    let initial = resolved.transport();
    let opened = tokio::time::timeout_at(
        deadline,
        Connection::open(resolved.target(), initial, monitor.clone()),
    )
    .await;
    let mut conn = match opened {
        Ok(Ok(conn)) => conn,
        Ok(Err(err)) => {
            let ctx = context(resolved, Stage::Connect, initial);
            let failure = classify::connect_error(&ctx, &err, &monitor.snapshot());
            return Err(fail(failure, None));
        }
        Err(_) => {
            let ctx = context(resolved, Stage::Connect, initial);
            let failure = classify::timeout(&ctx, &monitor.snapshot());
            return Err(fail(failure, None));
        }
    };
    if let Some(tap) = preparing.tap() {
        conn.set_tap(tap);
    }
    let known = resolved.known_era();
    let stage = if known == Some(Era::Legacy) {
        Stage::Initialize
    } else {
        Stage::Discover
    };
    let handshake = tokio::time::timeout_at(
        deadline,
        conn.handshake_with(known, preparing.handler(), &mut |_| {}),
    )
    .await;
    let failure = match handshake {
        Ok(Ok(())) => None,
        Ok(Err(err)) => {
            conn.settle(SETTLE).await;
            let ctx = context(resolved, stage, conn.transport());
            Some(classify::connect_error(&ctx, &err, &monitor.snapshot()))
        }
        Err(_) => {
            let ctx = context(resolved, stage, conn.transport());
            Some(classify::timeout(&ctx, &monitor.snapshot()))
        }
    };
    if let Some(failure) = failure {
        conn.close().await;
        let tail = conn.stderr_tail(super::STDERR_TAIL_LINES).await;
        return Err(fail(failure, tail));
    }
    Ok(preparing.over_connection(conn, tools).await)
}

/// What `probe::classify` needs to explain a failure at `stage`.
fn context(
    resolved: &ResolvedServer,
    stage: Stage,
    transport: crate::config::TransportKind,
) -> Context<'_> {
    let (command, target) = match resolved.target() {
        Target::Stdio(t) => (Some(t.command.as_str()), None),
        Target::Remote(t) => (None, Some(crate::connect::http::target_of(&t.url))),
    };
    Context {
        server: resolved.name(),
        transport,
        stage,
        timeout: resolved.timeout(),
        command,
        target,
        sends_credentials: resolved.sends_credentials(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// The app runs sessions on a runtime of its own: opening one must be `Send`.
    #[test]
    fn opening_is_send() {
        fn send<T: Send>(_: &T) {}
        let dir = tempfile::tempdir().unwrap();
        let servers = Servers::with_store(
            crate::config::ConfigStore::new(dir.path()),
            Arc::new(crate::secrets::MemoryStore::new()),
        );
        send(&open_installed(&servers, "x", SessionOptions::default()));
    }
}
