//! The generic format: a JSON file `{"mcpServers": {NAME: {command, args, env} | {url, type,
//! headers}}}` anywhere (`--file PATH`), as many clients and tools read. On import it also
//! accepts `serverUrl`, `${env:NAME}` and `${NAME}` forms.

use std::path::PathBuf;

use super::{ClientFormat, ClientKind, Dirs, VarSyntax};

pub static FORMAT: ClientFormat = ClientFormat {
    kind: ClientKind::Generic,
    id: "generic",
    label: "generic mcpServers JSON",
    servers_key: "mcpServers",
    launcher_type: None,
    launcher_allows_all_tools: false,
    url_keys: &["url", "serverUrl"],
    headers_helper: false,
    vars: VarSyntax {
        env_colon: true,
        bare: true,
        inputs: false,
        user_home: false,
    },
    deprecated: None,
    path,
    workspace_path: None,
};

fn path(_dirs: &Dirs) -> Option<PathBuf> {
    None
}
