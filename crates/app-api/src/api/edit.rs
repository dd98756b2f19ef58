//! Edit of an installed catalog or registry server through the form it was installed with:
//! [`Api::edit_form`] gives that form with what it was filled with (secret fields only marked
//! as set); the filled form comes back as an [`InstallRequest`] naming the server it edits, is
//! tested like an install, and is saved in place of the server, which keeps everything that is
//! its own rather than its form's (`reconfigure`). Servers with no such form (added by hand,
//! imported, from a bundle, or a registry version the marketplace no longer lists) are edited in
//! the raw editor.

use crate::config::ServerConfig;
use crate::form::blueprint::Blueprint;
use crate::form::{FormInput, FormSpec, PreparedServer};
use crate::reconfigure::{self, FormSource, RebuildError};

use super::{Api, ApiError, EditForm, ErrorCode, InstallRequest, ServerView};

impl Api {
    /// The install form of server `name`, filled as it was installed; `None` when it has none
    /// to show (then the raw editor edits it).
    pub fn edit_form(&self, name: &str) -> Result<Option<EditForm>, ApiError> {
        let old = self.servers.config().load()?.server(name)?;
        let Some(entry_id) = self.form_entry_of(&old)? else {
            return Ok(None);
        };
        let option = old.source.as_ref().map(|s| s.option.clone());
        let form = match self.install_form(&entry_id, option.as_deref()) {
            Ok(form) => form,
            // Its option is gone from the entry: the raw editor still edits it.
            Err(e) if e.code == ErrorCode::Catalog || e.code == ErrorCode::Invalid => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        if Some(&form.spec.option_id) != option.as_ref() {
            return Ok(None);
        }
        let fields = &form.spec.fields;
        let recorded = reconfigure::recorded(&old, |key| fields.iter().any(|f| f.key == key));
        // Installed before the form's values were kept: an empty form would lose them.
        if recorded.is_empty() && fields.iter().any(|f| f.required) {
            return Ok(None);
        }
        let origin = old.source.as_ref().and_then(|s| s.registry.as_ref());
        Ok(Some(EditForm {
            name: name.to_owned(),
            entry_id,
            values: recorded.values,
            secrets_set: recorded.secrets_set.into_iter().collect(),
            pinned: origin.is_none_or(|o| o.pinned.is_some()),
            allow_secret_args: old.allow_secret_args,
            form,
        }))
    }

    /// The entry whose form server `old` was installed with, when the marketplace still has
    /// it as it was installed (a catalog entry, or the registry version it runs).
    fn form_entry_of(&self, old: &ServerConfig) -> Result<Option<String>, ApiError> {
        let market = self.market()?;
        Ok(match reconfigure::form_source(&market, old) {
            Ok(FormSource::Catalog(entry)) => Some(entry.id.clone()),
            Ok(FormSource::Registry { row, .. }) => Some(row.server.name),
            Err(_) => None,
        })
    }

    /// The installed server a request edits, when it edits one: the request must keep its name
    /// (renaming is its own action).
    pub(super) fn edited(
        &self,
        request: &InstallRequest,
    ) -> Result<Option<ServerConfig>, ApiError> {
        let Some(editing) = request.editing.as_deref() else {
            return Ok(None);
        };
        if request.name.trim() != editing {
            return Err(ApiError::field(
                "name",
                format!("an edit keeps the name: rename “{editing}” with Rename"),
            ));
        }
        Ok(Some(self.servers.config().load()?.server(editing)?))
    }

    /// Installed server `old` rebuilt from the request's form (filled into `input`): secrets
    /// left empty kept, those it clears removed (optional ones only), what is the server's own
    /// kept, its consent to secrets on its command line checked again.
    pub(super) fn rebuild(
        &self,
        old: &ServerConfig,
        request: &InstallRequest,
        form: (&Blueprint, &FormSpec),
        input: FormInput,
    ) -> Result<PreparedServer, ApiError> {
        let cleared = request.cleared.iter().cloned().collect();
        reconfigure::rebuild(
            &self.servers,
            old,
            request.name.trim(),
            form,
            input,
            &cleared,
            request.allow_secret_args,
        )
        .map_err(|e| {
            let error = match e {
                RebuildError::RequiredCleared { ref field, .. } => {
                    ApiError::field(field, e.to_string())
                }
                RebuildError::Secret(e) => e.into(),
                RebuildError::Prepare(e) => e.into(),
                other => ApiError::new(ErrorCode::Invalid, other.to_string()),
            };
            error.scrub(request.values.values().map(String::as_str))
        })
    }

    /// Save an edited server in place of the installed one.
    pub(super) fn save_edit(
        &self,
        old: &ServerConfig,
        request: &InstallRequest,
        prepared: &PreparedServer,
    ) -> Result<ServerView, ApiError> {
        let pre_save_test = request
            .test_id
            .as_deref()
            .and_then(|id| self.tests.take_presave(id));
        reconfigure::replace(
            &self.servers,
            old,
            prepared,
            pre_save_test
                .as_ref()
                .map(|(started, result)| (*started, result)),
        )
        .map_err(|e| ApiError::from(e).scrub(request.values.values().map(String::as_str)))?;
        self.server(&prepared.name)
    }
}
