//! Curated catalog entries as blueprints: each connection option becomes an option plan with
//! its command and arguments (argument fields appended, split on white space), environment
//! fields, URL (editable where the entry says so), header fields and auth strategy (an API key
//! or bearer credential, or OAuth with the OAuth app's fields when the provider needs one).

use super::blueprint::{
    ArgPlan, AuthPlan, Blueprint, FormSource, Launch, OptionPlan, Split, ValuePlan,
};
use super::engine::oauth_client_fields;
use super::spec::{FieldTarget, FormField, InputKind};
use super::template::Template;
use crate::catalog::{CatalogAuth, CatalogTransport, ConnectionOption, Entry, Field, FieldKind};
use crate::config::TransportKind;

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
    FormField {
        key: f.key.clone(),
        label: f.label.clone(),
        target,
        input: if password {
            InputKind::Password
        } else {
            InputKind::Text
        },
        required: f.required,
        secret: password && target != FieldTarget::Arg,
        secret_toggle: target != FieldTarget::Arg,
        placeholder: f.placeholder.clone(),
        help: f.help.clone(),
        default: f.default.clone(),
        ..FormField::text(&f.key, &f.label, target)
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
                    split: Split::Words,
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
