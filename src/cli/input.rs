//! Reading values the user types or pipes in: secrets from stdin, `PLUGBOARD_SECRET_<KEY>` or a
//! no-echo prompt (never from argv), and `KEY=VALUE` pairs.

use std::io::{IsTerminal, Read};

use super::CliError;
use crate::secrets::{Sensitive, secret_env_var};

/// Where secret values come from during one command.
pub struct SecretInput {
    stdin_key: Option<String>,
    stdin_used: bool,
    /// Secrets named by flags (`--secret-env K`, `--credential`, …) that a piped stdin answers:
    /// how many, and the values read so far.
    requested: usize,
    piped: Option<std::collections::VecDeque<String>>,
}

impl SecretInput {
    /// `stdin_key` is the one field whose value is read from standard input, if any.
    pub fn new(stdin_key: Option<String>) -> Self {
        SecretInput {
            stdin_key,
            stdin_used: false,
            requested: 0,
            piped: None,
        }
    }

    /// For commands whose flags name `count` secrets to set (`add`, `edit`): when standard
    /// input is piped (and no `--…-stdin` flag claimed it), it holds their values, as their help
    /// says: the whole input for one secret, one line each, in the order of the flags, for
    /// several.
    pub fn for_flags(stdin_key: Option<String>, count: usize) -> Self {
        SecretInput {
            requested: count,
            ..SecretInput::new(stdin_key)
        }
    }

    /// The next value from a piped stdin, for a secret named by a flag.
    fn next_piped(&mut self, key: &str) -> Result<Option<Sensitive<String>>, CliError> {
        if self.requested == 0 || self.stdin_key.is_some() || std::io::stdin().is_terminal() {
            return Ok(None);
        }
        if self.piped.is_none() {
            let mut raw = String::new();
            std::io::stdin()
                .read_to_string(&mut raw)
                .map_err(|e| CliError::usage(format!("could not read {key} from stdin: {e}")))?;
            let values = if self.requested == 1 {
                vec![raw.trim_end_matches(['\r', '\n']).to_string()]
            } else {
                raw.lines().map(str::to_string).collect()
            };
            self.piped = Some(values.into());
        }
        let next = self.piped.as_mut().and_then(|p| p.pop_front());
        Ok(next
            .filter(|v| !v.trim().is_empty())
            .map(|v| Sensitive::new(v.trim().to_string())))
    }

    /// The value of secret field `key`: from stdin if it was named, else from its environment
    /// variable, else from a prompt when there is a terminal. `None` when none of those has it.
    pub fn read(&mut self, key: &str, label: &str) -> Result<Option<Sensitive<String>>, CliError> {
        if self.stdin_key.as_deref() == Some(key) {
            self.stdin_used = true;
            return read_stdin(key).map(Some);
        }
        if let Ok(value) = std::env::var(secret_env_var(key))
            && !value.trim().is_empty()
        {
            return Ok(Some(Sensitive::new(value.trim().to_string())));
        }
        if let Some(value) = self.next_piped(key)? {
            return Ok(Some(value));
        }
        if std::io::stdin().is_terminal() && self.stdin_key.is_none() {
            let value = rpassword::prompt_password(format!("{label} ({key}, input hidden): "))
                .map_err(|e| {
                    CliError::usage(format!("could not read {key} from the terminal: {e}"))
                })?;
            let value = value.trim().to_string();
            return Ok((!value.is_empty()).then(|| Sensitive::new(value)));
        }
        Ok(None)
    }

    /// Fail if `--secret-stdin KEY` named a field that was never asked for.
    pub fn finish(&self) -> Result<(), CliError> {
        match (&self.stdin_key, self.stdin_used) {
            (Some(key), false) => Err(CliError::usage(format!(
                "--secret-stdin {key}: there is no secret field `{key}` here"
            ))),
            _ => Ok(()),
        }
    }
}

fn read_stdin(key: &str) -> Result<Sensitive<String>, CliError> {
    let mut raw = String::new();
    std::io::stdin()
        .read_to_string(&mut raw)
        .map_err(|e| CliError::usage(format!("could not read {key} from stdin: {e}")))?;
    let value = raw.trim_end_matches(['\r', '\n']).to_string();
    if value.trim().is_empty() {
        return Err(CliError::usage(format!(
            "--secret-stdin {key}: standard input was empty"
        )));
    }
    Ok(Sensitive::new(value))
}

/// Split `KEY=VALUE`; `what` names the flag in the error.
pub fn key_value<'a>(raw: &'a str, what: &str) -> Result<(&'a str, &'a str), CliError> {
    raw.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| CliError::usage(format!("{what} `{raw}` must look like KEY=VALUE")))
}

/// A line typed at a terminal (for required text fields when run interactively).
pub fn prompt_line(label: &str) -> Result<Option<String>, CliError> {
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    eprint!("{label}: ");
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| CliError::usage(format!("could not read {label}: {e}")))?;
    let line = line.trim().to_string();
    Ok((!line.is_empty()).then_some(line))
}
