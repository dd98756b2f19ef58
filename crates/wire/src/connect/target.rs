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
    /// What it may touch, when its sandbox is on.
    pub sandbox: Option<plugboard_sandbox::Plan>,
}

impl StdioTarget {
    /// The child's whole environment: the base environment, then the configured env on top.
    pub fn child_env(&self) -> Vec<(String, OsString)> {
        let mut env = env::base_env(self.program.parent(), self.via_login_shell);
        for (key, value) in &self.env {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), OsString::from(value.expose())));
        }
        if let Some(plan) = &self.sandbox {
            for key in ["TMPDIR", "TMP", "TEMP"] {
                env.retain(|(k, _)| k != key);
                env.push((key.to_owned(), plan.tmp.clone().into_os_string()));
            }
        }
        env
    }

    /// Plan the sandbox of this launch from `settings`; `key` names its private temporary
    /// folder (the server's secret namespace, stable across renames).
    pub fn plan_sandbox(
        &mut self,
        settings: &plugboard_sandbox::Settings,
        key: &str,
    ) -> Result<(), String> {
        let tmp = plugboard_sandbox::private_tmp(key)
            .map_err(|e| format!("its sandbox has no private temporary folder: {e}"))?;
        let env = self.child_env();
        let value = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let home = value("HOME").map(PathBuf::from);
        let search_path = value("PATH");
        let plan = plugboard_sandbox::plan(
            settings,
            &plugboard_sandbox::Inputs {
                home: home.as_deref(),
                command: &self.command,
                program: &self.program,
                search_path: search_path.as_deref(),
                args: &self.args,
                cwd: self.cwd.as_deref(),
                env_values: self.env.iter().map(|(_, v)| v.expose().as_str()).collect(),
                tmp,
            },
        )
        .map_err(|e| format!("its sandbox cannot be enforced as set: {e}"))?;
        self.sandbox = Some(plan);
        Ok(())
    }
}

/// A remote server, ready to connect.
#[derive(Debug)]
pub struct RemoteTarget {
    pub url: url::Url,
    /// Configured headers and auth headers, secrets substituted.
    pub headers: Vec<(String, Sensitive<String>)>,
    /// The server's headers helper, asked again for each request of a streamable HTTP
    /// connection (its headers of the moment replace those above of the same name).
    pub helper: Option<std::sync::Arc<dyn super::header_source::HeaderSource>>,
}

/// Where the server is.
#[derive(Debug)]
pub enum Target {
    Stdio(StdioTarget),
    Remote(RemoteTarget),
}
