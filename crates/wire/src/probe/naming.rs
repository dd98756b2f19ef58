//! Agent-facing tool names: `mcp__<server>__<tool>`, restricted to `[A-Za-z0-9_-]`, at most 64
//! characters, unique within one server. Agents (and the model APIs behind them) reject other
//! names, so the rules are strict and deterministic: the same tool list always gives the same
//! names, and the first tool in listing order keeps the plain name when two collide.

use std::collections::HashSet;

/// The longest adapted name.
pub const MAX_LEN: usize = 64;
const PREFIX: &str = "mcp__";
const SEPARATOR: &str = "__";
/// The longest server part; longer server names are shortened (with a hash, so two long
/// server names that share a beginning still differ).
const MAX_SERVER_PART: usize = 32;
/// Hex digits of the hash appended to a shortened part.
const HASH_LEN: usize = 6;

/// `[A-Za-z0-9_-]` kept, every other character (one per Unicode scalar) becomes `_`. An empty
/// part becomes `fallback`.
pub fn sanitize(part: &str, fallback: &str) -> String {
    let cleaned: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        fallback.to_owned()
    } else {
        cleaned
    }
}

/// 32-bit FNV-1a: a stable, dependency-free hash for shortened names.
fn short_hash(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")[..HASH_LEN].to_owned()
}

/// `text` (ASCII) cut to `max` characters, ending in `_<hash of original>` when it was cut.
fn shorten(text: &str, original: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let keep = max.saturating_sub(HASH_LEN + 1);
    format!("{}_{}", &text[..keep], short_hash(original))
}

/// The server part of every adapted name of server `server`.
pub fn server_part(server: &str) -> String {
    shorten(&sanitize(server, "server"), server, MAX_SERVER_PART)
}

/// The adapted name of one tool, ignoring collisions with other tools of the server.
pub fn adapted_name(server: &str, tool: &str) -> String {
    let server = server_part(server);
    let budget = MAX_LEN - PREFIX.len() - server.len() - SEPARATOR.len();
    let tool_part = shorten(&sanitize(tool, "tool"), tool, budget);
    format!("{PREFIX}{server}{SEPARATOR}{tool_part}")
}

/// Adapted names for all tools of one server, in order, unique among themselves.
pub fn adapted_names<S: AsRef<str>>(server: &str, tools: &[S]) -> Vec<String> {
    names_under(PREFIX, server, tools)
}

/// The gateway's names for the tools (prompts, resource templates) of one server:
/// `<server>__<tool>`, by the same rules as [`adapted_names`] without the `mcp__` prefix.
pub fn namespaced_names<S: AsRef<str>>(server: &str, tools: &[S]) -> Vec<String> {
    names_under("", server, tools)
}

fn names_under<S: AsRef<str>>(prefix: &str, server: &str, tools: &[S]) -> Vec<String> {
    let server_part = server_part(server);
    let head = format!("{prefix}{server_part}{SEPARATOR}");
    let budget = MAX_LEN - head.len();
    let mut taken: HashSet<String> = HashSet::new();
    let mut names = Vec::with_capacity(tools.len());
    for tool in tools {
        let tool = tool.as_ref();
        let base = shorten(&sanitize(tool, "tool"), tool, budget);
        let mut candidate = format!("{head}{base}");
        let mut n = 2usize;
        while taken.contains(&candidate) {
            let suffix = format!("_{n}");
            let room = budget - suffix.len();
            let stem = if base.len() > room {
                &base[..room]
            } else {
                &base[..]
            };
            candidate = format!("{head}{stem}{suffix}");
            n += 1;
        }
        taken.insert(candidate.clone());
        names.push(candidate);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        name.len() <= MAX_LEN
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_kept() {
        assert_eq!(adapted_name("github", "get_me"), "mcp__github__get_me");
        assert_eq!(
            adapted_name("my-server", "list-repos"),
            "mcp__my-server__list-repos"
        );
    }

    #[test]
    fn dots_slashes_and_spaces_become_underscores() {
        assert_eq!(adapted_name("fs", "files.read"), "mcp__fs__files_read");
        assert_eq!(adapted_name("fs", "dir/list all"), "mcp__fs__dir_list_all");
    }

    #[test]
    fn unicode_becomes_one_underscore_per_character() {
        assert_eq!(adapted_name("s", "résumé"), "mcp__s__r_sum_");
        assert_eq!(adapted_name("s", "日本"), "mcp__s____");
        assert!(valid(&adapted_name("s", "🚀 launch")));
    }

    #[test]
    fn empty_parts_get_a_placeholder() {
        assert_eq!(adapted_name("", ""), "mcp__server__tool");
    }

    #[test]
    fn very_long_names_fit_and_stay_distinct() {
        let long_a = format!("{}_a", "x".repeat(100));
        let long_b = format!("{}_b", "x".repeat(100));
        let names = adapted_names("server", &[long_a.as_str(), long_b.as_str()]);
        for name in &names {
            assert!(valid(name), "{name}");
            assert_eq!(name.len(), MAX_LEN);
        }
        assert_ne!(names[0], names[1]);
        // The same input always gives the same output.
        assert_eq!(
            names,
            adapted_names("server", &[long_a.as_str(), long_b.as_str()])
        );
    }

    #[test]
    fn long_server_names_are_shortened_with_a_hash() {
        let a = "a".repeat(64);
        let b = format!("{}b", "a".repeat(63));
        let name_a = adapted_name(&a, "t");
        let name_b = adapted_name(&b, "t");
        assert!(valid(&name_a) && valid(&name_b));
        assert_ne!(name_a, name_b);
        assert_eq!(server_part(&a).len(), MAX_SERVER_PART);
        // Even with the longest server part, a long tool name still fits.
        let long_tool = "t".repeat(200);
        assert_eq!(adapted_name(&a, &long_tool).len(), MAX_LEN);
    }

    #[test]
    fn collisions_after_sanitising_get_numbered() {
        let names = adapted_names("s", &["a.b", "a_b", "a/b", "a_b_2"]);
        assert_eq!(
            names,
            vec![
                "mcp__s__a_b",
                "mcp__s__a_b_2",
                "mcp__s__a_b_3",
                "mcp__s__a_b_2_2"
            ]
        );
        let unique: HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn collisions_of_long_names_stay_within_the_limit() {
        let base = "y".repeat(120);
        let tools = vec![base.clone(), base.clone(), base.clone()];
        let names = adapted_names("srv", &tools);
        let unique: HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), 3);
        for name in &names {
            assert!(valid(name), "{name}");
        }
        assert!(names[1].ends_with("_2") && names[2].ends_with("_3"));
    }

    #[test]
    fn many_tools_are_all_valid_and_unique() {
        let tools: Vec<String> = (0..300).map(|i| format!("tool.{}", i % 150)).collect();
        let names = adapted_names("github.com/x", &tools);
        let unique: HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), 300);
        assert!(names.iter().all(|n| valid(n)));
        assert!(names[0].starts_with("mcp__github_com_x__"));
    }
}
