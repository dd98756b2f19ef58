//! What a registry row may name as a package and its version. Plugboard puts both on a runner's
//! command line (`npx -y NAME@VERSION`, `uvx NAME==VERSION`, `docker run IMAGE`), so a name that
//! starts with `-` or holds a space would become a runner option (`--call=…` makes npx run a
//! shell command). Each registry type is held to its own name grammar: npm's package names,
//! PEP 508 names (with extras), OCI references, NuGet ids.

/// Why `identifier` cannot be a `registry_type` package, or `None` when it can.
pub fn identifier_problem(registry_type: &str, identifier: &str) -> Option<String> {
    let shape_ok = match registry_type {
        "npm" => is_npm_name(identifier),
        "pypi" => is_pypi_name(identifier),
        "oci" | "docker" => is_oci_reference(identifier),
        "nuget" => is_nuget_id(identifier),
        _ => return None,
    };
    (!shape_ok).then(|| {
        format!(
            "its package identifier `{}` is not a valid {registry_type} name (a name that starts \
             with `-` or holds spaces or other characters would reach the runner as options)",
            identifier.escape_default()
        )
    })
}

/// Why `version` cannot be put after a package name, or `None` when it can.
pub fn version_problem(version: &str) -> Option<String> {
    let ok = version.len() <= 128
        && version.starts_with(|c: char| c.is_ascii_alphanumeric())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-~!".contains(c));
    (!ok).then(|| {
        format!(
            "its package version `{}` is not a version (letters, digits and `.`, `_`, `+`, `-`, \
             `~`, `!`, starting with a letter or digit)",
            version.escape_default()
        )
    })
}

/// npm: an optional `@scope/`, then a name of lower-case letters, digits and `-._~` that does
/// not start with `.` or `_`, 214 characters at most. Old packages keep their capitals, so
/// capitals are allowed.
fn is_npm_name(name: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_', '-'])
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
    };
    if name.len() > 214 {
        return false;
    }
    match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, bare)| part(scope) && part(bare)),
        None => part(name),
    }
}

/// PEP 508: letters, digits and `._-`, starting and ending with a letter or digit, with optional
/// `[extra,…]`.
fn is_pypi_name(name: &str) -> bool {
    let (bare, extras) = match name.split_once('[') {
        Some((bare, rest)) => match rest.strip_suffix(']') {
            Some(extras) => (bare, Some(extras)),
            None => return false,
        },
        None => (name, None),
    };
    let word = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphanumeric())
            && w.ends_with(|c: char| c.is_ascii_alphanumeric())
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    word(bare) && extras.is_none_or(|e| e.split(',').all(|x| word(x.trim())))
}

/// An OCI reference: `[host[:port]/]path[:tag][@algorithm:digest]`, each part starting with a
/// letter or digit.
fn is_oci_reference(reference: &str) -> bool {
    reference.len() <= 512
        && reference.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !reference.contains("//")
        && reference
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:@+".contains(c))
        && reference
            .split('/')
            .all(|part| part.starts_with(|c: char| c.is_ascii_alphanumeric()))
}

/// NuGet: letters, digits and `._-`, starting with a letter, digit or `_`, 100 at most.
fn is_nuget_id(id: &str) -> bool {
    id.len() <= 100
        && id.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_names_pass() {
        for (kind, name) in [
            ("npm", "@modelcontextprotocol/server-everything"),
            ("npm", "tavily-mcp"),
            ("npm", "JSONStream"),
            ("pypi", "mcp-server-fetch"),
            ("pypi", "mcp[cli]"),
            ("pypi", "Django_Thing.x"),
            ("oci", "ghcr.io/github/github-mcp-server"),
            ("oci", "docker.io/mcp/fetch:1.0.2"),
            ("oci", "localhost:5000/a/b@sha256:abc123"),
            ("nuget", "Microsoft.Mcp.Server"),
        ] {
            assert_eq!(identifier_problem(kind, name), None, "{kind} {name}");
        }
        for v in [
            "1.2.0",
            "0.1.0-beta.1",
            "2024.11.5",
            "1.0.0+build.7",
            "1!2.0",
        ] {
            assert_eq!(version_problem(v), None, "{v}");
        }
    }

    #[test]
    fn option_shaped_and_odd_names_are_refused() {
        for (kind, name) in [
            ("npm", "--call=touch X #"),
            ("npm", "-y"),
            ("npm", "a b"),
            ("npm", "@scope"),
            ("npm", "@-x/y"),
            ("npm", "pkg\n--call=x"),
            ("pypi", "--index-url=http://evil"),
            ("pypi", "pkg; rm -rf"),
            ("pypi", "pkg[x"),
            ("oci", "--privileged"),
            ("oci", "img -v /:/host"),
            ("oci", "a/-b"),
            ("nuget", "-Source evil"),
        ] {
            let why = identifier_problem(kind, name).unwrap_or_else(|| panic!("{kind} {name}"));
            assert!(why.contains("not a valid"), "{why}");
        }
        for v in ["--call=x", "1.0 --x", "", "1.0;x", "-1"] {
            assert!(version_problem(v).is_some(), "{v}");
        }
    }
}
