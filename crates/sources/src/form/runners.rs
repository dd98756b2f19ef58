//! How a registry package is run, by its registry type: npm through `npx` (or `bunx`, `pnpm dlx`,
//! `yarn dlx` when the runtime hint says so) with `--before DATE` when npm dates the version
//! before it; PyPI through `uvx` (or `pipx run`) with `--exclude-newer DATE`; OCI images through
//! `docker run -i --rm` (or podman) with `-e NAME=VALUE` runtime arguments turned into
//! environment fields; NuGet through `dnx`; MCPB bundles fetched first. Each gives the program,
//! the runner's own leading arguments, the package spec to append and its dependency pin, or
//! why the package cannot be run.

use super::blueprint::{BundleRef, Pin};
use super::package_names;
use super::server_json::Pinning;
use crate::registry::model::{Argument, ArgumentKind, KeyValueInput, Package};

/// How one package runs.
#[derive(Default)]
pub(super) struct Runner {
    pub program: String,
    /// The runner's own arguments, before the runtime arguments.
    pub lead: Vec<String>,
    /// The package to append after the runtime arguments; `None` when they already name it.
    pub spec: Option<String>,
    pub pin: Option<Pin>,
    /// Environment variables taken out of Docker's `-e NAME=VALUE` runtime arguments.
    pub extra_env: Vec<KeyValueInput>,
    /// The MCPB bundle to fetch (its manifest gives the launch).
    pub bundle: Option<BundleRef>,
    /// Why the package cannot be run by Plugboard.
    pub blocked: Option<String>,
}

impl Runner {
    fn blocked(why: String) -> Runner {
        Runner {
            blocked: Some(why),
            ..Runner::default()
        }
    }
}

/// What choosing a runner needs to know of one package.
pub(super) struct PackageRun<'a> {
    pub package: &'a Package,
    /// Its version, unless it floats (none given, or `latest`).
    pub version: Option<String>,
    /// The date its dependencies resolve as of, and when the version was published.
    pub pin_date: Option<&'a str>,
    pub published: Option<&'a str>,
    pub pinning: &'a Pinning<'a>,
}

impl PackageRun<'_> {
    fn identifier(&self) -> &str {
        self.package.identifier.as_str()
    }

    fn hint(&self) -> Option<String> {
        self.package
            .runtime_hint
            .as_deref()
            .map(str::to_ascii_lowercase)
    }

    fn pin(&self, tool: &str, flag: &str, date: &str) -> Pin {
        Pin {
            tool: tool.into(),
            flag: flag.into(),
            date: date.to_owned(),
            published_at: self.published.unwrap_or_default().to_owned(),
        }
    }

    /// `ID{separator}VERSION`, or the bare id with a note that the newest version runs.
    fn spec(&self, separator: &str, notes: &mut Vec<String>) -> String {
        let identifier = self.identifier();
        match &self.version {
            Some(v) => format!("{identifier}{separator}{v}"),
            None => {
                notes.push(format!(
                    "{identifier} is not pinned to a version: the newest one runs"
                ));
                identifier.to_owned()
            }
        }
    }
}

/// The runner of `run.package`; `runtime_args` may lose what the runner takes over (`npx`'s own
/// `-y`, Docker's `-e`, a `--from` naming the package gets its version).
pub(super) fn runner(
    run: &PackageRun,
    runtime_args: &mut Vec<Argument>,
    notes: &mut Vec<String>,
) -> Runner {
    let registry_type = run.package.registry_type.as_str();
    let identifier = run.identifier();
    if identifier.is_empty() {
        return Runner::blocked("the registry entry names no package identifier".into());
    }
    let invalid_name = package_names::identifier_problem(registry_type, identifier).or_else(|| {
        matches!(registry_type, "npm" | "pypi" | "oci" | "docker" | "nuget")
            .then(|| {
                run.version
                    .as_deref()
                    .and_then(package_names::version_problem)
            })
            .flatten()
    });
    if let Some(why) = invalid_name {
        return Runner::blocked(why);
    }
    match registry_type {
        "npm" => npm(run, runtime_args, notes),
        "pypi" => pypi(run, runtime_args, notes),
        "oci" | "docker" => image(run, runtime_args, notes),
        "nuget" => Runner {
            program: "dnx".into(),
            spec: Some(match &run.version {
                Some(v) => format!("{identifier}@{v}"),
                None => identifier.to_owned(),
            }),
            ..Runner::default()
        },
        "mcpb" => bundle(run.package),
        other => Runner::blocked(format!(
            "Plugboard does not know how to run `{}` packages",
            if other.is_empty() { "untyped" } else { other }
        )),
    }
}

fn npm(run: &PackageRun, runtime_args: &mut Vec<Argument>, notes: &mut Vec<String>) -> Runner {
    let identifier = run.identifier();
    let spec = run.spec("@", notes);
    let (program, mut lead) = match run.hint().as_deref() {
        Some("bun" | "bunx") => ("bunx".to_owned(), vec![]),
        Some("pnpm" | "pnpx") => ("pnpm".to_owned(), vec!["dlx".to_owned()]),
        Some("yarn") => ("yarn".to_owned(), vec!["dlx".to_owned()]),
        _ => ("npx".to_owned(), vec!["-y".to_owned()]),
    };
    runtime_args.retain(|a| !(program == "npx" && is_yes(a)));
    let mut pin = None;
    if program == "npx"
        && run.pinning.enabled
        && let (Some(date), Some(v)) = (run.pin_date, &run.version)
    {
        match run.pinning.npm {
            Some(check) => match check(identifier, v, date) {
                Ok(()) => {
                    lead.push(format!("--before={date}"));
                    pin = Some(run.pin("npm", "--before", date));
                }
                Err(why) => notes.push(format!("npm dependencies are not pinned: {why}")),
            },
            None => notes.push(format!(
                "npm dependencies are pinned to {date} (npm --before) at install, when npm's \
                 registry dates {identifier}@{v} before it"
            )),
        }
    }
    Runner {
        program,
        lead,
        spec: Some(spec),
        pin,
        ..Runner::default()
    }
}

fn pypi(run: &PackageRun, runtime_args: &mut [Argument], notes: &mut Vec<String>) -> Runner {
    let identifier = run.identifier();
    let spec = run.spec("==", notes);
    let hint = run.hint();
    let mut lead = vec![];
    let program = match hint.as_deref() {
        Some("pipx") => {
            lead.push("run".to_owned());
            "pipx".to_owned()
        }
        _ => "uvx".to_owned(),
    };
    let mut pin = None;
    if program == "uvx"
        && run.pinning.enabled
        && let Some(date) = run.pin_date
    {
        lead.push("--exclude-newer".into());
        lead.push(date.to_owned());
        pin = Some(run.pin("uv", "--exclude-newer", date));
    }
    // `python -m module` hints run the module from the package's environment.
    let module = matches!(hint.as_deref(), Some("python" | "python3"))
        && runtime_args.first().and_then(|a| a.input.value.as_deref()) == Some("-m");
    let spec = if module {
        lead.push("--from".into());
        lead.push(spec);
        lead.push("python".into());
        None
    } else if let Some(from) = runtime_args
        .iter_mut()
        .find(|a| matches!(&a.kind, ArgumentKind::Named { name } if name == "--from"))
    {
        if from.input.value.as_deref() == Some(identifier) {
            from.input.value = Some(spec);
        }
        None
    } else if runtime_args.iter().any(|a| mentions(a, identifier)) {
        None
    } else {
        Some(spec)
    };
    Runner {
        program,
        lead,
        spec,
        pin,
        ..Runner::default()
    }
}

fn image(run: &PackageRun, runtime_args: &mut Vec<Argument>, notes: &mut Vec<String>) -> Runner {
    let identifier = run.identifier();
    let tagged = identifier
        .rsplit('/')
        .next()
        .is_some_and(|last| last.contains(':') || last.contains('@'));
    let image = match (&run.version, tagged) {
        (Some(v), false) => format!("{identifier}:{v}"),
        _ => identifier.to_owned(),
    };
    if image.ends_with(":latest") || !image.rsplit('/').next().unwrap_or("").contains([':', '@']) {
        notes.push(format!(
            "{image} is not pinned to a version: the newest image runs"
        ));
    }
    let program = match run.hint().as_deref() {
        Some("podman") => "podman",
        _ => "docker",
    };
    let (rest, extra_env) = docker_env_args(runtime_args);
    *runtime_args = rest;
    let authored_run = runtime_args.first().and_then(|a| a.input.value.as_deref()) == Some("run");
    let lead = if authored_run {
        vec![]
    } else {
        vec!["run".into(), "-i".into(), "--rm".into()]
    };
    Runner {
        program: program.to_owned(),
        lead,
        spec: Some(image),
        extra_env,
        ..Runner::default()
    }
}

/// Its launch and form come from the bundle's manifest, once it is fetched.
fn bundle(package: &Package) -> Runner {
    let identifier = package.identifier.as_str();
    let blocked = if !identifier.starts_with("https://") {
        Some(format!(
            "its MCPB bundle is not served over https ({identifier}): bundles are downloaded \
             over https only"
        ))
    } else if package.file_sha256.is_none() {
        Some(
            "the registry gives no fileSha256 for its MCPB bundle, so its content cannot be \
             checked"
                .into(),
        )
    } else {
        None
    };
    Runner {
        bundle: Some(BundleRef {
            url: identifier.to_owned(),
            sha256: package.file_sha256.clone(),
        }),
        blocked,
        ..Runner::default()
    }
}

/// `-e NAME=VALUE` runtime arguments of a Docker launch, taken out as environment variables
/// (so their values never appear on the command line): `(remaining args, extra env)`.
fn docker_env_args(args: &[Argument]) -> (Vec<Argument>, Vec<KeyValueInput>) {
    let mut rest = Vec::new();
    let mut env = Vec::new();
    for arg in args {
        if let ArgumentKind::Named { name } = &arg.kind
            && matches!(name.as_str(), "-e" | "--env")
            && let Some(value) = &arg.input.value
            && let Some((var, template)) = value.split_once('=')
            && crate::config::validate_env_key(var).is_ok()
        {
            let mut input = arg.input.clone();
            input.value = Some(template.to_owned());
            env.push(KeyValueInput {
                name: var.to_owned(),
                input,
            });
            continue;
        }
        rest.push(arg.clone());
    }
    (rest, env)
}

fn mentions(arg: &Argument, identifier: &str) -> bool {
    arg.input
        .value
        .as_deref()
        .is_some_and(|v| !identifier.is_empty() && v.contains(identifier))
}

fn is_yes(arg: &Argument) -> bool {
    let word = match &arg.kind {
        ArgumentKind::Named { name } if arg.input.value.is_none() => Some(name.as_str()),
        ArgumentKind::Positional { .. } => arg.input.value.as_deref(),
        _ => None,
    };
    matches!(word, Some("-y" | "--yes"))
}
