//! An MCPB bundle's `manifest.json` as a blueprint: one option, launched from
//! `server.mcp_config` (this platform's `platform_overrides` applied), its `user_config`
//! options as the form's fields.
//!
//! - `${user_config.KEY}` becomes the field `KEY`: an argument that is exactly that placeholder
//!   is left out when the field is empty and, for a `multiple` field, expands into one
//!   argument per value; inside a longer argument or an environment variable a list is joined
//!   (with the path-list separator for files and directories, else a comma).
//! - `${__dirname}` is the unpacked bundle's directory, `${HOME}`, `${DESKTOP}`,
//!   `${DOCUMENTS}`, `${DOWNLOADS}` the user's folders, `${/}` and `${pathSeparator}` the path
//!   separator — in the launch and in the options' defaults. Other `${…}` text stays as it is.
//! - Option kinds: string (text, or a password when `sensitive`: kept in the secret store),
//!   number (with `min` / `max`), boolean, directory and file (path fields with a picker);
//!   `multiple` makes a list; `required`, `default`, `title` (label), `description` (help).
//! - A `uv` server without `mcp_config` runs `uv run --directory DIR ENTRY_POINT`.
//! - A registry package's own environment variables that the manifest does not set are asked
//!   for too (through the `server.json` translator's rules).

use std::path::Path;

use super::blueprint::{
    ArgPlan, AuthPlan, Blueprint, FormSource, Launch, OptionPlan, Split, ValuePlan,
};
use super::server_json::{Fields, server_name_for, values_of};
use super::spec::{FieldTarget, FormField, InputKind, Picker};
use super::template::{Part, Template};
use crate::mcpb::compat::platform;
use crate::mcpb::manifest::{Manifest, McpConfig, OptionKind, UserConfigOption};
use crate::registry::model::KeyValueInput;

/// The user's folders the manifest's variables name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemDirs {
    pub home: String,
    pub desktop: String,
    pub documents: String,
    pub downloads: String,
}

impl SystemDirs {
    /// This user's (XDG user directories where set, else `~/Desktop` and the like).
    pub fn current() -> SystemDirs {
        let home = std::env::var("HOME")
            .ok()
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("USERPROFILE").ok())
            .unwrap_or_else(|| "/".into());
        let xdg = |var: &str, fallback: &str| {
            std::env::var(var)
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| Path::new(&home).join(fallback).display().to_string())
        };
        SystemDirs {
            desktop: xdg("XDG_DESKTOP_DIR", "Desktop"),
            documents: xdg("XDG_DOCUMENTS_DIR", "Documents"),
            downloads: xdg("XDG_DOWNLOAD_DIR", "Downloads"),
            home,
        }
    }
}

/// Where a bundle blueprint comes from.
pub struct BundleSite<'a> {
    pub dir: &'a Path,
    pub sha256: &'a str,
    /// The local file, when not a registry package.
    pub file: Option<&'a Path>,
    pub registry: Option<super::blueprint::RegistryRef>,
    /// The registry package's environment variables.
    pub package_env: &'a [KeyValueInput],
}

/// One piece of a manifest string.
#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Field(String),
}

/// Split `text` at `${…}`: user_config placeholders become fields, system variables their
/// values, anything else stays literal.
fn pieces(text: &str, dir: &Path, dirs: &SystemDirs) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let push_text = |out: &mut Vec<Piece>, t: &str| {
        if t.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(Piece::Text(prev)) => prev.push_str(t),
            _ => out.push(Piece::Text(t.to_owned())),
        }
    };
    let mut rest = text;
    while let Some(open) = rest.find("${") {
        push_text(&mut out, &rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find('}') else {
            push_text(&mut out, &rest[open..]);
            rest = "";
            break;
        };
        let name = &after[..close];
        let separator = std::path::MAIN_SEPARATOR_STR;
        match name {
            "__dirname" => push_text(&mut out, &dir.display().to_string()),
            "HOME" => push_text(&mut out, &dirs.home),
            "DESKTOP" => push_text(&mut out, &dirs.desktop),
            "DOCUMENTS" => push_text(&mut out, &dirs.documents),
            "DOWNLOADS" => push_text(&mut out, &dirs.downloads),
            "/" | "pathSeparator" => push_text(&mut out, separator),
            _ => match name.strip_prefix("user_config.") {
                Some(key) if !key.is_empty() => out.push(Piece::Field(key.to_owned())),
                _ => push_text(&mut out, &rest[open..open + 3 + close]),
            },
        }
        rest = &after[close + 1..];
    }
    push_text(&mut out, rest);
    out
}

fn expand(text: &str, dir: &Path, dirs: &SystemDirs) -> String {
    pieces(text, dir, dirs)
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t,
            Piece::Field(k) => format!("${{user_config.{k}}}"),
        })
        .collect()
}

fn template(pieces: Vec<Piece>) -> Template {
    Template::from_parts(
        pieces
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) => Part::Text(t),
                Piece::Field(k) => Part::Var(k),
            })
            .collect(),
    )
}

fn field(option: &UserConfigOption, dir: &Path, dirs: &SystemDirs) -> FormField {
    let path = matches!(option.kind, OptionKind::Directory | OptionKind::File);
    let input = match option.kind {
        _ if option.multiple => InputKind::List,
        OptionKind::String if option.sensitive => InputKind::Password,
        OptionKind::String => InputKind::Text,
        OptionKind::Number => InputKind::Number,
        OptionKind::Boolean => InputKind::Boolean,
        OptionKind::Directory | OptionKind::File => InputKind::FilePath,
    };
    let defaults: Vec<String> = option
        .default
        .iter()
        .map(|d| expand(d, dir, dirs))
        .collect();
    let list_separator = if path {
        if cfg!(windows) { ";" } else { ":" }
    } else {
        ","
    };
    let mut help = option.description.clone();
    if option.kind == OptionKind::Number
        && let (Some(min), Some(max)) = (option.min, option.max)
    {
        let range = format!("From {min} to {max}.");
        help = Some(help.map_or(range.clone(), |h| format!("{h} {range}")));
    }
    FormField {
        input,
        required: option.required,
        secret: option.sensitive,
        help,
        default: (!defaults.is_empty()).then(|| defaults.join("\n")),
        picker: match option.kind {
            OptionKind::Directory => Some(Picker::Directory),
            OptionKind::File => Some(Picker::File),
            _ => None,
        },
        min: option.min,
        max: option.max,
        join: option.multiple.then(|| list_separator.to_owned()),
        ..FormField::text(&option.key, &option.title, FieldTarget::Value)
    }
}

/// A relative command with a path in it (`server/my-server`) is the bundle's own program.
fn command_path(command: &str, dir: &Path) -> String {
    let path = Path::new(command);
    if path.is_relative() && (command.contains('/') || command.contains('\\')) {
        dir.join(path).display().to_string()
    } else {
        command.to_owned()
    }
}

fn launch_config(manifest: &Manifest, dir: &Path) -> Option<McpConfig> {
    if let Some(config) = &manifest.server.mcp_config {
        return Some(config.for_platform(platform()));
    }
    let entry = manifest.server.entry_point.as_deref()?;
    Some(McpConfig {
        command: "uv".into(),
        args: vec![
            "run".into(),
            "--directory".into(),
            dir.display().to_string(),
            dir.join(entry).display().to_string(),
        ],
        env: Default::default(),
        platform_overrides: Default::default(),
    })
}

/// The blueprint of a bundle unpacked at `site.dir`.
pub fn blueprint(manifest: &Manifest, site: &BundleSite<'_>, dirs: &SystemDirs) -> Blueprint {
    let dir = site.dir;
    let mut fields = Fields::default();
    for option in &manifest.user_config {
        fields.list.push(field(option, dir, dirs));
    }
    let mut notes = Vec::new();
    let mut blocked = None;
    let (command, args, mut env) = match launch_config(manifest, dir) {
        Some(config) => {
            let known = |key: &str| manifest.user_config.iter().any(|o| o.key == key);
            let mut unknown = Vec::new();
            let mut args = Vec::new();
            for arg in &config.args {
                let parts = pieces(arg, dir, dirs);
                for p in &parts {
                    if let Piece::Field(k) = p
                        && !known(k)
                    {
                        unknown.push(k.clone());
                    }
                }
                match parts.as_slice() {
                    [Piece::Field(key)] if known(key) => {
                        let multiple = manifest
                            .user_config
                            .iter()
                            .any(|o| &o.key == key && o.multiple);
                        args.push(ArgPlan::Value {
                            field: key.clone(),
                            split: if multiple { Split::Lines } else { Split::One },
                        });
                    }
                    _ => args.push(ArgPlan::Fixed(template(parts))),
                }
            }
            let env: Vec<ValuePlan> = config
                .env
                .iter()
                .map(|(name, value)| {
                    let parts = pieces(value, dir, dirs);
                    for p in &parts {
                        if let Piece::Field(k) = p
                            && !known(k)
                        {
                            unknown.push(k.clone());
                        }
                    }
                    ValuePlan {
                        name: name.clone(),
                        value: template(parts),
                    }
                })
                .collect();
            unknown.sort();
            unknown.dedup();
            if !unknown.is_empty() {
                blocked = Some(format!(
                    "its launch uses user_config {} that the manifest does not declare",
                    unknown.join(", ")
                ));
            }
            (
                command_path(&expand(&config.command, dir, dirs), dir),
                args,
                env,
            )
        }
        None => {
            blocked = Some("its manifest gives neither mcp_config nor an entry point".into());
            (String::new(), vec![], vec![])
        }
    };
    // The registry package's own variables, where the manifest does not set them.
    let extra: Vec<KeyValueInput> = site
        .package_env
        .iter()
        .filter(|e| !env.iter().any(|p| p.name == e.name))
        .cloned()
        .collect();
    env.extend(values_of(&extra, &mut fields, FieldTarget::Env));
    if !manifest.unknown_fields.is_empty() {
        notes.push(format!(
            "the manifest's fields {} are not used by Plugboard",
            manifest.unknown_fields.join(", ")
        ));
    }
    if !manifest.tools.is_empty() {
        notes.push(format!(
            "the bundle declares the tools {}",
            manifest.tools.join(", ")
        ));
    }
    // A bundle's own binary (a path) is not a runtime to look for on PATH.
    let program = (!command.is_empty() && !command.contains(['/', '\\'])).then(|| command.clone());
    let version = &manifest.version;
    let label = format!(
        "MCPB bundle {} {version}{}",
        manifest.title(),
        if manifest.server.kind.is_empty() {
            String::new()
        } else {
            format!(" ({})", manifest.server.kind)
        }
    );
    Blueprint {
        source: FormSource::Bundle {
            name: manifest.name.clone(),
            version: version.clone(),
            sha256: site.sha256.to_owned(),
            dir: dir.display().to_string(),
            file: site.file.map(|f| f.display().to_string()),
            registry: site.registry.clone(),
        },
        default_name: server_name_for(&manifest.name),
        options: vec![OptionPlan {
            id: "mcpb".into(),
            label,
            launch: Launch::Stdio { command, args, env },
            auth: AuthPlan::None,
            fields: fields.list,
            blocked,
            program,
            pin: None,
            notes,
            probe: None,
            network: None,
            bundle: None,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigValue;
    use crate::form::engine::{build, form};
    use crate::form::{FormInput, InputKind};
    use crate::runtimes::RuntimeCheck;
    use serde_json::json;

    struct Everything;
    impl RuntimeCheck for Everything {
        fn found(&self, _: &str) -> bool {
            true
        }
        fn docker_running(&self) -> bool {
            true
        }
    }

    fn dirs() -> SystemDirs {
        SystemDirs {
            home: "/home/u".into(),
            desktop: "/home/u/Desktop".into(),
            documents: "/home/u/Documents".into(),
            downloads: "/home/u/Downloads".into(),
        }
    }

    fn manifest() -> Manifest {
        Manifest::from_value(&json!({
            "manifest_version": "0.3", "name": "files", "version": "1.2.0", "description": "",
            "author": {"name": "a"},
            "server": {"type": "node", "entry_point": "server/index.js", "mcp_config": {
                "command": "node",
                "args": ["${__dirname}/server/index.js", "${user_config.dirs}", "--size=${user_config.size}",
                         "${user_config.verbose}", "${HOME}${/}x", "${user_config.note}"],
                "env": {"API_KEY": "${user_config.api_key}", "ALL": "${user_config.dirs}",
                        "TOKEN": "Bearer ${user_config.api_key}", "KEEP": "${unknown}"},
                "platform_overrides": {"linux": {"args": ["${__dirname}/linux.js", "${user_config.dirs}"]}}
            }},
            "user_config": {
                "dirs": {"type": "directory", "title": "Dirs", "description": "", "multiple": true,
                         "required": true, "default": ["${HOME}/Desktop", "${DOCUMENTS}"]},
                "api_key": {"type": "string", "title": "API key", "description": "", "sensitive": true, "required": true},
                "size": {"type": "number", "title": "Size", "description": "", "default": 10, "min": 1, "max": 100},
                "verbose": {"type": "boolean", "title": "Verbose", "description": "", "default": false},
                "note": {"type": "string", "title": "Note", "description": ""},
                "db": {"type": "file", "title": "DB", "description": ""}
            }
        }))
        .unwrap()
    }

    fn site(dir: &Path) -> BundleSite<'_> {
        BundleSite {
            dir,
            sha256: "ab",
            file: None,
            registry: None,
            package_env: &[],
        }
    }

    #[test]
    fn user_config_is_one_more_source_of_the_form_engine() {
        let dir = Path::new("/data/bundles/files-1");
        let bp = blueprint(&manifest(), &site(dir), &dirs());
        let spec = form(&bp, None, &Everything).unwrap();
        let kinds: Vec<_> = spec
            .fields
            .iter()
            .map(|f| (f.key.as_str(), f.input, f.secret, f.required))
            .collect();
        assert_eq!(
            kinds,
            [
                ("dirs", InputKind::List, false, true),
                ("api_key", InputKind::Password, true, true),
                ("size", InputKind::Number, false, false),
                ("verbose", InputKind::Boolean, false, false),
                ("note", InputKind::Text, false, false),
                ("db", InputKind::FilePath, false, false),
            ]
        );
        assert_eq!(
            spec.fields[0].default.as_deref(),
            Some("/home/u/Desktop\n/home/u/Documents")
        );
        assert_eq!(spec.fields[0].picker, Some(Picker::Directory));
        assert_eq!(spec.fields[5].picker, Some(Picker::File));

        let mut input = FormInput::default();
        input.set("api_key", "sk-123").set("dirs", "/a\n/b c");
        let built = build(&bp, &spec, &input, "files").unwrap();
        let c = &built.config;
        if platform() == "linux" {
            // platform_overrides: linux replaces the args, the array expands in place.
            assert_eq!(c.args, ["/data/bundles/files-1/linux.js", "/a", "/b c"]);
        }
        assert_eq!(
            c.env["API_KEY"],
            ConfigValue::Secret(crate::config::SecretRef::new("API_KEY"))
        );
        assert_eq!(c.env["ALL"], ConfigValue::Plain("/a:/b c".into()));
        assert_eq!(built.secrets["TOKEN"].expose(), "Bearer sk-123");
        assert_eq!(c.env["KEEP"], ConfigValue::Plain("${unknown}".into()));

        let mut bad = FormInput::default();
        bad.set("api_key", "k").set("size", "500");
        let err = build(&bp, &spec, &bad, "files").unwrap_err();
        assert!(err.to_string().contains("at most 100"), "{err}");
        let err = build(&bp, &spec, &FormInput::default(), "files").unwrap_err();
        assert!(err.to_string().contains("API key is required"), "{err}");
    }

    #[test]
    fn the_base_launch_without_overrides() {
        let mut m = manifest();
        m.server
            .mcp_config
            .as_mut()
            .unwrap()
            .platform_overrides
            .clear();
        let dir = Path::new("/b");
        let bp = blueprint(&m, &site(dir), &dirs());
        let spec = form(&bp, None, &Everything).unwrap();
        let mut input = FormInput::default();
        input
            .set("api_key", "k")
            .set("dirs", "/a\n/b")
            .set("verbose", "true");
        let c = build(&bp, &spec, &input, "files").unwrap().config;
        assert_eq!(c.command.as_deref(), Some("node"));
        let sep = std::path::MAIN_SEPARATOR;
        assert_eq!(
            c.args,
            [
                "/b/server/index.js",
                "/a",
                "/b",
                "--size=10",
                "true",
                &format!("/home/u{sep}x")
            ]
        );
    }

    #[test]
    fn undeclared_user_config_and_uv_servers() {
        let mut m = manifest();
        m.server
            .mcp_config
            .as_mut()
            .unwrap()
            .args
            .push("${user_config.nope}".into());
        m.server
            .mcp_config
            .as_mut()
            .unwrap()
            .platform_overrides
            .clear();
        let bp = blueprint(&m, &site(Path::new("/b")), &dirs());
        assert!(
            form(&bp, None, &Everything)
                .unwrap_err()
                .to_string()
                .contains("nope")
        );
        let mut m = manifest();
        m.server.kind = "uv".into();
        m.server.mcp_config = None;
        let bp = blueprint(&m, &site(Path::new("/b")), &dirs());
        let spec = form(&bp, None, &Everything).unwrap();
        assert_eq!(
            spec.command.as_deref(),
            Some("uv run --directory /b /b/server/index.js")
        );
    }
}
