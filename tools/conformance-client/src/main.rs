//! `conformance-client`: the MCP client Plugboard puts under the official conformance suite
//! (`@modelcontextprotocol/conformance`). The suite runs it as `conformance-client <server-url>`
//! with the scenario name in `MCP_CONFORMANCE_SCENARIO` and scenario data (e.g. pre-registered
//! client credentials) in `MCP_CONFORMANCE_CONTEXT`.
//!
//! Authorization is Plugboard's own `oauth` module, driven exactly as the app and the CLI drive
//! it: a sign-in job is started with the server's 401/403 challenge, its validated authorization
//! URL is "opened" (fetched with redirects off — the suite's authorization endpoint approves at
//! once with a 302), and the redirect is delivered to the job's loopback listener. The client
//! credentials and enterprise-managed scenarios configure those grants, whose tokens the same
//! module obtains without a user. The MCP calls
//! go through rmcp's streamable HTTP client, with an HTTP backend that adds the bearer token and
//! signs in (or steps up) when the server answers 401 or 403.
//!
//! The handshake is Plugboard's own dual-era one (`plugboard::connect::handshake`): the
//! `server/discover` probe, the modern era (per-request `_meta`, the modern headers, MRTR
//! rounds answered by the handler) when the server speaks it, `initialize` otherwise. Then the
//! client does what a scenario can ask of one: lists tools and calls them (the calls the
//! scenario names in its context, the JSON Schema echo with the schema exactly as listed, or
//! every tool with arguments made up from its schema), and lists and reads resources and
//! prompts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use plugboard::config::{
    Auth, ClientAuthMethod, OAuthGrant, OAuthSettings, SecretRef, ServerConfig, TransportKind,
};
use plugboard::connect::Era;
use plugboard::connect::handshake::{Handshake, Handshaken, Wire};
use plugboard::oauth::{JobState, OAuthContext, OAuthError, OAuthJobs, OAuthOptions, StartOptions};
use plugboard::secrets::{MemoryStore, SecretKey, SecretStore, Sensitive};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientJsonRpcMessage,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, GetPromptRequestParams,
    Implementation, ReadResourceRequestParams, Tool,
};
use rmcp::service::{RequestContext, serve_directly};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::{ClientHandler, RoleClient};

/// The client ID metadata document URL the suite expects (it never fetches it successfully).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The name of the one server this client talks to.
const SERVER_NAME: &str = "conformance";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let url = match std::env::args().skip(1).last() {
        Some(url) => url,
        None => {
            eprintln!("usage: conformance-client <server-url>");
            return std::process::ExitCode::from(2);
        }
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), BoxError> {
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(serde_json::Value::Null);

    let store: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let mut server = ServerConfig::remote(TransportKind::Shttp, url);
    let mut settings = OAuthSettings::default();
    if let Some(client_id) = context.get("client_id").and_then(|v| v.as_str()) {
        settings.client_id = Some(client_id.to_string());
        settings.client_auth = ClientAuthMethod::None; // chosen from the server's metadata
        if let Some(secret) = context.get("client_secret").and_then(|v| v.as_str()) {
            store.set(
                &SecretKey::new(SERVER_NAME, "client_secret"),
                &Sensitive::new(secret.to_string()),
            )?;
            settings.client_secret = Some(SecretRef::new("client_secret"));
        }
    }
    // The grants without a user: client credentials (with a secret or a signed assertion), and
    // enterprise-managed authorization (an ID token from the identity provider).
    let text = |key: &str| context.get(key).and_then(|v| v.as_str());
    if scenario.starts_with("auth/client-credentials") {
        settings.grant = OAuthGrant::ClientCredentials;
        if let Some(pem) = text("private_key_pem") {
            store.set(
                &SecretKey::new(SERVER_NAME, "private_key"),
                &Sensitive::new(pem.to_string()),
            )?;
            settings.private_key = Some(SecretRef::new("private_key"));
        }
    }
    if let (Some(endpoint), Some(idp_client), Some(id_token)) = (
        text("idp_token_endpoint"),
        text("idp_client_id"),
        text("idp_id_token"),
    ) {
        store.set(
            &SecretKey::new(SERVER_NAME, "id_token"),
            &Sensitive::new(id_token.to_string()),
        )?;
        settings.grant = OAuthGrant::IdentityAssertion {
            idp_token_endpoint: endpoint.to_string(),
            idp_client_id: idp_client.to_string(),
            idp_client_secret: None,
            id_token: SecretRef::new("id_token"),
        };
    }
    server.auth = Auth::Oauth2(settings);

    let lock_dir =
        std::env::temp_dir().join(format!("plugboard-conformance-{}", std::process::id()));
    let options = OAuthOptions {
        client_metadata_url: Some(CIMD_URL.to_string()),
        wait_for_user: std::time::Duration::from_secs(20),
        ..OAuthOptions::default()
    };
    let ctx = OAuthContext::with_options(store, &lock_dir, options)?;
    let auth = Arc::new(Authorizer {
        jobs: OAuthJobs::new(ctx.clone()),
        ctx,
        server,
        token: Mutex::new(None),
        browser: plugboard::tls::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?,
    });

    let result = exercise(url, auth, scenario, &context).await;
    let _ = std::fs::remove_dir_all(&lock_dir);
    result
}

/// The tool the JSON Schema preservation scenario echoes a listed schema back with.
const SCHEMA_ECHO: &str = "json_schema_echo";

/// Arguments for `tool` made up from its input schema.
fn made_up_arguments(tool: &Tool) -> serde_json::Map<String, serde_json::Value> {
    let mut args = serde_json::Map::new();
    if let Some(props) = tool
        .input_schema
        .get("properties")
        .and_then(|p| p.as_object())
    {
        for (i, (name, schema)) in props.iter().enumerate() {
            let value = match schema.get("type").and_then(|t| t.as_str()) {
                Some("number") | Some("integer") => serde_json::json!(i as i64 + 2),
                Some("boolean") => serde_json::json!(true),
                Some("object") => serde_json::json!({}),
                Some("array") => serde_json::json!([]),
                _ => serde_json::json!("test"),
            };
            args.insert(name.clone(), value);
        }
    }
    args
}

/// The calls to make: those the scenario names in its context, else the echo of the other
/// tool's schema (JSON Schema preservation), else every tool once.
fn calls_for(
    context: &serde_json::Value,
    tools: &[Tool],
) -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    if let Some(named) = context.get("toolCalls").and_then(|c| c.as_array()) {
        return named
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_owned();
                let args = call
                    .get("arguments")
                    .and_then(|a| a.as_object())
                    .cloned()
                    .unwrap_or_default();
                Some((name, args))
            })
            .collect();
    }
    if tools.iter().any(|t| t.name == SCHEMA_ECHO)
        && let Some(focal) = tools.iter().find(|t| t.name != SCHEMA_ECHO)
    {
        let mut args = serde_json::Map::new();
        args.insert(
            "schema".into(),
            serde_json::Value::Object((*focal.input_schema).clone()),
        );
        return vec![(SCHEMA_ECHO.to_owned(), args)];
    }
    tools
        .iter()
        .map(|tool| (tool.name.to_string(), made_up_arguments(tool)))
        .collect()
}

/// The dual-era handshake → tools/list → the scenario's tool calls → resources and prompts.
async fn exercise(
    url: &str,
    auth: Arc<Authorizer>,
    scenario: &str,
    context: &serde_json::Value,
) -> Result<(), BoxError> {
    let (listening, mut heard) = tokio::sync::watch::channel(false);
    let http = AuthorizingHttp {
        inner: plugboard::tls::http_client_builder()
            .build()
            .expect("an HTTP client"),
        auth,
        listening: Arc::new(listening),
    };
    let mut transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    let capabilities: ClientCapabilities =
        serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}}))?;
    let info = ClientConfig::new(
        capabilities,
        Implementation::new("plugboard-conformance-client", env!("CARGO_PKG_VERSION")),
    );
    let mut steps = |_| {};
    let negotiated = Handshake {
        transport: &mut transport,
        hello: &info,
        wire: Wire::Http,
        steps: &mut steps,
        legacy_version: None,
    }
    .probe(None)
    .await?;
    eprintln!(
        "{scenario}: {} era, protocol {}",
        negotiated.era, negotiated.protocol_version
    );
    let modern = negotiated.era == Era::Modern;
    let client = serve_directly(
        Handler { info },
        Handshaken(transport),
        Some(negotiated.peer_info.clone()),
    );
    let tools = client.list_all_tools().await?;
    if !modern {
        // A legacy server may send its requests (an elicitation during a tool call) on the
        // GET stream, and a message sent before that stream is open is lost: the elicitation
        // scenario's server then waited 60 s for an answer whenever rmcp's GET came after the
        // tool call. Listen first, as a client that wants those requests must; a server
        // without the stream answers the GET at once, and one that is never asked costs at
        // most this wait. (The modern era has no GET stream.)
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            heard.wait_for(|answered| *answered),
        )
        .await;
    }
    for (name, args) in calls_for(context, &tools) {
        let result = client
            .call_tool(CallToolRequestParams::new(name.clone()).with_arguments(args))
            .await;
        match result {
            Ok(result) => {
                eprintln!(
                    "{scenario}: called {name} → {} content item(s)",
                    result.content.len()
                );
                // The scenario's server reports its own failures in the tool's text: print
                // it, so a failed run says why.
                for text in result.content.iter().filter_map(|item| item.as_text()) {
                    let shown: String = text.text.chars().take(300).collect();
                    eprintln!("{scenario}:   {shown}");
                }
            }
            Err(e) => eprintln!("{scenario}: {name} failed: {e}"),
        }
    }
    let capabilities = negotiated.peer_info.capabilities.clone();
    if capabilities.resources.is_some()
        && let Ok(resources) = client.list_resources(None).await
        && let Some(first) = resources.resources.first()
    {
        let _ = client
            .read_resource(ReadResourceRequestParams::new(first.uri.clone()))
            .await;
    }
    if capabilities.prompts.is_some()
        && let Ok(prompts) = client.list_prompts(None).await
        && let Some(first) = prompts.prompts.first()
    {
        let _ = client
            .get_prompt(GetPromptRequestParams::new(first.name.clone()))
            .await;
    }
    client.cancel().await?;
    Ok(())
}

/// Answers server requests: a form elicitation is accepted with the schema's defaults (as a
/// user pressing "accept" on an untouched form would).
struct Handler {
    info: ClientConfig,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => {
                let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
                let mut content = serde_json::Map::new();
                if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
                    for (name, prop) in props {
                        if let Some(default) = prop.get("default") {
                            content.insert(name.clone(), default.clone());
                        }
                    }
                }
                Ok(ElicitResult::new(ElicitationAction::Accept)
                    .with_content(serde_json::Value::Object(content)))
            }
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }
}

/// Signs in to the one server and keeps the current access token.
struct Authorizer {
    ctx: OAuthContext,
    jobs: OAuthJobs,
    server: ServerConfig,
    token: Mutex<Option<Sensitive<String>>>,
    browser: reqwest::Client,
}

impl Authorizer {
    async fn current_token(&self) -> Result<Option<String>, OAuthError> {
        let fresh = self
            .ctx
            .fresh_access_token(SERVER_NAME, &self.server)
            .await?;
        if let Some(t) = &fresh {
            *self.token.lock().unwrap() = Some(t.clone());
        }
        Ok(fresh.map(|t| t.expose().clone()))
    }

    /// The server answered 401: refresh if there is a token, else (or if that fails) sign in.
    async fn on_unauthorized(&self, challenge: &str, sent: Option<&str>) -> Result<(), BoxError> {
        if let Some(sent) = sent {
            let rejected = Sensitive::new(sent.to_string());
            if self
                .ctx
                .refresh_after_401(SERVER_NAME, &self.server, &rejected)
                .await
                .is_ok()
            {
                return Ok(());
            }
        }
        self.sign_in(challenge).await
    }

    /// The server answered 403 insufficient_scope: step up (bounded by the core's limit).
    async fn on_forbidden(&self, challenge: &str) -> Result<(), BoxError> {
        let scopes = self
            .ctx
            .record_insufficient_scope(SERVER_NAME, &self.server, challenge)?;
        eprintln!("stepping up to scopes: {}", scopes.join(" "));
        self.sign_in(challenge).await
    }

    /// Run one sign-in job to the end, playing the browser.
    async fn sign_in(&self, challenge: &str) -> Result<(), BoxError> {
        let job = self.jobs.start_with(
            SERVER_NAME,
            &self.server,
            StartOptions {
                challenge: Some(challenge.to_string()),
                extra_scopes: vec![],
            },
        )?;
        let status = self.jobs.wait_until_ready(&job).await?;
        if status.state != JobState::AwaitingUser {
            return Err(status
                .error
                .unwrap_or_else(|| "sign-in failed".into())
                .into());
        }
        let auth_url = status.authorization_url.ok_or("no authorization URL")?;
        let response = self.browser.get(&auth_url).send().await?;
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                format!(
                    "the authorization endpoint answered {} without a redirect",
                    response.status()
                )
            })?
            .to_string();
        // Deliver the redirect the way a browser would: to the job's loopback listener.
        let delivered = self.browser.get(&location).send().await?;
        if !delivered.status().is_success() {
            eprintln!("the callback listener answered {}", delivered.status());
        }
        let end = self.jobs.wait(&job).await?;
        if end.state != JobState::Succeeded {
            return Err(end
                .error
                .unwrap_or_else(|| format!("sign-in ended {:?}", end.state))
                .into());
        }
        *self.token.lock().unwrap() = None;
        Ok(())
    }
}

/// rmcp's reqwest backend plus authorization: every request carries the current token, and a
/// 401 or 403 challenge is answered by signing in or stepping up, then the request is retried.
#[derive(Clone)]
struct AuthorizingHttp {
    inner: reqwest::Client,
    auth: Arc<Authorizer>,
    /// Set once the server has answered the first GET, the stream for its own requests
    /// (whatever the answer: a server may have no such stream).
    listening: Arc<tokio::sync::watch::Sender<bool>>,
}

/// How often one request is retried after signing in or stepping up.
const MAX_AUTH_ROUNDS: usize = 3;

fn auth_failure(e: BoxError) -> StreamableHttpError<reqwest::Error> {
    StreamableHttpError::UnexpectedServerResponse(format!("authorization failed: {e}").into())
}

impl AuthorizingHttp {
    async fn token(&self) -> Result<Option<String>, StreamableHttpError<reqwest::Error>> {
        self.auth
            .current_token()
            .await
            .map_err(|e| auth_failure(Box::new(e)))
    }

    /// Whether to retry after `err` (having signed in or stepped up), or give up with it.
    async fn handle(
        &self,
        err: &StreamableHttpError<reqwest::Error>,
        sent: Option<&str>,
    ) -> Result<bool, StreamableHttpError<reqwest::Error>> {
        match err {
            StreamableHttpError::AuthRequired(e) => {
                self.auth
                    .on_unauthorized(&e.www_authenticate_header, sent)
                    .await
                    .map_err(auth_failure)?;
                Ok(true)
            }
            StreamableHttpError::InsufficientScope(e) => {
                self.auth
                    .on_forbidden(&e.www_authenticate_header)
                    .await
                    .map_err(auth_failure)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl StreamableHttpClient for AuthorizingHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            None,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut round = 0;
        loop {
            let token = self.token().await?;
            let result = self
                .inner
                .post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token.clone(),
                    custom_headers.clone(),
                    limits,
                )
                .await;
            match result {
                Err(err)
                    if round < MAX_AUTH_ROUNDS && self.handle(&err, token.as_deref()).await? =>
                {
                    round += 1;
                }
                other => return other,
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let token = self.token().await?;
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        let mut round = 0;
        loop {
            let token = self.token().await?;
            let result = self
                .inner
                .get_stream(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token.clone(),
                    custom_headers.clone(),
                )
                .await;
            match result {
                Err(err)
                    if round < MAX_AUTH_ROUNDS && self.handle(&err, token.as_deref()).await? =>
                {
                    round += 1;
                }
                other => {
                    self.listening.send_replace(true);
                    return other;
                }
            }
        }
    }
}
