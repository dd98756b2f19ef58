//! OAuth sign-ins that must fail, each with a clear error and no secret in it (and forged
//! callbacks that must not end one): a callback with the wrong `state` or `Host`, the wrong `iss`, an authorization URL that must not be opened
//! (`javascript:`, plain http to a remote host), the token endpoint refusing the code, the user
//! denying, cancelling, and nobody finishing in time.

use std::sync::Arc;
use std::time::Duration;

use plugboard::oauth::{JobState, JobStatus, OAuthJobs, token_status};
use plugboard::secrets::MemoryStore;

use crate::oauth_fixture::{
    OAuthServer, consent, context, deliver, oauth_server_config, stops_answering,
};

/// Start a sign-in against a fixture started with `args`; returns the jobs, job id and status
/// once it left `discovering`.
async fn started(
    args: &[&str],
    wait: Duration,
) -> (OAuthServer, OAuthJobs, String, JobStatus, Arc<MemoryStore>) {
    let fixture = OAuthServer::start(args);
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let ctx = context(home.path(), store.clone(), |o| o.wait_for_user = wait);
    let jobs = OAuthJobs::new(ctx);
    let server = oauth_server_config(&fixture.mcp_url());
    let job = jobs.start("srv", &server).unwrap();
    let ready = jobs.wait_until_ready(&job).await.unwrap();
    (fixture, jobs, job, ready, store)
}

/// A web page (or a stale tab) that hits the loopback callback with another `state` must not end
/// the sign-in: it gets a 400 and the real redirect still completes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_callback_is_refused_and_the_sign_in_goes_on() {
    let (_fixture, jobs, job, ready, store) = started(&[], Duration::from_secs(60)).await;
    assert_eq!(ready.state, JobState::AwaitingUser);
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let redirect = ready.redirect_uri.clone().unwrap();
    for forged in [
        location.replace("state=", "state=x"),
        format!("{redirect}?state=x"),
        format!("{redirect}?error=access_denied&state=x"),
    ] {
        let (status, page) = deliver(&forged).await;
        assert_eq!(status, 400, "{forged}: {page}");
        assert!(page.contains("does not match"), "{page}");
        assert_eq!(jobs.status(&job).unwrap().state, JobState::AwaitingUser);
    }
    let (status, page) = deliver(&location).await;
    assert_eq!(status, 200, "{page}");
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    assert!(store.keys().iter().any(|k| k.name() == "oauth_tokens"));
}

/// A request whose `Host` is not the loopback address (a page on a rebinding domain) is refused
/// before its parameters are looked at, and the sign-in goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_for_another_host_is_refused() {
    let (_fixture, jobs, job, ready, _store) = started(&[], Duration::from_secs(60)).await;
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let response = crate::oauth_fixture::browser()
        .get(&location)
        .header("Host", "rebind.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    assert!(response.text().await.unwrap().contains("loopback"));
    assert_eq!(jobs.status(&job).unwrap().state, JobState::AwaitingUser);
    let (status, _) = deliver(&location).await;
    assert_eq!(status, 200);
    assert_eq!(jobs.wait(&job).await.unwrap().state, JobState::Succeeded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_from_the_wrong_issuer_is_refused() {
    let (_fixture, jobs, job, ready, store) =
        started(&["--wrong-iss"], Duration::from_secs(60)).await;
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let (status, page) = deliver(&location).await;
    assert_eq!(status, 400, "{page}");
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Failed);
    let error = done.error.unwrap();
    assert!(
        error.contains("wrong issuer") && error.contains("not-the-issuer"),
        "{error}"
    );
    assert!(store.keys().iter().all(|k| k.name() != "oauth_tokens"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_authorization_url_is_never_offered() {
    let (_fixture, jobs, job, ready, _) = started(
        &[
            "--authorization-endpoint",
            "javascript:alert(document.cookie)",
        ],
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(ready.state, JobState::Failed, "{ready:?}");
    assert_eq!(ready.authorization_url, None);
    let error = ready.error.unwrap();
    assert!(
        error.contains("refusing to open the authorization URL") && error.contains("javascript:"),
        "{error}"
    );
    assert_eq!(jobs.status(&job).unwrap().state, JobState::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_authorization_url_on_a_remote_host_is_never_offered() {
    let (_fixture, _jobs, _job, ready, _) = started(
        &[
            "--authorization-endpoint",
            "http://login.example.com/authorize",
        ],
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(ready.state, JobState::Failed, "{ready:?}");
    assert_eq!(ready.authorization_url, None);
    let error = ready.error.unwrap();
    assert!(error.contains("not a loopback host"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_endpoint_error_is_reported_without_the_code() {
    let (fixture, jobs, job, ready, store) =
        started(&["--token-error"], Duration::from_secs(60)).await;
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let code = url::Url::parse(&location)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    deliver(&location).await;
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Failed);
    let error = done.error.unwrap();
    assert!(
        error.contains("token endpoint refused") && error.contains("invalid_grant"),
        "{error}"
    );
    assert!(
        !error.contains(&code),
        "the code leaked into the error: {error}"
    );
    assert!(error.contains("***"), "{error}");
    assert_eq!(fixture.stat("token_errors").await, 1);
    assert!(store.keys().iter().all(|k| k.name() != "oauth_tokens"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_denying_access_ends_the_job() {
    let (_fixture, jobs, job, ready, _) = started(&["--deny"], Duration::from_secs(60)).await;
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    let (status, _) = deliver(&location).await;
    assert_eq!(status, 400);
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Failed);
    let error = done.error.unwrap();
    assert!(
        error.contains("access_denied") && error.contains("the user said no"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_job_closes_its_listener() {
    let (_fixture, jobs, job, ready, store) = started(&[], Duration::from_secs(60)).await;
    let location = consent(ready.authorization_url.as_deref().unwrap()).await;
    jobs.cancel(&job).unwrap();
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Cancelled);
    assert!(done.error.unwrap().contains("cancelled"));
    // The listener is closed: the browser's redirect reaches nothing.
    let closed = stops_answering(&location).await;
    assert!(closed);
    assert!(store.keys().iter().all(|k| k.name() != "oauth_tokens"));
    // Cancelling again and pasting into an ended job are clear no-ops / errors.
    jobs.cancel(&job).unwrap();
    assert!(
        jobs.complete_with_redirect_url(&job, &location)
            .await
            .is_err()
    );
    assert!(jobs.cancel("no-such-job").is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_nobody_completes_expires() {
    let (_fixture, jobs, job, ready, _) = started(&[], Duration::from_millis(800)).await;
    assert_eq!(ready.state, JobState::AwaitingUser);
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Expired);
    assert!(done.error.unwrap().contains("start it again"));
    assert_eq!(
        done.authorization_url, None,
        "an ended job offers no URL to open"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_cannot_use_oauth_are_refused_at_start() {
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new());
    let jobs = OAuthJobs::new(context(home.path(), store.clone(), |_| {}));
    let stdio = plugboard::config::ServerConfig::stdio("node", vec![]);
    assert!(
        jobs.start("s", &stdio)
            .unwrap_err()
            .to_string()
            .contains("remote")
    );
    let mut bearer = oauth_server_config("https://example.com/mcp");
    bearer.auth = plugboard::config::Auth::Bearer {
        token: plugboard::config::SecretRef::new("T"),
    };
    assert!(
        jobs.start("s", &bearer)
            .unwrap_err()
            .to_string()
            .contains("not OAuth")
    );
    // A server that is not there fails in discovery with a clear error.
    let gone = oauth_server_config("http://127.0.0.1:9/mcp");
    let job = jobs.start("gone", &gone).unwrap();
    let done = jobs.wait(&job).await.unwrap();
    assert_eq!(done.state, JobState::Failed);
    assert!(done.error.unwrap().contains("127.0.0.1:9"));
    assert!(
        !token_status("gone", &gone, store.as_ref())
            .unwrap()
            .signed_in
    );
}
