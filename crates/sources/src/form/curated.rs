//! Curated catalog entries as blueprints: each connection option becomes an option plan with
//! its command and arguments (argument fields appended, split on white space), environment
//! fields, URL (editable where the entry says so), header fields and auth strategy (an API key
//! or bearer credential, or OAuth with the OAuth app's fields when the provider needs one).

use super::blueprint::{
    ArgPlan, AuthPlan, Blueprint, FormSource, Launch, OptionPlan, Split, ValuePlan,
};
use super::engine::oauth_client_fields;
use super::spec::{FieldTarget, FormField, InputKind, Picker};
use super::template::Template;
use crate::catalog::{CatalogAuth, CatalogTransport, ConnectionOption, Entry, Field, FieldKind};
use crate::config::TransportKind;
use plugboard_sandbox::Access;

/// The blueprint of a catalog entry.
pub fn blueprint(entry: &Entry) -> Blueprint {
    Blueprint {
        source: FormSource::Curated {
            entry_id: entry.id.clone(),
        },
        default_name: entry.id.clone(),
        options: entry.options.iter().map(option_plan).collect(),
    }
}

fn field(f: &Field, target: FieldTarget) -> FormField {
    let password = f.kind == FieldKind::Password;
    let (input, picker) = match f.kind {
        FieldKind::Text => (InputKind::Text, None),
        FieldKind::Password => (InputKind::Password, None),
        FieldKind::Folder => (InputKind::FilePath, Some(Picker::Directory)),
        FieldKind::Folders => (InputKind::List, Some(Picker::Directory)),
        FieldKind::File => (InputKind::FilePath, Some(Picker::File)),
    };
    FormField {
        key: f.key.clone(),
        label: f.label.clone(),
        target,
        input,
        required: f.required,
        secret: password && target != FieldTarget::Arg,
        secret_toggle: target != FieldTarget::Arg && picker.is_none(),
        placeholder: f.placeholder.clone(),
        help: f.help.clone(),
        default: f.default.clone(),
        picker,
        access: picker.map(|_| f.access.unwrap_or(Access::Write)),
        ..FormField::text(&f.key, &f.label, target)
    }
}

/// How an argument field's value becomes arguments: a list of folders one per line, a path
/// whole (spaces and all), other text one per word.
fn split_of(kind: FieldKind) -> Split {
    match kind {
        FieldKind::Folders => Split::Lines,
        FieldKind::Folder | FieldKind::File => Split::One,
        FieldKind::Text | FieldKind::Password => Split::Words,
    }
}

fn option_plan(option: &ConnectionOption) -> OptionPlan {
    let mut fields = Vec::new();
    let (launch, program) = match &option.transport {
        CatalogTransport::Stdio {
            command,
            args,
            env_fields,
            arg_fields,
        } => {
            fields.extend(env_fields.iter().map(|f| field(f, FieldTarget::Env)));
            fields.extend(arg_fields.iter().map(|f| field(f, FieldTarget::Arg)));
            let args = args
                .iter()
                .map(|a| ArgPlan::Fixed(Template::literal(a)))
                .chain(arg_fields.iter().map(|f| ArgPlan::Value {
                    field: f.key.clone(),
                    split: split_of(f.kind),
                }))
                .collect();
            let env = env_fields
                .iter()
                .map(|f| ValuePlan {
                    name: f.key.clone(),
                    value: Template::var(&f.key),
                })
                .collect();
            (
                Launch::Stdio {
                    command: command.clone(),
                    args,
                    env,
                },
                Some(command.clone()),
            )
        }
        CatalogTransport::Shttp(remote) | CatalogTransport::Sse(remote) => {
            let url = if remote.url_editable {
                fields.push(FormField {
                    input: InputKind::Url,
                    required: true,
                    placeholder: Some(remote.url.clone()),
                    help: Some("Change it for a regional or self-hosted endpoint.".into()),
                    default: Some(remote.url.clone()),
                    ..FormField::text("url", "Server URL", FieldTarget::Url)
                });
                Template::var("url")
            } else {
                Template::literal(&remote.url)
            };
            fields.extend(
                remote
                    .header_fields
                    .iter()
                    .map(|f| field(f, FieldTarget::Header)),
            );
            let headers = remote
                .header_fields
                .iter()
                .map(|f| ValuePlan {
                    name: f.key.clone(),
                    value: Template::var(&f.key),
                })
                .collect();
            let transport = match option.transport {
                CatalogTransport::Sse(_) => TransportKind::Sse,
                _ => TransportKind::Shttp,
            };
            (
                Launch::Remote {
                    transport,
                    url,
                    headers,
                },
                None,
            )
        }
    };
    let auth = match &option.auth {
        CatalogAuth::None => AuthPlan::None,
        CatalogAuth::ApiKey { header, credential } => {
            fields.push(credential_field(credential));
            AuthPlan::ApiKey {
                header: header.clone(),
                field: credential.secret_name.clone(),
            }
        }
        CatalogAuth::Bearer { credential } => {
            fields.push(credential_field(credential));
            AuthPlan::Bearer {
                field: credential.secret_name.clone(),
            }
        }
        CatalogAuth::Oauth2 { oauth } => {
            fields.extend(oauth_client_fields(oauth));
            AuthPlan::OAuth(oauth.clone())
        }
    };
    OptionPlan {
        id: option.id.clone(),
        label: option.label.clone(),
        launch,
        auth,
        fields,
        blocked: None,
        program,
        pin: None,
        notes: vec![],
        probe: option.probe.clone(),
        network: option.sandbox.as_ref().map(|needs| needs.network.clone()),
        bundle: None,
    }
}

fn credential_field(credential: &crate::catalog::Credential) -> FormField {
    FormField {
        input: InputKind::Password,
        required: !credential.optional,
        secret: true,
        placeholder: credential.placeholder.clone(),
        help: Some(credential.help.clone()),
        ..FormField::text(
            &credential.secret_name,
            &credential.label,
            FieldTarget::Credential,
        )
    }
}
