//! The server's questions on a terminal: a form question field by field (read as each
//! field's type, checked against the requested schema before it is sent), a URL shown with
//! its host and opened only after a yes. Prompts go to stderr; stdout keeps the result.
//! Without a terminal every question is declined, and the user is told so.

use std::io::{BufRead, Write};

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use crate::schema::args::apply_pairs;
use crate::schema::{Form, FormNode, NodeKind};
use crate::session::{Answer, Asker, Question, QuestionMode};

/// Asks on the terminal.
pub struct TerminalAsker;

impl Asker for TerminalAsker {
    fn ask(&self, question: Question) -> BoxFuture<'static, Answer> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask(&question))
                .await
                .unwrap_or(Answer::Cancel)
        })
    }
}

/// Declines, saying why.
pub struct NoTerminal;

impl Asker for NoTerminal {
    fn ask(&self, question: Question) -> BoxFuture<'static, Answer> {
        eprintln!(
            "  note: the server asked \"{}\"; declined, because standard input is not a terminal",
            question.message
        );
        Box::pin(async { Answer::Decline })
    }
}

fn line(prompt: &str) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut text = String::new();
    match std::io::stdin().lock().read_line(&mut text) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(text.trim_end_matches(['\r', '\n']).to_string()),
    }
}

fn ask(question: &Question) -> Answer {
    eprintln!("\n? The server asks: {}", question.message);
    match &question.mode {
        QuestionMode::Url { url, host } => {
            eprintln!("  It wants you to open a page on {host}:\n    {url}");
            match line("  Open it in your browser? [y/N] ").as_deref() {
                Some("y" | "Y" | "yes") => Answer::Accept { content: None },
                Some(_) => Answer::Decline,
                None => Answer::Cancel,
            }
        }
        QuestionMode::Form { form, .. } => loop {
            match line("  Answer it? [Y]es, [n]o (decline), [c]ancel: ").as_deref() {
                None | Some("c" | "C") => return Answer::Cancel,
                Some("n" | "N" | "no") => return Answer::Decline,
                _ => {}
            }
            let Some(content) = fill(form) else {
                return Answer::Cancel;
            };
            match question.check(Answer::Accept {
                content: Some(content),
            }) {
                Ok(answer) => return answer,
                Err(issues) => {
                    for issue in issues {
                        eprintln!("  ✗ {}", issue.describe());
                    }
                }
            }
        },
    }
}

/// The answers to every field of a form (`None`: the input ended).
fn fill(form: &Form) -> Option<Value> {
    let NodeKind::Object { properties, .. } = &form.root.kind else {
        let text = line("  Your answer (JSON): ")?;
        return Some(serde_json::from_str(&text).unwrap_or(Value::String(text)));
    };
    let mut value = Value::Object(Map::new());
    for property in properties {
        loop {
            let text = line(&field_prompt(
                &property.key,
                &property.node,
                property.required,
            ))?;
            let text = match (text.is_empty(), &property.node.default) {
                (true, Some(default)) => {
                    value[&property.key] = default.clone();
                    break;
                }
                (true, None) => break,
                (false, _) => text,
            };
            let raw = as_typed(&property.node, &text);
            match apply_pairs(form, value.clone(), &[format!("{}={raw}", property.key)]) {
                Ok(filled) => {
                    value = filled;
                    break;
                }
                Err(why) => eprintln!("  ✗ {}", why.replace("`--arg ", "`")),
            }
        }
    }
    Some(value)
}

fn field_prompt(key: &str, node: &FormNode, required: bool) -> String {
    let label = node.title.as_deref().unwrap_or(key);
    let mut out = format!("  {label}");
    if let Some(description) = &node.description {
        out.push_str(&format!(" — {description}"));
    }
    match &node.kind {
        NodeKind::Enum { options } => {
            out.push('\n');
            for (i, option) in options.iter().enumerate().take(50) {
                out.push_str(&format!("      {}) {}\n", i + 1, option.label));
            }
            out.push_str("    choose a number");
        }
        NodeKind::Array { items, .. } => {
            if let NodeKind::Enum { options } = &items.kind {
                out.push('\n');
                for (i, option) in options.iter().enumerate().take(50) {
                    out.push_str(&format!("      {}) {}\n", i + 1, option.label));
                }
                out.push_str("    numbers, separated by commas");
            } else {
                out.push_str(" (a JSON list)");
            }
        }
        NodeKind::Boolean => out.push_str(" [y/n]"),
        NodeKind::Number { integer: true, .. } => out.push_str(" (a whole number)"),
        NodeKind::Number { .. } => out.push_str(" (a number)"),
        NodeKind::String {
            format: Some(format),
            ..
        } => out.push_str(&format!(" ({format})")),
        _ => {}
    }
    if let Some(default) = &node.default {
        out.push_str(&format!(" [default {default}]"));
    } else if required {
        out.push_str(" (required)");
    }
    out.push_str(": ");
    out
}

/// What the user typed, as `--arg` text for the field: a number picks an option, a comma
/// list picks several.
fn as_typed(node: &FormNode, text: &str) -> String {
    let pick = |options: &[crate::schema::EnumOption], word: &str| -> Option<Value> {
        let index: usize = word.trim().parse().ok()?;
        options.get(index.checked_sub(1)?).map(|o| o.value.clone())
    };
    match &node.kind {
        NodeKind::Enum { options } => match pick(options, text) {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => text.to_string(),
        },
        NodeKind::Array { items, .. } => match &items.kind {
            NodeKind::Enum { options } if !text.trim_start().starts_with('[') => {
                let picked: Vec<Value> = text
                    .split(',')
                    .filter(|w| !w.trim().is_empty())
                    .map(|w| pick(options, w).unwrap_or_else(|| Value::String(w.trim().into())))
                    .collect();
                Value::Array(picked).to_string()
            }
            _ => text.to_string(),
        },
        _ => text.to_string(),
    }
}
