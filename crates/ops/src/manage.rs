//! Operations on installed servers that span the config store and the secret store: install,
//! edit with secret patch semantics, remove with its secrets, and the display view of a server
//! (which says whether each secret is set, never what it is).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::config::{
    Auth, ConfigError, ConfigStore, ConfigValue, SecretRef, ServerConfig, Source, TransportKind,
    config_dir,
};
use crate::form::PreparedServer;
use crate::health::HealthStore;
use crate::secrets::{SecretError, SecretKey, SecretStore, Sensitive};

/// A failure of an operation on installed servers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManageError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Secrets(#[from] SecretError),
    #[error(
        "no config directory: set PLUGBOARD_HOME or HOME so Plugboard knows where to keep its files"
    )]
    NoConfigDir,
    #[error("server `{name}`: {detail}")]
    Invalid { name: String, detail: String },
    #[error("refused: {0}")]
    Policy(#[from] crate::policy::Refusal),
    #[error(
        "server `{name}` would take the secret `{secret}` on its command line, where every user \
         of this machine can read it; nothing was installed. If you accept that risk, install \
         it with --allow-secret-args (the app: \"Allow secrets on the command line\")"
    )]
    SecretOnCommandLine { name: String, secret: String },
}

type SecretsOpener = Box<dyn Fn() -> Result<Arc<dyn SecretStore>, SecretError> + Send + Sync>;

/// The installed servers: the config store plus the secret store, opened only when needed (so
/// reading the config works on a machine with no keyring).
pub struct Servers {
    config: ConfigStore,
    open_secrets: SecretsOpener,
    secrets: OnceLock<Arc<dyn SecretStore>>,
}

impl Servers {
    /// The user's servers in the default config directory, secrets in the OS keyring.
    pub fn open_default() -> Result<Servers, ManageError> {
        let dir = config_dir().ok_or(ManageError::NoConfigDir)?;
        let secrets_dir = dir.clone();
        Ok(Servers::new(
            ConfigStore::new(dir),
            Box::new(move || crate::secrets::selection::open_chosen(&secrets_dir)),
        ))
    }

    pub fn new(config: ConfigStore, open_secrets: SecretsOpener) -> Servers {
        Servers {
            config,
            open_secrets,
            secrets: OnceLock::new(),
        }
    }

    /// Servers whose secrets live in `store`.
    pub fn with_store(config: ConfigStore, store: Arc<dyn SecretStore>) -> Servers {
        Servers::new(config, Box::new(move || Ok(store.clone())))
    }

    pub fn config(&self) -> &ConfigStore {
        &self.config
    }

    /// The secret store, opened on first use.
    pub fn secrets(&self) -> Result<&Arc<dyn SecretStore>, SecretError> {
        if let Some(store) = self.secrets.get() {
            return Ok(store);
        }
        let store = (self.open_secrets)()?;
        Ok(self.secrets.get_or_init(|| store))
    }

    /// Save a new server: its secrets first, then the config entry. If the config write fails the
    /// secrets just written are deleted again, so nothing is left half-installed. The tool
    /// choices of the same server removed earlier under this name come back.
    pub fn install(&self, prepared: &PreparedServer) -> Result<(), ManageError> {
        crate::config::validate_name(&prepared.name).map_err(ConfigError::InvalidName)?;
        prepared
            .config
            .validate()
            .map_err(|detail| ManageError::Invalid {
                name: prepared.name.clone(),
                detail,
            })?;
        refuse_secrets_on_argv(&prepared.name, &prepared.config)?;
        let current = self.config.load()?;
        current.check_free(&prepared.name, None)?;
        let namespace = prepared.config.secret_namespace(&prepared.name).to_string();
        let mut written = Vec::new();
        if !prepared.secrets.is_empty() {
            let store = self.secrets()?;
            for (name, value) in &prepared.secrets {
                let key = SecretKey::new(&namespace, name);
                if let Err(err) = store.set(&key, value) {
                    delete_all(store.as_ref(), &written);
                    return Err(err.into());
                }
                written.push(key);
            }
        }
        let mut config = prepared.config.clone();
        let dir = self.config.dir();
        crate::remembered_tools::recall(dir, &prepared.name, &mut config);
        if let Err(err) = self.config.add(&prepared.name, &config) {
            if let Ok(store) = self.secrets() {
                delete_all(store.as_ref(), &written);
            }
            return Err(err.into());
        }
        crate::remembered_tools::forget(dir, &prepared.name);
        Ok(())
    }

    /// Replace server `name`'s config as a whole (the app's editor of a hand-written server):
    /// judged by the policy and the command-line rule first, like a new install; `secrets` are
    /// written to its namespace, and the secrets the new config no longer uses are deleted.
    pub fn replace(
        &self,
        name: &str,
        config: &ServerConfig,
        secrets: &BTreeMap<String, Sensitive<String>>,
    ) -> Result<ServerConfig, ManageError> {
        config.validate().map_err(|detail| ManageError::Invalid {
            name: name.to_owned(),
            detail,
        })?;
        refuse_secrets_on_argv(name, config)?;
        let before = self.config.load()?.server(name)?;
        crate::admission::check(self.config.dir(), name, config)?;
        let namespace = config.secret_namespace(name).to_string();
        if !secrets.is_empty() {
            let store = self.secrets()?;
            for (key, value) in secrets {
                store.set(&SecretKey::new(&namespace, key), value)?;
            }
        }
        let (after, ()) = self.config.update(name, |server| {
            *server = config.clone();
            Ok(())
        })?;
        self.delete_unused_secrets(name, &before, &after)?;
        Ok(after)
    }

    /// Delete the secrets `before` used and `after` no longer does.
    fn delete_unused_secrets(
        &self,
        name: &str,
        before: &ServerConfig,
        after: &ServerConfig,
    ) -> Result<(), ManageError> {
        let still_used = after.secret_keys(name);
        let dropped: Vec<SecretKey> = before
            .secret_keys(name)
            .into_iter()
            .filter(|k| !still_used.contains(k))
            .collect();
        if !dropped.is_empty() {
            let store = self.secrets()?;
            delete_all(store.as_ref(), &dropped);
        }
        Ok(())
    }

    /// After a successful OAuth sign-in: a remote server with no auth becomes an OAuth server,
    /// so its next test and every launch use the tokens. Other servers are left as they are.
    /// Returns whether the auth changed.
    pub fn adopt_oauth(&self, name: &str) -> Result<bool, ManageError> {
        let (_, changed) = self.config.update(name, |s| {
            let adopt = s.transport.is_remote() && matches!(s.auth, Auth::None);
            if adopt {
                s.auth = Auth::Oauth2(Default::default());
            }
            Ok(adopt)
        })?;
        Ok(changed)
    }

    /// Rename a server; its secrets and its last health result follow it.
    pub fn rename(&self, old: &str, new: &str) -> Result<ServerConfig, ManageError> {
        let server = self.config.rename(old, new)?;
        self.health().rename(old, new);
        crate::pinning::PinStore::in_config_dir(self.config.dir()).rename(old, new);
        Ok(server)
    }

    /// The last test results of these servers.
    pub fn health(&self) -> HealthStore {
        HealthStore::in_config_dir(self.config.dir())
    }

    /// Remove a server, then delete every secret it referred to. Secret deletion failures are
    /// reported, not fatal: the server is gone either way. Its tool choices are remembered for
    /// a re-install of the same server under the same name.
    pub fn remove(&self, name: &str) -> Result<RemoveOutcome, ManageError> {
        let removed = self.config.remove(name)?;
        if let Some(server) = &removed {
            crate::remembered_tools::remember(self.config.dir(), name, server);
        }
        self.health().forget(name);
        let bundle_removed = removed
            .as_ref()
            .and_then(|s| s.source.as_ref())
            .and_then(|s| s.bundle.as_ref())
            .filter(|b| {
                crate::mcpb::BundleStore::in_config_dir(self.config.dir())
                    .remove(std::path::Path::new(&b.dir))
            })
            .map(|b| b.dir.clone());
        crate::pinning::PinStore::in_config_dir(self.config.dir()).forget(name);
        let keys = removed
            .map(|server| server.secret_keys(name))
            .unwrap_or_default();
        let mut outcome = RemoveOutcome {
            secrets_deleted: 0,
            secret_errors: vec![],
            bundle_removed,
        };
        if keys.is_empty() {
            return Ok(outcome);
        }
        match self.secrets() {
            Ok(store) => {
                for key in &keys {
                    match store.delete(key) {
                        Ok(()) => outcome.secrets_deleted += 1,
                        Err(err) => outcome.secret_errors.push(err.to_string()),
                    }
                }
            }
            Err(err) => outcome.secret_errors.push(err.to_string()),
        }
        Ok(outcome)
    }

    /// Remove a server and its secrets; for an OAuth server, also revoke its tokens at the
    /// authorization server (where it supports revocation) and delete them. Revocation problems
    /// are reported as warnings: the server is removed either way.
    pub async fn remove_and_revoke(&self, name: &str) -> Result<RemoveOutcome, ManageError> {
        let server = self.config.load()?.server(name).ok();
        let mut outcome = self.remove(name)?;
        if let Some(server) = server.filter(|s| matches!(s.auth, Auth::Oauth2(_))) {
            match self.secrets() {
                Ok(store) => {
                    match crate::oauth::revoke_and_forget(name, &server, store.clone()).await {
                        Ok(revoked) => outcome.secret_errors.extend(revoked.warnings),
                        Err(err) => outcome.secret_errors.push(err.to_string()),
                    }
                }
                Err(err) => outcome.secret_errors.push(err.to_string()),
            }
        }
        Ok(outcome)
    }

    /// Apply `patch` to one server: plain fields, and secrets with keep / replace / delete
    /// semantics. New secret values are written before the config; secrets no longer referred
    /// to are deleted after it.
    pub fn edit(&self, name: &str, patch: ServerPatch) -> Result<ServerConfig, ManageError> {
        let before = self.config.load()?.server(name)?;
        let namespace = before.secret_namespace(name).to_string();
        let new_secrets: Vec<(SecretKey, &Sensitive<String>)> = patch
            .env
            .iter()
            .chain(&patch.headers)
            .filter_map(|(k, v)| match v {
                ValuePatch::Secret(value) => Some((SecretKey::new(&namespace, k), value)),
                _ => None,
            })
            .chain(
                patch
                    .credential
                    .iter()
                    .filter_map(|c| c.as_ref())
                    .filter_map(|value| {
                        credential_secret_name(&before)
                            .map(|n| (SecretKey::new(&namespace, n), value))
                    }),
            )
            .collect();
        if patch.credential.is_some() && credential_secret_name(&before).is_none() {
            return Err(ManageError::Invalid {
                name: name.into(),
                detail: "it has no credential to update (its auth is none or OAuth)".into(),
            });
        }
        // An edit that changes where the server's code or endpoint comes from must stay inside
        // the organisation policy, judged before anything is written.
        if launch_changes(&before, &patch) {
            let mut after = before.clone();
            apply_patch(&mut after, &patch);
            crate::admission::check(self.config.dir(), name, &after)?;
        }
        if !new_secrets.is_empty() {
            let store = self.secrets()?;
            for (key, value) in &new_secrets {
                store.set(key, value)?;
            }
        }
        let (after, ()) = self.config.update(name, |server| {
            apply_patch(server, &patch);
            Ok(())
        })?;
        self.delete_unused_secrets(name, &before, &after)?;
        Ok(after)
    }

    /// The display view of one server.
    pub fn view(&self, name: &str) -> Result<ServerView, ManageError> {
        let server = self.config.load()?.server(name)?;
        Ok(ServerView::new(
            name,
            &server,
            self.secrets().ok().map(|s| s.as_ref()),
        ))
    }

    /// The display views of all servers, in config order. Entries that do not parse are listed
    /// with their error instead of hiding the rest.
    pub fn views(&self, check_secrets: bool) -> Result<Vec<ServerView>, ManageError> {
        let config = self.config.load()?;
        let store = if check_secrets {
            self.secrets().ok().map(|s| s.as_ref())
        } else {
            None
        };
        Ok(config
            .servers()
            .into_iter()
            .map(|(name, server)| match server {
                Ok(server) => ServerView::new(&name, &server, store),
                Err(err) => ServerView::broken(&name, err.to_string()),
            })
            .collect())
    }
}

fn delete_all(store: &dyn SecretStore, keys: &[SecretKey]) {
    for key in keys {
        let _ = store.delete(key);
    }
}

fn credential_secret_name(server: &ServerConfig) -> Option<&str> {
    match &server.auth {
        Auth::ApiKey { key: r, .. }
        | Auth::Bearer { token: r }
        | Auth::Basic { password: r, .. }
        | Auth::Header { value: r, .. } => Some(&r.secret),
        Auth::None | Auth::Oauth2(_) => None,
    }
}

/// What happened to a removed server's secrets.
#[derive(Debug, Serialize)]
pub struct RemoveOutcome {
    pub secrets_deleted: usize,
    pub secret_errors: Vec<String>,
    /// The MCPB bundle directory deleted with the server.
    pub bundle_removed: Option<String>,
}

/// A change to one env variable or header.
#[derive(Debug)]
pub enum ValuePatch {
    Plain(String),
    Secret(Sensitive<String>),
    Remove,
}

/// A change to one server. Anything not mentioned is kept as it is.
#[derive(Debug, Default)]
pub struct ServerPatch {
    pub env: BTreeMap<String, ValuePatch>,
    pub headers: BTreeMap<String, ValuePatch>,
    /// `Some(Some(v))` replaces the API key / token / password, `None` keeps it.
    pub credential: Option<Option<Sensitive<String>>>,
    pub url: Option<String>,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// `Some(None)` goes back to the default timeout.
    pub timeout: Option<Option<u64>>,
    /// Whether credentials may go over plain http to a remote host.
    pub allow_insecure_http: Option<bool>,
    /// Whether secrets may be put on the server's command line.
    pub allow_secret_args: Option<bool>,
    /// Whether its tool results keep terminal, bidi and tag characters.
    pub keep_control_characters: Option<bool>,
    /// `Some(None)` removes the headers helper.
    pub headers_helper: Option<Option<crate::config::HeadersHelper>>,
}

/// A server whose launch would put a secret on a command line, unless the user allowed it.
pub fn refuse_secrets_on_argv(name: &str, server: &ServerConfig) -> Result<(), ManageError> {
    if server.allow_secret_args {
        return Ok(());
    }
    let launch = server.launch.as_ref();
    let on_argv = server
        .command
        .as_deref()
        .map(|c| crate::config::secrets_on_argv(c, &server.args))
        .into_iter()
        .chain(launch.map(|l| crate::config::secrets_on_argv(&l.command, &l.args)))
        .flatten()
        .next();
    match on_argv {
        Some(secret) => Err(ManageError::SecretOnCommandLine {
            name: name.to_owned(),
            secret: secret.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Whether `patch` changes what `server` runs or connects to (its URL, command or arguments,
/// or an environment variable that decides what runs: `NODE_OPTIONS`, `LD_PRELOAD`, `PATH`,
/// the package index).
fn launch_changes(server: &ServerConfig, patch: &ServerPatch) -> bool {
    let env_changes = patch.env.iter().any(|(key, change)| {
        crate::config::is_launch_env(key)
            && match change {
                ValuePatch::Plain(v) => server.env.get(key) != Some(&ConfigValue::Plain(v.clone())),
                ValuePatch::Secret(_) => true,
                ValuePatch::Remove => false,
            }
    });
    env_changes
        || patch
            .url
            .as_ref()
            .is_some_and(|u| server.url.as_ref() != Some(u))
        || patch
            .command
            .as_ref()
            .is_some_and(|c| server.command.as_ref() != Some(c))
        || patch.args.as_ref().is_some_and(|a| &server.args != a)
}

fn apply_patch(server: &mut ServerConfig, patch: &ServerPatch) {
    let relaunched = launch_changes(server, patch);
    for (map, changes) in [
        (&mut server.env, &patch.env),
        (&mut server.headers, &patch.headers),
    ] {
        for (key, change) in changes {
            match change {
                ValuePatch::Plain(v) => {
                    map.insert(key.clone(), ConfigValue::Plain(v.clone()));
                }
                ValuePatch::Secret(_) => {
                    map.insert(key.clone(), ConfigValue::Secret(SecretRef::new(key)));
                }
                ValuePatch::Remove => {
                    map.remove(key);
                }
            }
        }
    }
    if relaunched {
        // It no longer runs what its catalog entry, registry version or bundle gave: from now
        // on it is a server the user made (for updates and the organisation policy alike).
        server.source = None;
    }
    if let Some(url) = &patch.url {
        server.url = Some(url.clone());
    }
    if let Some(command) = &patch.command {
        server.command = Some(command.clone());
    }
    if let Some(args) = &patch.args {
        server.args = args.clone();
    }
    if let Some(timeout) = patch.timeout {
        server.timeout = timeout;
    }
    if let Some(allow) = patch.allow_insecure_http {
        server.allow_insecure_http = allow;
    }
    if let Some(allow) = patch.allow_secret_args {
        server.allow_secret_args = allow;
    }
    if let Some(keep) = patch.keep_control_characters {
        server.keep_control_characters = keep;
    }
    if let Some(helper) = &patch.headers_helper {
        server.headers_helper = helper.clone();
    }
}

/// An env or header value as shown to the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ValueView {
    /// A plain value from the config.
    Plain(String),
    /// A plain value whose name looks secret: not shown.
    Masked { masked: bool },
    /// A reference to a secret; `set` is `None` when the store could not be asked.
    Secret { secret: String, set: Option<bool> },
}

/// The auth of a server as shown to the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuthView {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential: Option<ValueView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// A server as `list`, `show` and the app show it: no secret values, only whether each is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerView {
    pub name: String,
    #[serde(rename = "type")]
    pub transport: Option<TransportKind>,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, ValueView>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, ValueView>,
    /// The command its headers come from (a remote server's `headers_helper`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers_helper: Option<crate::config::HeadersHelper>,
    pub auth: AuthView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Why the entry could not be read, for a broken entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub use crate::secret_shapes::looks_secret;

impl ServerView {
    pub fn new(name: &str, server: &ServerConfig, store: Option<&dyn SecretStore>) -> ServerView {
        let namespace = server.secret_namespace(name);
        let secret_view = |secret: &str| ValueView::Secret {
            secret: secret.to_string(),
            set: store.and_then(|s| {
                s.get(&SecretKey::new(namespace, secret))
                    .ok()
                    .map(|v| v.is_some())
            }),
        };
        let values = |map: &BTreeMap<String, ConfigValue>| {
            map.iter()
                .map(|(k, v)| {
                    let view = match v {
                        ConfigValue::Secret(r) => secret_view(&r.secret),
                        ConfigValue::Plain(_) if looks_secret(k) => {
                            ValueView::Masked { masked: true }
                        }
                        ConfigValue::Plain(p) => ValueView::Plain(p.clone()),
                        ConfigValue::FromEnv(t) => ValueView::Plain(t.from_env.clone()),
                    };
                    (k.clone(), view)
                })
                .collect()
        };
        let mut auth = AuthView {
            kind: serde_json::to_value(&server.auth)
                .ok()
                .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
                .unwrap_or_else(|| "none".into()),
            header: None,
            username: None,
            credential: None,
            client_id: None,
            scopes: vec![],
        };
        match &server.auth {
            Auth::None => {}
            Auth::ApiKey { header, key } => {
                auth.header = Some(header.clone());
                auth.credential = Some(secret_view(&key.secret));
            }
            Auth::Bearer { token } => auth.credential = Some(secret_view(&token.secret)),
            Auth::Basic { username, password } => {
                auth.username = Some(username.clone());
                auth.credential = Some(secret_view(&password.secret));
            }
            Auth::Header { name, value } => {
                auth.header = Some(name.clone());
                auth.credential = Some(secret_view(&value.secret));
            }
            Auth::Oauth2(o) => {
                auth.client_id = o.client_id.clone();
                auth.scopes = o.scopes.clone();
                auth.credential = o.client_secret.as_ref().map(|r| secret_view(&r.secret));
            }
        }
        ServerView {
            name: name.to_string(),
            transport: Some(server.transport),
            enabled: server.enabled,
            command: server.command.clone(),
            args: server.args.clone(),
            cwd: server.cwd.clone(),
            url: server.url.clone(),
            env: values(&server.env),
            headers: values(&server.headers),
            headers_helper: server.headers_helper.clone(),
            auth,
            timeout: server.timeout,
            source: server.source.clone(),
            error: None,
        }
    }

    fn broken(name: &str, error: String) -> ServerView {
        ServerView {
            name: name.to_string(),
            transport: None,
            enabled: false,
            command: None,
            args: vec![],
            cwd: None,
            url: None,
            env: BTreeMap::new(),
            headers: BTreeMap::new(),
            headers_helper: None,
            auth: AuthView {
                kind: "unknown".into(),
                header: None,
                username: None,
                credential: None,
                client_id: None,
                scopes: vec![],
            },
            timeout: None,
            source: None,
            error: Some(error),
        }
    }
}
