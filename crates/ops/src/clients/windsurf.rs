//! Windsurf: `~/.codeium/windsurf/mcp_config.json`, servers under `mcpServers` as
//! `{command, args, env}` or `{serverUrl, headers}` (remote servers use `serverUrl`), with an
//! optional `disabled` flag. Entries expand `${env:NAME}`.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::Windsurf,
    id: "windsurf",
    label: "Windsurf",
    servers_key: "mcpServers",
    launcher_type: None,
    launcher_allows_all_tools: false,
    url_keys: &["serverUrl", "url"],
    headers_helper: false,
    vars: VarSyntax {
        env_colon: true,
        bare: false,
        inputs: false,
        user_home: false,
    },
    deprecated: None,
    path,
    workspace_path: None,
};

fn path(dirs: &Dirs) -> Option<PathBuf> {
    dirs.home
        .as_ref()
        .map(|h| h.join(".codeium").join("windsurf").join("mcp_config.json"))
}
