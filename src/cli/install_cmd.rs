//! `plugboard install` (a catalog entry through its form) and `plugboard add` (a custom server).

use crate::credentials::BEARER_TOKEN;

use serde::Serialize;

use super::CliError;
use super::args::{AddArgs, GrantArg, InstallArgs, RemoteTransport};
use super::catalog_cmd::load_market;
use super::input::{SecretInput, key_value, prompt_line};
use super::output::print_json;
use super::test_cmd::{prepared_test, print_result, progress_printer, runtime};
use crate::bundles::{OpenError, open_file, open_package};
use crate::catalog::Catalog;
use crate::clock::now_ms;
use crate::config::{Auth, TransportKind, validate_name};
use crate::custom::{CustomAuth, CustomGrant, CustomServer, KeyValue, build as build_custom};
use crate::form::engine::form;
use crate::form::server_json::{Pinning, blueprint};
use crate::form::{FormField, FormInput, InputKind, PreparedServer, curated};
use crate::install::{Choices, PrepareError, prepare, save};
use crate::manage::{ServerView, Servers, looks_secret, refuse_secrets_on_argv};
use crate::market::Found;
use crate::policy::Subject;
use crate::probe::TestResult;
use crate::registry::sources::pinning_enabled;
use crate::runtimes;
use crate::secrets::secret_env_var;

#[derive(Serialize)]
struct Installed {
    server: ServerView,
    /// The pre-save test, unless `--no-test`.
    test: Option<TestResult>,
}

/// `NAME@VERSION` of a registry server (a name has a `/`, and no `@` after it), else the id.
fn split_version(id: &str) -> (&str, Option<&str>) {
    match id.split_once('/') {
        Some((_, rest)) if rest.contains('@') => {
            let at = id.rfind('@').expect("an @");
            (&id[..at], Some(&id[at + 1..]).filter(|v| !v.is_empty()))
        }
        _ => (id, None),
    }
}

/// `./x.mcpb`, `/path/x.mcpb`, or any existing file: a bundle to install.
fn bundle_path(id: &str) -> Option<&std::path::Path> {
    let path = std::path::Path::new(id);
    let looks = id.to_ascii_lowercase().ends_with(".mcpb")
        || id.starts_with("./")
        || id.starts_with('/')
        || id.starts_with("../");
    (looks || (!id.contains('/') && path.is_file())).then_some(path)
}

impl From<OpenError> for CliError {
    fn from(err: OpenError) -> Self {
        match err {
            OpenError::Policy(refusal) => refusal.into(),
            OpenError::File { .. } => CliError::usage(format!("{err}; nothing was installed")),
            other => {
                let fix = other.fix().map(|f| format!(" ({f})")).unwrap_or_default();
                CliError::failed(format!("{other}{fix}"))
            }
        }
    }
}

pub fn install(servers: &Servers, args: InstallArgs) -> Result<(), CliError> {
    let policy = crate::policy::current();
    policy.usable()?;
    let (market, _) = load_market()?;
    let dir = servers.config().dir().to_owned();
    let mut opened = None;
    let mut found = None;
    let (mut bp, what) = match bundle_path(&args.id) {
        Some(path) => {
            let bundle = open_file(&dir, path, &policy, market.listing())?;
            let m = &bundle.unpacked.manifest;
            let what = format!("the bundle `{}` {}", m.name, m.version);
            let bp = bundle.blueprint.clone();
            opened = Some(bundle);
            (bp, what)
        }
        None => {
            let (id, version) = split_version(&args.id);
            let hit = runtime()?.block_on(market.find(id, version))?;
            let pin = !args.no_pin && pinning_enabled(servers.config().dir());
            let npm_check = |identifier: &str, version: &str, date: &str| {
                crate::deps::npm_before_allowed(identifier, version, date)
            };
            let out = match &hit {
                Found::Curated(entry) => {
                    policy.check(
                        Subject::Curated {
                            entry_id: &entry.id,
                            registry_names: &entry.registry_names,
                        },
                        market.listing(),
                    )?;
                    (curated::blueprint(entry), format!("`{}`", entry.id))
                }
                Found::Registry { row, registry } => {
                    policy.check(
                        Subject::Registry {
                            registry,
                            name: &row.server.name,
                        },
                        market.listing(),
                    )?;
                    if row.status() == crate::registry::Status::Deprecated {
                        eprintln!(
                            "WARNING: its registry marks `{}` {} deprecated: {}",
                            row.server.name,
                            row.server.version,
                            row.meta
                                .official
                                .status_message
                                .as_deref()
                                .unwrap_or("no reason given")
                        );
                    }
                    (
                        blueprint(
                            row,
                            registry,
                            &Pinning {
                                enabled: pin,
                                npm: Some(&npm_check),
                            },
                        ),
                        format!("`{}` {}", row.server.name, row.server.version),
                    )
                }
            };
            found = Some(hit);
            out
        }
    };
    let mut spec = form(&bp, args.option.as_deref(), runtimes::system())?;
    // A registry MCPB package: fetch the bundle; its manifest gives the form.
    if let (Some(url), Some(Found::Registry { row, registry })) = (
        bp.option(&spec.option_id)
            .and_then(|o| o.bundle.as_ref())
            .map(|b| b.url.clone()),
        &found,
    ) {
        if !args.json.json {
            eprintln!("Downloading the bundle {url}");
        }
        let bundle = runtime()?.block_on(open_package(&dir, row, registry, &url))?;
        bp = bundle.blueprint.clone();
        spec = form(&bp, None, runtimes::system())?;
        opened = Some(bundle);
    }
    if !args.json.json {
        for note in &spec.notes {
            eprintln!("note: {note}");
        }
    }
    // Even with --json: a weakened isolation is said where a person reads it.
    for warning in &spec.warnings {
        eprintln!("WARNING: {warning}");
    }
    if let Some(why) = spec.option().and_then(|o| o.unavailable.clone()) {
        eprintln!(
            "warning: option `{}` of {what} cannot run here: {} ({})",
            spec.option_id, why.reason, why.fix
        );
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| spec.default_name.clone());
    validate_name(&name).map_err(CliError::usage)?;
    if servers.config().load()?.contains(&name) {
        return Err(CliError::usage(format!(
            "a server named `{name}` already exists; pass --name to install another copy"
        )));
    }

    let mut input = FormInput::default();
    let field_list = || {
        spec.fields
            .iter()
            .map(|f| f.key.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let is_secret = |f: &FormField| f.secret || f.input == InputKind::Password;
    for raw in &args.set {
        let (key, value) = key_value(raw, "--set")?;
        let field = spec.fields.iter().find(|f| f.key == key).ok_or_else(|| {
            CliError::usage(format!(
                "--set {key}: {what} option `{}` has no field `{key}` (fields: {})",
                spec.option_id,
                if spec.fields.is_empty() {
                    "none".into()
                } else {
                    field_list()
                }
            ))
        })?;
        if is_secret(field) {
            return Err(CliError::usage(format!(
                "`{key}` is a secret field and is never taken from the command line: pipe it with \
                 --secret-stdin {key}, set {}, or enter it at the prompt",
                secret_env_var(key)
            )));
        }
        if field.input == InputKind::List {
            input.add_line(key, value);
        } else {
            input.set(key, value);
        }
    }
    for key in &args.plain {
        match spec.fields.iter().find(|f| &f.key == key) {
            Some(f) if f.secret_toggle => {
                input.store_as_secret.insert(key.clone(), false);
            }
            _ => {
                return Err(CliError::usage(format!(
                    "--plain {key}: no env or header field `{key}` that can be stored as plain config"
                )));
            }
        }
    }
    let mut secrets = SecretInput::new(args.secret_stdin.clone());
    for field in &spec.fields {
        if is_secret(field) {
            if let Some(value) = secrets.read(&field.key, &field.label)? {
                input.values.insert(field.key.clone(), value);
            }
        } else if field.required
            && !input.values.contains_key(&field.key)
            && field.default.is_none()
            && let Some(value) = prompt_line(&field.label)?
        {
            input.set(&field.key, value);
        }
    }
    secrets.finish()?;
    let choices = Choices {
        allow_secret_args: args.allow_secret_args,
        no_sandbox: args.no_sandbox,
        bundle_dir: opened.as_ref().map(|bundle| bundle.dir()),
    };
    let prepared = prepare(&bp, &spec, &input, &name, &choices).map_err(|err| {
        let errors = match err {
            PrepareError::Form(errors) => errors,
            PrepareError::Refused(refusal) => return refusal.into(),
            other => return CliError::failed(other.to_string()),
        };
        let hint = errors
            .errors
            .iter()
            .filter_map(|e| spec.fields.iter().find(|f| f.key == e.field))
            .map(|f| {
                if is_secret(f) {
                    format!("--secret-stdin {} (or {})", f.key, secret_env_var(&f.key))
                } else {
                    format!("--set {}=…", f.key)
                }
            })
            .collect::<Vec<_>>();
        let mut message = errors.to_string();
        if !hint.is_empty() {
            message.push_str(&format!("; pass {}", hint.join(", ")));
        }
        CliError::usage(message)
    })?;
    // A failed test or save drops `opened`, which removes the unpacked bundle.
    test_then_save(
        servers,
        market.catalog(),
        &prepared,
        args.no_test,
        args.json.json,
    )?;
    if let Some(bundle) = opened {
        bundle.keep();
    }
    Ok(())
}

/// Test the prepared server (unless told not to) and save it only if the test passed. Nothing is
/// written when it fails: no config entry, no secret.
fn test_then_save(
    servers: &Servers,
    catalog: &Catalog,
    prepared: &PreparedServer,
    no_test: bool,
    json: bool,
) -> Result<(), CliError> {
    refuse_secrets_on_argv(&prepared.name, &prepared.config)?;
    // Fail fast on a missing keyring before a possibly long test.
    if !prepared.secrets.is_empty() {
        servers.secrets()?;
    }
    let mut test = None;
    // A sign-in comes after saving; tokens without a user are got for the test.
    let needs_sign_in = matches!(&prepared.config.auth, Auth::Oauth2(o) if o.grant.is_sign_in());
    if !no_test && !needs_sign_in {
        if !json {
            eprintln!("Testing `{}` before saving it", prepared.name);
        }
        let started = now_ms();
        let result = runtime()?.block_on(prepared_test(
            prepared,
            catalog,
            None,
            progress_printer(!json),
        ));
        if !result.ok {
            if json {
                print_json(&result)?;
            } else {
                print_result(&prepared.name, &result);
            }
            return Err(CliError::failed(format!(
                "nothing was saved; fix the problem and try again, or pass --no-test to save `{}` untested",
                prepared.name
            )));
        }
        test = Some((started, result));
    }
    save(
        servers,
        prepared,
        test.as_ref().map(|(started, result)| (*started, result)),
    )?;
    let view = servers.view(&prepared.name)?;
    if json {
        return print_json(&Installed {
            server: view,
            test: test.map(|(_, r)| r),
        });
    }
    if let Some((_, result)) = &test {
        print_result(&prepared.name, result);
    }
    let target = prepared
        .config
        .url
        .clone()
        .or_else(|| prepared.config.command.clone())
        .unwrap_or_default();
    println!(
        "Installed `{}` ({}, {target}).",
        prepared.name,
        prepared.config.transport.label()
    );
    if let Some(origin) = prepared
        .config
        .source
        .as_ref()
        .and_then(|s| s.registry.as_ref())
    {
        println!(
            "From the registry: {} {} ({}).",
            origin.name, origin.version, origin.url
        );
        if let Some(pin) = &origin.pinned {
            println!(
                "Its dependencies are resolved as of {} ({} {}).",
                pin.date, pin.tool, pin.flag
            )
        }
    }
    if !prepared.secrets.is_empty() {
        let names: Vec<_> = prepared.secrets.keys().map(String::as_str).collect();
        let store = servers
            .secrets()
            .map(|s| s.describe())
            .unwrap_or_else(|_| "the secret store".into());
        println!("Secrets kept in {store}: {}.", names.join(", "));
    }
    if needs_sign_in {
        println!(
            "`{}` signs in with OAuth: run `plugboard auth {}` to connect (it ends with a test).",
            prepared.name, prepared.name
        );
    }
    Ok(())
}

pub fn add(servers: &Servers, args: AddArgs) -> Result<(), CliError> {
    validate_name(&args.name).map_err(CliError::usage)?;
    let policy = crate::policy::current();
    if policy.in_force() {
        let (market, _) = load_market()?;
        policy.check(Subject::Custom { name: &args.name }, market.listing())?;
    }
    if servers.config().load()?.contains(&args.name) {
        return Err(CliError::usage(format!(
            "a server named `{}` already exists; choose another name or `plugboard remove {}` first",
            args.name, args.name
        )));
    }
    let (transport, command, rest) = match (&args.url, args.command.split_first()) {
        (Some(_), _) => {
            let kind = match args.transport {
                RemoteTransport::Shttp => TransportKind::Shttp,
                RemoteTransport::Sse => TransportKind::Sse,
                RemoteTransport::Auto => TransportKind::Auto,
            };
            (kind, String::new(), vec![])
        }
        (None, Some((command, rest))) => (
            TransportKind::Stdio,
            absolute_if_relative_path(command),
            rest.to_vec(),
        ),
        (None, None) => {
            return Err(CliError::usage(
                "give the server's command after `--`, e.g. plugboard add NAME --stdio -- npx -y PACKAGE",
            ));
        }
    };
    let stdin_key = if args.bearer_stdin {
        Some(BEARER_TOKEN.to_string())
    } else {
        None
    };
    let oauth_secrets = usize::from(args.client_secret) + usize::from(args.id_token);
    let mut input = SecretInput::for_flags(
        stdin_key,
        args.secret_env.len() + args.secret_header.len() + oauth_secrets,
    );
    let plain = |raw: &String, flag: &str, secret_flag: &str| -> Result<KeyValue, CliError> {
        let (key, value) = key_value(raw, flag)?;
        warn_if_secret_looking(key, secret_flag);
        Ok(KeyValue {
            key: key.to_owned(),
            value: Some(value.to_owned()),
            secret: false,
        })
    };
    let mut env: Vec<KeyValue> = args
        .env
        .iter()
        .map(|raw| plain(raw, "--env", "--secret-env"))
        .collect::<Result<_, _>>()?;
    let mut headers: Vec<KeyValue> = args
        .header
        .iter()
        .map(|raw| plain(raw, "--header", "--secret-header"))
        .collect::<Result<_, _>>()?;
    for (keys, list) in [
        (&args.secret_env, &mut env),
        (&args.secret_header, &mut headers),
    ] {
        for key in keys {
            let value = input.read(key, key)?.ok_or_else(|| missing_secret(key))?;
            list.push(KeyValue {
                key: key.clone(),
                value: Some(value.expose().clone()),
                secret: true,
            });
        }
    }
    let auth = if args.bearer_stdin {
        let value = input
            .read(BEARER_TOKEN, "Bearer token")?
            .ok_or_else(|| missing_secret(BEARER_TOKEN))?;
        CustomAuth::Bearer {
            token: Some(value.expose().clone()),
        }
    } else if args.grant.is_some() || args.client_id.is_some() {
        oauth_of(&args, &mut input)?
    } else {
        CustomAuth::None
    };
    input.finish()?;
    let spec = CustomServer {
        transport,
        command,
        args: rest,
        cwd: args.cwd.clone().unwrap_or_default(),
        url: args.url.clone().unwrap_or_default(),
        env,
        headers,
        auth,
        headers_helper: args.helper.helper(),
        timeout: args.timeout.map(|t| u32::try_from(t).unwrap_or(u32::MAX)),
    };
    let mut errors = vec![];
    let (mut config, secrets) = build_custom(&spec, None, &args.name, &mut errors);
    if !errors.is_empty() {
        let problems: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", flag_of(&e.field), e.message))
            .collect();
        return Err(CliError::usage(format!(
            "server `{}`: {}",
            args.name,
            problems.join("; ")
        )));
    }
    config.allow_secret_args = args.allow_secret_args;
    config.sandbox = config.new_sandbox_unless(args.no_sandbox);
    let prepared = PreparedServer {
        name: args.name.clone(),
        config,
        secrets,
    };
    let catalog = Catalog::load_default()?;
    test_then_save(servers, &catalog, &prepared, args.no_test, false)
}

/// The OAuth settings `add`'s flags describe, secrets read as the flags say.
fn oauth_of(args: &AddArgs, input: &mut SecretInput) -> Result<CustomAuth, CliError> {
    let client_secret = match args.client_secret {
        true => Some(
            input
                .read(CLIENT_SECRET_KEY, "Client secret")?
                .ok_or_else(|| missing_secret(CLIENT_SECRET_KEY))?
                .expose()
                .clone(),
        ),
        false => None,
    };
    let private_key =
        match &args.private_key_file {
            Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                CliError::usage(format!("--private-key-file {}: {e}", path.display()))
            })?),
            None => None,
        };
    let grant = match args.grant {
        None | Some(GrantArg::SignIn) => CustomGrant::SignIn,
        Some(GrantArg::ClientCredentials) => CustomGrant::ClientCredentials,
        Some(GrantArg::IdentityAssertion) => {
            let (Some(endpoint), Some(client)) = (&args.idp_token_endpoint, &args.idp_client_id)
            else {
                return Err(CliError::usage(
                    "--grant identity-assertion needs --idp-token-endpoint and --idp-client-id",
                ));
            };
            if !args.id_token {
                return Err(CliError::usage(
                    "--grant identity-assertion needs your ID token: add --id-token",
                ));
            }
            let token = input
                .read(ID_TOKEN_KEY, "ID token")?
                .ok_or_else(|| missing_secret(ID_TOKEN_KEY))?;
            let idp_client_secret = match args.idp_client_secret {
                true => Some(
                    input
                        .read(
                            IDP_CLIENT_SECRET_KEY,
                            "client secret at the identity provider",
                        )?
                        .ok_or_else(|| missing_secret(IDP_CLIENT_SECRET_KEY))?
                        .expose()
                        .clone(),
                ),
                false => None,
            };
            CustomGrant::IdentityAssertion {
                idp_token_endpoint: endpoint.clone(),
                idp_client_id: client.clone(),
                idp_client_secret,
                id_token: Some(token.expose().clone()),
            }
        }
    };
    Ok(CustomAuth::Oauth2 {
        client_id: args.client_id.clone(),
        client_secret,
        scopes: args.scope.clone(),
        authorization_url: None,
        token_url: None,
        grant: Some(grant),
        private_key,
    })
}

/// The names `add` reads OAuth secrets under (`PLUGBOARD_SECRET_<NAME>`).
const CLIENT_SECRET_KEY: &str = "CLIENT_SECRET";
const ID_TOKEN_KEY: &str = "ID_TOKEN";
const IDP_CLIENT_SECRET_KEY: &str = "IDP_CLIENT_SECRET";

/// The flag a custom server's field came from (`env.2.key` → `--env`).
fn flag_of(field: &str) -> &str {
    match field.split('.').next().unwrap_or(field) {
        "env" => "--env",
        "headers" => "--header",
        "url" => "--url",
        "command" => "the command",
        "cwd" => "--cwd",
        "timeout" => "--timeout",
        "auth" if field == "auth.client_id" => "--client-id",
        "auth" if field == "auth.client_secret" => "--client-secret",
        "auth" if field == "auth.private_key" => "--private-key-file",
        "auth" if field == "auth.idp_token_endpoint" => "--idp-token-endpoint",
        "auth" if field == "auth.idp_client_id" => "--idp-client-id",
        "auth" if field == "auth.idp_client_secret" => "--idp-client-secret",
        "auth" if field == "auth.id_token" => "--id-token",
        "auth" => "--bearer-stdin",
        _ => field,
    }
}

fn missing_secret(key: &str) -> CliError {
    CliError::usage(format!(
        "no value for secret `{key}`: pipe it to standard input, set {} or run in a terminal to be prompted",
        secret_env_var(key)
    ))
}

fn warn_if_secret_looking(key: &str, flag: &str) {
    if looks_secret(key) {
        eprintln!(
            "warning: `{key}` looks like a secret; it is stored as plain config and was visible in \
             your shell history. Use {flag} {key} to keep it in the keyring instead."
        );
    }
}

/// `./server` or `bin/server` means a file relative to where `add` ran; keep it working from
/// anywhere by storing it absolute. Bare names (`npx`) are looked up on PATH at test time.
fn absolute_if_relative_path(command: &str) -> String {
    let path = std::path::Path::new(command);
    if command.contains(std::path::MAIN_SEPARATOR)
        && path.is_relative()
        && let Ok(absolute) = std::path::absolute(path)
    {
        return absolute.display().to_string();
    }
    command.to_string()
}
