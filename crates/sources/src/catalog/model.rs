//! Catalog entry types: one integration, its connection options, fields, auth and probe.
//!
//! The JSON format is described by `catalog/catalog.schema.json`; these types and that schema
//! must agree (a test validates every catalog file against the schema and parses it here).

use serde::{Deserialize, Serialize};

use crate::probe::CredentialProbe;

/// One integration in the marketplace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    pub name: String,
    pub description: String,
    pub docs_url: String,
    pub categories: Vec<String>,
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The MCP Registry names of the same server: the marketplace shows this entry instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registry_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popularity: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_hint: Option<String>,
    pub options: Vec<ConnectionOption>,
}

impl Entry {
    pub fn option(&self, id: &str) -> Option<&ConnectionOption> {
        self.options.iter().find(|o| o.id == id)
    }

    /// The option installed when the user does not choose: the first (the catalog's preferred).
    pub fn default_option(&self) -> &ConnectionOption {
        &self.options[0]
    }
}

/// One way to connect to an integration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionOption {
    pub id: String,
    pub label: String,
    pub transport: CatalogTransport,
    pub auth: CatalogAuth,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<CredentialProbe>,
    /// What the server itself needs from its sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxNeeds>,
}

/// What a catalog option's server needs from the sandbox it starts in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxNeeds {
    /// `none`, or the hosts it talks to (the hosts its package runner fetches from are added
    /// when it is installed).
    pub network: plugboard_sandbox::Network,
}

impl ConnectionOption {
    pub fn transport_label(&self) -> &'static str {
        match self.transport {
            CatalogTransport::Stdio { .. } => "stdio",
            CatalogTransport::Shttp { .. } => "streamable HTTP",
            CatalogTransport::Sse { .. } => "SSE",
        }
    }
}

/// How the server is reached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum CatalogTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        #[serde(default)]
        env_fields: Vec<Field>,
        #[serde(default)]
        arg_fields: Vec<Field>,
    },
    Shttp(RemoteTransport),
    Sse(RemoteTransport),
}

/// A remote endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteTransport {
    pub url: String,
    #[serde(default)]
    pub url_editable: bool,
    #[serde(default)]
    pub header_fields: Vec<Field>,
}

/// A value the user supplies at install time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub key: String,
    pub label: String,
    pub kind: FieldKind,
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// For a path field: whether the server may change what it names (the default) or only
    /// read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<plugboard_sandbox::Access>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    Text,
    Password,
    /// One absolute folder path.
    Folder,
    /// Absolute folder paths, one argument each.
    Folders,
    /// One absolute file path.
    File,
}

/// How the client authenticates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CatalogAuth {
    None,
    ApiKey {
        header: String,
        credential: Credential,
    },
    Bearer {
        credential: Credential,
    },
    Oauth2 {
        oauth: CatalogOAuth,
    },
}

/// The credential field of an `api_key` or `bearer` option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credential {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    pub help: String,
    pub secret_name: String,
    #[serde(default)]
    pub optional: bool,
}

/// How an OAuth option gets a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Registration {
    /// MCP-native discovery and dynamic client registration.
    Dynamic,
    /// The provider needs an OAuth app the user registers; the form asks for its client id.
    PreRegistered,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogOAuth {
    pub registration: Registration,
    #[serde(default)]
    pub scopes: Vec<String>,
    #[serde(default)]
    pub client_auth: crate::config::ClientAuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
}
