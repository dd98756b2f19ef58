//! The config store: `mcp_config.json` in the config directory, read without locks, changed one
//! server at a time under a cross-process lock, written atomically.
//!
//! Every mutation re-reads the file under the lock, changes one server's entry and leaves every
//! other entry exactly as it was on disk (they are kept as raw JSON, unknown fields included). A
//! file that does not parse, or that a newer Plugboard wrote, is reported and never overwritten.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::model::{ServerConfig, validate_name};

/// The config format version this build reads and writes.
pub const CONFIG_VERSION: u64 = 1;
/// The config file's name inside the config directory.
pub const CONFIG_FILE: &str = "mcp_config.json";

/// What went wrong reading or changing the config. Each message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a valid Plugboard config ({detail}). It was left untouched: fix it by hand or move it away, then try again"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "{path} was written by a newer Plugboard (config version {found}; this one understands {supported}). It was left untouched: upgrade Plugboard to use it"
    )]
    NewerVersion {
        path: PathBuf,
        found: u64,
        supported: u64,
    },
    #[error(
        "the entry for server `{name}` in the config is invalid ({detail}); fix it by hand or remove the server"
    )]
    InvalidServer { name: String, detail: String },
    #[error("no server named `{name}`; `plugboard list` shows the installed servers")]
    NotFound { name: String },
    #[error("a server named `{name}` already exists; choose another name or remove that one first")]
    Duplicate { name: String },
    #[error(
        "a server named `{existing}` already exists, and `{name}` differs from it only in case (the names would collide on case-insensitive file systems); choose another name"
    )]
    CaseCollision { name: String, existing: String },
    #[error("{0}")]
    InvalidName(String),
    #[error("server `{name}`: {detail}")]
    Invalid { name: String, detail: String },
}

fn check_free(
    servers: &Map<String, Value>,
    name: &str,
    except: Option<&str>,
) -> Result<(), ConfigError> {
    if servers.contains_key(name) && except != Some(name) {
        return Err(ConfigError::Duplicate { name: name.into() });
    }
    match servers
        .keys()
        .find(|k| k.eq_ignore_ascii_case(name) && Some(k.as_str()) != except && k.as_str() != name)
    {
        Some(existing) => Err(ConfigError::CaseCollision {
            name: name.into(),
            existing: existing.clone(),
        }),
        None => Ok(()),
    }
}

/// A snapshot of the config file.
#[derive(Clone, Debug, Default)]
pub struct Config {
    servers: Map<String, Value>,
}

impl Config {
    /// Server names in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.servers.contains_key(name)
    }

    /// Refuse `name` for a new (or renamed) server when it is taken, exactly or by a name that
    /// differs only in case (`except`: the server being renamed).
    pub fn check_free(&self, name: &str, except: Option<&str>) -> Result<(), ConfigError> {
        check_free(&self.servers, name, except)
    }

    pub fn len(&self) -> usize {
        self.servers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// One server, parsed.
    pub fn server(&self, name: &str) -> Result<ServerConfig, ConfigError> {
        let raw = self
            .servers
            .get(name)
            .ok_or_else(|| ConfigError::NotFound { name: name.into() })?;
        parse_server(name, raw)
    }

    /// Every server, each parsed on its own so one bad entry does not hide the others.
    pub fn servers(&self) -> Vec<(String, Result<ServerConfig, ConfigError>)> {
        self.servers
            .iter()
            .map(|(name, raw)| (name.clone(), parse_server(name, raw)))
            .collect()
    }
}

fn parse_server(name: &str, raw: &Value) -> Result<ServerConfig, ConfigError> {
    serde_json::from_value(raw.clone()).map_err(|e| ConfigError::InvalidServer {
        name: name.into(),
        detail: e.to_string(),
    })
}

/// The whole file: the version, the servers (raw) and any unknown top-level keys.
struct Document {
    servers: Map<String, Value>,
    extra: Map<String, Value>,
}

/// The user's installed servers, in `<dir>/mcp_config.json`.
#[derive(Clone, Debug)]
pub struct ConfigStore {
    dir: PathBuf,
}

impl ConfigStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ConfigStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(CONFIG_FILE)
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join(format!("{CONFIG_FILE}.lock"))
    }

    /// Read the current config. A missing file is an empty config.
    pub fn load(&self) -> Result<Config, ConfigError> {
        let doc = self.read_document()?;
        Ok(Config {
            servers: doc.servers,
        })
    }

    /// Add a new server; fails if the name is taken.
    pub fn add(&self, name: &str, server: &ServerConfig) -> Result<(), ConfigError> {
        validate_name(name).map_err(ConfigError::InvalidName)?;
        check_server(name, server)?;
        self.mutate(|doc| {
            check_free(&doc.servers, name, None)?;
            doc.servers.insert(name.into(), to_value(server));
            Ok(())
        })
    }

    /// Change one server with `change` and return the result. Other servers are not touched.
    pub fn update<T>(
        &self,
        name: &str,
        change: impl FnOnce(&mut ServerConfig) -> Result<T, ConfigError>,
    ) -> Result<(ServerConfig, T), ConfigError> {
        self.mutate(|doc| {
            let raw = doc
                .servers
                .get_mut(name)
                .ok_or_else(|| ConfigError::NotFound { name: name.into() })?;
            let mut server = parse_server(name, raw)?;
            let out = change(&mut server)?;
            check_server(name, &server)?;
            *raw = to_value(&server);
            Ok((server, out))
        })
    }

    /// Turn a server on or off without touching anything else about it.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<ServerConfig, ConfigError> {
        self.update(name, |s| {
            s.enabled = enabled;
            Ok(())
        })
        .map(|(server, ())| server)
    }

    /// Rename a server in one atomic write, keeping its position, and its secrets (the secret
    /// namespace is pinned to the old name if it had none).
    pub fn rename(&self, old: &str, new: &str) -> Result<ServerConfig, ConfigError> {
        validate_name(new).map_err(ConfigError::InvalidName)?;
        self.mutate(|doc| {
            if !doc.servers.contains_key(old) {
                return Err(ConfigError::NotFound { name: old.into() });
            }
            if old == new {
                return parse_server(old, &doc.servers[old]);
            }
            check_free(&doc.servers, new, Some(old))?;
            let mut server = parse_server(old, &doc.servers[old])?;
            if server.secret_namespace.is_none() {
                server.secret_namespace = Some(old.to_string());
            }
            let renamed = std::mem::take(&mut doc.servers)
                .into_iter()
                .map(|(k, v)| {
                    if k == old {
                        (new.to_string(), to_value(&server))
                    } else {
                        (k, v)
                    }
                })
                .collect();
            doc.servers = renamed;
            Ok(server)
        })
    }

    /// Remove a server and return what it was (so the caller can delete its secrets), or `None`
    /// when its entry could not be parsed: a broken entry can always be removed.
    pub fn remove(&self, name: &str) -> Result<Option<ServerConfig>, ConfigError> {
        self.mutate(|doc| {
            let raw = doc
                .servers
                .shift_remove(name)
                .ok_or_else(|| ConfigError::NotFound { name: name.into() })?;
            Ok(parse_server(name, &raw).ok())
        })
    }

    /// Run `change` on the document under the cross-process lock and write the result atomically.
    /// Nothing is written when `change` fails.
    fn mutate<T>(
        &self,
        change: impl FnOnce(&mut Document) -> Result<T, ConfigError>,
    ) -> Result<T, ConfigError> {
        self.ensure_dir()?;
        let _lock = self.lock()?;
        self.remove_stale_temp_files();
        let mut doc = self.read_document()?;
        let out = change(&mut doc)?;
        self.write_document(&doc)?;
        Ok(out)
    }

    /// Temp files are only written while the lock is held, so any found under the lock were left
    /// by a writer that died mid-write. They never held the only copy of anything.
    fn remove_stale_temp_files(&self) {
        let prefix = format!(".{CONFIG_FILE}.");
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(&prefix) && name.ends_with(".tmp") {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    fn ensure_dir(&self) -> Result<(), ConfigError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.dir).map_err(|source| ConfigError::Io {
            action: "create the config directory",
            path: self.dir.clone(),
            source,
        })
    }

    /// An exclusive lock on a side file, held until the returned `File` is dropped. The OS
    /// releases it if the process dies, so a killed writer never wedges the others.
    fn lock(&self) -> Result<File, ConfigError> {
        let path = self.lock_path();
        let io_err = |source| ConfigError::Io {
            action: "lock",
            path: path.clone(),
            source,
        };
        let file = plugboard_base::fs::open_lock_file(&path).map_err(io_err)?;
        file.lock().map_err(io_err)?;
        Ok(file)
    }

    fn read_document(&self) -> Result<Document, ConfigError> {
        let path = self.path();
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Document {
                    servers: Map::new(),
                    extra: Map::new(),
                });
            }
            Err(source) => {
                return Err(ConfigError::Io {
                    action: "read",
                    path,
                    source,
                });
            }
        };
        let corrupt = |detail: String| ConfigError::Corrupt {
            path: path.clone(),
            detail,
        };
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        let Value::Object(mut top) = value else {
            return Err(corrupt("the top level is not a JSON object".into()));
        };
        match top.remove("version") {
            None => {}
            Some(Value::Number(n)) if n.as_u64().is_some() => {
                let found = n.as_u64().unwrap_or_default();
                if found > CONFIG_VERSION {
                    return Err(ConfigError::NewerVersion {
                        path,
                        found,
                        supported: CONFIG_VERSION,
                    });
                }
            }
            Some(other) => return Err(corrupt(format!("`version` is {other}, not a number"))),
        }
        let servers = match top.remove("servers") {
            None => Map::new(),
            Some(Value::Object(servers)) => servers,
            Some(_) => return Err(corrupt("`servers` is not a JSON object".into())),
        };
        Ok(Document {
            servers,
            extra: top,
        })
    }

    /// Write to a temp file in the same directory, fsync it, rename it over the config, fsync the
    /// directory. Readers see the old file or the new one, never a mix.
    fn write_document(&self, doc: &Document) -> Result<(), ConfigError> {
        let mut top = Map::new();
        top.insert("version".into(), Value::from(CONFIG_VERSION));
        top.insert("servers".into(), Value::Object(doc.servers.clone()));
        for (k, v) in &doc.extra {
            top.insert(k.clone(), v.clone());
        }
        let mut text =
            serde_json::to_vec_pretty(&Value::Object(top)).expect("a JSON value always serializes");
        text.push(b'\n');

        let path = self.path();
        plugboard_base::fs::write_private(&path, &text).map_err(|source| ConfigError::Io {
            action: "write",
            path: path.clone(),
            source,
        })
    }
}

fn to_value(server: &ServerConfig) -> Value {
    serde_json::to_value(server).expect("a server config always serializes")
}

fn check_server(name: &str, server: &ServerConfig) -> Result<(), ConfigError> {
    server.validate().map_err(|detail| ConfigError::Invalid {
        name: name.into(),
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::TransportKind;

    fn store() -> (tempfile::TempDir, ConfigStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::new(dir.path().join("home"));
        (dir, store)
    }

    fn stdio(cmd: &str) -> ServerConfig {
        ServerConfig::stdio(cmd, vec![])
    }

    #[test]
    fn names_differing_only_in_case_or_starting_with_a_dash_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::new(dir.path());
        store
            .add("bad-remote", &ServerConfig::stdio("x", vec![]))
            .unwrap();
        let err = store
            .add("Bad-Remote", &ServerConfig::stdio("x", vec![]))
            .unwrap_err();
        assert!(
            matches!(&err, ConfigError::CaseCollision { existing, .. } if existing == "bad-remote"),
            "{err}"
        );
        store
            .add("other", &ServerConfig::stdio("x", vec![]))
            .unwrap();
        assert!(matches!(
            store.rename("other", "BAD-REMOTE"),
            Err(ConfigError::CaseCollision { .. })
        ));
        // A server may change the case of its own name.
        store.rename("bad-remote", "Bad-Remote").unwrap();
        assert!(matches!(
            store.add("-lead", &ServerConfig::stdio("x", vec![])),
            Err(ConfigError::InvalidName(_))
        ));
        assert!(matches!(
            store.rename("other", "-other"),
            Err(ConfigError::InvalidName(_))
        ));
        let names: Vec<String> = store.load().unwrap().names().map(String::from).collect();
        assert_eq!(names, ["Bad-Remote", "other"]);
    }

    #[test]
    fn add_list_rename_remove() {
        let (_d, store) = store();
        assert!(store.load().unwrap().is_empty());
        store.add("a", &stdio("one")).unwrap();
        store.add("b", &stdio("two")).unwrap();
        assert!(matches!(
            store.add("a", &stdio("x")),
            Err(ConfigError::Duplicate { .. })
        ));
        store.rename("a", "c").unwrap();
        let cfg = store.load().unwrap();
        assert_eq!(cfg.names().collect::<Vec<_>>(), ["c", "b"]);
        let c = cfg.server("c").unwrap();
        assert_eq!(c.secret_namespace.as_deref(), Some("a"));
        assert!(matches!(
            store.rename("c", "b"),
            Err(ConfigError::Duplicate { .. })
        ));
        assert!(store.remove("c").unwrap().is_some());
        assert!(matches!(
            store.remove("c"),
            Err(ConfigError::NotFound { .. })
        ));
        assert_eq!(store.load().unwrap().len(), 1);
    }

    #[test]
    fn unknown_fields_and_other_servers_survive_a_mutation() {
        let (_d, store) = store();
        fs::create_dir_all(store.dir()).unwrap();
        let original = r#"{"version":1,"servers":{
            "keep":{"type":"stdio","command":"x","weird":[1,{"y":2}]},
            "broken":{"type":"nonsense"},
            "edit":{"type":"shttp","url":"https://example.com/mcp","mine":true}},
            "top_level_extra":"kept"}"#;
        fs::write(store.path(), original).unwrap();
        store.set_enabled("edit", false).unwrap();
        let after: Value = serde_json::from_slice(&fs::read(store.path()).unwrap()).unwrap();
        let before: Value = serde_json::from_str(original).unwrap();
        assert_eq!(after["servers"]["keep"], before["servers"]["keep"]);
        assert_eq!(after["servers"]["broken"], before["servers"]["broken"]);
        assert_eq!(after["servers"]["edit"]["mine"], true);
        assert_eq!(after["servers"]["edit"]["enabled"], false);
        assert_eq!(after["top_level_extra"], "kept");
        let cfg = store.load().unwrap();
        assert!(matches!(
            cfg.server("broken"),
            Err(ConfigError::InvalidServer { .. })
        ));
        // A broken entry can still be removed.
        assert!(store.remove("broken").unwrap().is_none());
        assert!(!store.load().unwrap().contains("broken"));
    }

    #[test]
    fn corrupt_or_newer_files_are_refused_and_kept() {
        let (_d, store) = store();
        fs::create_dir_all(store.dir()).unwrap();
        for (content, want) in [
            ("{not json", "not a valid Plugboard config"),
            ("[1,2]", "not a JSON object"),
            (r#"{"version":99,"servers":{}}"#, "newer Plugboard"),
        ] {
            fs::write(store.path(), content).unwrap();
            let err = store.add("x", &stdio("c")).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
            assert_eq!(fs::read_to_string(store.path()).unwrap(), content);
        }
    }

    #[test]
    fn invalid_servers_are_refused_before_writing() {
        let (_d, store) = store();
        let bad = ServerConfig::remote(TransportKind::Shttp, "not a url");
        assert!(matches!(
            store.add("x", &bad),
            Err(ConfigError::Invalid { .. })
        ));
        assert!(matches!(
            store.add("bad name", &stdio("c")),
            Err(ConfigError::InvalidName(_))
        ));
        assert!(!store.path().exists());
    }
}
