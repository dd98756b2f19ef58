//! Where a server is, with everything resolved: a stdio command found on PATH with its
//! environment (secrets substituted), or a remote URL with its headers. `resolve` builds these;
//! [`super::Connection::open`] reaches them.

use std::ffi::OsString;
use std::path::PathBuf;

use super::env;
use crate::secrets::Sensitive;

/// A stdio server, ready to spawn.
#[derive(Debug)]
pub struct StdioTarget {
    /// The command as configured (`npx`).
    pub command: String,
    /// Where it was found (`/usr/local/bin/npx`).
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The configured env, secrets substituted. Every value counts as secret.
    pub env: Vec<(String, Sensitive<String>)>,
    pub cwd: Option<PathBuf>,
    /// The command was found only on the login shell's PATH.
    pub via_login_shell: bool,
}

impl StdioTarget {
    /// The child's whole environment: the base environment, then the configured env on top.
    pub fn child_env(&self) -> Vec<(String, OsString)> {
        let mut env = env::base_env(self.program.parent(), self.via_login_shell);
        for (key, value) in &self.env {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), OsString::from(value.expose())));
        }
        env
    }
}

/// A remote server, ready to connect.
#[derive(Debug)]
pub struct RemoteTarget {
    pub url: url::Url,
    /// Configured headers and auth headers, secrets substituted.
    pub headers: Vec<(String, Sensitive<String>)>,
}

/// Where the server is.
#[derive(Debug)]
pub enum Target {
    Stdio(StdioTarget),
    Remote(RemoteTarget),
}
