//! Renaming and removing a server where other apps launch it: the server changes in Plugboard,
//! then every launcher Plugboard wrote for it in other clients' files follows (renamed, or
//! taken out), so Cursor or Claude Desktop never run `plugboard run` for a name that is gone;
//! the gateway's profiles that name it follow too.

use crate::clients::launchers::{self, LauncherChange};
use crate::config::ServerConfig;
use crate::manage::{ManageError, RemoveOutcome, Servers};

/// Rename server `old` to `new`, and its launchers in other apps' files.
pub fn rename_server(
    servers: &Servers,
    old: &str,
    new: &str,
) -> Result<(ServerConfig, Vec<LauncherChange>), ManageError> {
    let server = servers.rename(old, new)?;
    let profiles = crate::gateway::ProfileStore::in_config_dir(servers.config().dir());
    if let Err(e) = profiles.follow_rename(old, new) {
        eprintln!("warning: the gateway profiles could not follow the rename: {e}");
    }
    Ok((
        server,
        launchers::follow_rename(servers.config().dir(), old, new),
    ))
}

/// Remove server `name` (deleting its secrets and revoking its OAuth tokens), and take its
/// launchers out of other apps' files.
pub async fn remove_server(
    servers: &Servers,
    name: &str,
) -> Result<(RemoveOutcome, Vec<LauncherChange>), ManageError> {
    let outcome = servers.remove_and_revoke(name).await?;
    let profiles = crate::gateway::ProfileStore::in_config_dir(servers.config().dir());
    if let Err(e) = profiles.follow_remove(name) {
        eprintln!("warning: the gateway profiles could not follow the removal: {e}");
    }
    Ok((
        outcome,
        launchers::follow_remove(servers.config().dir(), name),
    ))
}
