//! The form engine over the real registry: every latest server of the snapshot yields a form
//! for each option Plugboard can install, or an honest "cannot install: …", and each form,
//! filled in, builds a valid server config with its secrets kept apart. Outcomes are counted.

use std::collections::BTreeMap;

use plugboard::form::engine::{build, cannot_install, form};
use plugboard::form::server_json::{Pinning, blueprint};
use plugboard::form::{FormInput, FormSpec, InputKind};
use plugboard::registry::model::{ArgumentKind, Input};
use plugboard::runtimes::FixedRuntimes;

use crate::support::snapshot::latest_rows;

/// A value a user could type into `field`.
fn sample(key: &str, kind: InputKind, choices: &[String]) -> String {
    let lower = key.to_ascii_lowercase();
    match kind {
        InputKind::Number => "8080".into(),
        InputKind::Boolean => "true".into(),
        InputKind::Select => choices[0].clone(),
        InputKind::Url => "https://example.com/mcp".into(),
        InputKind::FilePath => "/tmp/plugboard-sample".into(),
        InputKind::List => "one\ntwo".into(),
        _ if lower.contains("url") || lower.contains("endpoint") => {
            format!("https://example.com/{lower}")
        }
        _ if lower == "host" || lower.ends_with("_host") => "127.0.0.1".into(),
        _ if lower.contains("port") => "8080".into(),
        _ => format!("sample-{key}-value"),
    }
}

fn fill(spec: &FormSpec) -> FormInput {
    let mut input = FormInput::default();
    for f in &spec.fields {
        input.set(&f.key, sample(&f.key, f.input, &f.choices));
    }
    input
}

/// Every required input of the server.json, by name (env, header, argument).
fn required_inputs(input: &Input) -> bool {
    input.is_required && input.value.is_none() && input.default.is_none()
}

#[test]
fn every_latest_server_of_the_snapshot_gets_a_form_or_says_why_not() {
    let rows = latest_rows();
    assert_eq!(rows.len(), 1108, "latest servers in the snapshot");
    let runtimes = FixedRuntimes::everything();
    let pinning = Pinning::browsing(true);
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut options_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut blocked_reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = vec![];
    let mut secret_fields = 0;
    for row in &rows {
        let name = &row.server.name;
        let bp = blueprint(row, "https://registry.example", &pinning);
        if let Some(why) = cannot_install(&bp) {
            *outcomes.entry("cannot install".into()).or_default() += 1;
            let key = why.split(':').next().unwrap_or(&why).to_owned();
            *blocked_reasons.entry(key).or_default() += 1;
            // The default form says the same, never an empty form.
            let err = form(&bp, None, &runtimes).unwrap_err().to_string();
            assert!(err.contains("cannot install"), "{name}: {err}");
            continue;
        }
        *outcomes.entry("installable".into()).or_default() += 1;
        for (index, option) in bp.options.iter().enumerate() {
            let kind = option
                .id
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
                .to_owned();
            if let Some(why) = &option.blocked {
                *blocked_reasons
                    .entry(format!("option: {}", why.split(':').next().unwrap_or(why)))
                    .or_default() += 1;
                continue;
            }
            *options_by_kind.entry(kind).or_default() += 1;
            let spec = match form(&bp, Some(&option.id), &runtimes) {
                Ok(spec) => spec,
                Err(e) => {
                    failures.push(format!("{name} {}: form: {e}", option.id));
                    continue;
                }
            };
            if spec.command.is_none() && spec.url.is_none() {
                failures.push(format!(
                    "{name} {}: a form with nothing to run or reach",
                    option.id
                ));
            }
            secret_fields += spec.fields.iter().filter(|f| f.secret).count();
            // An MCPB bundle: its form comes from the bundle's manifest once it is fetched at
            // install (`bundles_cli` installs real ones); here the option says so, and building
            // it unfetched is refused.
            if option.bundle.is_some() {
                if !spec.option().is_some_and(|o| o.bundle) {
                    failures.push(format!("{name} {}: a bundle option not marked", option.id));
                }
                if build(&bp, &spec, &fill(&spec), "srv").is_ok() {
                    failures.push(format!("{name} {}: an unfetched bundle built", option.id));
                }
                continue;
            }
            let prepared = match build(&bp, &spec, &fill(&spec), "srv") {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{name} {}: build: {e}", option.id));
                    continue;
                }
            };
            let config = serde_json::to_string(&prepared.config).unwrap();
            if let Err(e) = prepared.config.validate() {
                failures.push(format!("{name} {}: invalid config: {e}", option.id));
            }
            // Every placeholder was filled: none is left in what runs or is reached.
            let launch = prepared.config.launch.as_ref();
            let texts = prepared
                .config
                .args
                .iter()
                .chain(launch.into_iter().flat_map(|l| l.args.iter()))
                .chain(prepared.config.url.iter());
            for text in texts {
                let leftover =
                    plugboard::form::template::Template::parse(&text.replace("${secret:", "$("));
                if leftover.has_vars() {
                    failures.push(format!(
                        "{name} {}: unfilled placeholder in `{text}`",
                        option.id
                    ));
                }
            }
            // Secret values stay out of the config.
            for value in prepared.secrets.values() {
                if config.contains(value.expose().as_str()) {
                    failures.push(format!(
                        "{name} {}: a secret value is in the config",
                        option.id
                    ));
                }
            }
            // Every required input of the package or remote has a field.
            let keys: Vec<&str> = spec.fields.iter().map(|f| f.key.as_str()).collect();
            let package = row.server.packages.get(index);
            if let Some(package) = package {
                for env in &package.environment_variables {
                    if required_inputs(&env.input) && !keys.contains(&env.name.as_str()) {
                        failures.push(format!(
                            "{name} {}: required env {} has no field",
                            option.id, env.name
                        ));
                    }
                }
                for arg in package
                    .runtime_arguments
                    .iter()
                    .chain(&package.package_arguments)
                {
                    if let ArgumentKind::Positional {
                        value_hint: Some(hint),
                    } = &arg.kind
                        && required_inputs(&arg.input)
                        && !keys.contains(&hint.as_str())
                    {
                        failures.push(format!(
                            "{name} {}: required argument {hint} has no field",
                            option.id
                        ));
                    }
                }
            }
        }
    }
    eprintln!("outcomes: {outcomes:?}");
    eprintln!("installable options by kind: {options_by_kind:?}");
    eprintln!("cannot install (servers and single options): {blocked_reasons:#?}");
    eprintln!("secret fields: {secret_fields}");
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(outcomes.values().sum::<usize>(), 1108);
}
