//! Claude Desktop: `claude_desktop_config.json` in the app's settings directory
//! (`~/Library/Application Support/Claude/` on macOS, `%APPDATA%\Claude\` on Windows,
//! `$XDG_CONFIG_HOME/Claude/` or `~/.config/Claude/` on Linux), servers under `mcpServers` as
//! `{command, args, env}`. No variable expansion.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::ClaudeDesktop,
    id: "claude-desktop",
    label: "Claude Desktop",
    servers_key: "mcpServers",
    launcher_type: None,
    launcher_allows_all_tools: false,
    url_keys: &["url"],
    headers_helper: false,
    vars: VarSyntax {
        env_colon: false,
        bare: false,
        inputs: false,
        user_home: false,
    },
    deprecated: None,
    path,
    workspace_path: None,
};

fn path(dirs: &Dirs) -> Option<PathBuf> {
    dirs.app_config()
        .map(|d| d.join("Claude").join("claude_desktop_config.json"))
}
