//! A registry `server.json` as a blueprint: one option per package and per remote.
//!
//! - npm → `npx -y ID@VERSION` (`bunx`, `pnpm dlx`, `yarn dlx` when the runtime hint says so),
//!   with `--before DATE` when dependency pinning is on and npm's registry dates the version
//!   before it; PyPI → `uvx --exclude-newer DATE ID==VERSION` (dependencies as of a day after
//!   the version's publication; pinning can be turned off); OCI → `docker run -i --rm … IMAGE`
//!   with each environment variable passed as `-e NAME` (its value stays out of the command
//!   line); NuGet → `dnx ID@VERSION --yes`; MCPB bundles are options whose form comes from
//!   the bundle's manifest once it is fetched (`form::mcpb`).
//! - `runtimeArguments` go to the runner, `packageArguments` to the package: positional ones
//!   (`valueHint` names the field) and named ones (`--flag value`, a switch for booleans,
//!   repeated per line when `isRepeated`); fixed values stay fixed.
//! - A package whose transport is `streamable-http`/`sse` at a loopback URL is started locally
//!   (Plugboard waits for its port and stops it afterwards); remotes are reached at their URL,
//!   with `{variables}` and headers.
//! - Inputs become fields: `isRequired`, `isSecret` (kept in the secret store), `format`
//!   (number, boolean, filepath; anything else is text), `choices` (a select), `default`,
//!   `placeholder`, `description`. A `{placeholder}` in a value that no variable declares
//!   becomes a field named after it, secret and required as the value it is in; a header with
//!   no value becomes a field named after the header.

use plugboard_store::secret_shapes::looks_secret;
use std::collections::BTreeMap;

use super::blueprint::{
    ArgPlan, AuthPlan, Blueprint, FormSource, Launch, OptionPlan, Split, ValuePlan,
};
use super::engine::transport_kind;
use super::runners::{PackageRun, Runner, runner};
use super::spec::{FieldTarget, FormField, InputKind};
use super::template::Template;
use crate::config::{TransportKind, is_loopback_host};
use crate::registry::model::{
    Argument, ArgumentKind, Input, KeyValueInput, Package, RegistryRow, Transport,
};
use crate::registry::time::{format_rfc3339, parse_rfc3339};

/// Whether npm's registry lets `--before DATE` resolve this package version: `Ok` to pin,
/// `Err(why not)` to run it unpinned.
pub type NpmPinCheck<'a> = &'a dyn Fn(&str, &str, &str) -> Result<(), String>;

/// How registry launches pin their dependencies.
pub struct Pinning<'a> {
    /// Pin at all (`pin_dependencies` in settings, on by default).
    pub enabled: bool,
    /// Asked for npm packages; `None` while only browsing (the check runs at install).
    pub npm: Option<NpmPinCheck<'a>>,
}

impl Pinning<'_> {
    /// Pin PyPI launches; decide npm pins at install.
    pub fn browsing(enabled: bool) -> Pinning<'static> {
        Pinning { enabled, npm: None }
    }
}

/// The blueprint of one registry row, served by the registry at `registry`.
pub fn blueprint(row: &RegistryRow, registry: &str, pinning: &Pinning<'_>) -> Blueprint {
    let server = &row.server;
    let published = row.meta.official.published_at.clone();
    let pin_date = published
        .as_deref()
        .and_then(parse_rfc3339)
        .map(|t| format_rfc3339(t + 86_400));
    let mut options = Vec::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut unique = |base: String| {
        let n = ids.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 { base } else { format!("{base}-{n}") }
    };
    for package in &server.packages {
        let kind = transport_kind(&package.transport.kind);
        let base = match kind {
            Some(TransportKind::Stdio) | None => package.registry_type.clone(),
            Some(TransportKind::Sse) => format!("{}-sse", package.registry_type),
            Some(_) => format!("{}-http", package.registry_type),
        };
        let id = unique(if base.is_empty() {
            "package".into()
        } else {
            base
        });
        options.push(package_option(
            id,
            package,
            &server.version,
            pin_date.as_deref(),
            published.as_deref(),
            pinning,
        ));
    }
    for remote in &server.remotes {
        let base = match transport_kind(&remote.kind) {
            Some(TransportKind::Sse) => "remote-sse",
            _ => "remote",
        };
        options.push(remote_option(unique(base.into()), remote));
    }
    Blueprint {
        source: FormSource::Registry {
            registry: registry.to_owned(),
            name: server.name.clone(),
            version: server.version.clone(),
            published_at: published,
        },
        default_name: server_name_for(server.short_name()),
        options,
    }
}

/// A server name (`^[A-Za-z0-9_-]{1,64}$`) from a registry name's last part.
pub fn server_name_for(short: &str) -> String {
    let mut name: String = short
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    name = name.trim_matches('-').to_owned();
    name.truncate(64);
    if name.is_empty() {
        "server".into()
    } else {
        name
    }
}

/// Fields of one option, keyed uniquely.
#[derive(Default)]
pub(crate) struct Fields {
    pub(crate) list: Vec<FormField>,
}

impl Fields {
    fn has(&self, key: &str) -> bool {
        self.list.iter().any(|f| f.key == key)
    }

    /// Add `field`, renaming it if its key is taken; returns the key used.
    fn add(&mut self, mut field: FormField) -> String {
        let base = field.key.clone();
        let mut n = 1;
        while self.has(&field.key) {
            n += 1;
            field.key = format!("{base}_{n}");
        }
        let key = field.key.clone();
        self.list.push(field);
        key
    }

    /// The field `key` for a placeholder: an existing field, else one made from `declared`
    /// (a declared variable), else one inheriting `parent`'s secret and required flags.
    fn placeholder(&mut self, key: &str, declared: Option<&Input>, parent: &Input) {
        if self.has(key) {
            return;
        }
        let field = match declared {
            Some(input) => input_field(key, &humanize(key), input, FieldTarget::Value),
            None => {
                let mut field = FormField {
                    required: parent.is_required,
                    secret: parent.is_secret,
                    input: if parent.is_secret {
                        InputKind::Password
                    } else {
                        InputKind::Text
                    },
                    help: parent.description.clone(),
                    ..FormField::text(key, &humanize(key), FieldTarget::Value)
                };
                if key == "host" {
                    field.default = Some("127.0.0.1".into());
                }
                field
            }
        };
        self.list.push(field);
    }

    /// Fields for every placeholder of `template` used in `parent`'s value.
    fn placeholders_of(&mut self, template: &Template, parent: &Input) {
        let vars: Vec<String> = template.vars().map(str::to_owned).collect();
        for var in vars {
            self.placeholder(&var, parent.variables.get(&var), parent);
        }
    }
}

/// "config_path" → "Config path"; names that look like constants (`API_KEY`) stay.
fn humanize(key: &str) -> String {
    if key.chars().any(|c| c.is_ascii_uppercase()) {
        return key.to_owned();
    }
    let text = key.trim_start_matches('-').replace(['_', '-', '.'], " ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => key.to_owned(),
    }
}

fn input_kind(input: &Input) -> InputKind {
    // Choices for a secret are a publishing mistake (a list of providers, say): it stays secret.
    if !input.choices.is_empty() && !input.is_secret {
        return InputKind::Select;
    }
    match input.format.as_deref() {
        Some("number" | "integer" | "int" | "float" | "port") => InputKind::Number,
        Some("boolean" | "bool") => InputKind::Boolean,
        Some("filepath" | "file" | "path" | "directory" | "dirpath") => InputKind::FilePath,
        _ if input.is_secret => InputKind::Password,
        _ => InputKind::Text,
    }
}

fn input_field(key: &str, label: &str, input: &Input, target: FieldTarget) -> FormField {
    let mut input_kind = input_kind(input);
    if input.is_secret && matches!(input_kind, InputKind::Text | InputKind::FilePath) {
        input_kind = InputKind::Password;
    }
    // A plain field may be kept in the keyring (and is unless the user says otherwise) when its
    // name says it could hold a credential.
    let toggle = matches!(target, FieldTarget::Env | FieldTarget::Header)
        && input_kind == InputKind::Text
        && !input.is_secret
        && (looks_secret(key) || looks_secret(label));
    FormField {
        input: input_kind,
        required: input.is_required,
        secret: input.is_secret || toggle,
        secret_toggle: toggle,
        placeholder: input.placeholder.clone(),
        help: input.description.clone(),
        default: input.default.clone(),
        choices: if input_kind == InputKind::Select {
            input.choices.clone()
        } else {
            vec![]
        },
        ..FormField::text(key, label, target)
    }
}

/// The value plans (and fields) of environment variables or headers.
pub(crate) fn values_of(
    items: &[KeyValueInput],
    fields: &mut Fields,
    target: FieldTarget,
) -> Vec<ValuePlan> {
    items
        .iter()
        .map(|item| match &item.input.value {
            Some(value) => {
                let template = Template::parse(value);
                fields.placeholders_of(&template, &item.input);
                ValuePlan {
                    name: item.name.clone(),
                    value: template,
                }
            }
            None => {
                let key = fields.add(input_field(&item.name, &item.name, &item.input, target));
                ValuePlan {
                    name: item.name.clone(),
                    value: Template::var(&key),
                }
            }
        })
        .collect()
}

fn flag_name(name: &str) -> String {
    if name.starts_with('-') {
        name.to_owned()
    } else if name.chars().count() == 1 {
        format!("-{name}")
    } else {
        format!("--{name}")
    }
}

/// The argument plans (and fields) of `args`.
fn args_of(args: &[Argument], fields: &mut Fields, notes: &mut Vec<String>) -> Vec<ArgPlan> {
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let input = &arg.input;
        match &arg.kind {
            ArgumentKind::Positional { value_hint } => match &input.value {
                Some(value) => {
                    let template = Template::parse(value);
                    fields.placeholders_of(&template, input);
                    out.push(ArgPlan::Fixed(template));
                }
                None => {
                    let key = value_hint
                        .clone()
                        .unwrap_or_else(|| format!("arg{}", i + 1));
                    let mut field = input_field(&key, &humanize(&key), input, FieldTarget::Arg);
                    if arg.is_repeated {
                        field.input = InputKind::List;
                    }
                    let key = fields.add(field);
                    out.push(ArgPlan::Value {
                        field: key,
                        split: if arg.is_repeated {
                            Split::Lines
                        } else {
                            Split::One
                        },
                    });
                }
            },
            ArgumentKind::Named { name } => {
                if name.contains('=') || name.contains(' ') {
                    out.push(ArgPlan::Fixed(Template::literal(name)));
                    continue;
                }
                let flag = flag_name(name);
                let boolean = matches!(input.format.as_deref(), Some("boolean" | "bool"));
                match &input.value {
                    Some(value) if boolean => {
                        if value.eq_ignore_ascii_case("true") {
                            out.push(ArgPlan::Fixed(Template::literal(&flag)));
                        }
                    }
                    Some(value) => {
                        let template = Template::parse(value);
                        fields.placeholders_of(&template, input);
                        let first = template.vars().next().map(str::to_owned);
                        match first {
                            Some(first) => out.push(ArgPlan::Flag {
                                name: flag,
                                field: first,
                                value: Some(template),
                            }),
                            None => {
                                out.push(ArgPlan::Fixed(Template::literal(&flag)));
                                out.push(ArgPlan::Fixed(template));
                            }
                        }
                    }
                    None => {
                        let bare = input.default.is_none()
                            && input.choices.is_empty()
                            && input.format.is_none();
                        let key_base = match &arg.kind {
                            _ if name.trim_start_matches('-').is_empty() => format!("arg{}", i + 1),
                            _ => name.trim_start_matches('-').to_owned(),
                        };
                        if bare && input.description.is_none() && !input.is_secret {
                            // A flag with nothing to ask: always passed.
                            out.push(ArgPlan::Fixed(Template::literal(&flag)));
                        } else if boolean || (bare && !input.is_required && !input.is_secret) {
                            let mut field = input_field(&key_base, &flag, input, FieldTarget::Arg);
                            field.input = InputKind::Boolean;
                            field.required = false;
                            field.default = Some(
                                match input.default.as_deref() {
                                    Some(d) if d.eq_ignore_ascii_case("true") => "true",
                                    _ if input.is_required => "true",
                                    _ => "false",
                                }
                                .into(),
                            );
                            let key = fields.add(field);
                            out.push(ArgPlan::Switch {
                                name: flag,
                                field: key,
                            });
                        } else {
                            let mut field = input_field(&key_base, &flag, input, FieldTarget::Arg);
                            if arg.is_repeated {
                                field.input = InputKind::List;
                            }
                            if input.is_secret {
                                notes.push(format!(
                                    "{flag} is passed on the command line: other users of this \
                                     machine can see command lines"
                                ));
                            }
                            let key = fields.add(field);
                            out.push(ArgPlan::Flag {
                                name: flag,
                                field: key,
                                value: None,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

fn pinned_version(package: &Package, server_version: &str) -> Option<String> {
    let version = package.version.as_deref().unwrap_or(server_version);
    (!version.is_empty() && !version.eq_ignore_ascii_case("latest")).then(|| version.to_owned())
}

fn package_option(
    id: String,
    package: &Package,
    server_version: &str,
    pin_date: Option<&str>,
    published: Option<&str>,
    pinning: &Pinning<'_>,
) -> OptionPlan {
    let mut fields = Fields::default();
    let mut notes = Vec::new();
    let mut runtime_args = package.runtime_arguments.clone();
    let run = PackageRun {
        package,
        version: pinned_version(package, server_version),
        pin_date,
        published,
        pinning,
    };
    let Runner {
        program,
        lead,
        spec,
        pin,
        extra_env,
        bundle,
        mut blocked,
    } = runner(&run, &mut runtime_args, &mut notes);

    // Environment first (Docker passes each as `-e NAME`), then arguments.
    let env_items: Vec<KeyValueInput> = package
        .environment_variables
        .iter()
        .cloned()
        .chain(extra_env)
        .collect();
    let env = values_of(&env_items, &mut fields, FieldTarget::Env);
    let mut args: Vec<ArgPlan> = lead
        .iter()
        .map(|a| ArgPlan::Fixed(Template::literal(a)))
        .collect();
    args.extend(args_of(&runtime_args, &mut fields, &mut notes));
    let docker = matches!(program.as_str(), "docker" | "podman");
    if docker {
        for plan in &env {
            args.push(ArgPlan::Fixed(Template::literal("-e")));
            args.push(ArgPlan::Fixed(Template::literal(&plan.name)));
        }
    }
    if let Some(spec) = &spec {
        args.push(ArgPlan::Fixed(Template::literal(spec)));
    }
    let package_args = args_of(&package.package_arguments, &mut fields, &mut notes);
    if program == "dnx" {
        args.push(ArgPlan::Fixed(Template::literal("--yes")));
        if !package_args.is_empty() {
            args.push(ArgPlan::Fixed(Template::literal("--")));
        }
    }
    args.extend(package_args);

    let transport = transport_kind(&package.transport.kind);
    let launch = match transport {
        Some(TransportKind::Stdio) => Launch::Stdio {
            command: program.clone(),
            args,
            env,
        },
        Some(kind) => local_http_launch(
            package,
            kind,
            (program.clone(), args, env),
            &mut fields,
            &mut notes,
            &mut blocked,
        ),
        None => {
            blocked.get_or_insert_with(|| {
                format!(
                    "its package transport `{}` is not one Plugboard knows",
                    package.transport.kind
                )
            });
            Launch::Stdio {
                command: program.clone(),
                args,
                env,
            }
        }
    };
    let label = package_label(package, &program, transport);
    OptionPlan {
        id,
        label,
        launch,
        auth: AuthPlan::None,
        fields: fields.list,
        blocked,
        program: (!program.is_empty()).then_some(program),
        pin,
        notes,
        probe: None,
        network: None,
        bundle,
    }
}

/// The launch of a package that serves HTTP: started here and reached at its loopback URL
/// (`{variables}` and headers become fields), or blocked when the URL is missing or not this
/// machine (then its command is kept as a stdio launch, so that the form still shows what it
/// would run).
fn local_http_launch(
    package: &Package,
    kind: TransportKind,
    (command, args, env): (String, Vec<ArgPlan>, Vec<ValuePlan>),
    fields: &mut Fields,
    notes: &mut Vec<String>,
    blocked: &mut Option<String>,
) -> Launch {
    let headers = values_of(&package.transport.headers, fields, FieldTarget::Header);
    let Some(url) = package.transport.url.as_deref().map(Template::parse) else {
        blocked.get_or_insert_with(|| "its HTTP transport gives no URL to connect to".into());
        return Launch::Stdio { command, args, env };
    };
    for var in url.vars().map(str::to_owned).collect::<Vec<_>>() {
        fields.placeholder(
            &var,
            package.transport.variables.get(&var),
            &Input {
                is_required: true,
                ..Input::default()
            },
        );
    }
    if !local_url(&url) {
        blocked.get_or_insert_with(|| {
            format!(
                "its package serves HTTP at {url}, which is not this machine: Plugboard starts \
                 only packages that listen on localhost"
            )
        });
    } else {
        notes.push(format!(
            "Plugboard starts it, waits until {url} answers, and stops it when done"
        ));
    }
    Launch::LocalHttp {
        command,
        args,
        env,
        transport: kind,
        url,
        headers,
    }
}

/// Whether a URL template points at this machine (placeholders filled with loopback values).
fn local_url(url: &Template) -> bool {
    let sample = url
        .render(|v| {
            Some(if v == "host" {
                "127.0.0.1".into()
            } else {
                "1".into()
            })
        })
        .unwrap_or_default();
    url::Url::parse(&sample)
        .ok()
        .and_then(|u| u.host_str().map(is_loopback_host))
        .unwrap_or(false)
}

fn package_label(package: &Package, program: &str, transport: Option<TransportKind>) -> String {
    let what = match package.registry_type.as_str() {
        "npm" => "npm package",
        "pypi" => "PyPI package",
        "oci" | "docker" => "Docker image",
        "nuget" => "NuGet package",
        "mcpb" => "MCPB bundle",
        _ => "Package",
    };
    let id = &package.identifier;
    let how = match transport {
        Some(TransportKind::Stdio) | None if !program.is_empty() => format!(" ({program})"),
        Some(TransportKind::Stdio) | None => String::new(),
        Some(kind) => format!(", started locally ({})", kind.label()),
    };
    format!("{what} {id}{how}")
}

fn remote_option(id: String, remote: &Transport) -> OptionPlan {
    let mut fields = Fields::default();
    let mut blocked = None;
    let transport = match transport_kind(&remote.kind) {
        Some(TransportKind::Stdio) | None => {
            blocked = Some(format!(
                "its remote transport `{}` is not one Plugboard knows",
                remote.kind
            ));
            TransportKind::Shttp
        }
        Some(kind) => kind,
    };
    let url = match remote.url.as_deref() {
        Some(url) => Template::parse(url),
        None => {
            blocked.get_or_insert_with(|| "its remote gives no URL".into());
            Template::default()
        }
    };
    for var in url.vars().map(str::to_owned).collect::<Vec<_>>() {
        let declared = remote.variables.get(&var);
        fields.placeholder(
            &var,
            declared,
            &Input {
                is_required: true,
                ..Input::default()
            },
        );
    }
    let headers = values_of(&remote.headers, &mut fields, FieldTarget::Header);
    let host = remote
        .url
        .as_deref()
        .and_then(|u| url::Url::parse(&u.replace(['{', '}'], "")).ok())
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "its URL".into());
    OptionPlan {
        label: format!("Remote server at {host} ({})", transport.label()),
        id,
        launch: Launch::Remote {
            transport,
            url,
            headers,
        },
        auth: AuthPlan::None,
        fields: fields.list,
        blocked,
        program: None,
        pin: None,
        notes: vec![],
        probe: None,
        network: None,
        bundle: None,
    }
}
