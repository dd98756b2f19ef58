//! Claude Code, user scope: `~/.claude.json` (a state file that also holds Claude Code's own
//! settings and caches, all kept), servers under the top-level `mcpServers` as
//! `{type: "stdio", command, args, env}` or `{type: "http" | "sse", url, headers}`. Entries
//! expand `${VAR}` and `${VAR:-default}`.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::ClaudeCode,
    id: "claude-code",
    label: "Claude Code",
    servers_key: "mcpServers",
    launcher_type: Some("stdio"),
    launcher_allows_all_tools: false,
    url_keys: &["url"],
    headers_helper: true,
    vars: VarSyntax {
        env_colon: false,
        bare: true,
        inputs: false,
        user_home: false,
    },
    deprecated: None,
    path,
    workspace_path: None,
};

fn path(dirs: &Dirs) -> Option<PathBuf> {
    dirs.home.as_ref().map(|h| h.join(".claude.json"))
}
