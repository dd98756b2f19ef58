//! GitHub Copilot's portable file, which VS Code (1.140 on) and the Copilot CLI share for the
//! user: `$COPILOT_HOME/mcp-config.json`, else `~/.copilot/mcp-config.json`. Servers under
//! `mcpServers` as `{type: "stdio", command, args, env, tools}` or `{type: "http", url,
//! headers, tools}`; `tools` lists the tools Copilot may call (`["*"]`: all of them, which is
//! what Plugboard's launchers write: Plugboard decides which tools a client sees). Entries
//! expand `${NAME}` from the environment. A project folder (workspace) has one of the same
//! format in `.mcp.json` at its root.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::Copilot,
    id: "copilot",
    label: "GitHub Copilot (VS Code, CLI)",
    servers_key: "mcpServers",
    launcher_type: Some("stdio"),
    launcher_allows_all_tools: true,
    url_keys: &["url"],
    headers_helper: false,
    vars: VarSyntax {
        env_colon: false,
        bare: true,
        inputs: false,
        user_home: false,
    },
    deprecated: None,
    path,
    workspace_path: Some(|folder| folder.join(".mcp.json")),
};

fn path(dirs: &Dirs) -> Option<PathBuf> {
    match &dirs.copilot_home {
        Some(home) => Some(home.join("mcp-config.json")),
        None => dirs
            .home
            .as_ref()
            .map(|h| h.join(".copilot").join("mcp-config.json")),
    }
}
