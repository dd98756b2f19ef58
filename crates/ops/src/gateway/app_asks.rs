//! Questions a gateway puts to the Plugboard app ("may this call run?") when its client cannot
//! ask the user itself (it declares no elicitation).
//!
//! They meet in the private folder `gateway-asks/` of the config directory:
//! - the app, while it runs, holds an exclusive lock on `app.lock` there ([`AppDesk::open`]);
//!   a gateway asks the app only when that lock is held, so a question never waits for an app
//!   that is not there;
//! - a gateway writes its question as `<id>.json` and waits for `<id>.answer` (`allow` or
//!   `deny`), removing both when done; no answer in the time limit, or the app quitting while
//!   the question is open, is a no;
//! - the app lists the open questions ([`open_questions`]: those of gateways still running)
//!   and answers one ([`answer`]).
//!
//! The folder is the user's own (0700), as is everything in it: what could answer a question
//! there could as well change the profile's rules.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::hub::Asked;
use super::status::alive;
use crate::clock::now_ms;

/// The folder of the questions and of the app's lock, in the config directory.
pub const ASKS_DIR: &str = "gateway-asks";
const APP_LOCK: &str = "app.lock";
/// How often a waiting gateway looks for the answer.
const POLL: Duration = Duration::from_millis(100);
/// The most of a call's arguments a question shows.
const ARGUMENTS_SHOWN: usize = 4096;

/// One open question, as the app shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppQuestion {
    pub id: String,
    /// The gateway asking.
    pub gateway_pid: u32,
    pub profile: String,
    /// The name its client gave.
    pub client: Option<String>,
    pub server: String,
    /// The server's own name of the tool, and the name the client called.
    pub tool: String,
    pub namespaced: String,
    /// Not declared read-only: it may change things.
    pub side_effects: bool,
    /// The call's arguments as JSON (redacted, cut at 4 KiB).
    pub arguments: String,
    pub asked_at_ms: u64,
    /// When the gateway stops waiting (and refuses the call).
    pub expires_at_ms: u64,
}

/// The app's place at the desk: while this lives, gateways ask the app.
pub struct AppDesk {
    _lock: File,
}

impl AppDesk {
    /// Take the app's place (waiting for a gateway that is checking the lock at this moment).
    /// A second app waits until the first has gone.
    pub fn open(config_dir: &Path) -> std::io::Result<AppDesk> {
        let dir = asks_dir(config_dir);
        crate::fs::create_dir(&dir, true)?;
        let lock = crate::fs::open_lock_file(&dir.join(APP_LOCK))?;
        lock.lock()?;
        Ok(AppDesk { _lock: lock })
    }

    /// Take the app's place unless another app holds it.
    pub fn try_open(config_dir: &Path) -> std::io::Result<Option<AppDesk>> {
        let dir = asks_dir(config_dir);
        crate::fs::create_dir(&dir, true)?;
        let lock = crate::fs::open_lock_file(&dir.join(APP_LOCK))?;
        match lock.try_lock() {
            Ok(()) => Ok(Some(AppDesk { _lock: lock })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

/// Whether an app is at the desk now.
pub fn app_is_listening(config_dir: &Path) -> bool {
    let path = asks_dir(config_dir).join(APP_LOCK);
    let Ok(lock) = File::open(&path) else {
        return false;
    };
    // The app holds it exclusively; a shared lock that cannot be had means it is there. One
    // that can is let go when `lock` is dropped.
    matches!(
        lock.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

fn asks_dir(config_dir: &Path) -> PathBuf {
    config_dir.join(ASKS_DIR)
}

/// A question's id: 32 hexadecimal digits (nothing else is ever a file name here).
fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The call a gateway wants the user to allow.
pub struct CallToAsk<'a> {
    pub profile: &'a str,
    pub client: Option<&'a str>,
    pub server: &'a str,
    pub tool: &'a str,
    pub namespaced: &'a str,
    pub side_effects: bool,
    /// Already redacted.
    pub arguments: String,
}

/// Removes a question's files however the wait ends.
struct OpenQuestion {
    question: PathBuf,
    answer: PathBuf,
}

impl Drop for OpenQuestion {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.question);
        let _ = std::fs::remove_file(&self.answer);
    }
}

/// Ask the app whether `call` may run, waiting at most `limit`: [`Asked::Cannot`] when no app
/// is at the desk (or the question cannot be written), [`Asked::Unanswered`] when no answer
/// came in time or the app went away.
pub async fn ask_app(config_dir: &Path, call: CallToAsk<'_>, limit: Duration) -> Asked {
    if !app_is_listening(config_dir) {
        return Asked::Cannot;
    }
    let dir = asks_dir(config_dir);
    let id = format!("{:032x}", rand::random::<u128>());
    let open = OpenQuestion {
        question: dir.join(format!("{id}.json")),
        answer: dir.join(format!("{id}.answer")),
    };
    let asked_at_ms = now_ms();
    let mut arguments = call.arguments;
    if arguments.len() > ARGUMENTS_SHOWN {
        let mut cut = ARGUMENTS_SHOWN;
        while !arguments.is_char_boundary(cut) {
            cut -= 1;
        }
        arguments.truncate(cut);
        arguments.push('…');
    }
    let question = AppQuestion {
        id,
        gateway_pid: std::process::id(),
        profile: call.profile.to_owned(),
        client: call.client.map(str::to_owned),
        server: call.server.to_owned(),
        tool: call.tool.to_owned(),
        namespaced: call.namespaced.to_owned(),
        side_effects: call.side_effects,
        arguments,
        asked_at_ms,
        expires_at_ms: asked_at_ms + u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
    };
    let Ok(bytes) = serde_json::to_vec_pretty(&question) else {
        return Asked::Cannot;
    };
    if crate::fs::write_private(&open.question, &bytes).is_err() {
        return Asked::Cannot;
    }
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match std::fs::read_to_string(&open.answer)
            .as_deref()
            .map(str::trim)
        {
            Ok("allow") => return Asked::Yes,
            Ok("deny") => return Asked::No,
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline || !app_is_listening(config_dir) {
            return Asked::Unanswered;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The questions waiting for an answer, oldest first. Those of gateways that are gone, or past
/// their time, are removed.
pub fn open_questions(config_dir: &Path) -> Vec<AppQuestion> {
    let Ok(entries) = std::fs::read_dir(asks_dir(config_dir)) else {
        return vec![];
    };
    let now = now_ms();
    let mut found: Vec<AppQuestion> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|path| {
            let stem = path.file_stem()?.to_str()?;
            let question: AppQuestion = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            if question.id != stem || !valid_id(stem) {
                return None;
            }
            if !alive(question.gateway_pid) || question.expires_at_ms <= now {
                let _ = std::fs::remove_file(&path);
                return None;
            }
            Some(question)
        })
        .collect();
    found.sort_by(|a, b| a.asked_at_ms.cmp(&b.asked_at_ms).then(a.id.cmp(&b.id)));
    found
}

/// Why an answer could not be given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    #[error("that question is no longer open (its gateway stopped waiting)")]
    NotOpen,
    #[error("could not write the answer: {0}")]
    Io(#[from] std::io::Error),
}

/// Answer question `id`: the call runs when `allow`, else it is refused.
pub fn answer(config_dir: &Path, id: &str, allow: bool) -> Result<(), AnswerError> {
    if !valid_id(id) {
        return Err(AnswerError::NotOpen);
    }
    let dir = asks_dir(config_dir);
    if !dir.join(format!("{id}.json")).is_file() {
        return Err(AnswerError::NotOpen);
    }
    let word: &[u8] = if allow { b"allow" } else { b"deny" };
    crate::fs::write_private(&dir.join(format!("{id}.answer")), word)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> CallToAsk<'static> {
        CallToAsk {
            profile: "work",
            client: Some("cursor"),
            server: "files",
            tool: "delete",
            namespaced: "files__delete",
            side_effects: true,
            arguments: r#"{"path":"/tmp/x"}"#.into(),
        }
    }

    /// Answer the first question that opens with `allow`, from another thread (the app).
    fn answer_when_asked(dir: PathBuf, allow: bool) -> std::thread::JoinHandle<AppQuestion> {
        std::thread::spawn(move || {
            loop {
                if let Some(q) = open_questions(&dir).pop() {
                    answer(&dir, &q.id, allow).unwrap();
                    return q;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn without_the_app_nothing_is_asked_or_written() {
        let home = tempfile::tempdir().unwrap();
        let asked = run(ask_app(home.path(), call(), Duration::from_secs(5)));
        assert_eq!(asked, Asked::Cannot);
        // An app that has gone leaves its lock file, not its lock.
        drop(AppDesk::open(home.path()).unwrap());
        let asked = run(ask_app(home.path(), call(), Duration::from_secs(5)));
        assert_eq!(asked, Asked::Cannot);
        assert!(open_questions(home.path()).is_empty());
    }

    #[test]
    fn the_app_s_answer_decides_and_the_question_goes_away() {
        let home = tempfile::tempdir().unwrap();
        let desk = AppDesk::open(home.path()).unwrap();
        assert!(AppDesk::try_open(home.path()).unwrap().is_none());
        for allow in [true, false] {
            let app = answer_when_asked(home.path().to_owned(), allow);
            let asked = run(ask_app(home.path(), call(), Duration::from_secs(20)));
            assert_eq!(asked, if allow { Asked::Yes } else { Asked::No });
            let seen = app.join().unwrap();
            assert_eq!(seen.namespaced, "files__delete");
            assert_eq!(seen.client.as_deref(), Some("cursor"));
            assert_eq!(seen.arguments, r#"{"path":"/tmp/x"}"#);
            assert!(seen.side_effects);
            let left: Vec<_> = std::fs::read_dir(home.path().join(ASKS_DIR))
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            assert_eq!(left, [APP_LOCK]);
        }
        drop(desk);
    }

    #[test]
    fn no_answer_in_time_or_the_app_leaving_is_no() {
        let home = tempfile::tempdir().unwrap();
        let desk = AppDesk::open(home.path()).unwrap();
        let started = std::time::Instant::now();
        let asked = run(ask_app(home.path(), call(), Duration::from_millis(400)));
        assert_eq!(asked, Asked::Unanswered);
        assert!(started.elapsed() >= Duration::from_millis(400));
        assert!(open_questions(home.path()).is_empty());

        let dir = home.path().to_owned();
        let quits = std::thread::spawn(move || {
            while open_questions(&dir).is_empty() {
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(desk);
        });
        let asked = run(ask_app(home.path(), call(), Duration::from_secs(30)));
        quits.join().unwrap();
        assert_eq!(asked, Asked::Unanswered);
    }

    #[test]
    fn only_open_questions_of_running_gateways_can_be_answered() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(ASKS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        // A path, not an id; an id with no question.
        assert!(matches!(
            answer(home.path(), "../../mcp_config", true),
            Err(AnswerError::NotOpen)
        ));
        let id = "0123456789abcdef0123456789abcdef";
        assert!(matches!(
            answer(home.path(), id, true),
            Err(AnswerError::NotOpen)
        ));
        // The question of a gateway that was killed: not listed, and removed.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = AppQuestion {
            id: id.into(),
            gateway_pid: gone,
            profile: "work".into(),
            client: None,
            server: "files".into(),
            tool: "delete".into(),
            namespaced: "files__delete".into(),
            side_effects: true,
            arguments: "{}".into(),
            asked_at_ms: now_ms(),
            expires_at_ms: now_ms() + 60_000,
        };
        let path = dir.join(format!("{id}.json"));
        std::fs::write(&path, serde_json::to_vec(&stale).unwrap()).unwrap();
        assert!(open_questions(home.path()).is_empty());
        assert!(!path.exists());
    }
}
