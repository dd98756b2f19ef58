//! VS Code, user profile: `mcp.json` in the user settings directory (`~/.config/Code/User/` on
//! Linux, `~/Library/Application Support/Code/User/` on macOS, `%APPDATA%\Code\User\` on
//! Windows). Servers under `servers` with a `type`: `{type: "stdio", command, args, env,
//! envFile}` or `{type: "http" | "sse", url, headers}`; `inputs` declare prompted values
//! (`{type: "promptString", id, description, password}`) used as `${input:ID}`. Entries also
//! expand `${env:NAME}` and `${userHome}`. The file is JSONC. A project folder (workspace) has
//! one of the same format in `.vscode/mcp.json`; VS Code 1.140 shows both as deprecated.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::Vscode,
    id: "vscode",
    label: "VS Code",
    servers_key: "servers",
    launcher_type: Some("stdio"),
    launcher_allows_all_tools: false,
    url_keys: &["url"],
    headers_helper: false,
    vars: VarSyntax {
        env_colon: true,
        bare: false,
        inputs: true,
        user_home: true,
    },
    deprecated: Some(
        "VS Code 1.140 shows this file as deprecated: new servers go to GitHub Copilot's \
         own file (`~/.copilot/mcp-config.json`, or `.mcp.json` in a project folder)",
    ),
    path,
    workspace_path: Some(|folder| folder.join(".vscode").join("mcp.json")),
};

fn path(dirs: &Dirs) -> Option<PathBuf> {
    dirs.app_config()
        .map(|d| d.join("Code").join("User").join("mcp.json"))
}
