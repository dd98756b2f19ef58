//! The one engine: a [`Blueprint`] (from any source) → the [`FormSpec`] of one option (the
//! default: the first that can run here) → with the user's values, a validated
//! [`PreparedServer`] (config + the secrets to store). Field values are checked by their kind
//! (number, boolean, choice, URL, header text); values go through the option's templates into
//! arguments, environment variables, headers and the URL; any value built from a secret field
//! is stored as a secret (a whole environment variable or header in the secret store, or a
//! `${secret:NAME}` reference inside an argument).

use std::collections::{BTreeMap, BTreeSet};

use super::blueprint::{
    ArgPlan, AuthPlan, Blueprint, FormSource, Launch, OptionPlan, Split, ValuePlan,
};
use super::spec::{
    FieldError, FieldTarget, FormErrors, FormField, FormInput, FormSpec, InputKind, OptionSummary,
    PreparedServer, Unavailable,
};
use super::template::{Part, Template};
use crate::catalog::{CatalogOAuth, Registration};
use crate::config::{
    Auth, BundleOrigin, ConfigValue, DependencyPin, LocalLaunch, OAuthSettings, RegistryOrigin,
    SecretRef, ServerConfig, Source, TransportKind, secret_arg, validate_remote_url,
};
use crate::runtimes::{RuntimeCheck, availability, runtime_label};
use crate::secrets::Sensitive;
use plugboard_sandbox::Access;

/// The summary of each option: its transport and runtime, whether Plugboard can install it and
/// whether it can run here (and if not, why and what fixes it).
pub fn summaries(blueprint: &Blueprint, runtimes: &dyn RuntimeCheck) -> Vec<OptionSummary> {
    blueprint
        .options
        .iter()
        .map(|o| OptionSummary {
            id: o.id.clone(),
            label: o.label.clone(),
            transport: o.launch.transport(),
            runtime: o
                .program
                .as_deref()
                .and_then(runtime_label)
                .map(str::to_owned),
            installable: o.blocked.is_none(),
            bundle: o.bundle.is_some(),
            unavailable: match &o.blocked {
                Some(why) => Some(Unavailable {
                    code: "unsupported".into(),
                    reason: why.clone(),
                    fix: String::new(),
                }),
                None => o.program.as_deref().and_then(|p| availability(p, runtimes)),
            },
        })
        .collect()
}

/// The option installed when the user does not choose: the first that can run here, else the
/// first Plugboard can install (its form says what is missing), else `None`.
pub fn default_option<'a>(
    blueprint: &'a Blueprint,
    options: &[OptionSummary],
) -> Option<&'a OptionPlan> {
    // A package that runs as it is goes before a bundle that must be downloaded first.
    let pick = options
        .iter()
        .position(|o| o.runs_here() && !o.bundle)
        .or_else(|| options.iter().position(OptionSummary::runs_here))
        .or_else(|| options.iter().position(|o| o.installable))?;
    blueprint.options.get(pick)
}

/// Why nothing of `blueprint` can be installed, when nothing can.
pub fn cannot_install(blueprint: &Blueprint) -> Option<String> {
    if blueprint.options.is_empty() {
        return Some("the registry entry has neither packages nor remotes".into());
    }
    if blueprint.options.iter().all(|o| o.blocked.is_some()) {
        let reasons: BTreeSet<&str> = blueprint
            .options
            .iter()
            .filter_map(|o| o.blocked.as_deref())
            .collect();
        return Some(reasons.into_iter().collect::<Vec<_>>().join("; "));
    }
    None
}

/// The form of option `option_id` (the default option when `None`).
pub fn form(
    blueprint: &Blueprint,
    option_id: Option<&str>,
    runtimes: &dyn RuntimeCheck,
) -> Result<FormSpec, FormErrors> {
    let options = summaries(blueprint, runtimes);
    let option = match option_id {
        Some(id) => blueprint.option(id).ok_or_else(|| {
            let known: Vec<_> = blueprint.options.iter().map(|o| o.id.as_str()).collect();
            FormErrors::one(
                "option",
                format!(
                    "`{}` has no option `{id}`; choose one of: {}",
                    blueprint.id(),
                    known.join(", ")
                ),
            )
        })?,
        None => default_option(blueprint, &options).ok_or_else(|| {
            FormErrors::one(
                "option",
                format!(
                    "cannot install `{}`: {}",
                    blueprint.id(),
                    cannot_install(blueprint).unwrap_or_default()
                ),
            )
        })?,
    };
    let curated = matches!(blueprint.source, FormSource::Curated { .. });
    let url_shown = |url: &Template| shown_url(url, &option.fields);
    let (command, url) = match &option.launch {
        Launch::Stdio { command, args, .. } => (Some(command_line(command, args, curated)), None),
        Launch::Remote { url, .. } => (None, Some(url_shown(url))),
        Launch::LocalHttp {
            command, args, url, ..
        } => (
            Some(command_line(command, args, curated)),
            Some(url_shown(url)),
        ),
    };
    Ok(FormSpec {
        entry_id: blueprint.id().to_owned(),
        source: blueprint.source.clone(),
        option_id: option.id.clone(),
        option_label: option.label.clone(),
        transport: option.launch.transport(),
        command,
        url,
        oauth: matches!(option.auth, AuthPlan::OAuth(_)),
        default_name: blueprint.default_name.clone(),
        fields: option.fields.clone(),
        options,
        pin: option.pin.clone(),
        notes: option.notes.clone(),
        warnings: super::warnings::isolation_warnings(option),
        env: super::warnings::environment(option),
    })
}

/// The URL as shown: placeholders filled with their fields' defaults, the others as written.
fn shown_url(url: &Template, fields: &[FormField]) -> String {
    let mut out = String::new();
    for part in url.parts() {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::Var(v) => match fields
                .iter()
                .find(|f| &f.key == v)
                .and_then(|f| f.default.as_deref())
            {
                Some(default) => out.push_str(default),
                None => {
                    out.push('{');
                    out.push_str(v);
                    out.push('}');
                }
            },
        }
    }
    out
}

/// The command line as shown: fixed arguments as written; for registry options also the
/// arguments that come from fields (`--port {port}`, `[--verbose]`).
fn command_line(command: &str, args: &[ArgPlan], curated: bool) -> String {
    let mut words = vec![command.to_owned()];
    for arg in args {
        match arg {
            ArgPlan::Fixed(t) => words.push(t.to_string()),
            _ if curated => {}
            ArgPlan::Value { field, .. } => words.push(format!("{{{field}}}")),
            ArgPlan::Flag { name, field, value } => {
                words.push(name.clone());
                words.push(
                    value
                        .as_ref()
                        .map_or_else(|| format!("{{{field}}}"), Template::to_string),
                );
            }
            ArgPlan::Switch { name, .. } => words.push(format!("[{name}]")),
        }
    }
    words.join(" ")
}

/// A field's effective value, and whether it is kept as a secret.
struct Value {
    text: String,
    secret: bool,
    /// A list's values joined as the field says, for use inside a longer value.
    joined: Option<String>,
}

impl Value {
    /// The text placed inside a template.
    fn inline(&self) -> &str {
        self.joined.as_deref().unwrap_or(&self.text)
    }
}

/// Check a filled form and turn it into a server. `name` is the server name (already checked
/// by the caller against the store); the secrets get a fresh namespace.
pub fn build(
    blueprint: &Blueprint,
    spec: &FormSpec,
    input: &FormInput,
    name: &str,
) -> Result<PreparedServer, FormErrors> {
    let option = blueprint.option(&spec.option_id).ok_or_else(|| {
        FormErrors::one(
            "option",
            format!("`{}` has no option `{}`", blueprint.id(), spec.option_id),
        )
    })?;
    if let Some(why) = &option.blocked {
        return Err(FormErrors::one(
            "option",
            format!("cannot install `{}` this way: {why}", blueprint.id()),
        ));
    }
    if let Some(bundle) = &option.bundle {
        return Err(FormErrors::one(
            "option",
            format!(
                "option `{}` of `{}` is the MCPB bundle {}: fetch it first, its manifest gives the form",
                option.id,
                blueprint.id(),
                bundle.url
            ),
        ));
    }
    let mut errors = Vec::new();
    for key in input.values.keys() {
        if !option.fields.iter().any(|f| &f.key == key) {
            let known: Vec<_> = option.fields.iter().map(|f| f.key.as_str()).collect();
            errors.push(FieldError {
                field: key.clone(),
                message: if known.is_empty() {
                    "this option has no fields".into()
                } else {
                    format!("unknown field; this option has: {}", known.join(", "))
                },
            });
        }
    }
    let values = field_values(&option.fields, input, &mut errors);
    let mut secrets: BTreeMap<String, Sensitive<String>> = BTreeMap::new();
    let mut config = match &option.launch {
        Launch::Stdio { command, args, env } => {
            let mut config =
                ServerConfig::stdio(command.clone(), render_args(args, &values, &mut secrets));
            config.env = render_values(env, &values, &mut secrets, &mut errors, false);
            config
        }
        Launch::Remote {
            transport,
            url,
            headers,
        } => {
            let mut config = ServerConfig::remote(
                *transport,
                render_url(url, &values, &mut secrets, &mut errors),
            );
            config.headers = render_values(headers, &values, &mut secrets, &mut errors, true);
            config
        }
        Launch::LocalHttp {
            command,
            args,
            env,
            transport,
            url,
            headers,
        } => {
            let mut config = ServerConfig::remote(
                *transport,
                render_url(url, &values, &mut secrets, &mut errors),
            );
            config.headers = render_values(headers, &values, &mut secrets, &mut errors, true);
            config.launch = Some(LocalLaunch {
                command: command.clone(),
                args: render_args(args, &values, &mut secrets),
                env: render_values(env, &values, &mut secrets, &mut errors, false),
                cwd: None,
            });
            config
        }
    };
    match &option.auth {
        AuthPlan::None => {}
        AuthPlan::ApiKey { header, field } => {
            if let Some(v) = values.get(field.as_str()) {
                secrets.insert(field.clone(), Sensitive::new(v.text.clone()));
                config.auth = Auth::ApiKey {
                    header: header.clone(),
                    key: SecretRef::new(field),
                };
            }
        }
        AuthPlan::Bearer { field } => {
            if let Some(v) = values.get(field.as_str()) {
                secrets.insert(field.clone(), Sensitive::new(v.text.clone()));
                config.auth = Auth::Bearer {
                    token: SecretRef::new(field),
                };
            }
        }
        AuthPlan::OAuth(oauth) => {
            let client_id = option
                .fields
                .iter()
                .find(|f| f.target == FieldTarget::OauthClientId)
                .and_then(|f| values.get(f.key.as_str()))
                .map(|v| v.text.clone());
            let client_secret = option
                .fields
                .iter()
                .find(|f| f.target == FieldTarget::OauthClientSecret)
                .and_then(|f| values.get(f.key.as_str()).map(|v| (f, v)))
                .map(|(f, v)| {
                    secrets.insert(f.key.clone(), Sensitive::new(v.text.clone()));
                    SecretRef::new(&f.key)
                });
            config.auth = Auth::Oauth2(oauth_settings(oauth, client_id, client_secret));
        }
    }
    if !errors.is_empty() {
        return Err(FormErrors { errors });
    }
    config.source = Some(source_of(blueprint, option));
    config.secret_namespace = Some(new_secret_namespace());
    config.sandbox = config.new_sandbox();
    if let Some(sandbox) = config.sandbox.as_mut() {
        let command = config
            .command
            .as_deref()
            .or(config.launch.as_ref().map(|l| l.command.as_str()))
            .unwrap_or_default();
        sandbox.declare(
            option.network.as_ref(),
            command,
            read_only_paths(option, &values),
        );
    }
    if let Err(detail) = config.validate() {
        return Err(FormErrors::one("option", detail));
    }
    Ok(PreparedServer {
        name: name.to_string(),
        config,
        secrets,
    })
}

fn source_of(blueprint: &Blueprint, option: &OptionPlan) -> Source {
    match &blueprint.source {
        FormSource::Curated { entry_id } => Source {
            catalog: entry_id.clone(),
            option: option.id.clone(),
            ..Source::default()
        },
        FormSource::Bundle {
            name,
            version,
            sha256,
            dir,
            file,
            registry,
        } => Source {
            option: option.id.clone(),
            registry: registry.as_ref().map(|r| RegistryOrigin {
                url: r.registry.clone(),
                name: r.name.clone(),
                version: r.version.clone(),
                published_at: r.published_at.clone(),
                pinned: None,
            }),
            bundle: Some(BundleOrigin {
                name: name.clone(),
                version: version.clone(),
                sha256: sha256.clone(),
                dir: dir.clone(),
                file: file.clone(),
            }),
            ..Source::default()
        },
        FormSource::Registry {
            registry,
            name,
            version,
            published_at,
        } => Source {
            catalog: String::new(),
            option: option.id.clone(),
            registry: Some(RegistryOrigin {
                url: registry.clone(),
                name: name.clone(),
                version: version.clone(),
                published_at: published_at.clone(),
                pinned: option.pin.as_ref().map(|p| DependencyPin {
                    tool: p.tool.clone(),
                    flag: p.flag.clone(),
                    date: p.date.clone(),
                }),
            }),
            ..Source::default()
        },
    }
}

/// Each field's value (entered, else its default), checked by its kind. Fields left empty are
/// absent; required ones missing are errors.
fn field_values<'a>(
    fields: &'a [FormField],
    input: &FormInput,
    errors: &mut Vec<FieldError>,
) -> BTreeMap<&'a str, Value> {
    let mut values = BTreeMap::new();
    for f in fields {
        let raw = input
            .get(&f.key)
            .or(f.default.as_deref().filter(|d| !d.trim().is_empty()));
        let Some(raw) = raw else {
            if f.required {
                errors.push(FieldError {
                    field: f.key.clone(),
                    message: format!("{} is required", f.label),
                });
            }
            continue;
        };
        let mut error = |message: String| {
            errors.push(FieldError {
                field: f.key.clone(),
                message,
            })
        };
        let text = match f.input {
            InputKind::Number => match raw.trim().parse::<f64>() {
                Ok(n) if f.min.is_some_and(|min| n < min) => {
                    error(format!(
                        "{} must be at least {}",
                        f.label,
                        f.min.unwrap_or_default()
                    ));
                    continue;
                }
                Ok(n) if f.max.is_some_and(|max| n > max) => {
                    error(format!(
                        "{} must be at most {}",
                        f.label,
                        f.max.unwrap_or_default()
                    ));
                    continue;
                }
                Ok(n) if n.is_finite() => raw.trim().to_owned(),
                _ => {
                    error(format!("{} must be a number", f.label));
                    continue;
                }
            },
            InputKind::Boolean => match raw.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => "true".to_owned(),
                "false" | "no" | "off" | "0" => "false".to_owned(),
                _ => {
                    error(format!("{} must be true or false", f.label));
                    continue;
                }
            },
            InputKind::Select if !f.choices.is_empty() => {
                match f.choices.iter().find(|c| c.as_str() == raw.trim()) {
                    Some(choice) => choice.clone(),
                    None => {
                        error(format!(
                            "{} must be one of: {}",
                            f.label,
                            f.choices.join(", ")
                        ));
                        continue;
                    }
                }
            }
            InputKind::Url if f.target == FieldTarget::Url => match validate_remote_url(raw) {
                Ok(_) => raw.to_owned(),
                Err(message) => {
                    error(message);
                    continue;
                }
            },
            _ if f.picker.is_some() => match absolute_paths(raw, f.input == InputKind::List) {
                Ok(paths) => paths,
                Err(relative) => {
                    error(format!(
                        "{}: `{relative}` is not an absolute path; give the whole path, \
                         starting with / or ~/",
                        f.label
                    ));
                    continue;
                }
            },
            _ => raw.to_owned(),
        };
        if f.input != InputKind::List && text.contains(['\r', '\n']) {
            error(format!("{} cannot contain line breaks", f.label));
            continue;
        }
        let secret = if f.secret_toggle {
            input
                .store_as_secret
                .get(&f.key)
                .copied()
                .unwrap_or(f.secret)
        } else {
            f.secret
        };
        let joined = match (&f.join, f.input) {
            (Some(sep), InputKind::List) => Some(lines(&text).collect::<Vec<_>>().join(sep)),
            _ => None,
        };
        values.insert(
            f.key.as_str(),
            Value {
                text,
                secret,
                joined,
            },
        );
    }
    values
}

/// Render `template` with the fields' values; `None` when it uses an optional field left
/// empty. Secret values are written as `${secret:KEY}` (and recorded in `secrets`) when
/// `secret_refs` is set, else inline (the caller stores the whole value as a secret).
fn render(
    template: &Template,
    values: &BTreeMap<&str, Value>,
    secrets: Option<&mut BTreeMap<String, Sensitive<String>>>,
) -> Option<(String, bool)> {
    let mut out = String::new();
    let mut secret = false;
    let mut secrets = secrets;
    for part in template.parts() {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::Var(v) => match values.get(v.as_str()) {
                Some(value) if value.secret => {
                    secret = true;
                    match secrets.as_deref_mut() {
                        Some(store) => {
                            store.insert(v.clone(), Sensitive::new(value.inline().to_owned()));
                            out.push_str(&secret_arg(v));
                        }
                        None => out.push_str(value.inline()),
                    }
                }
                Some(value) => out.push_str(value.inline()),
                None => return None,
            },
        }
    }
    Some((out, secret))
}

/// The paths entered in fields the option declares read-only.
fn read_only_paths(option: &OptionPlan, values: &BTreeMap<&str, Value>) -> Vec<String> {
    option
        .fields
        .iter()
        .filter(|f| f.access == Some(Access::Read))
        .filter_map(|f| values.get(f.key.as_str()))
        .flat_map(|value| lines(&value.text).map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// A path field's value (one path, or one per line for a list) with `~` expanded to the home,
/// or the first path that is not absolute: the server's working folder is not the user's, so
/// a relative path would name some other folder.
fn absolute_paths(raw: &str, list: bool) -> Result<String, String> {
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let one = |path: &str| -> Result<String, String> {
        let expanded = match (path.strip_prefix('~'), &home) {
            (Some(""), Some(home)) => home.clone(),
            (Some(rest), Some(home)) if rest.starts_with('/') => format!("{home}{rest}"),
            _ => path.to_owned(),
        };
        if std::path::Path::new(&expanded).is_absolute() {
            Ok(expanded)
        } else {
            Err(path.to_owned())
        }
    };
    if list {
        Ok(lines(raw)
            .map(one)
            .collect::<Result<Vec<_>, _>>()?
            .join("\n"))
    } else {
        one(raw.trim())
    }
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

fn render_args(
    args: &[ArgPlan],
    values: &BTreeMap<&str, Value>,
    secrets: &mut BTreeMap<String, Sensitive<String>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for arg in args {
        match arg {
            ArgPlan::Fixed(t) => {
                if let Some((text, _)) = render(t, values, Some(secrets)) {
                    out.push(text);
                }
            }
            ArgPlan::Value { field, split } => {
                let Some(value) = values.get(field.as_str()) else {
                    continue;
                };
                let pieces: Vec<&str> = match split {
                    Split::One => vec![value.text.as_str()],
                    Split::Words => value.text.split_whitespace().collect(),
                    Split::Lines => lines(&value.text).collect(),
                };
                for piece in pieces {
                    if value.secret {
                        secrets.insert(field.clone(), Sensitive::new(piece.to_owned()));
                        out.push(secret_arg(field));
                    } else {
                        out.push(piece.to_owned());
                    }
                }
            }
            ArgPlan::Flag { name, field, value } => {
                let Some(v) = values.get(field.as_str()) else {
                    continue;
                };
                let repeated: Vec<&str> = lines(&v.text).collect();
                let template = value.clone().unwrap_or_else(|| Template::var(field));
                for piece in repeated {
                    let one = BTreeMap::from([(
                        field.as_str(),
                        Value {
                            text: piece.to_owned(),
                            secret: v.secret,
                            joined: None,
                        },
                    )]);
                    let merged = |k: &str| one.get(k).or_else(|| values.get(k));
                    let mut text = String::new();
                    let mut ok = true;
                    for part in template.parts() {
                        match part {
                            Part::Text(t) => text.push_str(t),
                            Part::Var(var) => match merged(var) {
                                Some(val) if val.secret => {
                                    secrets.insert(var.clone(), Sensitive::new(val.text.clone()));
                                    text.push_str(&secret_arg(var));
                                }
                                Some(val) => text.push_str(&val.text),
                                None => ok = false,
                            },
                        }
                    }
                    if ok {
                        out.push(name.clone());
                        out.push(text);
                    }
                }
            }
            ArgPlan::Switch { name, field } => {
                if values.get(field.as_str()).is_some_and(|v| v.text == "true") {
                    out.push(name.clone());
                }
            }
        }
    }
    out
}

fn render_values(
    plans: &[ValuePlan],
    values: &BTreeMap<&str, Value>,
    secrets: &mut BTreeMap<String, Sensitive<String>>,
    errors: &mut Vec<FieldError>,
    header: bool,
) -> BTreeMap<String, ConfigValue> {
    let mut out = BTreeMap::new();
    for plan in plans {
        let Some((text, secret)) = render(&plan.value, values, None) else {
            continue;
        };
        if header && text.contains(['\r', '\n']) {
            errors.push(FieldError {
                field: plan.name.clone(),
                message: "a header value cannot contain line breaks".into(),
            });
            continue;
        }
        let value = if secret {
            secrets.insert(plan.name.clone(), Sensitive::new(text));
            ConfigValue::Secret(SecretRef::new(&plan.name))
        } else {
            ConfigValue::Plain(text)
        };
        out.insert(plan.name.clone(), value);
    }
    out
}

/// The URL with its fields' values. A secret value stays out of it: the URL keeps
/// `${secret:FIELD}` (substituted when the server is reached) and the value goes to `secrets`.
/// A secret cannot name the host: where a server is must be plain to see.
fn render_url(
    url: &Template,
    values: &BTreeMap<&str, Value>,
    secrets: &mut BTreeMap<String, Sensitive<String>>,
    errors: &mut Vec<FieldError>,
) -> String {
    match render(url, values, Some(secrets)) {
        Some((text, _)) => {
            if let Err(message) = validate_remote_url(&text) {
                errors.push(FieldError {
                    field: "url".into(),
                    message,
                });
            }
            text
        }
        None => {
            let missing: Vec<&str> = url.vars().filter(|v| !values.contains_key(v)).collect();
            errors.push(FieldError {
                field: missing.first().copied().unwrap_or("url").into(),
                message: format!("the URL needs {}", missing.join(", ")),
            });
            String::new()
        }
    }
}

pub(crate) fn oauth_settings(
    oauth: &CatalogOAuth,
    client_id: Option<String>,
    client_secret: Option<SecretRef>,
) -> OAuthSettings {
    OAuthSettings {
        client_id,
        client_secret,
        scopes: oauth.scopes.clone(),
        client_auth: oauth.client_auth,
        authorization_url: oauth.authorization_url.clone(),
        token_url: oauth.token_url.clone(),
        callback_port: None,
        ..OAuthSettings::default()
    }
}

/// The two fields of an OAuth app the user registered with the provider.
pub(crate) fn oauth_client_fields(oauth: &CatalogOAuth) -> Vec<FormField> {
    if oauth.registration != Registration::PreRegistered {
        return vec![];
    }
    vec![
        FormField {
            required: true,
            help: Some(
                "This provider does not let apps register themselves: create an OAuth app in its \
                 developer settings with a loopback redirect URI and paste its client ID."
                    .into(),
            ),
            ..FormField::text("client_id", "OAuth client ID", FieldTarget::OauthClientId)
        },
        FormField {
            input: InputKind::Password,
            secret: true,
            help: Some("Only if the OAuth app was given a secret.".into()),
            ..FormField::text(
                "client_secret",
                "OAuth client secret",
                FieldTarget::OauthClientSecret,
            )
        },
    ]
}

/// A fresh, random secret namespace for a new server.
pub fn new_secret_namespace() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// The transport kind of a `server.json` transport type.
pub(crate) fn transport_kind(kind: &str) -> Option<TransportKind> {
    match kind {
        "streamable-http" | "streamable_http" | "streamablehttp" | "http" => {
            Some(TransportKind::Shttp)
        }
        "sse" => Some(TransportKind::Sse),
        "stdio" | "" => Some(TransportKind::Stdio),
        _ => None,
    }
}
