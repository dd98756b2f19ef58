//! Classification: turn what went wrong (an rmcp error, a transport fault, an exit status, a
//! missed deadline) plus what the transports observed into an [`ErrorKind`], a one-line error
//! and a hint that says what to do. The hints are specific to the kind and the situation; a
//! user should never have to guess what "transport closed" means.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::ServiceError;

use super::result::{ErrorKind, Failure, Stage};
use crate::config::TransportKind;
use crate::connect::era;
use crate::connect::{
    ConnectError, Era, ExitInfo, HandshakeError, HttpFault, NetKind, Observations, truncate_chars,
};

/// The situation a failure happened in.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    /// The server's name (for `plugboard ... NAME` in hints).
    pub server: &'a str,
    /// The transport in use.
    pub transport: TransportKind,
    pub stage: Stage,
    /// The whole test's deadline.
    pub timeout: Duration,
    /// The configured command (stdio).
    pub command: Option<&'a str>,
    /// `host:port` (remote).
    pub target: Option<String>,
    /// Whether requests carried credentials.
    pub sends_credentials: bool,
}

impl Context<'_> {
    fn stdio(&self) -> bool {
        self.transport == TransportKind::Stdio
    }

    fn seconds(&self) -> String {
        let secs = self.timeout.as_secs_f64();
        if (secs - secs.round()).abs() < 0.05 {
            format!("{} s", secs.round() as u64)
        } else {
            format!("{secs:.1} s")
        }
    }
}

/// A parsed `WWW-Authenticate` challenge (the first one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub realm: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
    pub scope: Option<String>,
    pub resource_metadata: Option<String>,
}

impl Challenge {
    /// Whether the challenge points to OAuth (RFC 9728 metadata, or a Bearer scheme).
    pub fn advertises_oauth(&self) -> bool {
        self.resource_metadata.is_some()
    }
}

/// Parse `Bearer realm="x", error="invalid_token", resource_metadata="https://…"`.
pub fn parse_www_authenticate(header: &str) -> Challenge {
    let header = header.trim();
    let (scheme, rest) = match header.find(char::is_whitespace) {
        Some(i) => (&header[..i], header[i..].trim_start()),
        None => (header, ""),
    };
    let mut challenge = Challenge {
        scheme: scheme.to_owned(),
        ..Challenge::default()
    };
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = chars
            .by_ref()
            .take_while(|c| *c != '=')
            .collect::<String>()
            .trim()
            .to_ascii_lowercase();
        if key.is_empty() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(next) = chars.next() {
                            value.push(next);
                        }
                    }
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.peek() {
                if *c == ',' {
                    break;
                }
                value.push(*c);
                chars.next();
            }
            value = value.trim().to_owned();
        }
        match key.as_str() {
            "realm" => challenge.realm = Some(value),
            "error" => challenge.error = Some(value),
            "error_description" => challenge.error_description = Some(value),
            "scope" => challenge.scope = Some(value),
            "resource_metadata" => challenge.resource_metadata = Some(value),
            _ => {}
        }
    }
    challenge
}

/// A failure explained by what the transports observed, if they saw anything decisive.
pub fn from_observations(ctx: &Context<'_>, obs: &Observations) -> Option<Failure> {
    if let Some(limit) = obs.oversized {
        return Some(too_large(ctx, limit));
    }
    if let Some(fault) = &obs.http {
        return Some(http_fault(ctx, fault));
    }
    if let Some(exit) = &obs.exit {
        return Some(exited(ctx, exit, obs));
    }
    if obs.noise_count > 0 {
        return Some(noise(ctx, obs));
    }
    if let Some(first) = obs.invalid_messages.first() {
        return Some(Failure::new(
            ErrorKind::Protocol,
            format!("the server sent JSON that is not a valid JSON-RPC message: {first}"),
            "this is not a working MCP server (or it speaks another protocol version); check \
             that the command or URL is the MCP server itself",
        ));
    }
    if obs.stream_closed {
        return Some(if ctx.stdio() {
            Failure::new(
                ErrorKind::Protocol,
                format!("the server closed its stdout {}", ctx.stage.describe()),
                "the process is still running but stopped talking; its last stderr lines are \
                 below",
            )
        } else {
            Failure::new(
                ErrorKind::Connection,
                format!(
                    "the server closed the event stream {}",
                    ctx.stage.describe()
                ),
                "the server dropped the connection; check the server's logs",
            )
        });
    }
    None
}

fn too_large(ctx: &Context<'_>, limit: usize) -> Failure {
    let mib = limit / (1024 * 1024);
    Failure::new(
        ErrorKind::Protocol,
        format!(
            "the server sent a message larger than {mib} MiB {}",
            ctx.stage.describe()
        ),
        format!(
            "message larger than {mib} MiB: Plugboard refuses messages this large to protect your \
             memory. A server that lists huge tool descriptions or schemas needs fixing upstream"
        ),
    )
}

fn noise(ctx: &Context<'_>, obs: &Observations) -> Failure {
    let lines = obs
        .noise
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    if ctx.stdio() {
        Failure::new(
            ErrorKind::Protocol,
            format!(
                "the server wrote {} line(s) that are not JSON-RPC to stdout {}; the first:\n{lines}",
                obs.noise_count,
                ctx.stage.describe()
            ),
            "this server writes logs to stdout; MCP stdio servers must log to stderr. Turn its \
             logging off or to stderr (often a --quiet flag or a LOG_LEVEL setting), or report \
             it upstream",
        )
    } else {
        Failure::new(
            ErrorKind::Protocol,
            format!(
                "the server sent {} message(s) that are not JSON-RPC {}; the first:\n{lines}",
                obs.noise_count,
                ctx.stage.describe()
            ),
            "the URL answers, but not with MCP messages; check that it is the MCP endpoint",
        )
    }
}

fn exited(ctx: &Context<'_>, exit: &ExitInfo, obs: &Observations) -> Failure {
    let when = if ctx.stage <= Stage::Initialize {
        "before the handshake".to_owned()
    } else {
        ctx.stage.describe().to_owned()
    };
    let mut error = format!("the server process {} {when}", exit.describe());
    if !obs.noise.is_empty() {
        error.push_str(&format!("; it wrote to stdout: {}", obs.noise.join(" | ")));
    }
    let hint = match exit {
        ExitInfo::Code(127) => format!(
            "the process exited with code 127 {when}, which means a program it runs was not \
             found (often `node` or `python` for a script's `#!` line): check PATH or install \
             the runtime; its last stderr lines are below"
        ),
        ExitInfo::Code(126) => format!(
            "the process exited with code 126 {when}, which means a program it runs is not \
             executable; its last stderr lines are below"
        ),
        ExitInfo::Signal(_) => format!(
            "the process {} {when}; its last stderr lines are below",
            exit.describe()
        ),
        _ => format!(
            "the process {} {when}; its last stderr lines are below (a missing or wrong \
             credential, a missing dependency or a wrong argument are the usual causes)",
            exit.describe()
        ),
    };
    Failure::new(ErrorKind::Exited, error, hint)
}

/// The failure for an HTTP-level fault.
pub fn http_fault(ctx: &Context<'_>, fault: &HttpFault) -> Failure {
    let name = ctx.server;
    let target = ctx.target.clone().unwrap_or_default();
    match fault {
        HttpFault::Status {
            method,
            status,
            www_authenticate,
            location,
            body,
        } => {
            let body_note = if body.is_empty() {
                String::new()
            } else {
                format!(": {body}")
            };
            match *status {
                401 | 403 => unauthorized(ctx, *status, www_authenticate.as_deref(), body),
                300..=399 => Failure::new(
                    ErrorKind::Http,
                    format!(
                        "HTTP {status} redirect from {target}{}",
                        location
                            .as_deref()
                            .map(|l| format!(" to {l}"))
                            .unwrap_or_default()
                    ),
                    "the server redirects in a way that would lose the request (Plugboard \
                     follows only same-origin 307/308 redirects); use the final URL",
                ),
                404 => Failure::new(
                    ErrorKind::Http,
                    format!("HTTP 404 from {method} {target}{body_note}"),
                    match ctx.transport {
                        TransportKind::Sse => "nothing answers at this URL (HTTP 404): check the \
                                               path; legacy SSE servers usually serve `/sse`"
                            .to_owned(),
                        _ => "nothing answers MCP at this URL (HTTP 404): check the path \
                              (streamable HTTP servers usually serve `/mcp`, legacy SSE servers \
                              `/sse`), or use `--transport auto`"
                            .to_owned(),
                    },
                ),
                405 => Failure::new(
                    ErrorKind::Http,
                    format!("HTTP 405 (method not allowed) from {method} {target}"),
                    if *method == "POST" && ctx.transport != TransportKind::Sse {
                        "the URL does not accept POST: it may be a legacy SSE server; use \
                         `--transport sse` or `--transport auto`"
                            .to_owned()
                    } else {
                        "the URL does not accept GET: it may be a streamable HTTP server; use \
                         `--transport shttp` or `--transport auto`"
                            .to_owned()
                    },
                ),
                400 => Failure::new(
                    ErrorKind::Http,
                    format!("HTTP 400 (bad request) from {method} {target}{body_note}"),
                    "the server rejected the request; check the URL and the transport (a legacy \
                     SSE server rejects streamable HTTP requests: try `--transport auto`)",
                ),
                429 => Failure::new(
                    ErrorKind::Http,
                    format!("HTTP 429 (too many requests) from {target}"),
                    "the server is rate limiting; wait a little and test again",
                ),
                500..=599 => Failure::new(
                    ErrorKind::Http,
                    format!("HTTP {status} from {method} {target}{body_note}"),
                    format!(
                        "HTTP {status} from the server: it failed while handling the request; \
                         check the server's logs or status page and try again later"
                    ),
                ),
                _ => Failure::new(
                    ErrorKind::Http,
                    format!("HTTP {status} from {method} {target}{body_note}"),
                    format!(
                        "HTTP {status} from the server, which MCP does not expect here; check the URL"
                    ),
                ),
            }
        }
        HttpFault::CrossOriginRedirect { from: _, to } => {
            let to_origin = url::Url::parse(to)
                .map(|u| u.origin().ascii_serialization())
                .unwrap_or_else(|_| to.clone());
            Failure::new(
                ErrorKind::Http,
                format!("the server redirected to another origin ({to_origin})"),
                format!(
                    "the server redirected to another origin ({to}); Plugboard does not follow \
                     cross-origin redirects — use the final URL"
                ),
            )
        }
        HttpFault::Network {
            kind,
            target: fault_target,
            detail,
        } => {
            let at = if fault_target.is_empty() {
                target
            } else {
                fault_target.clone()
            };
            let host = at
                .rsplit_once(':')
                .map(|(h, _)| h)
                .unwrap_or(&at)
                .to_owned();
            match kind {
                NetKind::Refused => Failure::new(
                    ErrorKind::Connection,
                    format!("connection refused at {at}"),
                    format!(
                        "connection refused at {at}: is the server running? Check the host and port"
                    ),
                ),
                NetKind::Dns => Failure::new(
                    ErrorKind::Connection,
                    format!("cannot resolve the host `{host}`: {detail}"),
                    format!(
                        "the host name `{host}` does not resolve: check the URL for typos and \
                         your network or DNS"
                    ),
                ),
                NetKind::Tls => Failure::new(
                    ErrorKind::Connection,
                    format!("the TLS handshake with {at} failed: {detail}"),
                    "check the URL's scheme (https:// vs http://) and the server's certificate \
                     (expired, self-signed or for another host)",
                ),
                NetKind::Timeout => Failure::new(
                    ErrorKind::Connection,
                    format!("the connection to {at} timed out: {detail}"),
                    "the host did not answer; it may be down, or a firewall drops the packets",
                ),
                _ => Failure::new(
                    ErrorKind::Connection,
                    format!("cannot connect to {at}: {detail}"),
                    format!("check that {at} is reachable from this machine (network, VPN, proxy)"),
                ),
            }
        }
        HttpFault::ContentType { content_type } => {
            let ct = content_type.as_deref().unwrap_or("no content type");
            Failure::new(
                ErrorKind::Protocol,
                format!("the server answered with `{ct}`, not JSON or an event stream"),
                if ct.contains("html") {
                    "this URL serves a web page, not an MCP endpoint: check the path (often `/mcp` \
                     or `/sse`)"
                        .to_owned()
                } else {
                    format!(
                        "this URL does not speak MCP over {}; check the URL and the transport",
                        ctx.transport.label()
                    )
                },
            )
        }
        HttpFault::TooLarge { limit } => too_large(ctx, *limit),
        HttpFault::Protocol { detail } => Failure::new(
            ErrorKind::Protocol,
            format!(
                "the server's answer is not valid MCP: {}",
                truncate_chars(detail, 400)
            ),
            "the URL answers, but not with MCP JSON-RPC; check that it is the MCP endpoint",
        ),
        HttpFault::Other { detail } => Failure::new(
            ErrorKind::Http,
            format!("the HTTP request failed: {detail}"),
            format!("check the URL and the headers of server `{name}`"),
        ),
    }
}

fn unauthorized(
    ctx: &Context<'_>,
    status: u16,
    www_authenticate: Option<&str>,
    body: &str,
) -> Failure {
    let name = ctx.server;
    let challenge = www_authenticate
        .map(parse_www_authenticate)
        .unwrap_or_default();
    let code = challenge
        .error
        .as_deref()
        .map(|e| format!(" {e}"))
        .unwrap_or_default();
    let mut error = format!("HTTP {status}{code}: the server refused the request");
    if let Some(description) = &challenge.error_description {
        error.push_str(&format!(" ({description})"));
    } else if !body.is_empty() {
        error.push_str(&format!(": {}", truncate_chars(body, 200)));
    }
    let hint = if status == 403 {
        match (challenge.error.as_deref(), challenge.scope.as_deref()) {
            (Some("insufficient_scope"), Some(scope)) => format!(
                "the token lacks the scope `{scope}` (403 insufficient_scope); sign in again with \
                 that scope: run `plugboard auth {name}`"
            ),
            _ => format!(
                "access denied (403): the credentials are valid but not allowed to use this server; \
                 check the account's permissions, or update the credentials with \
                 `plugboard edit {name} --credential`"
            ),
        }
    } else if challenge.advertises_oauth() {
        if ctx.sends_credentials {
            format!(
                "the server rejected the credentials (401{code}); it advertises OAuth: run \
                 `plugboard auth {name}`, or update the token with `plugboard edit {name} --credential`"
            )
        } else {
            format!(
                "the server requires authorization (401); it advertises OAuth: run `plugboard auth {name}`"
            )
        }
    } else if ctx.sends_credentials {
        format!(
            "the server rejected the credentials (401{code}): check the token or key and update it \
             with `plugboard edit {name} --credential`"
        )
    } else if challenge.scheme.eq_ignore_ascii_case("bearer") {
        format!(
            "the server requires a token (401, Bearer): add one with `plugboard edit {name} \
             --credential`, or run `plugboard auth {name}` if it supports OAuth"
        )
    } else {
        format!(
            "the server requires authorization (401): add credentials with `plugboard edit {name} \
             --credential` (or the header it expects)"
        )
    };
    Failure::new(ErrorKind::Unauthorized, error, hint)
}

/// The failure for a JSON-RPC error answer to `method`.
pub fn rpc_error(ctx: &Context<'_>, method: &str, err: &ErrorData) -> Failure {
    let code = err.code.0;
    if let Some(theirs) = era::supported_of(err) {
        let mut failure = no_common_version(Era::Modern, &theirs);
        failure.error = format!("{} ({method} was refused: {})", failure.error, err.message);
        return failure;
    }
    if code == era::MISSING_REQUIRED_CLIENT_CAPABILITY || code == era::HEADER_MISMATCH {
        return Failure::new(
            ErrorKind::Protocol,
            format!("JSON-RPC error {code} on {method}: {}", err.message),
            if code == era::HEADER_MISMATCH {
                "the server (MCP 2026-07-28) found the request's HTTP headers not matching its body; \
                 a proxy in between may rewrite them, or this is a bug in Plugboard: please report it"
            } else {
                "the server (MCP 2026-07-28) needs a client capability that a test does not offer; \
                 use the server from a client that has it"
            },
        );
    }
    let error = format!("JSON-RPC error {code} on {method}: {}", err.message);
    let hint = match code {
        -32601 => format!(
            "the server does not implement {method} (method not found); it may be incomplete or \
             speak another protocol version"
        ),
        -32602 => format!("the server rejected the parameters of {method}; it may need an update"),
        -32600 | -32700 => format!(
            "the server could not read the {method} request; it may speak another protocol \
             version"
        ),
        _ if ctx.stdio() => format!(
            "the server reported an error on {method}; its last stderr lines are below and may \
             say why (often a missing or wrong credential)"
        ),
        _ => format!(
            "the server reported an error on {method}; check the server's logs (often a missing \
             or wrong credential)"
        ),
    };
    Failure::new(ErrorKind::Server, error, hint)
}

/// The failure for a spawn error (the command was resolved, but the OS refused to run it).
fn spawn_error(command: &str, source: &std::io::Error) -> Failure {
    let raw = source.raw_os_error();
    #[cfg(unix)]
    let (eacces, enoexec) = (Some(libc::EACCES), Some(libc::ENOEXEC));
    #[cfg(not(unix))]
    let (eacces, enoexec) = (None::<i32>, None::<i32>);
    if source.kind() == std::io::ErrorKind::PermissionDenied || (raw.is_some() && raw == eacces) {
        Failure::new(
            ErrorKind::Spawn,
            format!("`{command}` cannot be executed: permission denied"),
            format!("make `{command}` executable (chmod +x) or give the path of the real program"),
        )
    } else if source.kind() == std::io::ErrorKind::NotFound {
        Failure::new(
            ErrorKind::Spawn,
            format!("`{command}` could not be started: {source}"),
            crate::resolve::command_not_found_hint(command, true),
        )
    } else if raw.is_some() && raw == enoexec {
        Failure::new(
            ErrorKind::Spawn,
            format!("`{command}` is not a program this system can run (exec format error)"),
            "a script needs a `#!` line (e.g. `#!/usr/bin/env node`); a binary may be built for \
             another system",
        )
    } else {
        Failure::new(
            ErrorKind::Spawn,
            format!("`{command}` could not be started: {source}"),
            "check the command and its permissions",
        )
    }
}

/// The failure for a failed connect or handshake.
pub fn connect_error(ctx: &Context<'_>, err: &ConnectError, obs: &Observations) -> Failure {
    match err {
        ConnectError::Spawn { command, source } => spawn_error(command, source),
        ConnectError::Http(fault) => http_fault(ctx, fault),
        ConnectError::AutoFallback { status, sse } => {
            let mut failure = connect_error(ctx, sse, obs);
            failure.error = format!(
                "streamable HTTP was refused with HTTP {status}, and the legacy SSE fallback \
                 failed too: {}",
                failure.error
            );
            if *status == 404 {
                failure.hint = "nothing answers MCP at this URL (HTTP 404 for both transports): \
                                check the path (streamable HTTP servers usually serve `/mcp`, \
                                legacy SSE servers `/sse`)"
                    .to_owned();
            }
            failure
        }
        ConnectError::Sse(message) => Failure::new(
            ErrorKind::Protocol,
            message.clone(),
            "check the URL: legacy SSE servers usually serve `/sse`; for a streamable HTTP \
             server use `--transport shttp`",
        ),
        ConnectError::Handshake(handshake) => {
            if let Some(failure) = from_observations(ctx, obs) {
                return failure;
            }
            handshake_error(ctx, handshake)
        }
    }
}

/// "2026-07-28, 2025-11-25" (or "none" for an empty list).
fn versions(list: &[String]) -> String {
    if list.is_empty() {
        "none".to_owned()
    } else {
        list.join(", ")
    }
}

/// The failure for versions in common: none. Both sides' versions are named.
pub fn no_common_version(era: Era, theirs: &[String]) -> Failure {
    let ours = era::spoken_versions();
    let what = match era {
        Era::Modern => "the server (a modern MCP server) supports no protocol version",
        Era::Legacy => "the server chose an MCP protocol version",
    };
    Failure::new(
        ErrorKind::Protocol,
        format!("{what} that Plugboard speaks"),
        format!(
            "no MCP protocol version in common: the server speaks {}; Plugboard speaks {}. \
             Update Plugboard, or use a release of the server that supports one of Plugboard's \
             versions",
            versions(theirs),
            versions(&ours)
        ),
    )
}

fn handshake_error(ctx: &Context<'_>, err: &HandshakeError) -> Failure {
    match err {
        HandshakeError::NoCommonVersion { era, theirs } => no_common_version(*era, theirs),
        HandshakeError::Rejected { method, error, .. } => rpc_error(ctx, method, error),
        HandshakeError::Closed { during } => {
            if ctx.stdio() {
                Failure::new(
                    ErrorKind::Protocol,
                    format!("the server closed its stdout without answering `{during}`"),
                    "the process is running but stopped talking; its last stderr lines are below",
                )
            } else {
                Failure::new(
                    ErrorKind::Connection,
                    format!("the connection closed before the server answered `{during}`"),
                    "the server dropped the connection; check the server's logs",
                )
            }
        }
        HandshakeError::ExitedOnProbe => Failure::new(
            ErrorKind::Exited,
            "the server ended when it read the era probe (`server/discover`), without answering it",
            "an older server that exits on a request it does not know: test it once, and \
             Plugboard then starts it with the older handshake; its last stderr lines are below",
        ),
        HandshakeError::Send { during, detail } => {
            if ctx.stdio() {
                Failure::new(
                    ErrorKind::Exited,
                    format!("could not send `{during}` to the server process: {detail}"),
                    "the process stopped reading its stdin; its last stderr lines are below",
                )
            } else {
                Failure::new(
                    ErrorKind::Connection,
                    format!("the `{during}` request failed: {detail}"),
                    "check that the URL is reachable and is an MCP endpoint",
                )
            }
        }
        HandshakeError::Unexpected {
            method,
            expected,
            detail,
        } => Failure::new(
            ErrorKind::Protocol,
            format!(
                "the server's answer to `{method}` is not {expected}: {}",
                truncate_chars(detail, 400)
            ),
            "this is not a working MCP server; check the command or URL",
        ),
    }
}

/// The failure for a failed request after the handshake.
pub fn service_error(
    ctx: &Context<'_>,
    method: &str,
    err: &ServiceError,
    obs: &Observations,
) -> Failure {
    if let ServiceError::McpError(data) = err {
        return rpc_error(ctx, method, data);
    }
    if let Some(failure) = from_observations(ctx, obs) {
        return failure;
    }
    match err {
        ServiceError::UnexpectedResponse => Failure::new(
            ErrorKind::Protocol,
            format!("the server answered {method} with something that is not a {method} result"),
            "the server does not follow the MCP schema; it may speak another protocol version",
        ),
        ServiceError::Timeout { .. } => timeout(ctx, obs),
        ServiceError::TransportClosed if ctx.stdio() => Failure::new(
            ErrorKind::Protocol,
            format!("the server closed its stdout {}", ctx.stage.describe()),
            "the process stopped talking; its last stderr lines are below",
        ),
        _ => Failure::new(
            ErrorKind::Connection,
            format!("the connection failed {}: {err}", ctx.stage.describe()),
            "the server dropped the connection; check the server's logs",
        ),
    }
}

/// The failure for the overall deadline passing during `ctx.stage`.
pub fn timeout(ctx: &Context<'_>, obs: &Observations) -> Failure {
    if (obs.noise_count > 0 || obs.oversized.is_some())
        && let Some(failure) = from_observations(ctx, obs)
    {
        return failure;
    }
    let secs = ctx.seconds();
    let stage = ctx.stage;
    let slow_runner = ctx.command.is_some_and(|c| {
        let base = std::path::Path::new(c)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(c);
        matches!(
            base,
            "npx" | "uvx" | "pipx" | "bunx" | "docker" | "podman" | "uv" | "npm" | "pnpm" | "yarn"
        )
    });
    let (error, mut hint) = match (ctx.stdio(), stage) {
        (true, Stage::Connect | Stage::Discover | Stage::Initialize) => (
            format!(
                "no answer to `{}` within {secs}",
                if stage == Stage::Initialize {
                    "initialize"
                } else {
                    "server/discover"
                }
            ),
            format!(
                "no answer within {secs}: the server may be waiting for input or stuck; check its \
                 stderr"
            ),
        ),
        (true, _) => (
            format!("no answer {} within {secs}", stage.describe()),
            format!(
                "the server completed the handshake but gave no answer to {stage} within {secs}: \
                 it may be stuck; check its stderr"
            ),
        ),
        (false, Stage::Connect) if obs.stream_opened => (
            format!("the event stream sent no `endpoint` event within {secs}"),
            "the server opened the event stream but never said where to post messages: this \
             does not look like a legacy MCP SSE server; check the URL, or use `--transport \
             shttp`"
                .to_owned(),
        ),
        // Streamable HTTP opens its connection with the first request of the handshake.
        (false, _)
            if stage == Stage::Connect
                || stage <= Stage::Initialize && obs.connected_at.is_none() =>
        {
            (
                format!(
                    "could not connect to {} within {secs}",
                    ctx.target.clone().unwrap_or_default()
                ),
                "the host did not answer: it may be down, or a firewall drops the packets"
                    .to_owned(),
            )
        }
        (false, _) => (
            format!("no answer {} within {secs}", stage.describe()),
            format!(
                "the server accepted the connection but did not answer {stage} within {secs}: it \
                 may be overloaded or stuck; check the server's logs"
            ),
        ),
    };
    if slow_runner && stage <= Stage::Initialize {
        let runner = ctx.command.unwrap_or_default();
        hint.push_str(&format!(
            ". A first `{runner}` run downloads the server and can take a minute or more: try \
             again with a longer timeout (`plugboard test {} --timeout 300`)",
            ctx.server
        ));
    }
    Failure::new(ErrorKind::Timeout, error, hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(transport: TransportKind, stage: Stage) -> Context<'static> {
        Context {
            server: "demo",
            transport,
            stage,
            timeout: Duration::from_secs(5),
            command: Some("npx"),
            target: Some("127.0.0.1:4000".into()),
            sends_credentials: false,
        }
    }

    #[test]
    fn www_authenticate_is_parsed() {
        let c = parse_www_authenticate(
            r#"Bearer realm="mcp", error="invalid_token", error_description="expired \"x\"", resource_metadata="https://a.example/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.error_description.as_deref(), Some(r#"expired "x""#));
        assert!(c.advertises_oauth());
        let c = parse_www_authenticate("Basic realm=site, charset=UTF-8");
        assert_eq!(c.scheme, "Basic");
        assert_eq!(c.realm.as_deref(), Some("site"));
        assert!(!c.advertises_oauth());
        assert_eq!(parse_www_authenticate("Bearer").scheme, "Bearer");
    }

    #[test]
    fn http_statuses_get_kinds_and_hints() {
        let c = ctx(TransportKind::Shttp, Stage::Initialize);
        let status = |status: u16, www: Option<&str>| HttpFault::Status {
            method: "POST",
            status,
            www_authenticate: www.map(str::to_owned),
            location: None,
            body: String::new(),
        };
        let f = http_fault(&c, &status(500, None));
        assert_eq!(f.kind, ErrorKind::Http);
        assert!(f.hint.contains("HTTP 500 from the server"));
        let f = http_fault(
            &c,
            &status(
                401,
                Some(r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource""#),
            ),
        );
        assert_eq!(f.kind, ErrorKind::Unauthorized);
        assert!(
            f.hint
                .contains("advertises OAuth: run `plugboard auth demo`"),
            "{}",
            f.hint
        );
        let mut with_token = c.clone();
        with_token.sends_credentials = true;
        let f = http_fault(&with_token, &status(401, None));
        assert!(f.hint.contains("rejected the credentials"), "{}", f.hint);
        let f = http_fault(&c, &status(405, None));
        assert!(f.hint.contains("legacy SSE"), "{}", f.hint);
        let f = http_fault(
            &c,
            &HttpFault::CrossOriginRedirect {
                from: "http://127.0.0.1:1/mcp".into(),
                to: "http://127.0.0.2:1/mcp".into(),
            },
        );
        assert_eq!(f.kind, ErrorKind::Http);
        assert!(f.hint.contains("does not follow cross-origin redirects"));
        let f = http_fault(
            &c,
            &HttpFault::Network {
                kind: NetKind::Refused,
                target: "127.0.0.1:4000".into(),
                detail: "refused".into(),
            },
        );
        assert_eq!(f.kind, ErrorKind::Connection);
        assert_eq!(
            f.hint,
            "connection refused at 127.0.0.1:4000: is the server running? Check the host and port"
        );
        let f = http_fault(
            &c,
            &HttpFault::ContentType {
                content_type: Some("text/html".into()),
            },
        );
        assert_eq!(f.kind, ErrorKind::Protocol);
    }

    #[test]
    fn observations_decide_before_generic_errors() {
        let c = ctx(TransportKind::Stdio, Stage::Initialize);
        let obs = Observations {
            exit: Some(ExitInfo::Code(3)),
            ..Default::default()
        };
        let f = from_observations(&c, &obs).unwrap();
        assert_eq!(f.kind, ErrorKind::Exited);
        assert!(
            f.hint
                .starts_with("the process exited with code 3 before the handshake")
        );
        let obs = Observations {
            noise: vec!["Starting server...".into()],
            noise_count: 1,
            ..Default::default()
        };
        let f = from_observations(&c, &obs).unwrap();
        assert_eq!(f.kind, ErrorKind::Protocol);
        assert!(f.hint.starts_with(
            "this server writes logs to stdout; MCP stdio servers must log to stderr"
        ));
        let obs = Observations {
            oversized: Some(16 * 1024 * 1024),
            ..Default::default()
        };
        assert!(
            from_observations(&c, &obs)
                .unwrap()
                .error
                .contains("larger than 16 MiB")
        );
        assert!(from_observations(&c, &Observations::default()).is_none());
    }

    #[test]
    fn timeouts_name_the_stage_and_the_runner() {
        let c = ctx(TransportKind::Stdio, Stage::Initialize);
        let f = timeout(&c, &Observations::default());
        assert_eq!(f.kind, ErrorKind::Timeout);
        assert!(f.hint.starts_with(
            "no answer within 5 s: the server may be waiting for input or stuck; check its stderr"
        ));
        assert!(f.hint.contains("first `npx` run"));
        let c = ctx(TransportKind::Shttp, Stage::ToolsList);
        let f = timeout(&c, &Observations::default());
        assert!(f.error.contains("during tools/list"), "{}", f.error);
    }

    /// Streamable HTTP connects with the handshake's first request: a handshake that timed out
    /// before any connection was made is a host that never answered, not a silent server.
    #[test]
    fn http_handshake_timeouts_tell_whether_the_host_accepted() {
        let c = ctx(TransportKind::Shttp, Stage::Discover);
        let f = timeout(&c, &Observations::default());
        assert!(f.error.starts_with("could not connect to"), "{}", f.error);
        assert!(f.hint.contains("firewall"), "{}", f.hint);
        let connected = Observations {
            connected_at: Some(tokio::time::Instant::now()),
            ..Observations::default()
        };
        let f = timeout(&c, &connected);
        assert!(f.hint.contains("accepted the connection"), "{}", f.hint);
        let c = ctx(TransportKind::Shttp, Stage::Initialize);
        let f = timeout(&c, &connected);
        assert!(f.error.contains("initialize"), "{}", f.error);
    }

    #[test]
    fn json_rpc_errors_are_server_errors() {
        let c = ctx(TransportKind::Stdio, Stage::ToolsList);
        let data = ErrorData::new(rmcp::model::ErrorCode(-32603), "database unavailable", None);
        let f = rpc_error(&c, "tools/list", &data);
        assert_eq!(f.kind, ErrorKind::Server);
        assert_eq!(
            f.error,
            "JSON-RPC error -32603 on tools/list: database unavailable"
        );
    }

    #[test]
    fn spawn_errors_are_explained() {
        let f = spawn_error(
            "./server",
            &std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert_eq!(f.kind, ErrorKind::Spawn);
        assert!(f.error.contains("permission denied"));
    }
}
