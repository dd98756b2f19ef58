//! The loopback callback listener (RFC 8252 §7.3): a tiny HTTP/1.1 server on 127.0.0.1 that
//! takes the browser's redirect to `/callback`, hands the parameters to the job, answers with a
//! small "you can close this window" page (or the reason it was refused) and stops after the
//! one response that the job accepts. Also the parser for a pasted redirect URL.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use url::Url;

use super::OAuthError;
use crate::secrets::Sensitive;

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";

/// The parameters of an authorization response.
#[derive(Debug, Default)]
pub(crate) struct CallbackParams {
    pub code: Option<Sensitive<String>>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl CallbackParams {
    pub fn from_query(query: &str) -> CallbackParams {
        let mut p = CallbackParams::default();
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            let v = v.into_owned();
            match k.as_ref() {
                "code" if p.code.is_none() => p.code = Some(Sensitive::new(v)),
                "state" if p.state.is_none() => p.state = Some(v),
                "iss" if p.iss.is_none() => p.iss = Some(v),
                "error" if p.error.is_none() => p.error = Some(v),
                "error_description" if p.error_description.is_none() => {
                    p.error_description = Some(v)
                }
                _ => {}
            }
        }
        p
    }

    fn is_response(&self) -> bool {
        self.code.is_some() || self.error.is_some() || self.state.is_some()
    }
}

/// Parse a redirect URL the user pasted: it must be the redirect URI of this job (same scheme,
/// host, port and path) and carry an authorization response. A bare query string is accepted.
pub(crate) fn parse_pasted_redirect(
    pasted: &str,
    redirect_uri: &str,
) -> Result<CallbackParams, OAuthError> {
    let pasted = pasted.trim();
    let params = if pasted.starts_with('?') || (!pasted.contains("://") && pasted.contains('=')) {
        CallbackParams::from_query(pasted.trim_start_matches('?'))
    } else {
        let got = Url::parse(pasted).map_err(|_| {
            OAuthError::BadRedirect(
                "that is not a URL; paste the whole address the browser was sent to \
                 (it starts with the redirect URI and contains `code=` and `state=`)"
                    .into(),
            )
        })?;
        let want = Url::parse(redirect_uri)
            .map_err(|_| OAuthError::BadRedirect("this sign-in has no redirect URI".into()))?;
        let same = got.scheme() == want.scheme()
            && got.host_str() == want.host_str()
            && got.port_or_known_default() == want.port_or_known_default()
            && got.path() == want.path();
        if !same {
            return Err(OAuthError::BadRedirect(format!(
                "that URL is not this sign-in's redirect URI ({redirect_uri})"
            )));
        }
        CallbackParams::from_query(got.query().unwrap_or(""))
    };
    if !params.is_response() {
        return Err(OAuthError::BadRedirect(
            "that URL carries no authorization response (no `code`, `state` or `error`)".into(),
        ));
    }
    Ok(params)
}

/// The job's answer to a callback delivered by the listener.
pub(crate) enum Verdict {
    /// Accepted: the listener shows the success page and stops.
    Accepted,
    /// Refused, and the sign-in is over: the listener shows the reason and stops.
    Fatal(String),
    /// Not this sign-in's response (another `state`: a stale tab, or a web page forging the
    /// callback to abort the sign-in): the listener answers 400 and keeps waiting.
    Ignored(String),
}

/// A callback delivered by the listener, with the channel for the job's verdict.
pub(crate) type Delivery = (CallbackParams, oneshot::Sender<Verdict>);

/// A bound loopback listener.
pub(crate) struct Listener {
    listener: TcpListener,
    pub port: u16,
}

impl Listener {
    /// Bind 127.0.0.1: the `fixed` port (must be free), else the `preferred` port when free,
    /// else any free port.
    pub async fn bind(fixed: Option<u16>, preferred: Option<u16>) -> Result<Listener, OAuthError> {
        let listener = if let Some(port) = fixed {
            TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
                OAuthError::Listener(format!(
                    "cannot listen for the sign-in callback on 127.0.0.1:{port} ({e}); the \
                     configured callback port must be free"
                ))
            })?
        } else {
            let first = match preferred {
                Some(p) if p != 0 => TcpListener::bind(("127.0.0.1", p)).await.ok(),
                _ => None,
            };
            match first {
                Some(l) => l,
                None => TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| {
                    OAuthError::Listener(format!(
                        "cannot listen for the sign-in callback on 127.0.0.1 ({e})"
                    ))
                })?,
            }
        };
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Listener(format!("cannot read the callback port ({e})")))?
            .port();
        Ok(Listener { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Serve until the job accepts one callback or goes away.
    pub async fn serve(self, jobs: mpsc::Sender<Delivery>) {
        loop {
            let Ok((stream, _)) = self.listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let done =
                tokio::time::timeout(Duration::from_secs(10), handle(stream, self.port, &jobs))
                    .await;
            match done {
                Ok(Handled::Accepted) | Ok(Handled::JobGone) => return,
                _ => {}
            }
        }
    }
}

enum Handled {
    Accepted,
    Continue,
    JobGone,
}

async fn handle(mut stream: TcpStream, port: u16, jobs: &mpsc::Sender<Delivery>) -> Handled {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return Handled::Continue,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.windows(4).any(|w| w == b"\r\n\r\n") || buf.windows(2).any(|w| w == b"\n\n") {
            break;
        }
        if buf.len() > 16 * 1024 {
            respond(
                &mut stream,
                431,
                "Request too large",
                "The request was too large.",
            )
            .await;
            return Handled::Continue;
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let mut parts = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != CALLBACK_PATH {
        respond(&mut stream, 404, "Not found", "Nothing here.").await;
        return Handled::Continue;
    }
    if method != "GET" {
        respond(
            &mut stream,
            405,
            "Method not allowed",
            "Only GET is accepted.",
        )
        .await;
        return Handled::Continue;
    }
    if !addressed_to_loopback(&head, port) {
        // A page on another origin that resolves to 127.0.0.1 (DNS rebinding) sends its own
        // host name here; the authorization server's redirect names the loopback address.
        respond(
            &mut stream,
            400,
            "Wrong host",
            "This address only answers requests made to the loopback address.",
        )
        .await;
        return Handled::Continue;
    }
    let params = CallbackParams::from_query(query);
    if !params.is_response() {
        respond(
            &mut stream,
            400,
            "Not an authorization response",
            "This address only accepts the authorization server's redirect.",
        )
        .await;
        return Handled::Continue;
    }
    let (tx, rx) = oneshot::channel();
    if jobs.send((params, tx)).await.is_err() {
        respond(
            &mut stream,
            410,
            "Sign-in is over",
            "This sign-in has already ended. Return to Plugboard and start again if needed.",
        )
        .await;
        return Handled::JobGone;
    }
    match rx.await {
        Ok(Verdict::Accepted) => {
            respond(
                &mut stream,
                200,
                "Signed in",
                "Plugboard received the authorization. You can close this window.",
            )
            .await;
            Handled::Accepted
        }
        Ok(Verdict::Fatal(reason)) => {
            respond(&mut stream, 400, "Sign-in refused", &reason).await;
            Handled::Accepted
        }
        Ok(Verdict::Ignored(reason)) => {
            respond(&mut stream, 400, "Not this sign-in", &reason).await;
            Handled::Continue
        }
        Err(_) => {
            respond(
                &mut stream,
                410,
                "Sign-in is over",
                "This sign-in has already ended.",
            )
            .await;
            Handled::JobGone
        }
    }
}

/// Whether the request's `Host` header names the listener itself (`127.0.0.1:PORT` or
/// `localhost:PORT`, any case).
fn addressed_to_loopback(head: &str, port: u16) -> bool {
    let host = head.lines().skip(1).find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("host")
            .then(|| value.trim().to_ascii_lowercase())
    });
    host.is_some_and(|h| h == format!("127.0.0.1:{port}") || h == format!("localhost:{port}"))
}

async fn respond(stream: &mut TcpStream, status: u16, title: &str, message: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Plugboard: {title}</title>\
         </head><body style=\"font-family:sans-serif;max-width:32em;margin:4em auto\">\
         <h1>{title}</h1><p>{}</p></body></html>",
        html_escape(message)
    );
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        _ => "Request Header Fields Too Large",
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n\
         Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_urls_must_match_the_redirect_uri() {
        let r = "http://127.0.0.1:4000/callback";
        let p = parse_pasted_redirect("http://127.0.0.1:4000/callback?code=c&state=s", r).unwrap();
        assert_eq!(p.code.unwrap().expose(), "c");
        assert_eq!(p.state.as_deref(), Some("s"));
        assert!(parse_pasted_redirect("http://127.0.0.1:4001/callback?code=c&state=s", r).is_err());
        assert!(parse_pasted_redirect("http://127.0.0.1:4000/other?code=c", r).is_err());
        assert!(parse_pasted_redirect("http://127.0.0.1:4000/callback", r).is_err());
        assert!(parse_pasted_redirect("?code=c&state=s", r).is_ok());
        assert!(parse_pasted_redirect("garbage", r).is_err());
    }
}
