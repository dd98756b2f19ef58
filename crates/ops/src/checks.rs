//! Testing servers the way the CLI and the app need it: an installed server with its stored
//! secrets, a server prepared from the install form before it is saved, and all enabled servers
//! at once. Results of installed servers are kept in the health store.

use std::sync::Arc;
use std::time::Duration;

use crate::catalog::{Catalog, CredentialProbe};
use crate::clock::now_ms;
use crate::config::{Auth, ConfigValue, ServerConfig, TransportKind};
use crate::connect::Era;
use crate::form::PreparedServer;
use crate::health::{self, HealthRecord, HealthStore};
use crate::manage::{ManageError, Servers};
use crate::oauth::{OAuthContext, OAuthError};
use crate::probe::{
    self, ErrorKind, Failure, Stage, StageEvent, StageReport, TestOptions, TestResult,
};
use crate::resolve::WithAccessToken;
use crate::secrets::{MemoryStore, SecretKey, SecretStore};

/// The credential probe the catalog declares for the entry and option a server came from.
pub fn catalog_probe(catalog: &Catalog, server: &ServerConfig) -> Option<CredentialProbe> {
    let source = server.source.as_ref()?;
    catalog
        .get(&source.catalog)?
        .option(&source.option)?
        .probe
        .clone()
}

/// The secret store a test of `server` needs: none at all when it refers to no secret (so a
/// machine without a keyring can still test such servers).
pub(crate) fn store_for(
    servers: &Servers,
    name: &str,
    server: &ServerConfig,
) -> Result<Arc<dyn SecretStore>, Failure> {
    if server.secret_keys(name).is_empty() && !matches!(server.auth, Auth::Oauth2(_)) {
        return Ok(Arc::new(MemoryStore::new()));
    }
    servers.secrets().cloned().map_err(|err| {
        Failure::new(
            ErrorKind::Config,
            format!("the secrets of `{name}` cannot be read: {err}"),
            "make the OS keyring available (see the message), then test again",
        )
    })
}

fn failed_before_resolving(server: &ServerConfig, failure: Failure) -> TestResult {
    let transport = match server.transport {
        TransportKind::Auto => TransportKind::Shttp,
        other => other,
    };
    TestResult::failed(
        transport,
        failure,
        vec![StageReport {
            name: Stage::Resolve,
            ok: false,
            ms: 0,
        }],
    )
}

pub(crate) fn oauth_failure(name: &str, err: OAuthError) -> Failure {
    match err {
        OAuthError::LoginRequired(message) => Failure::new(
            ErrorKind::Unauthorized,
            message,
            format!("sign in again with `plugboard auth {name}`"),
        ),
        other => Failure::new(
            ErrorKind::Unauthorized,
            format!("the OAuth tokens of `{name}` could not be used: {other}"),
            format!("sign in again with `plugboard auth {name}`"),
        ),
    }
}

/// Test an OAuth server with its stored tokens: refreshed before expiry, and once more after a
/// 401 (the server may have revoked the access token early).
async fn test_with_oauth(
    config_dir: &std::path::Path,
    name: &str,
    server: &ServerConfig,
    store: Arc<dyn SecretStore>,
    options: &TestOptions,
    mut progress: impl FnMut(StageEvent),
) -> TestResult {
    let context = match OAuthContext::new(store.clone(), config_dir) {
        Ok(context) => context,
        Err(err) => return failed_before_resolving(server, oauth_failure(name, err)),
    };
    let namespace = server.secret_namespace(name).to_string();
    let token = match context.fresh_access_token(name, server).await {
        Ok(Some(token)) => token,
        // No tokens yet: resolve reports `unauthorized` with "run `plugboard auth NAME`".
        Ok(None) => {
            return probe::test_config(name, server, store.as_ref(), options, progress).await;
        }
        Err(err) => return failed_before_resolving(server, oauth_failure(name, err)),
    };
    let with_token = WithAccessToken::new(store.clone(), &namespace, &token);
    let result = probe::test_config(name, server, &with_token, options, &mut progress).await;
    let mut result = if result.error_kind != Some(ErrorKind::Unauthorized) {
        result
    } else {
        match context.refresh_after_401(name, server, &token).await {
            Ok(fresh) => {
                let with_token = WithAccessToken::new(store.clone(), &namespace, &fresh);
                probe::test_config(name, server, &with_token, options, progress).await
            }
            Err(_) => result,
        }
    };
    result.authorization_server = crate::oauth::token_issuer(name, server, store.as_ref())
        .ok()
        .flatten();
    result
}

/// The protocol era of installed server `name` as its last test found it (a test that got past
/// the handshake), kept with its health.
pub fn known_era(servers: &Servers, name: &str) -> Option<Era> {
    let record = servers.health().get(name)?;
    record.result.protocol_version.as_ref()?;
    record.result.era
}

/// Whether `server` sends credentials that could be wrong without a test noticing: a secret in
/// its env or headers, a plain value with a secret-looking name, or a key, token or password
/// auth. OAuth is not among them: its tokens come from the provider's sign-in, which checked
/// the user, and a server that answers with them accepted them.
pub fn uses_credentials(server: &ServerConfig) -> bool {
    let secret_value = |(key, value): (&String, &ConfigValue)| match value {
        ConfigValue::Secret(_) => true,
        ConfigValue::Plain(_) | ConfigValue::FromEnv(_) => crate::manage::looks_secret(key),
    };
    !matches!(server.auth, Auth::None | Auth::Oauth2(_))
        || server.env.iter().any(secret_value)
        || server.headers.iter().any(secret_value)
}

/// What every test adds to the probe's result, with the server it tested at hand: whether it
/// was given credentials, and what its output says about a failed launch (or, on success,
/// about its credential).
fn annotate(name: &str, server: &ServerConfig, result: &mut TestResult) {
    result.credentials_sent = uses_credentials(server);
    crate::launch_failure::explain(name, result);
}

/// Test installed server `name` and keep the result as its health (unless a newer check has
/// already been stored).
pub async fn test_installed(
    servers: &Servers,
    catalog: &Catalog,
    name: &str,
    timeout: Option<Duration>,
    progress: impl FnMut(StageEvent),
) -> Result<TestResult, ManageError> {
    let server = servers.config().load()?.server(name)?;
    let started = now_ms();
    let options = TestOptions {
        probe: catalog_probe(catalog, &server),
        timeout,
        known_era: known_era(servers, name),
    };
    let admitted =
        crate::admission::check(servers.config().dir(), name, &server).map_err(|refusal| {
            Failure::new(
                ErrorKind::Config,
                format!("refused: {refusal}"),
                "the organisation policy does not allow this server: remove it, or ask your \
                 administrator to allow it",
            )
        });
    let result = match admitted.and_then(|()| store_for(servers, name, &server)) {
        Ok(store) if matches!(server.auth, Auth::Oauth2(_)) => {
            test_with_oauth(
                servers.config().dir(),
                name,
                &server,
                store,
                &options,
                progress,
            )
            .await
        }
        Ok(store) => {
            crate::local_http::test_with_local(name, &server, store.as_ref(), timeout, || {
                probe::test_config(name, &server, store.as_ref(), &options, progress)
            })
            .await
        }
        Err(failure) => failed_before_resolving(&server, failure),
    };
    let mut result = result;
    let store = store_for(servers, name, &server)
        .unwrap_or_else(|_| Arc::new(MemoryStore::new()) as Arc<dyn SecretStore>);
    crate::sandbox::annotate(name, &server, store.as_ref(), &mut result);
    annotate(name, &server, &mut result);
    crate::pinning::attach(servers.config().dir(), name, &mut result);
    let _ = HealthStore::in_config_dir(servers.config().dir()).record(&HealthRecord {
        name: name.to_string(),
        started_at_ms: started,
        finished_at_ms: now_ms(),
        result: result.clone(),
    });
    Ok(result)
}

/// Test a server built from the install form before anything is saved: its secrets are held in
/// memory only.
pub async fn test_prepared(
    prepared: &PreparedServer,
    catalog: &Catalog,
    timeout: Option<Duration>,
    progress: impl FnMut(StageEvent),
) -> TestResult {
    let memory = MemoryStore::new();
    let namespace = prepared.config.secret_namespace(&prepared.name);
    for (name, value) in &prepared.secrets {
        let _ = memory.set(&SecretKey::new(namespace, name), value);
    }
    let store: Arc<dyn SecretStore> = Arc::new(memory);
    let options = TestOptions {
        probe: catalog_probe(catalog, &prepared.config),
        timeout,
        known_era: None,
    };
    let mut result = if crate::oauth::machine::without_user(&prepared.config) {
        // Its tokens come without a user: got for this test with the secrets in memory (and
        // kept there only).
        let dir = crate::config::config_dir().unwrap_or_else(std::env::temp_dir);
        let (name, config) = (&prepared.name, &prepared.config);
        test_with_oauth(&dir, name, config, store.clone(), &options, progress).await
    } else {
        crate::local_http::test_with_local(
            &prepared.name,
            &prepared.config,
            store.as_ref(),
            timeout,
            || {
                probe::test_config(
                    &prepared.name,
                    &prepared.config,
                    store.as_ref(),
                    &options,
                    progress,
                )
            },
        )
        .await
    };
    crate::sandbox::annotate(
        &prepared.name,
        &prepared.config,
        store.as_ref(),
        &mut result,
    );
    annotate(&prepared.name, &prepared.config, &mut result);
    result
}

/// Test a server as the custom editor would save it, before anything is saved: `config` with
/// the `secrets` just typed (in memory), the secrets it keeps (and its OAuth tokens) copied
/// from the store into memory. Nothing is written anywhere.
pub async fn test_unsaved(
    servers: &Servers,
    catalog: &Catalog,
    name: &str,
    config: &ServerConfig,
    secrets: &std::collections::BTreeMap<String, crate::secrets::Sensitive<String>>,
    progress: impl FnMut(StageEvent),
) -> TestResult {
    let memory = MemoryStore::new();
    let namespace = config.secret_namespace(name);
    for (key, value) in secrets {
        let _ = memory.set(&SecretKey::new(namespace, key), value);
    }
    let oauth = matches!(config.auth, Auth::Oauth2(_));
    let mut kept = config.secret_keys(name);
    if oauth {
        for secret in [
            crate::oauth::TOKENS_SECRET,
            crate::oauth::CLIENT_SECRET,
            crate::oauth::ISSUER_SECRET,
        ] {
            kept.push(SecretKey::new(namespace, secret));
        }
    }
    if let Ok(store) = servers.secrets() {
        for key in kept {
            if matches!(memory.get(&key), Ok(None))
                && let Ok(Some(value)) = store.get(&key)
            {
                let _ = memory.set(&key, &value);
            }
        }
    }
    let store: Arc<dyn SecretStore> = Arc::new(memory);
    let options = TestOptions {
        probe: catalog_probe(catalog, config),
        timeout: None,
        // An edited server may not be the one its health describes: its era is probed.
        known_era: None,
    };
    let mut result = if oauth {
        test_with_oauth(
            servers.config().dir(),
            name,
            config,
            store,
            &options,
            progress,
        )
        .await
    } else {
        probe::test_config(name, config, store.as_ref(), &options, progress).await
    };
    annotate(name, config, &mut result);
    result
}

/// Keep `result` as the health of a server that was just installed (the pre-save test).
/// Its tools are pinned too (trust on first use).
pub fn seed_health(servers: &Servers, name: &str, started_at_ms: u64, result: &TestResult) {
    let mut result = result.clone();
    crate::pinning::attach(servers.config().dir(), name, &mut result);
    let _ = HealthStore::in_config_dir(servers.config().dir()).record(&HealthRecord {
        name: name.to_string(),
        started_at_ms,
        finished_at_ms: now_ms(),
        result: result.clone(),
    });
}

/// Test every enabled server, at most `parallelism` at a time, keeping each result as its
/// health. Servers whose config entry cannot be read are reported as `config` failures.
pub async fn check_enabled(
    servers: &Servers,
    catalog: &Catalog,
    parallelism: usize,
    timeout: Option<Duration>,
) -> Result<Vec<(String, TestResult)>, ManageError> {
    let config = servers.config().load()?;
    let names: Vec<String> = config
        .servers()
        .into_iter()
        .filter(|(_, s)| s.as_ref().map_or(true, |s| s.enabled))
        .map(|(n, _)| n)
        .collect();
    let schedule = health::longest_first(&servers.health(), names.clone());
    let mut results = health::check_all(schedule, parallelism, |name| async move {
        match test_installed(servers, catalog, &name, timeout, |_| {}).await {
            Ok(result) => result,
            Err(err) => TestResult::failed(
                TransportKind::Stdio,
                Failure::new(
                    ErrorKind::Config,
                    err.to_string(),
                    "fix or remove this entry in the config file",
                ),
                vec![],
            ),
        }
    })
    .await;
    // Back to config order.
    results.sort_by_key(|(name, _)| names.iter().position(|n| n == name));
    Ok(results)
}
