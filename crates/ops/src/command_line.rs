//! Splitting a command line into words as a POSIX shell would, without expanding anything:
//! for a pasted command in the app's editor and for another client's `headersHelper` on import
//! (which Plugboard then runs without a shell).

/// Split `line` into words as a POSIX shell would: whitespace separates, `'…'` is literal,
/// `"…"` keeps `\"`, `\\`, `\$` and `` \` `` escapes, a backslash outside quotes escapes the
/// next character. No expansion happens.
pub fn split_command_line(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("a single quote (') is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("a double quote (\") is not closed".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("a double quote (\") is not closed".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => {
                    in_word = true;
                    word.push('\\');
                }
            },
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Whether `line` uses shell syntax beyond words and quotes (pipes, redirections, `;`, `&`,
/// substitutions, globs, `~`), which only a shell could run.
pub fn needs_a_shell(line: &str) -> bool {
    let mut single = false;
    let mut double = false;
    let mut escaped = false;
    for c in line.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '$' | '`' if !single => return true,
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | '~' | '\n' | '#'
                if !single && !double =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_command_line(r#"node "/tmp/my dir/index.js" stdio --name 'a b' x\ y"#).unwrap(),
            [
                "node",
                "/tmp/my dir/index.js",
                "stdio",
                "--name",
                "a b",
                "x y"
            ]
        );
        assert_eq!(
            split_command_line(r#"echo "a \"q\" \$HOME""#).unwrap(),
            ["echo", r#"a "q" $HOME"#]
        );
        assert_eq!(split_command_line("  ").unwrap(), Vec::<String>::new());
        assert!(split_command_line("echo 'open").is_err());
        assert!(split_command_line("echo \"open").is_err());
    }

    #[test]
    fn shell_syntax_is_recognised() {
        assert!(!needs_a_shell(r#"/opt/sso/token --aud "my api" 'a|b'"#));
        for line in [
            "a | b",
            "a; b",
            "a && b",
            "a > f",
            "echo $HOME",
            "echo `id`",
            "~/bin/t",
            "a *",
        ] {
            assert!(needs_a_shell(line), "{line}");
        }
    }
}
