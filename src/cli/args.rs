//! The command line's shape (clap). Parsing only; every command is run by the modules beside it.

use std::ffi::OsString;

use clap::{Args, FromArgMatches, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "plugboard",
    version,
    about = "Install, test, secure and sign in to MCP servers",
    long_about = "Install, test, secure and sign in to MCP servers.\n\nServers live in \
    $PLUGBOARD_HOME/mcp_config.json (default ~/.config/plugboard); their secrets live in the OS \
    keyring. Exit codes: 0 success, 1 the operation ran and failed, 2 usage or configuration error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the command line. clap's derive describes every subcommand before it parses,
    /// which costs a `plugboard test` of a fast server (or each `plugboard run` an MCP client
    /// starts) more than everything else it does before starting the server. So a plain
    /// `test` is read without clap ([`Cli::parse_test`]), the commands run most often are
    /// then parsed against a description of that one command, and anything that does not
    /// parse there (help, a mistake, any other command) goes through the full description,
    /// so every message and every result is exactly clap's.
    pub fn parse_args() -> Cli {
        let args: Vec<OsString> = std::env::args_os().collect();
        Cli::parse_test(&args)
            .or_else(|| Cli::parse_quick(&args))
            .unwrap_or_else(|| Cli::parse_full(args))
    }

    /// clap's full parse. Not inlined, like [`Cli::parse_quick`]: their descriptions, built
    /// on the stack, would otherwise make the frame of every command's caller that large
    /// (each page of it a page fault).
    #[inline(never)]
    fn parse_full(args: Vec<OsString>) -> Cli {
        Cli::parse_from(args)
    }

    /// `plugboard test` in its plain forms (a NAME, `--stdio [--env K=V]… -- CMD…` or
    /// `--url URL [--header K=V]…`, with `--json` and `--timeout N`), read without clap: even
    /// the one-command description costs a test of a fast server a tenth of its time (its
    /// heap and code, touched once per process, are page faults). Anything else, including
    /// every mistake, returns `None` and goes to clap, so its results and messages are
    /// clap's; a property test checks that this parse agrees with clap's wherever it answers.
    fn parse_test(args: &[OsString]) -> Option<Cli> {
        let mut words = args.iter().skip(1).map(|a| a.to_str());
        if words.next()?? != "test" {
            return None;
        }
        let mut test = TestArgs {
            name: None,
            stdio: false,
            url: None,
            transport: RemoteTransport::Auto,
            env: vec![],
            header: vec![],
            bearer_stdin: false,
            no_sandbox: false,
            timeout: None,
            json: JsonFlag { json: false },
            command: vec![],
        };
        // A value: the next word, unless it is missing or looks like an option.
        fn value<'a>(words: &mut impl Iterator<Item = Option<&'a str>>) -> Option<String> {
            let word = words.next()??;
            (!word.starts_with('-')).then(|| word.to_owned())
        }
        fn once(flag: &mut bool) -> Option<()> {
            (!std::mem::replace(flag, true)).then_some(())
        }
        while let Some(word) = words.next() {
            match word? {
                "--json" => once(&mut test.json.json)?,
                "--stdio" => once(&mut test.stdio)?,
                "--no-sandbox" => once(&mut test.no_sandbox)?,
                "--url" if test.url.is_none() => test.url = Some(value(&mut words)?),
                "--timeout" if test.timeout.is_none() => {
                    test.timeout = Some(value(&mut words)?.parse().ok()?)
                }
                "--env" => test.env.push(value(&mut words)?),
                "--header" => test.header.push(value(&mut words)?),
                "--" => {
                    for word in words.by_ref() {
                        test.command.push(word?.to_owned());
                    }
                }
                name if !name.starts_with('-') && test.name.is_none() => {
                    test.name = Some(name.to_owned())
                }
                _ => return None,
            }
        }
        let plain = match (&test.name, test.stdio, &test.url) {
            (Some(_), false, None) => {
                test.env.is_empty()
                    && test.header.is_empty()
                    && test.command.is_empty()
                    && !test.no_sandbox
            }
            (None, true, None) => test.header.is_empty() && !test.command.is_empty(),
            (None, false, Some(_)) => {
                test.env.is_empty() && test.command.is_empty() && !test.no_sandbox
            }
            _ => false,
        };
        plain.then_some(Cli {
            command: Command::Test(test),
        })
    }

    #[inline(never)]
    fn parse_quick(args: &[OsString]) -> Option<Cli> {
        let name = args.get(1)?.to_str()?;
        let (name, describe) = QUICK.iter().find(|(quick, _)| *quick == name)?;
        let matches = clap::Command::new("plugboard")
            .subcommand(describe(clap::Command::new(*name)))
            .try_get_matches_from(args)
            .ok()?;
        Cli::from_arg_matches(&matches).ok()
    }
}

/// Adds a command's arguments to its description.
type Describe = fn(clap::Command) -> clap::Command;

/// The commands [`Cli::parse_args`] parses on their own first, with their arguments.
const QUICK: [(&str, Describe); 4] = [
    ("test", TestArgs::augment_args),
    ("health", HealthArgs::augment_args),
    ("run", RunArgs::augment_args),
    ("list", JsonFlag::augment_args),
];

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search the marketplace (curated catalog and registries), or show one entry or server
    Catalog(CatalogArgs),
    /// Install a catalog entry or a registry server through its form
    Install(InstallArgs),
    /// Add a custom server (stdio command or URL)
    Add(AddArgs),
    /// List installed servers
    List(JsonFlag),
    /// Show one installed server (secrets only as set / not set)
    Show(NameArgs),
    /// Change an installed server; unmentioned fields and secrets are kept
    Edit(EditArgs),
    /// Enable a server
    Enable(NameOnly),
    /// Disable a server without deleting it
    Disable(NameOnly),
    /// Rename a server (its secrets follow it)
    Rename(RenameArgs),
    /// Remove a server and delete its secrets
    Remove(NameOnly),
    /// Test a server for real: connect, handshake, list tools, prove the credentials
    Test(TestArgs),
    /// Test every enabled server at once
    Health(HealthArgs),
    /// Sign in to a remote server with OAuth
    Auth(AuthArgs),
    /// A short guided tour of Plugboard on the embedded catalog
    Tour,
    /// Show how a server's tools differ from the approved pin (exit 1 when they differ)
    Diff(NameArgs),
    /// Accept the server's last seen tools as its new pin
    Approve(NameArgs),
    /// Diagnose why servers do not work here (PATH, runtimes, logs, env, DNS, TLS, endpoint, auth)
    Doctor(DoctorArgs),
    /// Serve an installed server on stdio, for other MCP clients (secrets added here)
    Run(RunArgs),
    /// Serve a profile's servers as one MCP server on stdio (the gateway): namespaced tools,
    /// failures isolated, permissions, an activity record
    Serve(ServeArgs),
    /// The gateway's profiles: named sets of servers with their permissions
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// The calls made through the gateway (their shape, never their values)
    Activity(ActivityArgs),
    /// What a server may touch (folders, network) in its sandbox; change it (then re-test)
    Sandbox(SandboxArgs),
    /// Write Plugboard's servers into another MCP client's config as `plugboard run` launchers
    Export(ExportArgs),
    /// Import the servers of another MCP client's config (secrets move into Plugboard's store)
    Import(ImportArgs),
    /// Which secret store is used (OS keyring or encrypted file), and whether it works
    #[command(subcommand)]
    Secrets(SecretsCommand),
    /// The MCP clients Plugboard knows: their config files, Plugboard's servers in them and the
    /// other entries (new ones since the last look marked); `--remove ENTRY` takes one out
    Clients(ClientsArgs),
    /// The MCP registries whose servers the catalog lists: sync, status, add, remove
    #[command(subcommand)]
    Registry(RegistryCommand),
    /// Installed registry servers with a newer version in their registry
    Outdated(OutdatedArgs),
    /// Move an installed registry server to a newer version: same values and secrets, tested
    /// before it is saved, with the tool diff
    Update(UpdateArgs),
    /// The organisation policy in force (which registries, which servers may be installed)
    Policy(JsonFlag),
    /// A server's tools: state, annotations, cost; switch single tools off and on
    Tools(ToolsArgs),
    /// What the enabled servers' tool definitions cost a model, and each client's tool cap
    Budget(BudgetArgs),
    /// Call a tool of a server (arguments checked against its input schema first)
    Call(CallArgs),
    /// Read a resource of a server
    Read(ReadArgs),
    /// Render a prompt of a server
    Prompt(PromptArgs),
    /// Write a redacted diagnostics bundle of a server for a bug report
    Diagnose(DiagnoseArgs),
}

/// What `call`, `read` and `prompt` share.
#[derive(Debug, Args)]
pub struct SessionFlags {
    /// Print every JSON-RPC message of the session to stderr as it goes (redacted)
    #[arg(long)]
    pub trace: bool,
    /// Seconds to allow the request (default 300)
    #[arg(long)]
    pub timeout: Option<u64>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The installed server
    pub name: String,
    /// The tool to call
    pub tool: String,
    /// The arguments as one JSON object
    #[arg(long, value_name = "JSON")]
    pub args: Option<String>,
    /// One argument, read as the type its schema gives it (repeatable; `a.b=V` reaches into
    /// objects)
    #[arg(long = "arg", value_name = "K=V")]
    pub arg: Vec<String>,
    /// Call a tool that is not marked read-only without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub session: SessionFlags,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The installed server
    pub name: String,
    /// The resource's URI
    pub uri: String,
    /// Write its content to this new file instead of printing it (a tool's UI: its HTML)
    #[arg(long, value_name = "FILE")]
    pub save: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub session: SessionFlags,
}

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The installed server
    pub name: String,
    /// The prompt
    pub prompt: String,
    /// One argument (repeatable)
    #[arg(long = "arg", value_name = "K=V")]
    pub arg: Vec<String>,
    #[command(flatten)]
    pub session: SessionFlags,
}

#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// The installed server
    pub name: String,
    /// The file to write the bundle to (JSON)
    #[arg(long, value_name = "FILE")]
    pub bundle: std::path::PathBuf,
    /// Seconds to allow connecting to the server
    #[arg(long)]
    pub timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub struct OutdatedArgs {
    /// Use the cached registry listings as they are (no sync first)
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The installed server
    pub name: String,
    /// The version to move to (default: the registry's latest)
    #[arg(long, value_name = "VERSION")]
    pub to: Option<String>,
    /// A value for a field the new version adds; repeat for more fields
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Show how the launch changes (command, package, host, env), but start and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask: start the new version even where its secrets go to a new destination, and
    /// apply it even when its tools changed
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Changes apply in this order: --only, --disable-all/--enable-all, \
    --disable-annotated, --disable, --enable. A tool name the server's last test did not list \
    changes nothing (exit 2). Every client that launches `plugboard run NAME` sees the result."
)]
pub struct ToolsArgs {
    /// The installed server
    pub name: String,
    /// Switch these tools off
    #[arg(long, num_args = 1.., value_name = "TOOL")]
    pub disable: Vec<String>,
    /// Switch these tools on
    #[arg(long, num_args = 1.., value_name = "TOOL")]
    pub enable: Vec<String>,
    /// Switch every tool off
    #[arg(long, conflicts_with = "enable_all")]
    pub disable_all: bool,
    /// Switch every tool on
    #[arg(long)]
    pub enable_all: bool,
    /// Switch these tools on and every other tool off
    #[arg(long, num_args = 1.., value_name = "TOOL", conflicts_with_all = ["disable_all", "enable_all"])]
    pub only: Option<Vec<String>>,
    /// Switch off the tools whose annotations (or their absence) put them in this class
    #[arg(long, value_enum, value_name = "CLASS")]
    pub disable_annotated: Option<AnnotatedArg>,
    /// What tools that appear later get: enabled, disabled, or auto (disabled until reviewed
    /// when the server's tools are pinned and approved, else enabled)
    #[arg(long, value_enum, value_name = "DEFAULT")]
    pub new_tools: Option<NewToolsArg>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Fetch what changed in each registry since the last sync (everything the first time)
    Sync(RegistrySyncArgs),
    /// Each registry: where it comes from, its cached servers and how old the cache is
    Status(JsonFlag),
    /// Also read this registry (after the others; its servers are listed with theirs)
    Add(RegistryUrlArgs),
    /// Stop reading this registry (the official one too)
    Remove(RegistryUrlArgs),
    /// Whether registry launches resolve dependencies as of the version's publication date
    Pinning(PinningArgs),
}

#[derive(Debug, Args)]
pub struct RegistrySyncArgs {
    /// Fetch everything again instead of the changes since the last sync
    #[arg(long)]
    pub full: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct RegistryUrlArgs {
    /// The registry's base URL (it serves /v0.1/servers)
    pub url: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Toggle {
    On,
    Off,
}

#[derive(Debug, Args)]
pub struct PinningArgs {
    /// on (the default) or off
    #[arg(value_enum)]
    pub state: Toggle,
}

/// A class of tools by their annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnnotatedArg {
    /// May delete or overwrite (destructiveHint; assumed when not said)
    Destructive,
    /// Reaches outside systems (openWorldHint; assumed when not said)
    OpenWorld,
    /// Not marked read-only (readOnlyHint): may change things
    NotReadOnly,
}

/// The default for tools that appear later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NewToolsArg {
    Enabled,
    Disabled,
    Auto,
}

#[derive(Debug, Args)]
pub struct BudgetArgs {
    /// Only this client: the servers its Plugboard entries launch, against its tool cap
    #[arg(long, value_enum)]
    pub client: Option<ClientArg>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The installed server to run
    pub name: String,
    /// Run even if its tools changed since they were approved (`plugboard diff NAME` shows how)
    #[arg(long)]
    pub allow_unapproved: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The profile to serve (`default`: every enabled server)
    #[arg(long, default_value = "default")]
    pub profile: String,
    /// Show the gateways running now, their clients and each server's state, and exit
    #[arg(long)]
    pub status: bool,
    /// Serve streamable HTTP at this loopback address (default 127.0.0.1:8411; port 0 picks a
    /// free one) instead of stdio; clients send the profile's bearer token
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8411")]
    pub http: Option<String>,
    /// Print the profile's bearer token as JSON headers, for a client's headers helper, and
    /// exit (never to a terminal)
    #[arg(long, conflicts_with_all = ["http", "status", "rotate_token"])]
    pub print_headers: bool,
    /// Replace the profile's bearer token and exit (a running gateway keeps the old one until
    /// it restarts)
    #[arg(long, conflicts_with_all = ["http", "status"])]
    pub rotate_token: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Create a profile of these installed servers
    Create {
        name: String,
        /// An installed server; repeat for more
        #[arg(long = "server", value_name = "NAME", required = true)]
        servers: Vec<String>,
    },
    /// Every profile, its servers and rules
    List {
        #[command(flatten)]
        json: JsonFlag,
    },
    /// One profile
    Show {
        name: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Change a profile's servers and permission rules. A rule is a server name, a namespaced
    /// tool (`server__tool`) or `*side_effects` (every tool not declared read-only)
    Edit {
        name: String,
        /// Add an installed server
        #[arg(long = "add", value_name = "SERVER")]
        add: Vec<String>,
        /// Take a server out
        #[arg(long = "remove", value_name = "SERVER")]
        remove: Vec<String>,
        /// Let calls matching RULE through
        #[arg(long, value_name = "RULE")]
        allow: Vec<String>,
        /// Ask the user before calls matching RULE (through the client, or the Plugboard app
        /// when the client cannot ask)
        #[arg(long, value_name = "RULE")]
        ask: Vec<String>,
        /// Refuse calls matching RULE
        #[arg(long, value_name = "RULE")]
        deny: Vec<String>,
        /// Hide the tools matching RULE from this profile's clients (not listed, not called)
        #[arg(long, value_name = "RULE")]
        hide: Vec<String>,
        /// Drop the rule RULE
        #[arg(long, value_name = "RULE")]
        clear: Vec<String>,
        /// Run a command around the calls MATCHER covers (`*` matches any text); EVENT is
        /// pre_tool_use or post_tool_use. The call comes as JSON on its stdin; exit 2 blocks it
        #[arg(long, value_name = "EVENT:MATCHER=COMMAND")]
        hook: Vec<String>,
        /// Remove every hook of the profile (before adding those given)
        #[arg(long)]
        clear_hooks: bool,
        /// Block calls when a hook fails (crashes, times out, exits other than 0 or 2)
        #[arg(long, conflicts_with = "hooks_fail_open")]
        hooks_fail_closed: bool,
        /// Let calls go on when a hook fails (the default)
        #[arg(long)]
        hooks_fail_open: bool,
        /// Start each server on its first use, not when the gateway starts (until then its
        /// tools are listed as its last test saw them; one never tested starts at once)
        #[arg(long, conflicts_with = "eager")]
        lazy: bool,
        /// Start every server when the gateway starts (the default)
        #[arg(long)]
        eager: bool,
    },
    /// Remove a profile (its servers stay installed)
    Remove { name: String },
}

#[derive(Debug, Args)]
pub struct ActivityArgs {
    /// Only calls to this server
    #[arg(long)]
    pub server: Option<String>,
    /// The last N calls (default 50)
    #[arg(long, default_value_t = 50)]
    pub last: usize,
    /// Keep printing calls as they are made (with --json: one JSON object per line)
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// The installed server
    pub name: String,
    /// Turn the sandbox on
    #[arg(long, conflicts_with = "off")]
    pub on: bool,
    /// Turn the sandbox off: the server runs with all of your rights
    #[arg(long)]
    pub off: bool,
    /// The network it may use: `any`, `none` or HOST[:PORT][,HOST[:PORT]…]
    #[arg(long, value_name = "any|none|HOST[:PORT],…")]
    pub network: Option<String>,
    /// A folder or file it may read (repeatable; absolute or ~/…)
    #[arg(long, value_name = "PATH")]
    pub allow_read: Vec<String>,
    /// A folder or file it may read and change (repeatable)
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<String>,
    /// A folder or file taken away from what its launch would grant (repeatable)
    #[arg(long, value_name = "PATH")]
    pub deny: Vec<String>,
    /// After a change, do not re-test the server
    #[arg(long)]
    pub no_test: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

/// The other MCP clients whose config files Plugboard reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClientArg {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    /// GitHub Copilot's own file, which VS Code 1.140 and the Copilot CLI share
    Copilot,
    Windsurf,
    Generic,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The client to export to
    #[arg(long, value_enum)]
    pub client: ClientArg,
    /// The file to write (the generic format needs one; others default to the client's own)
    #[arg(long)]
    pub file: Option<std::path::PathBuf>,
    /// A project folder: the client's file in it (`.mcp.json` for copilot, `.vscode/mcp.json`
    /// for vscode) instead of the user-level one
    #[arg(long, value_name = "DIR", conflicts_with = "file")]
    pub workspace: Option<std::path::PathBuf>,
    /// Write the file (with a timestamped backup); without it, print what would be written
    #[arg(long)]
    pub write: bool,
    /// Write even a file whose comments or inexact numbers the rewrite would lose
    #[arg(long, requires = "write")]
    pub force: bool,
    /// Write one gateway entry (`plugboard serve --profile P`) serving this profile, instead
    /// of a launcher per server (the launchers Plugboard wrote there are removed)
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,
    /// With --profile: an entry for the gateway over HTTP at this loopback address (default
    /// 127.0.0.1:8411) instead, reached with the token the client's headers helper asks
    /// Plugboard for (clients with headers helpers only: claude-code); keep `plugboard serve
    /// --profile P --http ADDR` running for it
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8411",
        requires = "profile"
    )]
    pub http: Option<String>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct ClientsArgs {
    /// The client whose file `--remove` changes
    #[arg(long, value_enum, requires = "remove")]
    pub client: Option<ClientArg>,
    /// Take this entry out of the client's file (a backup beside it keeps the file as it was)
    #[arg(long, value_name = "ENTRY", requires = "client")]
    pub remove: Option<String>,
    /// Rewrite the file even when its comments or inexact numbers would be lost
    #[arg(long, requires = "remove")]
    pub force: bool,
    /// Also show the files the clients read in this project folder (`.mcp.json`,
    /// `.vscode/mcp.json`); with `--remove`, take the entry out of that folder's file
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("from").required(true).args(["client", "file"])))]
pub struct ImportArgs {
    /// Import from this client's config file
    #[arg(long, value_enum)]
    pub client: Option<ClientArg>,
    /// Import from this file
    #[arg(long)]
    pub file: Option<std::path::PathBuf>,
    /// A project folder: the client's file in it (`.mcp.json` for copilot, `.vscode/mcp.json`
    /// for vscode) instead of the user-level one
    #[arg(long, value_name = "DIR", conflicts_with = "file", requires = "client")]
    pub workspace: Option<std::path::PathBuf>,
    /// The format of --file (default: guessed from its content)
    #[arg(long, value_enum)]
    pub format: Option<ClientArg>,
    /// Only show what would be imported
    #[arg(long)]
    pub dry_run: bool,
    /// Import without asking for confirmation
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Also treat this env variable or header as a secret (repeatable)
    #[arg(long, value_name = "KEY")]
    pub secret: Vec<String>,
    /// Import only this entry of the file (repeatable)
    #[arg(long, value_name = "ENTRY")]
    pub only: Vec<String>,
    /// Import disabled, sandboxed without network and without starting anything: for an entry
    /// you did not put there yourself
    #[arg(long, conflicts_with = "rewrite_source")]
    pub quarantine: bool,
    /// Rewrite the source file so imported entries become `plugboard run` launchers and their
    /// plaintext secrets disappear from it (a backup is kept)
    #[arg(long)]
    pub rewrite_source: bool,
    /// Rewrite the source even when its comments or inexact numbers would be lost
    #[arg(long, requires = "rewrite_source")]
    pub force: bool,
    /// Rewrite the imported entries without testing their servers first (by default an entry
    /// whose server fails its test here stays as it was)
    #[arg(long, requires = "rewrite_source")]
    pub no_test: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Choose the secret store: the OS keyring, or an encrypted file protected by a passphrase
    Use(SecretsUseArgs),
    /// Which store is active and whether it works (a real write, read and delete)
    Status(JsonFlag),
    /// Hold the encrypted file's passphrase in the kernel keyring (memory only, never a file)
    /// so that programs with no terminal, such as MCP clients launching `plugboard run`, can
    /// open the file until it expires or `lock`
    Unlock(SecretsUnlockArgs),
    /// Stop holding the passphrase: programs with no terminal can no longer open the file
    Lock,
}

#[derive(Debug, Args)]
pub struct SecretsUnlockArgs {
    /// How long the kernel holds the passphrase (it is also gone at reboot)
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=720))]
    pub hours: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StoreArg {
    Keyring,
    File,
}

#[derive(Debug, Args)]
pub struct SecretsUseArgs {
    /// keyring or file
    #[arg(value_enum)]
    pub store: StoreArg,
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print one JSON document on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct NameOnly {
    pub name: String,
}

#[derive(Debug, Args)]
pub struct NameArgs {
    pub name: String,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct RenameArgs {
    pub old: String,
    pub new: String,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CatalogArgs {
    #[command(subcommand)]
    pub show: Option<CatalogShow>,
    /// Words to look for (every one must match) in names, titles, ids, keywords, package
    /// identifiers and descriptions
    pub query: Vec<String>,
    /// The curated catalog, the registries' servers, or both (the default)
    #[arg(long, value_enum, default_value = "all")]
    pub source: SourceArg,
    /// Only entries in this category (`plugboard catalog --categories` lists them)
    #[arg(long)]
    pub category: Option<String>,
    /// Only servers offering this transport
    #[arg(long, value_enum)]
    pub transport: Option<TransportArg>,
    /// Only servers run by this runtime: node, python, docker, dotnet, bun, mcpb, remote
    #[arg(long)]
    pub runtime: Option<String>,
    /// Only servers installed here
    #[arg(long)]
    pub installed: bool,
    /// Show at most this many matches (all of them by default)
    #[arg(long)]
    pub limit: Option<usize>,
    /// List the categories with their entry counts
    #[arg(long)]
    pub categories: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    All,
    Curated,
    Registry,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    Stdio,
    Shttp,
    Sse,
}

#[derive(Debug, Subcommand)]
pub enum CatalogShow {
    /// Show one entry with its connection options and install form
    Show(CatalogShowArgs),
}

#[derive(Debug, Args)]
pub struct CatalogShowArgs {
    /// A catalog entry id or a registry server name (`io.github.owner/server`)
    pub id: String,
    /// A registry server's version other than the latest (asks the registry)
    #[arg(long)]
    pub version: Option<String>,
    /// Also list every version of a registry server (asks the registry)
    #[arg(long)]
    pub versions: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// A catalog entry id, a registry server name with an optional version
    /// (`io.github.owner/server@1.2.0`), or an MCPB bundle file (`./server.mcpb`)
    pub id: String,
    /// Which connection option to install (default: the entry's preferred one)
    #[arg(long)]
    pub option: Option<String>,
    /// The server name (default: the entry id)
    #[arg(long)]
    pub name: Option<String>,
    /// A non-secret field value; repeat for more fields
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Read this secret field's value from standard input
    #[arg(long, value_name = "KEY")]
    pub secret_stdin: Option<String>,
    /// Store this password field as plain config instead of a secret
    #[arg(long, value_name = "KEY")]
    pub plain: Vec<String>,
    /// Save without testing the connection first
    #[arg(long)]
    pub no_test: bool,
    /// A registry server: take its dependencies' newest versions instead of those of its
    /// publication date
    #[arg(long)]
    pub no_pin: bool,
    /// Accept a server that takes a secret on its command line (every local user can read it)
    #[arg(long)]
    pub allow_secret_args: bool,
    /// Run it without a sandbox: with all of your rights (see `plugboard sandbox`)
    #[arg(long)]
    pub no_sandbox: bool,
    #[command(flatten)]
    pub json: JsonFlag,
}

/// How an OAuth server's tokens are obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GrantArg {
    /// A user signs in in the browser (`plugboard auth NAME`)
    SignIn,
    /// The client alone, with --client-secret or --private-key-file (a service account)
    ClientCredentials,
    /// Enterprise-managed: your ID token (--id-token) from the identity provider
    /// (--idp-token-endpoint, --idp-client-id), with --client-secret
    IdentityAssertion,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RemoteTransport {
    Shttp,
    Sse,
    Auto,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("kind").required(true).args(["stdio", "url"])))]
pub struct AddArgs {
    pub name: String,
    /// A local server run as a command (give it after `--`)
    #[arg(long, requires = "command")]
    pub stdio: bool,
    /// A remote server at this URL
    #[arg(long)]
    pub url: Option<String>,
    /// The remote transport
    #[arg(long, value_enum, default_value = "auto", requires = "url")]
    pub transport: RemoteTransport,
    /// A plain environment variable for a stdio server
    #[arg(long, value_name = "K=V", requires = "stdio")]
    pub env: Vec<String>,
    /// An environment variable whose value is a secret (read from stdin, PLUGBOARD_SECRET_<K> or a prompt; several: one line each)
    #[arg(long, value_name = "K", requires = "stdio")]
    pub secret_env: Vec<String>,
    /// The working directory of a stdio server
    #[arg(long, requires = "stdio")]
    pub cwd: Option<String>,
    /// A plain HTTP header for a remote server
    #[arg(long, value_name = "K=V", requires = "url")]
    pub header: Vec<String>,
    /// A header whose value is a secret (read from stdin, PLUGBOARD_SECRET_<K> or a prompt)
    #[arg(long, value_name = "K", requires = "url")]
    pub secret_header: Vec<String>,
    /// Read a bearer token from standard input
    #[arg(long, requires = "url")]
    pub bearer_stdin: bool,
    /// OAuth: how the tokens are obtained (default: a user signs in when the server asks)
    #[arg(long, value_enum, requires = "url", conflicts_with = "bearer_stdin")]
    pub grant: Option<GrantArg>,
    /// OAuth: the client ID the server's authorization server knows Plugboard by
    #[arg(long, requires = "url", conflicts_with = "bearer_stdin")]
    pub client_id: Option<String>,
    /// OAuth: the client's secret (read from stdin, PLUGBOARD_SECRET_CLIENT_SECRET or a prompt)
    #[arg(long, requires = "client_id")]
    pub client_secret: bool,
    /// OAuth client credentials: sign assertions with this PKCS#8 P-256 private key (PEM file,
    /// copied into the keyring) instead of sending a secret
    #[arg(long, value_name = "PEM", requires = "client_id")]
    pub private_key_file: Option<std::path::PathBuf>,
    /// OAuth identity assertion: the identity provider's token endpoint
    #[arg(long, value_name = "URL")]
    pub idp_token_endpoint: Option<String>,
    /// OAuth identity assertion: this client's ID at the identity provider
    #[arg(long, value_name = "ID")]
    pub idp_client_id: Option<String>,
    /// OAuth identity assertion: the client's secret at the identity provider, for a
    /// confidential client there (read from stdin, PLUGBOARD_SECRET_IDP_CLIENT_SECRET or a
    /// prompt)
    #[arg(long, requires = "idp_client_id")]
    pub idp_client_secret: bool,
    /// OAuth identity assertion: your ID token from the identity provider (read from stdin,
    /// PLUGBOARD_SECRET_ID_TOKEN or a prompt)
    #[arg(long)]
    pub id_token: bool,
    /// OAuth: scopes to request (repeat, or separate with spaces)
    #[arg(long, value_name = "SCOPE", requires = "url")]
    pub scope: Vec<String>,
    #[command(flatten)]
    pub helper: HeadersHelperArgs,
    /// Seconds to allow for a test of this server
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Save without testing the connection first
    #[arg(long)]
    pub no_test: bool,
    /// Let an argument carry a secret (`${secret:NAME}`): every local user can read a command line
    #[arg(long, requires = "stdio")]
    pub allow_secret_args: bool,
    /// Run it without a sandbox: with all of your rights (see `plugboard sandbox`)
    #[arg(long)]
    pub no_sandbox: bool,
    /// The command and its arguments
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// A remote server's headers from a command.
#[derive(Debug, Args)]
pub struct HeadersHelperArgs {
    /// A program that prints the headers to send as a JSON object (`{"Authorization": "Bearer
    /// …"}`): run without a shell and without your credential variables, before the first
    /// request, after `--headers-ttl` and after a 401 or 403; its output is never stored
    #[arg(long, value_name = "PROGRAM")]
    pub headers_helper: Option<String>,
    /// An argument for the headers helper (repeatable)
    #[arg(
        long,
        value_name = "ARG",
        requires = "headers_helper",
        allow_hyphen_values = true
    )]
    pub headers_helper_arg: Vec<String>,
    /// Seconds the helper's headers are used before it runs again (default 300)
    #[arg(long, value_name = "SECS", requires = "headers_helper")]
    pub headers_ttl: Option<u64>,
}

impl HeadersHelperArgs {
    /// The helper the flags describe (a relative program path made absolute against the
    /// current folder).
    pub fn helper(&self) -> Option<crate::config::HeadersHelper> {
        let command = self.headers_helper.as_ref()?;
        let command = if command.contains('/') {
            std::path::absolute(command)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| command.clone())
        } else {
            command.clone()
        };
        Some(crate::config::HeadersHelper {
            command,
            args: self.headers_helper_arg.clone(),
            ttl: self.headers_ttl,
        })
    }
}

#[derive(Debug, Args)]
pub struct EditArgs {
    pub name: String,
    /// Change a field of the form the server was installed with (a catalog or registry server); the other fields keep their values
    #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with_all = RAW_EDITS)]
    pub set: Vec<String>,
    /// Replace a secret field of that form, read from stdin, PLUGBOARD_SECRET_<KEY> or a prompt (several: one line each)
    #[arg(long, value_name = "KEY", conflicts_with_all = RAW_EDITS)]
    pub secret: Vec<String>,
    /// Remove the value of an optional field of that form (a secret one's from the keyring too)
    #[arg(long, value_name = "KEY", conflicts_with_all = RAW_EDITS)]
    pub clear: Vec<String>,
    /// With --set, --secret or --clear: save without testing first
    #[arg(long)]
    pub no_test: bool,
    /// Set a plain environment variable
    #[arg(long, value_name = "K=V")]
    pub env: Vec<String>,
    /// Set an environment variable to a secret (read from stdin, PLUGBOARD_SECRET_<K> or a prompt; several: one line each)
    #[arg(long, value_name = "K")]
    pub secret_env: Vec<String>,
    /// Remove an environment variable (and its secret)
    #[arg(long, value_name = "K")]
    pub unset_env: Vec<String>,
    /// Set a plain header
    #[arg(long, value_name = "K=V")]
    pub header: Vec<String>,
    /// Set a header to a secret (read from stdin, PLUGBOARD_SECRET_<K> or a prompt)
    #[arg(long, value_name = "K")]
    pub secret_header: Vec<String>,
    /// Remove a header (and its secret)
    #[arg(long, value_name = "K")]
    pub unset_header: Vec<String>,
    /// Replace the API key / bearer token, read from stdin, PLUGBOARD_SECRET_CREDENTIAL or a prompt
    #[arg(long)]
    pub credential: bool,
    /// A new URL for a remote server
    #[arg(long)]
    pub url: Option<String>,
    /// Seconds to allow for a test of this server (0 = back to the default)
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Let this server's credentials go over plain http to a remote host (anyone on the way can read them)
    #[arg(long, conflicts_with = "refuse_insecure_http")]
    pub allow_insecure_http: bool,
    /// Refuse that again (the default)
    #[arg(long)]
    pub refuse_insecure_http: bool,
    /// Let this server take secrets on its command line (every local user can read a command line)
    #[arg(long, conflicts_with = "refuse_secret_args")]
    pub allow_secret_args: bool,
    /// Refuse that again (the default)
    #[arg(long)]
    pub refuse_secret_args: bool,
    /// Pass terminal, bidi and tag characters in its tool results on to clients (through `run`
    /// and `serve`; they are taken out otherwise)
    #[arg(long, conflicts_with = "strip_control_characters")]
    pub keep_control_characters: bool,
    /// Take them out again (the default)
    #[arg(long)]
    pub strip_control_characters: bool,
    /// Resolve a uvx/npx server's dependencies as of its version's publication date
    #[arg(long, conflicts_with = "unpin_dependencies")]
    pub pin_dependencies: bool,
    /// Take that pin off again (the dependencies' newest versions)
    #[arg(long)]
    pub unpin_dependencies: bool,
    #[command(flatten)]
    pub helper: HeadersHelperArgs,
    /// Stop getting headers from a command
    #[arg(long, conflicts_with = "headers_helper")]
    pub no_headers_helper: bool,
}

/// The flags of `edit` that change a server's launch directly, not through its form.
const RAW_EDITS: [&str; 8] = [
    "env",
    "secret_env",
    "unset_env",
    "header",
    "secret_header",
    "unset_header",
    "credential",
    "url",
];

#[derive(Debug, Args)]
pub struct TestArgs {
    /// An installed server to test
    #[arg(conflicts_with_all = ["stdio", "url"])]
    pub name: Option<String>,
    /// Test a command that is not installed (give it after `--`); nothing is saved
    #[arg(long, requires = "command")]
    pub stdio: bool,
    /// Test a URL that is not installed; nothing is saved
    #[arg(long, conflicts_with = "stdio")]
    pub url: Option<String>,
    /// The remote transport for --url
    #[arg(long, value_enum, default_value = "auto", requires = "url")]
    pub transport: RemoteTransport,
    /// An environment variable for --stdio
    #[arg(long, value_name = "K=V", requires = "stdio")]
    pub env: Vec<String>,
    /// A header for --url
    #[arg(long, value_name = "K=V", requires = "url")]
    pub header: Vec<String>,
    /// Read a bearer token for --url from standard input
    #[arg(long, requires = "url")]
    pub bearer_stdin: bool,
    /// --stdio: run the command without the sandbox a server added with `plugboard add` gets
    #[arg(long, requires = "stdio")]
    pub no_sandbox: bool,
    /// Seconds to allow for the whole test (default: the server's timeout, else 120)
    #[arg(long)]
    pub timeout: Option<u64>,
    #[command(flatten)]
    pub json: JsonFlag,
    /// The command and its arguments, for --stdio
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Seconds to allow each server (default: each server's own timeout)
    #[arg(long)]
    pub timeout: Option<u64>,
    /// How many servers to test at the same time
    #[arg(long)]
    pub parallel: Option<usize>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Args)]
pub struct AuthArgs {
    pub name: String,
    /// Read the address the browser ended on from standard input (when the browser cannot
    /// reach Plugboard's loopback listener)
    #[arg(long)]
    pub paste: bool,
    /// Do not try to open a browser; only print the URL
    #[arg(long)]
    pub no_browser: bool,
    /// Revoke and forget the server's tokens instead of signing in
    #[arg(long, conflicts_with_all = ["paste", "no_browser"])]
    pub sign_out: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// One installed server (default: all)
    pub name: Option<String>,
    /// Seconds to allow each server's test run
    #[arg(long)]
    pub timeout: Option<u64>,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn argv(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    /// `parsed` (from a shortcut) is clap's full parse of `line`.
    fn assert_same_as_clap(parsed: Option<Cli>, line: &str) {
        let parsed = parsed.expect(line);
        let full = Cli::try_parse_from(argv(line)).expect(line);
        assert_eq!(format!("{parsed:?}"), format!("{full:?}"), "{line}");
    }

    #[test]
    fn quick_commands_have_the_arguments_of_the_full_description() {
        let full = Cli::command();
        for (name, describe) in QUICK {
            let ids = |command: &clap::Command| {
                let mut ids: Vec<String> = command
                    .get_arguments()
                    .map(|arg| format!("{arg:?}"))
                    .collect();
                ids.sort();
                ids
            };
            let whole = full.find_subcommand(name).expect("a quick command exists");
            assert_eq!(
                ids(&describe(clap::Command::new(name))),
                ids(whole),
                "`{name}`"
            );
        }
    }

    #[test]
    fn plain_tests_are_read_without_clap() {
        for line in [
            "plugboard test --json --stdio -- node server.js --port 3 --json",
            "plugboard test srv --timeout 5",
            "plugboard test --url http://127.0.0.1:9/mcp --header A=b --json",
            "plugboard test --stdio --env K=V -- cmd",
            "plugboard test --stdio --no-sandbox -- cmd",
        ] {
            assert_same_as_clap(Cli::parse_test(&argv(line)), line);
        }
        for line in [
            "plugboard test",
            "plugboard test --stdio",
            "plugboard test srv --stdio -- cmd",
            "plugboard test --url u --transport sse",
            "plugboard test --timeout=5 srv",
            "plugboard test --help",
            "plugboard test srv --no-sandbox",
        ] {
            assert!(Cli::parse_test(&argv(line)).is_none(), "{line}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Wherever the plain reading of `test` answers, clap gives the same; where clap
        /// refuses a line, the plain reading does not answer.
        #[test]
        fn the_plain_reading_of_test_agrees_with_clap(
            options in proptest::collection::vec(proptest::sample::select(vec![
                "--json", "--stdio", "--url", "http://h/mcp", "--timeout", "5", "--env",
                "K=V", "--header", "A=b", "srv", "x", "", "-", "-v", "-1", "+7", "--transport",
                "sse", "--bearer-stdin", "--help", "help", "--timeout=5", "--no-sandbox",
            ]), 0..7),
            command in proptest::option::of(proptest::collection::vec(
                proptest::sample::select(vec!["cmd", "--json", "-v", "--", "", "srv"]),
                0..3,
            )),
        ) {
            let mut args = argv("plugboard test");
            args.extend(options.iter().map(OsString::from));
            if let Some(command) = &command {
                args.push("--".into());
                args.extend(command.iter().map(OsString::from));
            }
            if let Some(fast) = Cli::parse_test(&args) {
                let full = Cli::try_parse_from(&args);
                proptest::prop_assert!(full.is_ok(), "clap refuses {args:?}: {full:?}");
                proptest::prop_assert_eq!(format!("{fast:?}"), format!("{:?}", full.unwrap()));
            }
        }
    }

    #[test]
    fn quick_parsing_gives_what_the_full_description_gives() {
        for line in [
            "plugboard test --json --stdio -- node server.js --port 3",
            "plugboard test srv --timeout 5",
            "plugboard test --url http://127.0.0.1:9/mcp --transport sse --header A=b --json",
            "plugboard test --stdio --env K=V -- cmd",
            "plugboard health --parallel 3 --json",
            "plugboard run srv --allow-unapproved",
            "plugboard list --json",
            "plugboard list",
        ] {
            assert_same_as_clap(Cli::parse_quick(&argv(line)), line);
        }
    }

    #[test]
    fn help_mistakes_and_other_commands_go_to_the_full_description() {
        for line in [
            "plugboard test --help",
            "plugboard test --stdio",
            "plugboard test srv --url http://x",
            "plugboard health --bogus",
            "plugboard run",
            "plugboard list extra",
            "plugboard catalog github",
            "plugboard --version",
            "plugboard",
        ] {
            assert!(Cli::parse_quick(&argv(line)).is_none(), "{line}");
        }
    }
}
