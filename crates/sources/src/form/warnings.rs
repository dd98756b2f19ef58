//! What an option's launch does that weakens the walls around the server, said out loud before
//! it is installed: a container runtime's flags that give the container the host (`--privileged`,
//! `--network host`, `-v /:/host`, added capabilities, devices, the Docker socket) and fixed
//! environment values that change what runs (`LD_PRELOAD`, `NODE_OPTIONS`, `PYTHONPATH`, a
//! package index). Registry rows are outside input: these come from whoever published the row.
use super::blueprint::{ArgPlan, Launch, OptionPlan};
use super::template::{Part, Template};
use crate::config::{is_container_runtime, is_launch_env};

/// The warnings for `option`, one sentence each.
pub fn isolation_warnings(option: &OptionPlan) -> Vec<String> {
    let (command, args, env) = match &option.launch {
        Launch::Stdio { command, args, env }
        | Launch::LocalHttp {
            command, args, env, ..
        } => (command, args, env),
        Launch::Remote { .. } => return vec![],
    };
    let mut warnings = vec![];
    for value in env {
        if is_launch_env(&value.name) {
            warnings.push(format!(
                "it sets {}={} in the server's environment, which changes what runs",
                value.name,
                text_of(&value.value)
            ));
        }
    }
    if is_container_runtime(command) {
        warnings.extend(container_warnings(&flatten(args)));
    }
    warnings
}

/// The environment a local option sets, as written (placeholders as `{name}`).
pub fn environment(option: &OptionPlan) -> std::collections::BTreeMap<String, String> {
    match &option.launch {
        Launch::Stdio { env, .. } | Launch::LocalHttp { env, .. } => env
            .iter()
            .map(|v| (v.name.clone(), text_of(&v.value)))
            .collect(),
        Launch::Remote { .. } => Default::default(),
    }
}

/// The arguments as text, placeholders as `{name}`.
fn flatten(args: &[ArgPlan]) -> Vec<String> {
    let mut out = vec![];
    for arg in args {
        match arg {
            ArgPlan::Fixed(t) => out.push(text_of(t)),
            ArgPlan::Value { field, .. } => out.push(format!("{{{field}}}")),
            ArgPlan::Flag { name, field, value } => {
                out.push(name.clone());
                out.push(match value {
                    Some(t) => text_of(t),
                    None => format!("{{{field}}}"),
                });
            }
            ArgPlan::Switch { name, .. } => out.push(name.clone()),
        }
    }
    out
}

fn text_of(template: &Template) -> String {
    template
        .parts()
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.clone(),
            Part::Var(v) => format!("{{{v}}}"),
        })
        .collect()
}

/// Container flags that hand the container some of the host, each with what it means.
fn container_warnings(args: &[String]) -> Vec<String> {
    let mut warnings = vec![];
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f, Some(v.to_owned())),
            _ => (arg, None),
        };
        let value = || inline.clone().or_else(|| args.get(i + 1).cloned());
        let warning = match flag {
            "--privileged" => Some("it runs the container privileged (--privileged): the container can take over this machine".to_owned()),
            "--network" | "--net" if value().as_deref() == Some("host") => {
                Some("it shares this machine's network (--network host): the container reaches every local service".to_owned())
            }
            "--pid" | "--ipc" | "--uts" | "--userns" | "--cgroupns" if value().as_deref() == Some("host") => {
                Some(format!("it shares this machine's {} namespace ({flag} host)", &flag[2..]))
            }
            "--cap-add" => value().map(|v| format!("it adds the capability {v} (--cap-add)")),
            "--device" => value().map(|v| format!("it gives the container the device {v} (--device)")),
            "--security-opt" => value().map(|v| format!("it changes the container's security profile ({flag} {v})")),
            "-v" | "--volume" | "--mount" => value().and_then(|v| mount_warning(&v)),
            _ => None,
        };
        if let Some(w) = warning {
            warnings.push(w);
        }
        i += 1;
    }
    warnings
}

/// A bind mount of something sensitive on the host: the root, the home, system folders, the
/// container runtime's socket.
fn mount_warning(spec: &str) -> Option<String> {
    let source = spec
        .split(',')
        .find_map(|part| {
            part.strip_prefix("source=")
                .or_else(|| part.strip_prefix("src="))
        })
        .unwrap_or_else(|| spec.split(':').next().unwrap_or_default());
    let sensitive = source == "/"
        || source.ends_with(".sock")
        || [
            "/etc", "/root", "/home", "/var", "/proc", "/sys", "/dev", "/usr",
        ]
        .contains(&source)
        || source == "~"
        || source.starts_with("$HOME")
        || source.starts_with("${HOME}");
    sensitive.then(|| format!("it mounts {source} of this machine into the container ({spec})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::form::blueprint::ValuePlan;

    fn docker(args: &[&str]) -> OptionPlan {
        OptionPlan {
            launch: Launch::Stdio {
                command: "docker".into(),
                args: args
                    .iter()
                    .map(|a| ArgPlan::Fixed(Template::literal(a)))
                    .collect(),
                env: vec![ValuePlan {
                    name: "LD_PRELOAD".into(),
                    value: Template::literal("/tmp/x.so"),
                }],
            },
            id: "oci".into(),
            label: "Docker".into(),
            auth: crate::form::blueprint::AuthPlan::None,
            fields: vec![],
            blocked: None,
            program: None,
            pin: None,
            notes: vec![],
            probe: None,
            network: None,
            bundle: None,
        }
    }

    #[test]
    fn host_giving_flags_and_loader_variables_are_named() {
        let w = isolation_warnings(&docker(&[
            "run",
            "-i",
            "--rm",
            "--privileged",
            "--network",
            "host",
            "-v",
            "/:/host",
            "--cap-add=SYS_ADMIN",
            "-v",
            "/var/run/docker.sock:/var/run/docker.sock",
            "image",
        ]));
        let all = w.join("\n");
        for expected in [
            "LD_PRELOAD=/tmp/x.so",
            "--privileged",
            "--network host",
            "mounts / ",
            "SYS_ADMIN",
            "docker.sock",
        ] {
            assert!(all.contains(expected), "{expected}: {all}");
        }
        assert!(
            isolation_warnings(&docker(&[
                "run",
                "-i",
                "--rm",
                "-v",
                "{dir}:/data",
                "image"
            ]))
            .len()
                == 1
        );
    }
}
