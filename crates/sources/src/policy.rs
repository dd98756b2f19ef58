//! An organisation's install policy: a system-wide file (`/etc/plugboard/policy.json`; where
//! there is none, the path in `PLUGBOARD_POLICY`, which is how the tests give one) that fixes the
//! registry list, can allow only servers published in those registries, and can narrow them by
//! name pattern. The file's shape is a contract (docs/config.md):
//!
//! ```json
//! {"registries": ["https://mcp.acme.example"], "only_registry_servers": true,
//!  "allowed_names": ["io.github.acme/*"], "gateway_side_effects": "ask"}
//! ```
//!
//! `gateway_side_effects` is the least a gateway does before a tool not declared read-only
//! runs (`ask` or `deny`); no profile can allow more.
//!
//! A policy cannot be lifted by the user: the system file, when it exists, wins over the
//! environment variable, and nothing in Plugboard's own settings is read here. A file that
//! exists but cannot be read or understood (bad JSON, a field of the wrong type, a field this
//! Plugboard does not know, a bad URL) refuses every install and says why: fail closed.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// The system-wide policy file.
pub const SYSTEM_POLICY: &str = "/etc/plugboard/policy.json";
/// A policy file used when there is no system one (tests, a user's own restriction).
pub const POLICY_ENV: &str = "PLUGBOARD_POLICY";

/// The rules of a policy file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The file it was read from.
    pub path: PathBuf,
    /// The registries to read, replacing the user's list (`None`: the user's list stands).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registries: Option<Vec<String>>,
    /// Only servers published in those registries may be installed.
    pub only_registry_servers: bool,
    /// Registry names that may be installed (`*` any run of characters, `?` one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_names: Option<Vec<String>>,
    /// `allow`, `ask` or `deny`: the least a gateway does before a tool with side effects runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway_side_effects: Option<String>,
}

/// What is in force.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PolicyState {
    /// No policy file: every install is the user's choice.
    None,
    InForce(Policy),
    /// A policy file that cannot be used: every install is refused.
    Broken {
        path: PathBuf,
        reason: String,
    },
}

/// What is being installed, for the policy to judge.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    /// A version of a server from registry `registry` (its base URL).
    Registry { registry: &'a str, name: &'a str },
    /// A curated catalog entry and the registry names it stands for.
    Curated {
        entry_id: &'a str,
        registry_names: &'a [String],
    },
    /// An MCPB bundle file from this machine.
    LocalBundle { file: &'a str, sha256: &'a str },
    /// A server the user typed in (command or URL).
    Custom { name: &'a str },
    /// A server imported from another client's config.
    Imported { name: &'a str },
}

/// What the registries of a policy publish (answered from the registry cache).
pub trait Published {
    /// Whether registry `registry` lists a server named `name`.
    fn lists(&self, registry: &str, name: &str) -> bool;
    /// The name of a server of `registry` one of whose MCPB packages has this `fileSha256`.
    fn bundle(&self, registry: &str, sha256: &str) -> Option<String>;
}

/// An install the policy does not allow, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (organisation policy {})", path.display())]
pub struct Refusal {
    pub path: PathBuf,
    pub reason: String,
}

fn normalise(url: &str) -> String {
    url.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// `*` matches any run of characters, `?` one character; case-sensitive like registry names.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Policy, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("it is not valid JSON ({e})"))?;
    let map = value.as_object().ok_or("it is not a JSON object")?;
    for key in map.keys() {
        if !matches!(
            key.as_str(),
            "registries" | "only_registry_servers" | "allowed_names" | "gateway_side_effects"
        ) {
            return Err(format!(
                "it has a field `{key}` that this Plugboard does not know (known: registries, \
                 only_registry_servers, allowed_names, gateway_side_effects)"
            ));
        }
    }
    let list = |key: &str| -> Result<Option<Vec<String>>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("`{key}` must be a list of strings"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(format!("`{key}` must be a list of strings")),
        }
    };
    let registries = list("registries")?;
    if let Some(urls) = &registries {
        for url in urls {
            let parsed = url::Url::parse(url)
                .map_err(|e| format!("`registries` has `{url}`, which is not a URL ({e})"))?;
            if !matches!(parsed.scheme(), "https" | "http") || parsed.host_str().is_none() {
                return Err(format!(
                    "`registries` has `{url}`, which is not an http(s) registry base URL"
                ));
            }
        }
        if urls.is_empty() {
            return Err(
                "`registries` is empty: name at least one registry, or leave it out".into(),
            );
        }
    }
    let only_registry_servers = match map.get("only_registry_servers") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`only_registry_servers` must be true or false".into()),
    };
    let allowed_names = list("allowed_names")?;
    let gateway_side_effects = match map.get("gateway_side_effects") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if matches!(s.as_str(), "allow" | "ask" | "deny") => Some(s.clone()),
        Some(_) => {
            return Err("`gateway_side_effects` must be \"allow\", \"ask\" or \"deny\"".into());
        }
    };
    if only_registry_servers && registries.is_none() {
        return Err(
            "`only_registry_servers` is true but no `registries` are named: say which registries \
             servers may come from"
                .into(),
        );
    }
    Ok(Policy {
        path: path.to_owned(),
        registries: registries.map(|r| {
            r.iter()
                .map(|u| u.trim_end_matches('/').to_owned())
                .collect()
        }),
        only_registry_servers,
        allowed_names,
        gateway_side_effects,
    })
}

/// The policy file at `path`, if there is one.
pub fn read(path: &Path) -> PolicyState {
    match std::fs::read(path) {
        Ok(bytes) => match parse(path, &bytes) {
            Ok(policy) => PolicyState::InForce(policy),
            Err(reason) => PolicyState::Broken {
                path: path.to_owned(),
                reason,
            },
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => PolicyState::None,
        Err(e) => PolicyState::Broken {
            path: path.to_owned(),
            reason: format!("it cannot be read ({e})"),
        },
    }
}

/// The policy in force on this machine: the system file, else `$PLUGBOARD_POLICY`.
pub fn current() -> PolicyState {
    let system = Path::new(SYSTEM_POLICY);
    if system.exists() || std::fs::symlink_metadata(system).is_ok() {
        return read(system);
    }
    match std::env::var_os(POLICY_ENV).filter(|v| !v.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            match read(&path) {
                // A policy named by the variable but missing: fail closed, it was meant.
                PolicyState::None => PolicyState::Broken {
                    reason: format!("{POLICY_ENV} names it but there is no such file"),
                    path,
                },
                state => state,
            }
        }
        None => PolicyState::None,
    }
}

impl PolicyState {
    /// The registries a policy fixes, replacing the user's list.
    pub fn registries(&self) -> Option<&[String]> {
        match self {
            PolicyState::InForce(p) => p.registries.as_deref(),
            _ => None,
        }
    }

    /// `allow`, `ask` or `deny`: the least a gateway does before a tool with side effects runs
    /// (`deny` when the policy file is broken: fail closed).
    pub fn gateway_side_effects(&self) -> Option<&str> {
        match self {
            PolicyState::None => None,
            PolicyState::InForce(policy) => policy.gateway_side_effects.as_deref(),
            PolicyState::Broken { .. } => Some("deny"),
        }
    }

    pub fn in_force(&self) -> bool {
        !matches!(self, PolicyState::None)
    }

    /// Refuse at once when the policy file cannot be used: checked before anything is looked
    /// up, so no install gets as far as naming what it would install.
    pub fn usable(&self) -> Result<(), Refusal> {
        match self {
            PolicyState::Broken { path, reason } => Err(Refusal {
                path: path.clone(),
                reason: format!(
                    "every install is refused because the policy file cannot be used: {reason}; \
                     ask your administrator to fix it"
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Whether `subject` may be installed.
    pub fn check(&self, subject: Subject<'_>, published: &dyn Published) -> Result<(), Refusal> {
        self.usable()?;
        match self {
            PolicyState::InForce(policy) => policy.check(subject, published),
            _ => Ok(()),
        }
    }

    /// A sentence for `plugboard policy` and the app.
    pub fn summary(&self) -> String {
        match self {
            PolicyState::None => "No organisation policy is in force.".into(),
            PolicyState::Broken { path, reason } => format!(
                "The organisation policy {} cannot be used ({reason}): every install is refused.",
                path.display()
            ),
            PolicyState::InForce(p) => {
                let mut parts = Vec::new();
                if let Some(r) = &p.registries {
                    parts.push(format!("registries: {}", r.join(", ")));
                }
                if p.only_registry_servers {
                    parts
                        .push("only servers published in those registries may be installed".into());
                }
                if let Some(names) = &p.allowed_names {
                    parts.push(format!("allowed names: {}", names.join(", ")));
                }
                if parts.is_empty() {
                    parts.push("it restricts nothing".into());
                }
                format!(
                    "An organisation policy is in force ({}): {}.",
                    p.path.display(),
                    parts.join("; ")
                )
            }
        }
    }
}

impl Policy {
    fn refuse(&self, reason: String) -> Refusal {
        Refusal {
            path: self.path.clone(),
            reason,
        }
    }

    fn in_policy_registry(&self, registry: &str) -> bool {
        self.registries
            .as_ref()
            .is_none_or(|list| list.iter().any(|r| normalise(r) == normalise(registry)))
    }

    fn name_allowed(&self, name: &str) -> bool {
        self.allowed_names
            .as_ref()
            .is_none_or(|patterns| patterns.iter().any(|p| glob_match(p, name)))
    }

    fn names_text(&self) -> String {
        self.allowed_names
            .as_ref()
            .map(|n| n.join(", "))
            .unwrap_or_default()
    }

    fn registries_text(&self) -> String {
        self.registries
            .as_ref()
            .map(|r| r.join(", "))
            .unwrap_or_default()
    }

    /// A registry name published by one of the policy's registries, if any.
    fn published_name<'a>(
        &self,
        names: &'a [String],
        published: &dyn Published,
    ) -> Option<&'a str> {
        let registries = self.registries.as_deref().unwrap_or_default();
        names
            .iter()
            .find(|n| registries.iter().any(|r| published.lists(r, n)))
            .map(String::as_str)
    }

    fn check(&self, subject: Subject<'_>, published: &dyn Published) -> Result<(), Refusal> {
        let name_check = |name: &str| {
            if self.name_allowed(name) {
                Ok(())
            } else {
                Err(self.refuse(format!(
                    "`{name}` is not among the server names the policy allows ({})",
                    self.names_text()
                )))
            }
        };
        match subject {
            Subject::Registry { registry, name } => {
                if self.only_registry_servers && !self.in_policy_registry(registry) {
                    return Err(self.refuse(format!(
                        "`{name}` comes from {registry}, which is not one of the registries the \
                         policy allows ({})",
                        self.registries_text()
                    )));
                }
                name_check(name)
            }
            Subject::Curated {
                entry_id,
                registry_names,
            } => {
                if self.only_registry_servers {
                    return match self.published_name(registry_names, published) {
                        Some(name) => name_check(name),
                        None => Err(self.refuse(format!(
                            "only servers published in {} may be installed, and the catalog entry \
                             `{entry_id}` is not",
                            self.registries_text()
                        ))),
                    };
                }
                if self.allowed_names.is_some() && !registry_names.is_empty() {
                    return match registry_names.iter().find(|n| self.name_allowed(n)) {
                        Some(_) => Ok(()),
                        None => name_check(&registry_names[0]),
                    };
                }
                Ok(())
            }
            Subject::LocalBundle { file, sha256 } => {
                if !self.only_registry_servers {
                    return Ok(());
                }
                let registries = self.registries.as_deref().unwrap_or_default();
                match registries.iter().find_map(|r| published.bundle(r, sha256)) {
                    Some(name) => name_check(&name),
                    None => Err(self.refuse(format!(
                        "only servers published in {} may be installed, and the bundle {file} is \
                         not one of their packages (no published MCPB package has its SHA-256)",
                        self.registries_text()
                    ))),
                }
            }
            Subject::Custom { name } | Subject::Imported { name } => {
                if self.only_registry_servers {
                    let how = if matches!(subject, Subject::Custom { .. }) {
                        "custom server"
                    } else {
                        "imported server"
                    };
                    return Err(self.refuse(format!(
                        "only servers published in {} may be installed, so the {how} `{name}` \
                         cannot be added",
                        self.registries_text()
                    )));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Company;
    impl Published for Company {
        fn lists(&self, registry: &str, name: &str) -> bool {
            registry == "https://mcp.acme.example" && name.starts_with("io.github.acme/")
        }
        fn bundle(&self, registry: &str, sha256: &str) -> Option<String> {
            (registry == "https://mcp.acme.example" && sha256 == "ab12")
                .then(|| "io.github.acme/files".into())
        }
    }

    fn policy(text: &str) -> PolicyState {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.json");
        std::fs::write(&path, text).unwrap();
        read(&path)
    }

    #[test]
    fn globs() {
        assert!(glob_match("io.github.acme/*", "io.github.acme/files"));
        assert!(!glob_match("io.github.acme/*", "io.github.acmex/files"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c*", "abcdef"));
        assert!(!glob_match("a?c", "abcd"));
        assert!(glob_match("*/files", "io.github.acme/files"));
    }

    #[test]
    fn a_company_registry_only_policy() {
        let p = policy(
            r#"{"registries": ["https://mcp.acme.example/"], "only_registry_servers": true,
                "allowed_names": ["io.github.acme/*"]}"#,
        );
        assert_eq!(p.registries().unwrap(), ["https://mcp.acme.example"]);
        let ok = |s: Subject<'_>| p.check(s, &Company);
        assert!(
            ok(Subject::Registry {
                registry: "https://mcp.acme.example",
                name: "io.github.acme/files"
            })
            .is_ok()
        );
        let err = ok(Subject::Registry {
            registry: "https://registry.modelcontextprotocol.io",
            name: "io.github.acme/files",
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("not one of the registries"),
            "{err}"
        );
        let err = ok(Subject::Registry {
            registry: "https://mcp.acme.example",
            name: "io.github.other/x",
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("allows (io.github.acme/*)"),
            "{err}"
        );
        let err = ok(Subject::Curated {
            entry_id: "github",
            registry_names: &["io.github.github/github-mcp-server".into()],
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("catalog entry `github` is not"),
            "{err}"
        );
        assert!(
            ok(Subject::Curated {
                entry_id: "files",
                registry_names: &["io.github.acme/files".into()]
            })
            .is_ok()
        );
        assert!(
            ok(Subject::Custom { name: "x" })
                .unwrap_err()
                .to_string()
                .contains("custom server `x`")
        );
        assert!(
            ok(Subject::Imported { name: "x" })
                .unwrap_err()
                .to_string()
                .contains("imported server")
        );
        assert!(
            ok(Subject::LocalBundle {
                file: "a.mcpb",
                sha256: "ab12"
            })
            .is_ok()
        );
        assert!(
            ok(Subject::LocalBundle {
                file: "a.mcpb",
                sha256: "ff"
            })
            .unwrap_err()
            .to_string()
            .contains("SHA-256")
        );
        assert!(p.summary().contains("only servers published"));
    }

    #[test]
    fn names_alone_narrow_registry_servers_only() {
        let p = policy(r#"{"allowed_names": ["io.github.acme/*"]}"#);
        assert!(p.registries().is_none());
        assert!(p.check(Subject::Custom { name: "x" }, &Company).is_ok());
        assert!(
            p.check(
                Subject::Registry {
                    registry: "https://r",
                    name: "io.github.x/y"
                },
                &Company
            )
            .is_err()
        );
        assert!(
            p.check(
                Subject::Curated {
                    entry_id: "g",
                    registry_names: &["io.github.x/y".into()]
                },
                &Company
            )
            .is_err()
        );
        assert!(
            p.check(
                Subject::Curated {
                    entry_id: "g",
                    registry_names: &[]
                },
                &Company
            )
            .is_ok()
        );
    }

    #[test]
    fn a_malformed_policy_refuses_everything_and_says_why() {
        for (text, why) in [
            ("{", "not valid JSON"),
            ("[]", "not a JSON object"),
            (
                r#"{"only_registry_server": true}"#,
                "field `only_registry_server`",
            ),
            (r#"{"registries": "https://x"}"#, "list of strings"),
            (r#"{"registries": ["ftp://x"]}"#, "not an http(s)"),
            (r#"{"registries": []}"#, "is empty"),
            (
                r#"{"only_registry_servers": "yes", "registries": ["https://x"]}"#,
                "true or false",
            ),
            (r#"{"only_registry_servers": true}"#, "no `registries`"),
            (r#"{"allowed_names": [1]}"#, "list of strings"),
        ] {
            let p = policy(text);
            let PolicyState::Broken { reason, .. } = &p else {
                panic!("{text}: {p:?}")
            };
            assert!(reason.contains(why), "{text}: {reason}");
            let err = p
                .check(Subject::Custom { name: "x" }, &Company)
                .unwrap_err();
            assert!(
                err.to_string().contains("every install is refused"),
                "{err}"
            );
        }
        assert_eq!(
            read(Path::new("/nonexistent/policy.json")),
            PolicyState::None
        );
    }
}
