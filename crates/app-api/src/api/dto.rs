//! Transport types of the app API: what crosses IPC between the desktop shell and the UI.
//!
//! Types that go to the UI derive `Serialize` and never hold a stored secret value (a secret is
//! only ever "set" / "not set"). Types that come from the UI and may carry secret values derive
//! only `Deserialize`, so they cannot be sent back by mistake.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::TransportKind;
use crate::form;

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    Sse,
    Shttp,
    Auto,
}

impl From<TransportKind> for Transport {
    fn from(kind: TransportKind) -> Transport {
        match kind {
            TransportKind::Stdio => Transport::Stdio,
            TransportKind::Sse => Transport::Sse,
            TransportKind::Shttp => Transport::Shttp,
            TransportKind::Auto => Transport::Auto,
        }
    }
}

impl From<Transport> for TransportKind {
    fn from(t: Transport) -> TransportKind {
        match t {
            Transport::Stdio => TransportKind::Stdio,
            Transport::Sse => TransportKind::Sse,
            Transport::Shttp => TransportKind::Shttp,
            Transport::Auto => TransportKind::Auto,
        }
    }
}

/// Which catalog entries to list: all, only those installed at least once, or only those not
/// installed yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum CatalogFilter {
    All,
    Installed,
    Library,
}

/// How an entry's preferred option signs in, when it does so with OAuth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum OAuthKind {
    /// The server registers Plugboard itself (MCP discovery + dynamic registration).
    Dynamic,
    /// The user must bring an OAuth app registered with the provider.
    PreRegistered,
}

/// One marketplace tile.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct CatalogCard {
    pub id: String,
    pub name: String,
    pub description: String,
    pub categories: Vec<String>,
    /// `categories` as the category filter names them ("Developer tools", "AI").
    pub category_labels: Vec<String>,
    pub keywords: Vec<String>,
    pub popularity: Option<u32>,
    /// A simple-icons slug; the UI bundles the icons and falls back to an initials badge.
    pub logo: Option<String>,
    /// The transport of the option that installing this entry will use (its first option).
    pub transport: Transport,
    /// "stdio", "streamable HTTP" or "SSE", matching `transport`.
    pub transport_label: String,
    pub option_label: String,
    /// Number of connection options the install form offers.
    pub option_count: u32,
    /// Set when the option that will be installed signs in with OAuth.
    pub oauth: Option<OAuthKind>,
    /// The names of the installed servers that came from this entry.
    pub installed_as: Vec<String>,
    pub docs_url: String,
    /// `curated` or `registry`.
    pub source: String,
    /// A registry server's version.
    pub version: Option<String>,
    /// A registry server's namespace owner (`io.github.owner/…` → `owner`).
    pub owner: Option<String>,
    /// The owner is a GitHub account (an `io.github.` name).
    pub github: bool,
    /// The source repository (https).
    pub repository: Option<String>,
    /// A curated entry: the registry names it stands for; a registry server: its name.
    pub registry_names: Vec<String>,
    /// Every transport its options offer.
    pub transports: Vec<Transport>,
    /// What runs it: "Node.js", "Python", "Docker", ".NET", "Remote", …
    pub runtimes: Vec<String>,
    pub deprecated: bool,
    /// Why it is deprecated, as the registry says.
    pub status_message: Option<String>,
    /// Whether some option can run on this machine.
    pub runs_here: bool,
    /// Why none can, when none can.
    pub why_not: Option<String>,
    /// The registry it comes from.
    pub registry: Option<String>,
}

/// A category with the number of entries in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct CategoryCount {
    pub id: String,
    pub label: String,
    pub count: u32,
}

/// What a form field fills in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FieldTarget {
    Env,
    Arg,
    Header,
    Credential,
    Url,
    OauthClientId,
    OauthClientSecret,
    /// A value used inside others (a placeholder of a header, an argument or the URL).
    Value,
}

impl From<form::FieldTarget> for FieldTarget {
    fn from(t: form::FieldTarget) -> FieldTarget {
        match t {
            form::FieldTarget::Env => FieldTarget::Env,
            form::FieldTarget::Arg => FieldTarget::Arg,
            form::FieldTarget::Header => FieldTarget::Header,
            form::FieldTarget::Credential => FieldTarget::Credential,
            form::FieldTarget::Url => FieldTarget::Url,
            form::FieldTarget::OauthClientId => FieldTarget::OauthClientId,
            form::FieldTarget::OauthClientSecret => FieldTarget::OauthClientSecret,
            form::FieldTarget::Value => FieldTarget::Value,
        }
    }
}

/// How a field is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    Text,
    Password,
    Url,
    Number,
    /// A switch: `true` or `false`.
    Boolean,
    /// One of `choices`.
    Select,
    FilePath,
    /// Several values, one per line.
    List,
}

impl From<form::InputKind> for InputKind {
    fn from(kind: form::InputKind) -> InputKind {
        match kind {
            form::InputKind::Text => InputKind::Text,
            form::InputKind::Password => InputKind::Password,
            form::InputKind::Url => InputKind::Url,
            form::InputKind::Number => InputKind::Number,
            form::InputKind::Boolean => InputKind::Boolean,
            form::InputKind::Select => InputKind::Select,
            form::InputKind::FilePath => InputKind::FilePath,
            form::InputKind::List => InputKind::List,
        }
    }
}

/// One field of an install form (the core's `form::FormField`).
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct FormField {
    pub key: String,
    pub label: String,
    pub target: FieldTarget,
    pub input: InputKind,
    pub required: bool,
    /// Stored in the OS keyring unless the user turns that off (where `secret_toggle`).
    pub secret: bool,
    pub secret_toggle: bool,
    pub placeholder: Option<String>,
    /// Markdown; the UI renders https links only.
    pub help: Option<String>,
    pub default: Option<String>,
    /// The values a `select` field offers.
    pub choices: Vec<String>,
    /// For a path field: `file` or `directory` (which picker the app offers). Such a field
    /// takes absolute paths only.
    pub picker: Option<String>,
    /// For a path field whose source says so: `read` (the server's sandbox lets it only read
    /// the paths entered) or `write` (read and change them).
    pub access: Option<String>,
    /// Bounds of a number field.
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// One connection option, for the chooser.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct OptionSummary {
    pub id: String,
    pub label: String,
    pub transport: Transport,
    pub transport_label: String,
    /// What runs it ("Node.js", "uv", "Docker"), for a local option.
    pub runtime: Option<String>,
    /// Whether Plugboard can install it at all.
    pub installable: bool,
    /// Why it cannot be installed, or cannot run here, and the fix.
    pub unavailable: Option<Unavailable>,
    /// An MCPB bundle: it is downloaded (and its form read from its manifest) first.
    pub bundle: bool,
}

/// Why an option cannot be used here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct Unavailable {
    /// `runtime.missing`, `runtime.docker_daemon`, `unsupported`.
    pub code: String,
    pub reason: String,
    /// The doctor's fix; empty when nothing can be done here.
    pub fix: String,
}

/// A launch's dependencies resolved as of a date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct PinView {
    /// `uv` or `npm`.
    pub tool: String,
    pub flag: String,
    pub date: String,
    pub published_at: String,
}

/// The install form of one option of one entry.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct FormSpec {
    pub entry_id: String,
    pub option_id: String,
    pub option_label: String,
    pub transport: Transport,
    pub transport_label: String,
    /// The command line a stdio option runs (before argument fields).
    pub command: Option<String>,
    pub url: Option<String>,
    pub oauth: Option<OAuthKind>,
    pub default_name: String,
    pub fields: Vec<FormField>,
    pub options: Vec<OptionSummary>,
    /// `curated` or `registry`.
    pub source: String,
    /// A registry server's version.
    pub version: Option<String>,
    /// The dependency pin of this option's launch.
    pub pin: Option<PinView>,
    /// What the user should know about this launch.
    pub notes: Vec<String>,
    /// What the launch does that weakens the server's isolation: shown loudly.
    pub warnings: Vec<String>,
    /// The environment a local option sets, as written (`{field}` where a field fills it in).
    pub env: Vec<KeyValueText>,
}

/// A name and its text.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct KeyValueText {
    pub key: String,
    pub value: String,
}

/// Everything the install modal shows.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct InstallForm {
    pub entry: CatalogCard,
    /// Markdown.
    pub install_hint: Option<String>,
    pub spec: FormSpec,
    /// `default_name`, or `default_name-2`, … when that name is taken.
    pub suggested_name: String,
    /// The MCPB bundle this form installs (its requests use the entry id `bundle:TOKEN`).
    pub bundle: Option<BundleView>,
}

/// An MCPB bundle unpacked for an install form.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct BundleView {
    pub token: String,
    /// The manifest's `name`, its display name, version and description.
    pub name: String,
    pub title: String,
    pub version: String,
    pub description: String,
    pub author: Option<String>,
    pub sha256: String,
    pub files: u32,
    /// Unpacked bytes.
    pub bytes: f64,
    /// The tools its manifest declares.
    pub tools: Vec<String>,
}

/// The organisation policy in force.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct PolicyView {
    pub in_force: bool,
    /// The policy file cannot be used: every install is refused.
    pub broken: bool,
    /// One sentence: what is in force and why installs are refused.
    pub summary: String,
    pub path: Option<String>,
    pub registries: Vec<String>,
    pub only_registry_servers: bool,
    pub allowed_names: Vec<String>,
}

/// A filled install form, from the UI. Values may be secrets: this type is never serialized.
#[derive(Clone, Debug, Deserialize, specta::Type)]
pub struct InstallRequest {
    pub entry_id: String,
    pub option_id: String,
    pub name: String,
    pub values: BTreeMap<String, String>,
    /// Per-field "store as secret" for fields that offer the choice.
    pub store_as_secret: BTreeMap<String, bool>,
    /// The id of a passing pre-save test of these values: its result becomes the new server's
    /// health.
    #[serde(default)]
    pub test_id: Option<String>,
    /// A registry server: take its dependencies' newest versions instead of pinning them to
    /// the version's publication date.
    #[serde(default)]
    pub no_pin: bool,
    /// The user accepted that this server takes a secret on its command line.
    #[serde(default)]
    pub allow_secret_args: bool,
    /// The installed server this form edits (from `edit_form`): saved in its place, and a
    /// secret field left empty keeps its stored value.
    #[serde(default)]
    pub editing: Option<String>,
    /// An edit: optional secret fields whose stored values the user removed.
    #[serde(default)]
    pub cleared: Vec<String>,
}

/// An installed server's install form, filled as it was installed, for editing it.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct EditForm {
    /// The server it edits (the requests' `editing` and `name`).
    pub name: String,
    /// The entry the requests name.
    pub entry_id: String,
    pub form: InstallForm,
    /// The plain fields' values.
    pub values: BTreeMap<String, String>,
    /// Secret fields with a stored value: left empty, they keep it.
    pub secrets_set: Vec<String>,
    /// A registry server: whether its dependencies are pinned to its publication date.
    pub pinned: bool,
    /// The user accepted that it takes a secret on its command line.
    pub allow_secret_args: bool,
}

/// An env variable or header of an installed server, as the UI may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct ValueEntry {
    pub key: String,
    pub kind: ValueKind,
    /// The value, for plain values only.
    pub value: Option<String>,
    /// For secrets: whether the keyring holds it (`None` when it could not be asked).
    pub set: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// Plain config.
    Plain,
    /// Plain config whose name looks secret: not shown.
    Masked,
    /// A reference to a secret in the keyring.
    Secret,
}

/// The auth of an installed server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct AuthView {
    /// `none`, `api_key`, `bearer`, `basic`, `header`, `oauth2`.
    pub kind: String,
    pub label: String,
    pub header: Option<String>,
    pub username: Option<String>,
    /// The name of the credential's secret and whether it is set.
    pub credential: Option<ValueEntry>,
    pub client_id: Option<String>,
    pub scopes: Vec<String>,
}

/// Where an installed server came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct SourceView {
    pub catalog: String,
    pub option: String,
    /// The registry server it was installed from, its version and dependency pin date.
    pub registry_name: Option<String>,
    pub version: Option<String>,
    pub pinned: Option<String>,
    /// From the catalog, when the entry is still in it.
    pub entry_name: Option<String>,
    pub logo: Option<String>,
    pub docs_url: Option<String>,
}

/// An installed server as the app shows it. Secrets appear only as set / not set.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ServerView {
    pub name: String,
    /// `None` for an entry of the config file that cannot be read (see `error`).
    pub transport: Option<Transport>,
    pub transport_label: String,
    pub enabled: bool,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    /// The command line or the URL, for display.
    pub target: String,
    pub env: Vec<ValueEntry>,
    pub headers: Vec<ValueEntry>,
    pub auth: AuthView,
    pub timeout: Option<u32>,
    pub source: Option<SourceView>,
    /// Secrets this server refers to that the keyring does not hold.
    pub missing_secrets: Vec<String>,
    /// Its last test, if it was ever tested.
    pub health: Option<super::HealthView>,
    /// How its last seen tools compare with the approved ones (`None` when its pin file cannot
    /// be read). `tools_changed` / `unapproved` call for a review (`tool_diff`).
    pub pin_state: Option<super::PinStateView>,
    /// Why the entry could not be read, for a broken entry.
    pub error: Option<String>,
    /// Its sandbox: `enforced`, `not_enforced`, `off` or `not_applicable` (a remote server).
    pub sandbox: String,
}

/// A credential of an installed server that "update credentials" can replace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct CredentialSlot {
    /// The key to pass to `update_credentials`.
    pub key: String,
    pub label: String,
    /// `env`, `header` or `credential`.
    pub target: FieldTarget,
    pub set: Option<bool>,
    pub required: bool,
    pub placeholder: Option<String>,
    pub help: Option<String>,
}

/// One installed server in full, for the detail view.
#[derive(Clone, Debug, PartialEq, Serialize, specta::Type)]
pub struct ServerDetail {
    pub server: ServerView,
    pub credentials: Vec<CredentialSlot>,
    /// The install hint of its catalog entry (Markdown).
    pub install_hint: Option<String>,
    /// The description of its catalog entry.
    pub description: Option<String>,
    /// Its last test in full: tools, resources, prompts, stages, stderr tail.
    pub last_test: Option<super::TestReport>,
}

/// What removing a server did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct RemoveResult {
    pub name: String,
    pub secrets_deleted: u32,
    /// Secrets that could not be deleted from the keyring (the server is gone anyway).
    pub warnings: Vec<String>,
}

/// An env variable or header in the custom server editor. Going to the UI, `value` is `None` for
/// secrets and masked values (`set` says whether the secret exists); coming back, `None` means
/// "keep what is stored".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct KeyValue {
    pub key: String,
    pub value: Option<String>,
    pub secret: bool,
    #[serde(default)]
    pub set: Option<bool>,
}

/// The auth of a custom server. Secret values follow `KeyValue`'s rule: `None` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CustomAuth {
    None,
    Bearer {
        token: Option<String>,
        #[serde(default)]
        set: Option<bool>,
    },
    ApiKey {
        header: String,
        key: Option<String>,
        #[serde(default)]
        set: Option<bool>,
    },
    Basic {
        username: String,
        password: Option<String>,
        #[serde(default)]
        set: Option<bool>,
    },
    /// OAuth (MCP authorization): tokens come from the sign-in. Everything is optional: without
    /// a client ID the server's dynamic registration is used; a pre-registered client gives
    /// its ID (and secret), and the authorization and token URLs when the server does not
    /// publish them.
    Oauth2 {
        #[serde(default)]
        client_id: Option<String>,
        /// The client secret: `None` keeps the stored one (`client_secret_set` says whether one
        /// is stored), `Some("")` removes it.
        #[serde(default)]
        client_secret: Option<String>,
        #[serde(default)]
        client_secret_set: Option<bool>,
        #[serde(default)]
        scopes: Vec<String>,
        #[serde(default)]
        authorization_url: Option<String>,
        #[serde(default)]
        token_url: Option<String>,
        /// How the tokens are obtained.
        #[serde(default)]
        grant: GrantKind,
        /// Client credentials: the client's PKCS#8 P-256 private key (PEM), to sign assertions
        /// with instead of sending a secret; `None` keeps the stored one, `Some("")` removes it.
        #[serde(default)]
        private_key: Option<String>,
        #[serde(default)]
        private_key_set: Option<bool>,
        /// Identity assertion: the identity provider's token endpoint, and this client there.
        #[serde(default)]
        idp_token_endpoint: Option<String>,
        #[serde(default)]
        idp_client_id: Option<String>,
        /// Identity assertion: the client's secret at the identity provider; `None` keeps the
        /// stored one, `Some("")` removes it (a public client there).
        #[serde(default)]
        idp_client_secret: Option<String>,
        #[serde(default)]
        idp_client_secret_set: Option<bool>,
        /// Identity assertion: the user's ID token; `None` keeps the stored one.
        #[serde(default)]
        id_token: Option<String>,
        #[serde(default)]
        id_token_set: Option<bool>,
    },
}

/// How an OAuth server's tokens are obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum GrantKind {
    /// A user signs in in the browser.
    #[default]
    SignIn,
    /// The client alone, with its secret or private key (a service account).
    ClientCredentials,
    /// Enterprise-managed: the user's ID token from the organisation's identity provider.
    IdentityAssertion,
}

/// The custom server editor's model: every transport and auth mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CustomServer {
    pub name: String,
    pub transport: Transport,
    pub command: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub url: String,
    pub env: Vec<KeyValue>,
    pub headers: Vec<KeyValue>,
    pub auth: CustomAuth,
    /// Remote only: headers from a command (`None`: no helper).
    pub headers_helper: Option<HeadersHelper>,
    /// Seconds; `None` is the default.
    pub timeout: Option<u32>,
}

/// A command whose output (a JSON object) gives a remote server's headers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct HeadersHelper {
    /// The program: an absolute path, or a name found on PATH.
    pub command: String,
    pub args: Vec<String>,
    /// Seconds its headers are used before it runs again; `None` is 300.
    pub ttl: Option<u32>,
}

/// About this installation, for the app's footer and settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub config_file: String,
    pub catalog_entries: u32,
    /// Why the catalog could not be loaded, if it could not.
    pub catalog_error: Option<String>,
    /// Whether the core was built with the connection tester.
    pub can_test: bool,
}

/// Where an installed registry server stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct OutdatedView {
    pub name: String,
    pub registry_name: String,
    pub installed: String,
    pub latest: Option<String>,
    /// `current`, `update_available`, `not_listed` or `removed` (deleted by its registry).
    pub state: String,
    /// The registry's deprecation message.
    pub deprecated: Option<String>,
    /// Why its registry deleted it.
    pub removed: Option<String>,
    pub bundle: bool,
}

/// A prepared update: the new version tested, its tools compared with the approved ones.
#[derive(Clone, Debug, Serialize, specta::Type)]
pub struct UpdatePreview {
    /// Applies it (`apply_update`) or drops it (`discard_update`); only a passing update has one
    /// that works.
    pub token: String,
    pub name: String,
    pub from: String,
    pub to: String,
    /// The new version's test passed.
    pub passed: bool,
    pub test: super::testing::TestReport,
    pub tools: super::pins::ToolDiff,
    /// Fields the new version no longer asks for.
    pub dropped_fields: Vec<String>,
    /// How its launch differs from the installed one's.
    pub launch: crate::launch_diff::LaunchDiff,
}
