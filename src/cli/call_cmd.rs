//! `plugboard call`, `read` and `prompt`: one request in a session with an installed server.
//! Arguments are read by the tool's schema and checked before anything is sent (exit 2 with
//! the field); a tool not marked read-only needs a yes on the terminal or `--yes`; progress,
//! log messages and notices go to stderr as they arrive, and with `--trace` every JSON-RPC
//! message too. The result is printed by kind (or as JSON); an `isError` result exits 1.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::CliError;
use super::args::{CallArgs, PromptArgs, ReadArgs, SessionFlags};
use super::ask::{NoTerminal, TerminalAsker};
use super::input::key_value;
use super::output::print_json;
use super::test_cmd::runtime;
use crate::manage::Servers;
use crate::schema::{self, args::apply_pairs};
use crate::session::{
    self, CallOutcome, CallRequest, Confirmation, ContentItem, EventSink, Media, PromptOutcome,
    ReadOutcome, ResourceContent, Session, SessionError, SessionEvent, SessionOptions, ToolRisk,
    TraceEntry,
};

impl From<SessionError> for CliError {
    fn from(err: SessionError) -> Self {
        let mut message = err.to_string();
        if let SessionError::Open {
            failure,
            stderr_tail,
            ..
        } = &err
        {
            message = format!("{}\n  what to do: {}", failure.error, failure.hint);
            if let Some(tail) = stderr_tail {
                message.push_str("\n  last stderr lines:");
                for line in tail.lines() {
                    message.push_str(&format!("\n    | {line}"));
                }
            }
        }
        CliError {
            code: err.exit_code(),
            message,
        }
    }
}

/// Prints a session's events to stderr as they come.
pub fn event_printer(trace: bool) -> EventSink {
    Arc::new(move |event| match event {
        SessionEvent::Progress {
            progress,
            total,
            message,
            ..
        } => {
            let share = match total {
                Some(total) if total > 0.0 => {
                    format!("{progress}/{total} ({:.0} %)", progress / total * 100.0)
                }
                _ => format!("{progress}"),
            };
            let message = message.map(|m| format!(" {m}")).unwrap_or_default();
            eprintln!("  progress {share}{message}");
        }
        SessionEvent::Log {
            level,
            logger,
            text,
        } => {
            let logger = logger.map(|l| format!(" {l}")).unwrap_or_default();
            eprintln!("  [server {level}{logger}] {text}");
        }
        SessionEvent::Notice { text, .. } => eprintln!("  note: {text}"),
        SessionEvent::TaskStatus {
            status, message, ..
        } => match message {
            Some(message) => eprintln!("  task {status}: {message}"),
            None => eprintln!("  task {status}"),
        },
        SessionEvent::Closed { reason } => eprintln!("  note: {reason}"),
        SessionEvent::Trace { entry } if trace => print_trace_entry(&entry),
        _ => {}
    })
}

/// How much of a message `--trace` prints (`--json` has the trace's full text).
const TRACE_LINE_CHARS: usize = 2_000;

/// `[   12.3 ms] → request tools/call #2 (245 B)` and the message.
pub fn print_trace_entry(entry: &TraceEntry) {
    let arrow = if entry.direction == "out" {
        "→"
    } else {
        "←"
    };
    let id = entry
        .id
        .as_deref()
        .map(|id| format!(" #{id}"))
        .unwrap_or_default();
    let latency = entry
        .latency_ms
        .map(|ms| format!(", after {ms:.1} ms"))
        .unwrap_or_default();
    let cut = if entry.truncated { " (cut)" } else { "" };
    let json = crate::connect::truncate_chars(&entry.json, TRACE_LINE_CHARS);
    eprintln!(
        "[{:>9.1} ms] {arrow} {} {}{id} ({} B{latency}){cut}\n    {}",
        entry.at_ms,
        entry.kind,
        entry.method.as_deref().unwrap_or(""),
        entry.bytes,
        json
    );
}

/// Open a session with `name`: questions asked on the terminal when there is one.
fn open(
    rt: &tokio::runtime::Runtime,
    servers: &Servers,
    name: &str,
    flags: &SessionFlags,
) -> Result<Session, CliError> {
    let asker: Arc<dyn session::Asker> = if std::io::stdin().is_terminal() {
        Arc::new(TerminalAsker)
    } else {
        Arc::new(NoTerminal)
    };
    let options = SessionOptions {
        asker,
        events: event_printer(flags.trace),
        opener: Some(Arc::new(|url: &str| {
            plugboard_ops::browser::open_in_browser(url)
        })),
        timeout: None,
        trace: true,
    };
    if !flags.json.json {
        eprintln!("Connecting to `{name}`…");
    }
    Ok(rt.block_on(Box::pin(session::open_installed(servers, name, options)))?)
}

fn timeout_of(flags: &SessionFlags) -> Option<Duration> {
    flags.timeout.map(Duration::from_secs)
}

/// Run `work` until it ends; Ctrl-C cancels it (the server is told) and waits for that.
fn run_cancellable<T>(
    rt: &tokio::runtime::Runtime,
    session: &Session,
    call_id: &str,
    work: impl Future<Output = Result<T, SessionError>>,
) -> Result<T, SessionError> {
    rt.block_on(async {
        tokio::pin!(work);
        let result = tokio::select! {
            result = &mut work => result,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("  cancelling…");
                session.cancel(call_id);
                work.await
            }
        };
        // Let a cancel notice go out before the connection closes.
        tokio::time::sleep(Duration::from_millis(20)).await;
        session.close().await;
        result
    })
}

pub fn call(servers: &Servers, args: CallArgs) -> Result<(), CliError> {
    let base: Value = match &args.args {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| CliError::usage(format!("--args is not valid JSON: {e}")))?,
        None => Value::Null,
    };
    let rt = runtime()?;
    let session = open(&rt, servers, &args.name, &args.session)?;
    let prepared = prepare_call(&session, &args, base);
    let request = match prepared {
        Ok(request) => request,
        Err(err) => {
            rt.block_on(session.close());
            return Err(err);
        }
    };
    let call_id = request.call_id.clone().unwrap_or_default();
    let outcome = run_cancellable(&rt, &session, &call_id, session.call_tool(request));
    rt.shutdown_background();
    let outcome = outcome?;
    if args.session.json.json {
        print_json(&outcome)?;
    } else {
        print_call(&args.name, &outcome);
    }
    if outcome.is_error {
        return Err(CliError::failed(format!(
            "the tool `{}` reported an error",
            outcome.tool
        )));
    }
    Ok(())
}

/// The arguments read and checked, and the user's confirmation: nothing is sent before.
fn prepare_call(session: &Session, args: &CallArgs, base: Value) -> Result<CallRequest, CliError> {
    let offer = session.offer();
    let tool = session
        .lists()
        .tools
        .into_iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(args.tool.as_str()));
    let schema = tool
        .as_ref()
        .and_then(|t| t.get("inputSchema"))
        .cloned()
        .unwrap_or(Value::Null);
    let form = schema::compile(&schema);
    let arguments = apply_pairs(&form, base, &args.arg).map_err(CliError::usage)?;
    // Everything but the confirmation first: unknown tools and bad arguments exit 2 at once.
    session.check_call(&args.tool, &arguments, Confirmation::Destructive)?;
    let risk = offer
        .tools
        .iter()
        .find(|t| t.name == args.tool)
        .map(|t| t.risk)
        .unwrap_or(ToolRisk::Writes);
    let confirmation = if args.yes {
        Confirmation::Destructive
    } else {
        confirm(&args.name, &args.tool, risk)?
    };
    Ok(CallRequest {
        tool: args.tool.clone(),
        arguments,
        confirmation,
        timeout: timeout_of(&args.session),
        call_id: Some(session.new_call_id()),
    })
}

/// The confirmation a tool's risk needs, asked on the terminal (refused without one).
fn confirm(server: &str, tool: &str, risk: ToolRisk) -> Result<Confirmation, CliError> {
    if risk == ToolRisk::ReadOnly {
        return Ok(Confirmation::None);
    }
    let what = match risk {
        ToolRisk::Destructive => "is marked destructive",
        _ => "is not marked read-only, so it may change things",
    };
    if !std::io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "`{tool}` {what}; nothing was sent. Run with --yes to call it (standard input is not \
             a terminal, so Plugboard cannot ask)"
        )));
    }
    let refused = || CliError::usage(format!("`{tool}` was not called"));
    let mut answer = String::new();
    if risk == ToolRisk::Destructive {
        eprint!("`{tool}` of `{server}` {what}. Type its name to call it: ");
        std::io::stdin()
            .read_line(&mut answer)
            .map_err(|_| refused())?;
        return if answer.trim() == tool {
            Ok(Confirmation::Destructive)
        } else {
            Err(refused())
        };
    }
    eprint!("Call `{tool}` of `{server}`? It {what}. [y/N] ");
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(|_| refused())?;
    match answer.trim() {
        "y" | "Y" | "yes" => Ok(Confirmation::Confirmed),
        _ => Err(refused()),
    }
}

pub fn read(servers: &Servers, args: ReadArgs) -> Result<(), CliError> {
    let rt = runtime()?;
    let session = open(&rt, servers, &args.name, &args.session)?;
    let call_id = session.new_call_id();
    let work = session.read_resource(&args.uri, timeout_of(&args.session), Some(call_id.clone()));
    let outcome = run_cancellable(&rt, &session, &call_id, work);
    rt.shutdown_background();
    let outcome = outcome?;
    if let Some(path) = &args.save {
        return save_content(&outcome, path);
    }
    if args.session.json.json {
        return print_json(&outcome);
    }
    print_read(&outcome);
    Ok(())
}

/// `read --save FILE`: the resource's first content (text as it is, a blob decoded) in a new
/// file; an existing file is never replaced.
fn save_content(outcome: &ReadOutcome, path: &std::path::Path) -> Result<(), CliError> {
    let Some(content) = outcome.contents.first() else {
        return Err(CliError::failed(format!(
            "`{}` has no content to save",
            outcome.uri
        )));
    };
    let bytes = content
        .bytes()
        .map_err(|why| CliError::failed(format!("`{}` cannot be saved: {why}", outcome.uri)))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| CliError::usage(format!("cannot create {}: {e}", path.display())))?;
    std::io::Write::write_all(&mut file, &bytes)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    println!(
        "Saved `{}` ({}, {} bytes) to {}.",
        outcome.uri,
        content.mime_type.as_deref().unwrap_or("no type given"),
        bytes.len(),
        path.display()
    );
    Ok(())
}

pub fn prompt(servers: &Servers, args: PromptArgs) -> Result<(), CliError> {
    let mut arguments = BTreeMap::new();
    for pair in &args.arg {
        let (key, value) = key_value(pair, "--arg")?;
        arguments.insert(key.to_string(), value.to_string());
    }
    let rt = runtime()?;
    let session = open(&rt, servers, &args.name, &args.session)?;
    if !session
        .offer()
        .prompts
        .iter()
        .any(|p| p.name == args.prompt)
    {
        let known: Vec<String> = session
            .offer()
            .prompts
            .into_iter()
            .map(|p| p.name)
            .collect();
        rt.block_on(session.close());
        return Err(CliError::usage(format!(
            "`{}` is not a prompt of `{}`{}",
            args.prompt,
            args.name,
            if known.is_empty() {
                "; it lists none".to_string()
            } else {
                format!("; it has {}", known.join(", "))
            }
        )));
    }
    let call_id = session.new_call_id();
    let work = session.get_prompt(
        &args.prompt,
        arguments,
        timeout_of(&args.session),
        Some(call_id.clone()),
    );
    let outcome = run_cancellable(&rt, &session, &call_id, work);
    rt.shutdown_background();
    let outcome = outcome?;
    if args.session.json.json {
        return print_json(&outcome);
    }
    print_prompt(&outcome);
    Ok(())
}

fn print_call(server: &str, outcome: &CallOutcome) {
    let rounds = if outcome.rounds > 1 {
        format!(", {} rounds", outcome.rounds)
    } else {
        String::new()
    };
    if outcome.is_error {
        println!(
            "✗ `{}` of `{server}` reported an error ({:.0} ms{rounds}):",
            outcome.tool, outcome.ms
        );
    } else {
        println!(
            "✓ `{}` of `{server}` ({:.0} ms{rounds})",
            outcome.tool, outcome.ms
        );
    }
    for item in &outcome.content {
        print_item(item);
    }
    if let Some(structured) = &outcome.structured {
        let verdict = match structured.check.as_str() {
            "valid" => "matches the tool's output schema".to_string(),
            "invalid" => "does NOT match the tool's output schema".to_string(),
            "missing" => "missing".to_string(),
            _ => "not checked".to_string(),
        };
        println!("  structured content: {verdict}");
        for issue in &structured.issues {
            println!("    ✗ {}", issue.describe());
        }
        if let Some(note) = &structured.note {
            println!("    ({note})");
        }
        if let Some(value) = &structured.value {
            let text = serde_json::to_string_pretty(value).unwrap_or_default();
            for line in text.lines() {
                println!("    {line}");
            }
        }
    }
    for note in &outcome.notes {
        println!("  note: {note}");
    }
}

fn media_line(kind: &str, media: &Media) -> String {
    let mut line = format!("[{kind}] {}, {} bytes", media.mime_type, media.bytes);
    if let Some(detected) = &media.detected {
        line.push_str(&format!(" (the data is {detected})"));
    }
    if let Some(note) = &media.note {
        line.push_str(&format!("; {note}"));
    }
    line
}

fn print_resource(resource: &ResourceContent) {
    let mime = resource.mime_type.as_deref().unwrap_or("no type given");
    println!("  [resource] {} ({mime})", resource.uri);
    if let Some(text) = &resource.text {
        for line in text.lines() {
            println!("    {line}");
        }
    }
    if let Some(blob) = &resource.blob {
        println!("    {}", media_line("binary", blob));
    }
}

fn print_item(item: &ContentItem) {
    match item {
        ContentItem::Text { text } => {
            for line in text.lines() {
                println!("  {line}");
            }
        }
        ContentItem::Image { media } => println!("  {}", media_line("image", media)),
        ContentItem::Audio { media } => println!("  {}", media_line("audio", media)),
        ContentItem::ResourceLink {
            uri,
            name,
            mime_type,
            description,
            ..
        } => {
            let name = name.as_deref().map(|n| format!("{n} ")).unwrap_or_default();
            let mime = mime_type
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            println!("  [resource link] {name}<{uri}>{mime}");
            if let Some(description) = description {
                println!("    {description}");
            }
        }
        ContentItem::Resource { resource } => print_resource(resource),
        ContentItem::Other { json } => println!("  [other content] {json}"),
    }
}

fn print_read(outcome: &ReadOutcome) {
    println!("✓ {} ({:.0} ms)", outcome.uri, outcome.ms);
    for content in &outcome.contents {
        print_resource(content);
    }
}

fn print_prompt(outcome: &PromptOutcome) {
    println!("✓ prompt `{}` ({:.0} ms)", outcome.name, outcome.ms);
    if let Some(description) = &outcome.description {
        println!("  {description}");
    }
    for message in &outcome.messages {
        println!("  {}:", message.role);
        print_item(&message.content);
    }
}
