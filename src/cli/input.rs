//! Reading values the user types or pipes in: secrets from stdin, `PLUGBOARD_SECRET_<KEY>` or a
//! no-echo prompt (never from argv), and `KEY=VALUE` pairs.

use std::io::{IsTerminal, Read};

use super::CliError;
use crate::secrets::{Sensitive, secret_env_var};

/// Where secret values come from during one command.
pub struct SecretInput {
    stdin_key: Option<String>,
    stdin_used: bool,
}

impl SecretInput {
    /// `stdin_key` is the one field whose value is read from standard input, if any.
    pub fn new(stdin_key: Option<String>) -> Self {
        SecretInput {
            stdin_key,
            stdin_used: false,
        }
    }

    /// The value of secret field `key`: from stdin if it was named, else from its environment
    /// variable, else from a prompt when there is a terminal. `None` when none of those has it.
    pub fn read(&mut self, key: &str, label: &str) -> Result<Option<Sensitive<String>>, CliError> {
        if self.stdin_key.as_deref() == Some(key) {
            self.stdin_used = true;
            return read_stdin(key).map(Some);
        }
        if let Ok(value) = std::env::var(secret_env_var(key)) {
            if !value.trim().is_empty() {
                return Ok(Some(Sensitive::new(value.trim().to_string())));
            }
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
