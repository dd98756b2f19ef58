//! A remote server: does its host resolve, what is wrong with its TLS certificate, is the URL
//! the kind of MCP endpoint the config says (an SSE endpoint configured as streamable HTTP is
//! found by asking for the event stream and seeing an `endpoint` event), and what
//! authorization it wants.

use std::time::{Duration, Instant};

use futures::StreamExt;
use url::Url;

use super::{Finding, failed_stage};
use crate::config::{ServerConfig, TransportKind};
use crate::probe::{ErrorKind, TestResult};

/// How long the DNS look-up and the SSE endpoint check may take.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

fn url_of(server: &ServerConfig) -> Option<Url> {
    Url::parse(server.url.as_deref()?).ok()
}

/// Checks before the probe: a usable URL and a host that resolves. `false` when running the
/// probe is pointless.
pub async fn preflight(server: &ServerConfig, out: &mut Vec<Finding>) -> bool {
    let Some(url) = url_of(server) else {
        out.push(Finding::error(
            "config.bad_url",
            format!(
                "the server's URL `{}` is not a valid URL",
                server.url.as_deref().unwrap_or("")
            ),
            "fix the URL (e.g. https://example.com/mcp)",
        ));
        return false;
    };
    let Some(host) = url.host_str() else {
        return true;
    };
    if url
        .host()
        .is_some_and(|h| !matches!(h, url::Host::Domain(_)))
    {
        return true;
    }
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::time::timeout(CHECK_TIMEOUT, tokio::net::lookup_host((host, port))).await;
    let problem = match lookup {
        Ok(Ok(addrs)) => {
            if addrs.count() > 0 {
                None
            } else {
                Some("no addresses".to_owned())
            }
        }
        Ok(Err(err)) => Some(err.to_string()),
        Err(_) => Some(format!("no answer within {} s", CHECK_TIMEOUT.as_secs())),
    };
    match problem {
        None => true,
        Some(detail) => {
            out.push(Finding::error(
                "remote.dns",
                format!("the host name `{host}` does not resolve ({detail})"),
                "check the URL for typos; if it is right, check your network, VPN or DNS \
                 settings (an internal host may need the company VPN)",
            ));
            false
        }
    }
}

/// The certificate problem in a TLS error text, in words.
pub fn certificate_problem(detail: &str) -> Option<&'static str> {
    let lower = detail.to_lowercase();
    Some(
        if lower.contains("unknownissuer")
            || lower.contains("self-signed")
            || lower.contains("self signed")
        {
            "the certificate is self-signed or issued by an authority this machine does not trust"
        } else if lower.contains("causedasendentity") {
            "the server presents a self-signed CA certificate as its own certificate"
        } else if lower.contains("expired") {
            "the certificate has expired"
        } else if lower.contains("notvalidyet") {
            "the certificate is not valid yet (check the clock)"
        } else if lower.contains("notvalidforname") || lower.contains("not valid for name") {
            "the certificate is for another host name"
        } else if lower.contains("revoked") {
            "the certificate was revoked"
        } else if lower.contains("badsignature") || lower.contains("bad signature") {
            "the certificate's signature does not verify against any trusted authority (typical \
         of a self-signed certificate)"
        } else if lower.contains("invalidcertificate") || lower.contains("invalid peer certificate")
        {
            "the certificate is invalid"
        } else if lower.contains("wrong version number")
            || lower.contains("corrupt message")
            || lower.contains("invalidcontenttype")
        {
            "the server does not speak TLS on this port (try http:// instead of https://)"
        } else {
            return None;
        },
    )
}

/// Whether GET `url` with `Accept: text/event-stream` opens a legacy SSE stream whose first
/// event is `endpoint`.
pub async fn is_sse_endpoint(url: &Url) -> bool {
    let Ok(client) = crate::tls::http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(CHECK_TIMEOUT)
        .build()
    else {
        return false;
    };
    let started = Instant::now();
    let response = match client
        .get(url.clone())
        .header("Accept", "text/event-stream")
        .send()
        .await
    {
        Ok(r) if r.status().is_success() => r,
        _ => return false,
    };
    let is_stream = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if !is_stream {
        return false;
    }
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    while started.elapsed() < CHECK_TIMEOUT && seen.len() < 16 * 1024 {
        let left = CHECK_TIMEOUT.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, body.next()).await {
            Ok(Some(Ok(chunk))) => {
                seen.push_str(&String::from_utf8_lossy(&chunk));
                if seen
                    .lines()
                    .any(|l| l.trim() == "event: endpoint" || l.trim() == "event:endpoint")
                {
                    return true;
                }
            }
            _ => return false,
        }
    }
    false
}

/// Findings specific to a remote server's result.
pub async fn explain(name: &str, server: &ServerConfig, result: &TestResult) -> Vec<Finding> {
    let mut out = vec![];
    if result.ok {
        return out;
    }
    let stage = failed_stage(result);
    let error = result.error.as_deref().unwrap_or("");
    let hint = result.hint.clone().unwrap_or_default();
    let mut push = |mut f: Finding| {
        f.stage = stage;
        out.push(f);
    };
    match result.error_kind {
        Some(ErrorKind::Connection) if error.contains("TLS handshake") => {
            let problem = certificate_problem(error);
            push(Finding::error(
                "remote.tls",
                match problem {
                    Some(p) => format!("TLS failed: {p} ({error})"),
                    None => format!("TLS failed: {error}"),
                },
                "if this is your own server, give it a certificate from a trusted authority \
                 (e.g. Let's Encrypt) for this host name; otherwise check the URL's host and \
                 scheme (https:// vs http://) and the system clock",
            ));
        }
        Some(ErrorKind::Connection) if error.contains("cannot resolve the host") => {
            push(Finding::error("remote.dns", error.to_owned(), hint));
        }
        Some(ErrorKind::Connection) if error.contains("connection refused") => {
            push(Finding::error("remote.refused", error.to_owned(), hint));
        }
        Some(ErrorKind::Unauthorized) => {
            push(Finding::error(
                if error.starts_with("HTTP 403") {
                    "remote.forbidden"
                } else {
                    "remote.unauthorized"
                },
                error.to_owned(),
                hint,
            ));
        }
        Some(ErrorKind::Http | ErrorKind::Protocol)
            if server.transport == TransportKind::Shttp
                && let Some(url) = url_of(server)
                && is_sse_endpoint(&url).await =>
        {
            push(Finding::error(
                "remote.sse_only",
                format!(
                    "this URL is a legacy SSE endpoint (GET gives an `endpoint` event), but the \
                     server is configured as streamable HTTP, which it rejects ({error})"
                ),
                format!(
                    "change the transport to sse: set `\"type\": \"sse\"` for `{name}` in \
                     mcp_config.json, or re-add it with `plugboard add {name} --url {url} \
                     --transport sse`"
                ),
            ));
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_problems_are_named() {
        assert!(
            certificate_problem("invalid peer certificate: UnknownIssuer")
                .unwrap()
                .contains("self-signed")
        );
        assert!(
            certificate_problem("invalid peer certificate: Expired")
                .unwrap()
                .contains("expired")
        );
        assert!(
            certificate_problem("x: NotValidForName")
                .unwrap()
                .contains("another host")
        );
        assert!(
            certificate_problem("Other(OtherError(CaUsedAsEndEntity))")
                .unwrap()
                .contains("self-signed")
        );
        assert_eq!(certificate_problem("connection reset"), None);
    }
}
