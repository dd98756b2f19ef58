//! The engine's one intermediate form: a [`Blueprint`] says, for each way of running a server
//! (an [`OptionPlan`]), what to launch or where to connect, which values the user supplies
//! ([`FormField`]s) and where each value goes (argument, environment variable, header, URL,
//! through [`Template`]s). Every source is translated into a blueprint (`curated`,
//! `server_json`; an MCPB bundle's `manifest.json` `user_config` will be one more translator),
//! and everything after that — the form shown, its validation, the server config built, the
//! secrets kept apart — is the same code for all of them (`engine`).

use serde::Serialize;

use super::spec::FormField;
use super::template::Template;
use crate::catalog::{CatalogOAuth, CredentialProbe};
use crate::config::TransportKind;

/// Where a blueprint came from (kept in the installed server's `source`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FormSource {
    /// An entry of the curated catalog.
    Curated { entry_id: String },
    /// A version of a server in an MCP registry.
    Registry {
        registry: String,
        name: String,
        version: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        published_at: Option<String>,
    },
    /// An MCPB bundle unpacked into `dir`: a local file, or a registry package
    /// (`registry` set).
    Bundle {
        /// The manifest's `name` and `version`.
        name: String,
        version: String,
        sha256: String,
        dir: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        registry: Option<RegistryRef>,
    },
}

/// A registry version an MCPB bundle came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegistryRef {
    pub registry: String,
    pub name: String,
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

/// An option installed from an MCPB bundle a registry package names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleRef {
    pub url: String,
    pub sha256: Option<String>,
}

/// Everything needed to offer and install one server.
#[derive(Clone, Debug, PartialEq)]
pub struct Blueprint {
    pub source: FormSource,
    /// The server name suggested at install.
    pub default_name: String,
    pub options: Vec<OptionPlan>,
}

impl Blueprint {
    /// The entry id (curated) or registry name the form speaks of.
    pub fn id(&self) -> &str {
        match &self.source {
            FormSource::Curated { entry_id } => entry_id,
            FormSource::Registry { name, .. } => name,
            FormSource::Bundle {
                registry: Some(r), ..
            } => &r.name,
            FormSource::Bundle { name, .. } => name,
        }
    }

    pub fn option(&self, id: &str) -> Option<&OptionPlan> {
        self.options.iter().find(|o| o.id == id)
    }
}

/// One way to run the server.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionPlan {
    pub id: String,
    pub label: String,
    pub launch: Launch,
    pub auth: AuthPlan,
    pub fields: Vec<FormField>,
    /// Why this option cannot be installed by Plugboard at all ("cannot install: …").
    pub blocked: Option<String>,
    /// The program a local option runs (`npx`, `uvx`, `docker`, `dnx`…), to see whether it
    /// can run here.
    pub program: Option<String>,
    /// The dependency pin its launch carries.
    pub pin: Option<Pin>,
    /// Things the user should know about this launch.
    pub notes: Vec<String>,
    /// The catalog's credential probe (curated entries).
    pub probe: Option<CredentialProbe>,
    /// The network the server itself needs, where its source says (curated entries); its
    /// sandbox starts with that instead of an open network.
    pub network: Option<plugboard_sandbox::Network>,
    /// Installed from this MCPB bundle: fetched and unpacked first, its manifest gives the
    /// form (`mcpb::open_package`); the option itself cannot be built.
    pub bundle: Option<BundleRef>,
}

/// What the option runs or reaches.
#[derive(Clone, Debug, PartialEq)]
pub enum Launch {
    /// A local process speaking stdio.
    Stdio {
        command: String,
        args: Vec<ArgPlan>,
        env: Vec<ValuePlan>,
    },
    /// A server reached over HTTP.
    Remote {
        transport: TransportKind,
        url: Template,
        headers: Vec<ValuePlan>,
    },
    /// A local process serving HTTP on this machine: Plugboard starts it, waits for its port,
    /// connects to `url`, and stops its process group afterwards.
    LocalHttp {
        command: String,
        args: Vec<ArgPlan>,
        env: Vec<ValuePlan>,
        transport: TransportKind,
        url: Template,
        headers: Vec<ValuePlan>,
    },
}

impl Launch {
    pub fn transport(&self) -> TransportKind {
        match self {
            Launch::Stdio { .. } => TransportKind::Stdio,
            Launch::Remote { transport, .. } | Launch::LocalHttp { transport, .. } => *transport,
        }
    }
}

/// How field values become argv elements.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgPlan {
    /// Always there (placeholders filled in); left out when a placeholder's field is an
    /// optional one left empty.
    Fixed(Template),
    /// The field's value, if set: one argument, one per whitespace-separated word (curated
    /// argument fields), or one per line (a repeated argument).
    Value { field: String, split: Split },
    /// `name value` when the field is set; `value` fills the field into a template (`{field}`
    /// by default). A list field repeats the pair per line.
    Flag {
        name: String,
        field: String,
        value: Option<Template>,
    },
    /// `name` alone when the (boolean) field is `true`.
    Switch { name: String, field: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    One,
    Words,
    Lines,
}

/// An environment variable or a header: its name and a template over field values. It is
/// stored as a secret when a field it uses is.
#[derive(Clone, Debug, PartialEq)]
pub struct ValuePlan {
    pub name: String,
    pub value: Template,
}

/// How the client authenticates (curated entries' auth strategies).
#[derive(Clone, Debug, PartialEq)]
pub enum AuthPlan {
    None,
    ApiKey { header: String, field: String },
    Bearer { field: String },
    OAuth(CatalogOAuth),
}

/// A launch resolving its dependencies as of a date (the version's publication, plus a day).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pin {
    /// `uv` (`--exclude-newer`) or `npm` (`--before`).
    pub tool: String,
    /// The flag as passed (`--exclude-newer`, `--before`).
    pub flag: String,
    /// RFC 3339.
    pub date: String,
    /// When the registry published this version.
    pub published_at: String,
}
