//! What the user chose for one server's sandbox, as kept in its config: on or off, the network
//! it may reach, and folders granted or denied beyond what its launch grants by itself.

use serde::{Deserialize, Serialize};

/// A server's sandbox settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Network::is_any")]
    pub network: Network,
    /// Folders or files it may read, beyond its launch's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_read: Vec<String>,
    /// Folders or files it may read and change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_write: Vec<String>,
    /// Folders or files taken away from what its launch would grant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl Settings {
    /// The sandbox on, with the network open and nothing granted beyond the launch's own.
    pub fn on() -> Self {
        Settings {
            enabled: true,
            ..Settings::default()
        }
    }

    /// Narrow these settings to what the server's source declares: the network the server
    /// itself needs (widened to the hosts `command`, a package runner, fetches the package
    /// from at start), and the paths it may only read (named in its launch, they are read and
    /// write otherwise).
    pub fn declare(&mut self, network: Option<&Network>, command: &str, read_only: Vec<String>) {
        if let Some(network) = network {
            self.network = network.clone().with_runner(command);
        }
        for path in read_only {
            if !self.allow_read.contains(&path) {
                self.allow_read.push(path);
            }
        }
    }
}

/// Whether a path a form field names may be changed by the server, as its source declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read only.
    Read,
    /// Read and change.
    Write,
}

/// The network a sandboxed server may use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Network {
    #[default]
    Any,
    None,
    /// Only these hosts (the kernel enforces their ports; see [`crate::NetworkEnforcement`]).
    Hosts(Vec<HostPort>),
}

/// One `HOST[:PORT]` of a host list (443 when no port is given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl Network {
    pub fn is_any(&self) -> bool {
        matches!(self, Network::Any)
    }

    /// Parse `any`, `none` or `HOST[:PORT][,HOST[:PORT]…]`.
    pub fn parse(text: &str) -> Result<Network, String> {
        match text.trim() {
            "any" => Ok(Network::Any),
            "none" => Ok(Network::None),
            "" => Err("give `any`, `none` or HOST[:PORT][,…]".into()),
            list => list
                .split(',')
                .map(|item| HostPort::parse(item.trim()))
                .collect::<Result<Vec<_>, _>>()
                .map(Network::Hosts),
        }
    }

    /// This network with the hosts a package runner fetches its package from at start added
    /// (`npx` → the npm registry, `uvx` → PyPI): the server needs them before it runs at all.
    pub fn with_runner(self, command: &str) -> Network {
        let needed: Vec<HostPort> = runner_hosts(command)
            .iter()
            .map(|host| HostPort {
                host: (*host).to_owned(),
                port: 443,
            })
            .collect();
        match self {
            Network::Any => Network::Any,
            _ if needed.is_empty() => self,
            Network::None => Network::Hosts(needed),
            Network::Hosts(mut hosts) => {
                for host in needed {
                    if !hosts.contains(&host) {
                        hosts.push(host);
                    }
                }
                Network::Hosts(hosts)
            }
        }
    }

    /// The ports a host list reaches, sorted, each once.
    pub fn ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = match self {
            Network::Hosts(hosts) => hosts.iter().map(|h| h.port).collect(),
            _ => vec![],
        };
        ports.sort_unstable();
        ports.dedup();
        ports
    }
}

impl HostPort {
    fn parse(item: &str) -> Result<HostPort, String> {
        let bad = || format!("`{item}` is not HOST or HOST:PORT");
        let (host, port) = if let Some(rest) = item.strip_prefix('[') {
            let (host, after) = rest.split_once(']').ok_or_else(bad)?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(bad()),
            };
            (format!("[{host}]"), port)
        } else {
            match item.rsplit_once(':') {
                Some((host, port)) => (host.to_owned(), Some(port)),
                None => (item.to_owned(), None),
            }
        };
        let host_ok = !host.is_empty()
            && host.len() <= 253
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        if !host_ok {
            return Err(bad());
        }
        let port = match port {
            None => 443,
            Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(bad)?,
        };
        Ok(HostPort {
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

/// The hosts a package runner fetches the package it runs from, before the server starts.
fn runner_hosts(command: &str) -> &'static [&'static str] {
    let base = command.rsplit('/').next().unwrap_or(command);
    match base {
        "npx" | "npm" | "pnpm" | "pnpx" | "yarn" | "bunx" => &["registry.npmjs.org"],
        "uvx" | "uv" | "pipx" => &["pypi.org", "files.pythonhosted.org"],
        _ => &[],
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Network::Any => f.write_str("any"),
            Network::None => f.write_str("none"),
            Network::Hosts(hosts) => {
                let list: Vec<String> = hosts
                    .iter()
                    .map(|h| format!("{}:{}", h.host, h.port))
                    .collect();
                f.write_str(&list.join(","))
            }
        }
    }
}

impl TryFrom<String> for Network {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Network::parse(&text)
    }
}

impl From<Network> for String {
    fn from(network: Network) -> String {
        network.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_parse_and_print_back() {
        for text in [
            "any",
            "none",
            "api.github.com:443",
            "a.example:8080,b.example:443",
        ] {
            assert_eq!(Network::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            Network::parse("API.example").unwrap().to_string(),
            "api.example:443"
        );
        assert_eq!(
            Network::parse("[::1]:9000").unwrap(),
            Network::Hosts(vec![HostPort {
                host: "[::1]".into(),
                port: 9000
            }])
        );
        for bad in ["", "host:0", "host:99999", "a b", "x/y:1", "[::1]x"] {
            assert!(Network::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_declared_network_keeps_what_the_package_runner_fetches_from() {
        let none = Network::None;
        assert_eq!(
            none.clone().with_runner("npx").to_string(),
            "registry.npmjs.org:443"
        );
        assert_eq!(
            none.clone().with_runner("/usr/bin/uvx").to_string(),
            "pypi.org:443,files.pythonhosted.org:443"
        );
        assert_eq!(none.clone().with_runner("./server"), Network::None);
        assert_eq!(Network::Any.with_runner("npx"), Network::Any);
        let hosts = Network::parse("api.example,registry.npmjs.org").unwrap();
        assert_eq!(
            hosts.with_runner("npx").to_string(),
            "api.example:443,registry.npmjs.org:443"
        );

        let mut settings = Settings::on();
        settings.declare(Some(&none), "node", vec!["/srv/data".into()]);
        settings.declare(None, "node", vec!["/srv/data".into()]);
        assert_eq!(settings.network, Network::None);
        assert_eq!(settings.allow_read, ["/srv/data"]);
    }

    #[test]
    fn settings_keep_their_json_shape() {
        let settings = Settings {
            network: Network::parse("none").unwrap(),
            allow_write: vec!["~/notes".into()],
            ..Settings::on()
        };
        let json = serde_json::to_string(&settings).unwrap();
        assert_eq!(
            json,
            r#"{"enabled":true,"network":"none","allow_write":["~/notes"]}"#
        );
        assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), settings);
        assert!(serde_json::from_str::<Settings>(r#"{"enabled":true,"network":"a b"}"#).is_err());
    }
}
