//! Who may use a gateway served over HTTP: a bearer token per profile, made on first use and
//! kept in the secret store (never in a file), and the checks every request passes before
//! anything reads its body: the `Host` is the loopback address served (no DNS rebinding), an
//! `Origin`, when a browser sends one, is that same loopback origin, and the token matches.

use std::net::SocketAddr;

use crate::manage::{ManageError, Servers};
use crate::secrets::{SecretKey, Sensitive};

/// The secret namespace of the gateway's tokens (a `.` is never in a server's name).
const TOKEN_NAMESPACE: &str = "plugboard.gateway";

/// The bearer token of `profile`'s HTTP endpoint, made (32 random bytes) and stored on first use.
pub fn profile_token(servers: &Servers, profile: &str) -> Result<Sensitive<String>, ManageError> {
    let store = servers.secrets()?;
    let key = SecretKey::new(TOKEN_NAMESPACE, token_name(profile));
    if let Some(token) = store.get(&key)? {
        return Ok(token);
    }
    let token = Sensitive::new(format!(
        "pbg_{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    ));
    store.set(&key, &token)?;
    Ok(token)
}

/// Replace `profile`'s token: clients holding the old one are refused from then on.
pub fn rotate_profile_token(
    servers: &Servers,
    profile: &str,
) -> Result<Sensitive<String>, ManageError> {
    let store = servers.secrets()?;
    store.delete(&SecretKey::new(TOKEN_NAMESPACE, token_name(profile)))?;
    profile_token(servers, profile)
}

fn token_name(profile: &str) -> String {
    format!("http-token-{profile}")
}

/// Why a request was refused before it was read.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// 403: the `Host` or `Origin` is not the loopback address served.
    Forbidden(String),
    /// 401: no token, or another one.
    Unauthorized,
}

/// The checks of one gateway endpoint, served at `addr` (a loopback address).
pub struct Access {
    addr: SocketAddr,
    token: Sensitive<String>,
}

impl Access {
    pub fn new(addr: SocketAddr, token: Sensitive<String>) -> Access {
        Access { addr, token }
    }

    /// Check a request's `Host`, `Origin` and `Authorization` headers.
    pub fn check(
        &self,
        host: Option<&str>,
        origin: Option<&str>,
        authorization: Option<&str>,
    ) -> Result<(), Refused> {
        let host = host.unwrap_or_default();
        if !self.is_served_authority(host) {
            return Err(Refused::Forbidden(format!(
                "the Host `{host}` is not this gateway's loopback address"
            )));
        }
        if let Some(origin) = origin {
            let authority = origin.strip_prefix("http://").unwrap_or_default();
            if !self.is_served_authority(authority) {
                return Err(Refused::Forbidden(format!(
                    "requests from the origin `{origin}` are not accepted"
                )));
            }
        }
        let presented = authorization
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .unwrap_or_default();
        if !same_secret(presented.as_bytes(), self.token.expose().as_bytes()) {
            return Err(Refused::Unauthorized);
        }
        Ok(())
    }

    /// `127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT` for the port served, as this
    /// endpoint's address family allows.
    fn is_served_authority(&self, authority: &str) -> bool {
        let port = self.addr.port().to_string();
        let Some(host) = authority
            .strip_suffix(port.as_str())
            .and_then(|rest| rest.strip_suffix(':'))
        else {
            return false;
        };
        let literal = match self.addr {
            SocketAddr::V4(v4) => v4.ip().to_string(),
            SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
        };
        host.eq_ignore_ascii_case("localhost") || host == literal
    }
}

/// Whether two secrets are equal, in a time that does not depend on where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access::new(
            "127.0.0.1:8411".parse().unwrap(),
            Sensitive::new("pbg_token".into()),
        )
    }

    #[test]
    fn only_the_loopback_address_served_and_the_token_pass() {
        let a = access();
        let bearer = Some("Bearer pbg_token");
        assert_eq!(a.check(Some("127.0.0.1:8411"), None, bearer), Ok(()));
        assert_eq!(a.check(Some("localhost:8411"), None, bearer), Ok(()));
        assert_eq!(
            a.check(
                Some("127.0.0.1:8411"),
                Some("http://localhost:8411"),
                bearer
            ),
            Ok(())
        );
        // DNS rebinding: a page of evil.example resolved to 127.0.0.1.
        for host in [
            "evil.example:8411",
            "127.0.0.1:9999",
            "127.0.0.1",
            "",
            "[::1]:8411",
        ] {
            assert!(
                matches!(
                    a.check(Some(host), None, bearer),
                    Err(Refused::Forbidden(_))
                ),
                "{host}"
            );
        }
        assert!(matches!(
            a.check(None, None, bearer),
            Err(Refused::Forbidden(_))
        ));
        for origin in [
            "https://evil.example",
            "http://127.0.0.1:9999",
            "null",
            "https://127.0.0.1:8411",
        ] {
            assert!(
                matches!(
                    a.check(Some("127.0.0.1:8411"), Some(origin), bearer),
                    Err(Refused::Forbidden(_))
                ),
                "{origin}"
            );
        }
        for authorization in [
            None,
            Some("Bearer pbg_toke"),
            Some("Basic pbg_token"),
            Some("Bearer "),
        ] {
            assert_eq!(
                a.check(Some("127.0.0.1:8411"), None, authorization),
                Err(Refused::Unauthorized),
                "{authorization:?}"
            );
        }
    }
}
