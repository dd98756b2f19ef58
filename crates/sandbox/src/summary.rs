//! A sandbox in words for the card, the CLI and the doctor: "Can read and write ~/notes; no
//! network", with what the kernel does not enforce said plainly.

use std::path::Path;

use crate::enforce::{Enforcement, NetworkEnforcement};
use crate::plan::{Plan, Reason};

/// `path` with the home written as `~`.
pub fn display_path(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// One sentence for the grants that matter to the user (the folders it names, the user's own),
/// the network, and what is not enforced.
pub fn summary(plan: &Plan, enforcement: &Enforcement, home: Option<&Path>) -> String {
    if !enforcement.in_force() {
        return if enforcement.abi == 0 {
            "Not sandboxed: this system's kernel has no Landlock".to_owned()
        } else {
            "Not sandboxed: the kernel refused the sandbox".to_owned()
        };
    }
    let personal = |reason: Reason| {
        !matches!(
            reason,
            Reason::System | Reason::Runtime | Reason::Cache | Reason::Temp
        )
    };
    let list = |grants: &[crate::plan::Grant]| {
        grants
            .iter()
            .filter(|g| personal(g.reason))
            .map(|g| display_path(&g.path, home))
            .collect::<Vec<_>>()
    };
    let writes = list(&plan.write);
    let reads = list(&plan.read);
    let mut parts = vec![];
    match (writes.is_empty(), reads.is_empty()) {
        (true, true) => parts.push("Sees none of your files".to_owned()),
        (false, _) => parts.push(format!("Can read and write {}", writes.join(", "))),
        _ => {}
    }
    if !reads.is_empty() {
        parts.push(format!("can read {}", reads.join(", ")));
    }
    parts.push(match &enforcement.network {
        NetworkEnforcement::Open => "any network".to_owned(),
        NetworkEnforcement::Blocked => "no network (TCP; UDP is not filtered)".to_owned(),
        NetworkEnforcement::Ports(ports) => format!(
            "network only to {} ({} {} on any host: the kernel filters ports, not hosts)",
            plan.network,
            if ports.len() == 1 { "port" } else { "ports" },
            ports
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        NetworkEnforcement::NotEnforced => format!(
            "network limited to {} in the settings but NOT enforced: this kernel's Landlock \
             (ABI {}) has no network rules",
            plan.network, enforcement.abi
        ),
    });
    let sentence = parts.join("; ");
    let mut chars = sentence.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => sentence,
    }
}
