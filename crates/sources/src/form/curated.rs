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
use plugboard_store::secret_shapes::looks_secret;

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
    // A secret field is always kept in the keyring; a plain one may be (and is unless the user
    // says otherwise) when its name says it could hold a credential (not a path, an ID or a
    // host).
    let toggle = target != FieldTarget::Arg
        && f.kind == FieldKind::Text
        && (looks_secret(&f.key) || looks_secret(&f.label));
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
        secret: (password || toggle) && target != FieldTarget::Arg,
        secret_toggle: toggle,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog_field(key: &str, label: &str, kind: FieldKind) -> Field {
        Field {
            key: key.into(),
            label: label.into(),
            kind,
            required: false,
            placeholder: None,
            help: None,
            default: None,
            access: None,
        }
    }

    /// One look for secrets: a secret field is always kept in the keyring (no switch); a plain
    /// field whose name says it may hold a credential goes there unless the user switches it
    /// off; an ID, a host or a path never gets the switch.
    #[test]
    fn only_fields_that_may_hold_a_credential_offer_the_keyring_switch() {
        let shown = |key: &str, label: &str, kind: FieldKind| {
            let f = field(&catalog_field(key, label, kind), FieldTarget::Env);
            (f.secret, f.secret_toggle)
        };
        assert_eq!(
            shown("GITHUB_TOKEN", "Token", FieldKind::Password),
            (true, false)
        );
        assert_eq!(
            shown("SLACK_TEAM_ID", "Workspace ID", FieldKind::Text),
            (false, false)
        );
        assert_eq!(shown("DB_HOST", "Host", FieldKind::Text), (false, false));
        assert_eq!(
            shown("MEMORY_FILE_PATH", "Memory file", FieldKind::File),
            (false, false)
        );
        assert_eq!(
            shown("SERVICE_KEY", "Service key", FieldKind::Text),
            (true, true)
        );
        assert_eq!(shown("X", "API token", FieldKind::Text), (true, true));
        let arg = field(
            &catalog_field("API_TOKEN", "API token", FieldKind::Text),
            FieldTarget::Arg,
        );
        assert!(!arg.secret_toggle && !arg.secret);
    }
}
