//! The test connection that tells the truth: a staged test of one server with a
//! classified, redacted result.
//!
//! - [`result`]: the result types (their JSON keys are a contract) and error kinds;
//! - [`stages`]: the staged run with one overall deadline and live progress;
//! - [`classify`]: error kinds and hints from what went wrong and what was observed;
//! - [`credential`]: the catalog's credential probe and its verdict;
//! - [`naming`]: agent-facing tool names (`mcp__<server>__<tool>`).

pub mod classify;
pub mod credential;
pub mod enforcement;
pub mod naming;
pub mod result;
pub mod stages;

pub use result::{
    CacheHint, ErrorKind, Failure, PromptInfo, ResourceInfo, ServerIdentity, Stage, StageEvent,
    StageReport, TestResult, ToolInfo, Verification, ui_resource_of,
};
pub use stages::test_server;

use std::time::Instant;

use crate::config::{ServerConfig, TransportKind};
use crate::connect::Era;
pub use crate::credential_probe::{AuthErrorMatch, CredentialProbe};
use crate::redact::Redactor;
use crate::resolve::resolve;
use crate::secrets::SecretStore;

/// How to test a server beyond its config.
#[derive(Clone, Debug, Default)]
pub struct TestOptions {
    /// The catalog's credential probe for the server, if it declares one.
    pub probe: Option<CredentialProbe>,
    /// Overrides the server's own timeout.
    pub timeout: Option<std::time::Duration>,
    /// The server's era from its last test: spoken directly (re-probed if it turns out wrong).
    pub known_era: Option<Era>,
}

/// Resolve server `name` and test it: the whole test, including the `resolve` stage. Resolve
/// failures come back as a failed result. A server that refuses headers its helper printed
/// earlier (kept from before this test) is tested once more with the helper run again.
pub async fn test_config(
    name: &str,
    server: &ServerConfig,
    secrets: &dyn SecretStore,
    options: &TestOptions,
    mut progress: impl FnMut(StageEvent),
) -> TestResult {
    let started = std::time::Instant::now();
    let result = test_config_once(name, server, secrets, options, &mut progress).await;
    if result.error_kind == Some(crate::failure::ErrorKind::Unauthorized)
        && let (Some(helper), Some(url)) = (&server.headers_helper, &server.url)
        && crate::headers_helper::expire_if_got_before(name, url, helper, started)
    {
        return test_config_once(name, server, secrets, options, progress).await;
    }
    result
}

async fn test_config_once(
    name: &str,
    server: &ServerConfig,
    secrets: &dyn SecretStore,
    options: &TestOptions,
    mut progress: impl FnMut(StageEvent),
) -> TestResult {
    progress(StageEvent::Started {
        stage: Stage::Resolve,
    });
    let started = Instant::now();
    match resolve(name, server, secrets, options.probe.clone()) {
        Ok(mut resolved) => {
            if let Some(timeout) = options.timeout {
                resolved.set_timeout(timeout);
            }
            resolved.set_known_era(options.known_era);
            // test_server reports the resolve stage itself (with the time measured inside
            // resolve); the Started event above is the only one sent here.
            let mut first = true;
            test_server(&resolved, move |event| {
                if first
                    && matches!(
                        event,
                        StageEvent::Started {
                            stage: Stage::Resolve
                        }
                    )
                {
                    first = false;
                    return;
                }
                progress(event)
            })
            .await
        }
        Err(err) => {
            let ms = started.elapsed().as_millis() as u64;
            progress(StageEvent::Finished {
                stage: Stage::Resolve,
                ok: false,
                ms,
            });
            let transport = match server.transport {
                TransportKind::Auto => TransportKind::Shttp,
                other => other,
            };
            // No redactor could be built from the secrets, but the plain values are known.
            let redactor = Redactor::new(server.plain_values());
            let result = TestResult::failed(
                transport,
                err.failure(),
                vec![StageReport {
                    name: Stage::Resolve,
                    ok: false,
                    ms,
                }],
            );
            stages::redact(&redactor, result)
        }
    }
}
