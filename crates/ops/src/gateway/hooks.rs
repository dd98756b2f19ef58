//! Hooks: commands a profile runs around each tool call whose namespaced name their matcher
//! covers. A `pre_tool_use` hook runs after the permission and before the call; a
//! `post_tool_use` hook after the call, before the result goes back. Each gets the call as one
//! JSON object on its standard input (secrets of the profile's servers redacted) and runs
//! through `sh -c` without Plugboard's secret variables, for at most its timeout:
//! - exit 0 lets the call go on; a `pre_tool_use` hook may print `{"arguments": {…}}` to
//!   replace the arguments;
//! - exit 2 blocks it: what the hook wrote to its standard error is returned to the model as a
//!   tool error;
//! - anything else (another exit code, a crash, the timeout, output that is not JSON) is a
//!   failed hook: the call is blocked when the profile is fail-closed, else it goes on (and
//!   the failure is said on Plugboard's standard error).

use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// When a hook runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
}

impl HookEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "pre_tool_use",
            HookEvent::PostToolUse => "post_tool_use",
        }
    }
}

/// One hook of a profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hook {
    pub event: HookEvent,
    /// The namespaced tool names it runs for: `*` matches any run of characters
    /// (`github__*`, `*__delete_*`, `*`).
    pub matcher: String,
    /// A shell command line (`sh -c`).
    pub command: String,
    /// Seconds it may run (default [`DEFAULT_TIMEOUT_SECS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

/// How long a hook may run unless it says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

impl Hook {
    /// Parse `EVENT:MATCHER=COMMAND` (`pre_tool_use:github__*=~/bin/check`).
    pub fn parse(text: &str) -> Result<Hook, String> {
        let bad = || {
            format!(
                "`{text}` is not EVENT:MATCHER=COMMAND (EVENT is pre_tool_use or post_tool_use)"
            )
        };
        let (head, command) = text.split_once('=').ok_or_else(bad)?;
        let (event, matcher) = head.split_once(':').ok_or_else(bad)?;
        Hook::new(event, matcher, command).map_err(|_| bad())
    }

    /// A hook running `command` for `event` (`pre_tool_use`, `post_tool_use`) on the tools
    /// `matcher` covers; what is wrong with it otherwise.
    pub fn new(event: &str, matcher: &str, command: &str) -> Result<Hook, String> {
        let event = match event.trim() {
            "pre_tool_use" => HookEvent::PreToolUse,
            "post_tool_use" => HookEvent::PostToolUse,
            other => {
                return Err(format!(
                    "`{other}` is not a hook's event: pre_tool_use or post_tool_use"
                ));
            }
        };
        let (matcher, command) = (matcher.trim(), command.trim());
        if matcher.is_empty() {
            return Err("a hook needs the tools it runs for (`*` for every tool)".into());
        }
        if command.is_empty() {
            return Err("a hook needs a command to run".into());
        }
        Ok(Hook {
            event,
            matcher: matcher.to_owned(),
            command: command.to_owned(),
            timeout_secs: None,
        })
    }

    /// Whether it runs for `event` on the tool `namespaced`.
    pub fn applies(&self, event: HookEvent, namespaced: &str) -> bool {
        self.event == event && glob_matches(&self.matcher, namespaced)
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1))
    }
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}={}",
            self.event.as_str(),
            self.matcher,
            self.command
        )
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// What the hooks decided for one call.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Go on (with these arguments, when a hook replaced them).
    Continue(Option<Map<String, Value>>),
    /// Blocked: the reason goes back to the model.
    Block(String),
}

/// The call a hook is shown.
pub struct HookCall<'a> {
    pub profile: &'a str,
    pub client: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    pub namespaced: &'a str,
    pub arguments: &'a Map<String, Value>,
    /// The result (post_tool_use).
    pub result: Option<&'a Value>,
}

/// Run the hooks of `event` that cover the call, in order; `redact` hides the profile's
/// secrets in what a hook is shown. The first block ends it; a `pre_tool_use` hook's new
/// arguments are what the next hook sees.
pub async fn run_hooks(
    hooks: &[Hook],
    event: HookEvent,
    call: &HookCall<'_>,
    fail_closed: bool,
    redact: &dyn Fn(&str) -> String,
) -> Verdict {
    let mut arguments: Option<Map<String, Value>> = None;
    for hook in hooks.iter().filter(|h| h.applies(event, call.namespaced)) {
        let shown = json!({
            "event": event.as_str(),
            "profile": call.profile,
            "client": call.client,
            "server": call.server,
            "tool": call.tool,
            "name": call.namespaced,
            "arguments": arguments.as_ref().unwrap_or(call.arguments),
            "result": call.result,
        });
        let input = redact(&shown.to_string());
        match run_one(hook, &input).await {
            Outcome::Ok(stdout) if event == HookEvent::PreToolUse => {
                match replaced_arguments(&stdout) {
                    Ok(Some(new)) => arguments = Some(new),
                    Ok(None) => {}
                    Err(why) => {
                        if let Some(block) = failed(hook, &why, fail_closed) {
                            return block;
                        }
                    }
                }
            }
            Outcome::Ok(_) => {}
            Outcome::Blocked(reason) => {
                return Verdict::Block(if reason.is_empty() {
                    format!("a hook of the profile blocked `{}`", call.namespaced)
                } else {
                    format!("a hook blocked `{}`: {reason}", call.namespaced)
                });
            }
            Outcome::Failed(why) => {
                if let Some(block) = failed(hook, &why, fail_closed) {
                    return block;
                }
            }
        }
    }
    Verdict::Continue(arguments)
}

/// A failed hook: said on standard error; a block when the profile is fail-closed.
fn failed(hook: &Hook, why: &str, fail_closed: bool) -> Option<Verdict> {
    eprintln!("plugboard serve: the hook `{hook}` failed: {why}");
    fail_closed.then(|| {
        Verdict::Block(format!(
            "a hook failed ({why}) and the profile blocks calls when its hooks fail"
        ))
    })
}

/// `{"arguments": {…}}` printed by a `pre_tool_use` hook; nothing printed keeps them.
fn replaced_arguments(stdout: &str) -> Result<Option<Map<String, Value>>, String> {
    if stdout.trim().is_empty() {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_str(stdout.trim()).map_err(|e| format!("its output is not JSON ({e})"))?;
    match value.get("arguments") {
        None => Ok(None),
        Some(Value::Object(arguments)) => Ok(Some(arguments.clone())),
        Some(_) => Err("its `arguments` is not a JSON object".into()),
    }
}

enum Outcome {
    Ok(String),
    Blocked(String),
    Failed(String),
}

/// The most a hook's output is read (standard output and standard error each).
const MAX_OUTPUT: u64 = 1 << 20;

async fn run_one(hook: &Hook, input: &str) -> Outcome {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&hook.command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PLUGBOARD_SECRET_") {
            command.env_remove(key);
        }
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(format!("it could not be started: {e}")),
    };
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let input = input.to_owned();
    let work = async {
        if let Some(mut stdin) = stdin.take() {
            // A hook that does not read its input is fine.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
        let mut out = String::new();
        let mut err = String::new();
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                let _ = s.take(MAX_OUTPUT).read_to_string(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                let _ = s.take(MAX_OUTPUT).read_to_string(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    match tokio::time::timeout(hook.timeout(), work).await {
        Ok((Ok(status), out, err)) => match status.code() {
            Some(0) => Outcome::Ok(out),
            Some(2) => Outcome::Blocked(err.trim().to_owned()),
            Some(code) => Outcome::Failed(format!("it exited with code {code}")),
            None => Outcome::Failed("it was killed by a signal".into()),
        },
        Ok((Err(e), _, _)) => Outcome::Failed(e.to_string()),
        Err(_) => {
            // The whole group: a shell's children too.
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                // SAFETY: signalling a process group this function started.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            Outcome::Failed(format!(
                "it took longer than {} s",
                hook.timeout().as_secs()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_cover_the_names_they_say() {
        for (pattern, name, expected) in [
            ("*", "a__b", true),
            ("github__*", "github__create_issue", true),
            ("github__*", "gitlab__x", false),
            ("*__delete_*", "files__delete_file", true),
            ("*__delete_*", "files__list", false),
            ("alpha__echo", "alpha__echo", true),
            ("alpha__echo", "alpha__echo2", false),
            ("a*a", "a", false),
            ("a*a", "aa", true),
        ] {
            assert_eq!(glob_matches(pattern, name), expected, "{pattern} {name}");
        }
    }

    #[test]
    fn hooks_parse_from_their_one_line_form() {
        let hook = Hook::parse("pre_tool_use:github__*=~/bin/check --strict").unwrap();
        assert_eq!(hook.event, HookEvent::PreToolUse);
        assert_eq!(hook.matcher, "github__*");
        assert_eq!(hook.command, "~/bin/check --strict");
        assert_eq!(
            hook.to_string(),
            "pre_tool_use:github__*=~/bin/check --strict"
        );
        for bad in [
            "",
            "pre_tool_use=x",
            "later:*=x",
            "pre_tool_use:*=",
            "pre_tool_use:=x",
        ] {
            assert!(Hook::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_hook_made_of_its_parts_says_what_it_lacks() {
        let hook = Hook::new(" post_tool_use", "a:b=c", " notify ").unwrap();
        assert_eq!(
            (hook.event, hook.matcher.as_str(), hook.command.as_str()),
            (HookEvent::PostToolUse, "a:b=c", "notify")
        );
        assert!(
            Hook::new("later", "*", "x")
                .unwrap_err()
                .contains("pre_tool_use")
        );
        assert!(
            Hook::new("pre_tool_use", " ", "x")
                .unwrap_err()
                .contains("tools")
        );
        assert!(
            Hook::new("pre_tool_use", "*", "")
                .unwrap_err()
                .contains("command")
        );
    }
}
