//! What the form engine hands to the UI and the CLI, and what comes back: the form of one
//! option ([`FormSpec`], its [`FormField`]s and the option chooser), the values entered
//! ([`FormInput`]), the problems found ([`FormErrors`]), and the server ready to test and save
//! ([`PreparedServer`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::blueprint::{FormSource, Pin};
use crate::config::{ServerConfig, TransportKind};
use crate::secrets::Sensitive;

/// What a form field fills in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldTarget {
    /// An environment variable of a stdio server; the key is its name.
    Env,
    /// An argument of a stdio server's command line.
    Arg,
    /// An HTTP header of a remote server; the key is its name.
    Header,
    /// The API key or bearer token of a remote server.
    Credential,
    /// The server URL, where the catalog lets the user change it.
    Url,
    /// The id of an OAuth app the user registered with the provider.
    OauthClientId,
    /// The secret of that OAuth app, if it has one.
    OauthClientSecret,
    /// A value used inside others (`{api_key}` in `Authorization: Bearer {api_key}`, a URL
    /// variable, a placeholder of an argument).
    Value,
}

/// How the field is shown and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    Text,
    Password,
    Url,
    /// A decimal number.
    Number,
    /// `true` or `false` (a switch).
    Boolean,
    /// One of `choices`.
    Select,
    /// A path on this machine.
    FilePath,
    /// Several values, one per line (a repeated argument).
    List,
}

/// One field of the install form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormField {
    pub key: String,
    pub label: String,
    pub target: FieldTarget,
    pub input: InputKind,
    pub required: bool,
    /// Stored in the secret store unless the user turns that off.
    pub secret: bool,
    /// Whether the user may choose between storing it as a secret or as plain config.
    pub secret_toggle: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Markdown; links are https only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// The values a `select` field offers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// For a path field: whether the app offers a file or a directory picker. A field with
    /// one takes absolute paths only (`~/` is expanded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picker: Option<Picker>,
    /// For a path field its source declares read-only or read-write: what the sandbox grants
    /// on the paths entered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<plugboard_sandbox::Access>,
    /// Bounds of a number field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// For a list field used inside a longer value (an environment variable, part of an
    /// argument): the text its values are joined with there.
    #[serde(skip)]
    pub join: Option<String>,
}

/// Which picker a path field offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Picker {
    File,
    Directory,
}

impl FormField {
    /// A plain, optional text field: the start of every field the engine makes.
    pub fn text(key: &str, label: &str, target: FieldTarget) -> FormField {
        FormField {
            key: key.to_owned(),
            label: label.to_owned(),
            target,
            input: InputKind::Text,
            required: false,
            secret: false,
            secret_toggle: false,
            placeholder: None,
            help: None,
            default: None,
            choices: vec![],
            picker: None,
            access: None,
            min: None,
            max: None,
            join: None,
        }
    }
}

pub use crate::runtimes::Unavailable;

/// One connection option of the entry, for the option chooser.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OptionSummary {
    pub id: String,
    pub label: String,
    pub transport: TransportKind,
    /// What runs it ("Node.js", "uv", "Docker", ".NET"), for a local option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Whether Plugboard can install it at all.
    pub installable: bool,
    /// Installed from an MCPB bundle, which is fetched first: its form comes from the
    /// bundle's manifest (`mcpb::open_package`).
    pub bundle: bool,
    /// Why it cannot be installed, or cannot run on this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<Unavailable>,
}

impl OptionSummary {
    /// Installable and able to run here.
    pub fn runs_here(&self) -> bool {
        self.installable && self.unavailable.is_none()
    }
}

/// The form for installing one option of one source.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormSpec {
    /// The catalog entry id, or the registry server name.
    pub entry_id: String,
    pub source: FormSource,
    pub option_id: String,
    pub option_label: String,
    pub transport: TransportKind,
    /// The command line a local option will run, placeholders as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Whether installing ends with an OAuth sign-in.
    pub oauth: bool,
    /// The server name used unless the user picks another.
    pub default_name: String,
    pub fields: Vec<FormField>,
    pub options: Vec<OptionSummary>,
    /// The dependency pin this option's launch carries, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    /// Notes about the launch (an unpinned version, a value passed on the command line).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What the launch does that weakens the server's isolation (container flags that give it
    /// the host, environment values that change what runs): shown loudly before install.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The environment a local option sets, as written (`{field}` where a field fills it in).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
}

impl FormSpec {
    /// The summary of the option this form is for.
    pub fn option(&self) -> Option<&OptionSummary> {
        self.options.iter().find(|o| o.id == self.option_id)
    }
}

/// A field that failed validation, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Every problem found in a filled form (or a bad option choice).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}", self.errors.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; "))]
pub struct FormErrors {
    pub errors: Vec<FieldError>,
}

impl FormErrors {
    pub fn one(field: &str, message: impl Into<String>) -> Self {
        FormErrors {
            errors: vec![FieldError {
                field: field.into(),
                message: message.into(),
            }],
        }
    }
}

/// What the user entered. Values are `Sensitive` because any of them may be a secret.
#[derive(Debug, Default)]
pub struct FormInput {
    pub values: BTreeMap<String, Sensitive<String>>,
    /// Per-field override of "store as secret", for fields with a toggle.
    pub store_as_secret: BTreeMap<String, bool>,
}

impl FormInput {
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.values.insert(key.into(), Sensitive::new(value.into()));
        self
    }

    /// Add one line to a list field's value (a repeated `--set`).
    pub fn add_line(&mut self, key: &str, value: &str) -> &mut Self {
        let joined = match self.values.get(key) {
            Some(before) if !before.expose().trim().is_empty() => {
                format!("{}\n{value}", before.expose())
            }
            _ => value.to_owned(),
        };
        self.set(key, joined)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.values
            .get(key)
            .map(|v| v.expose().trim())
            .filter(|v| !v.is_empty())
    }
}

/// A server ready to test and save: its config, and the secrets to put in its namespace.
#[derive(Debug)]
pub struct PreparedServer {
    pub name: String,
    pub config: ServerConfig,
    pub secrets: BTreeMap<String, Sensitive<String>>,
}
