//! Cursor, global scope: `~/.cursor/mcp.json`, servers under `mcpServers` as
//! `{command, args, env}` or `{url, headers}`. Entries expand `${env:NAME}` and `${userHome}`.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::Cursor,
    id: "cursor",
    label: "Cursor",
    servers_key: "mcpServers",
    launcher_type: None,
    launcher_allows_all_tools: false,
    url_keys: &["url"],
    headers_helper: false,
    vars: VarSyntax {
        env_colon: true,
        bare: false,
        inputs: false,
        user_home: true,
    },
    deprecated: None,
    path,
    workspace_path: None,
};

fn path(dirs: &Dirs) -> Option<PathBuf> {
    dirs.home
        .as_ref()
        .map(|h| h.join(".cursor").join("mcp.json"))
}
