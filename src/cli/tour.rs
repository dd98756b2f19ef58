//! `plugboard tour`: a short guided look at Plugboard on the embedded catalog. It reads only; it
//! installs nothing.

use super::CliError;
use crate::catalog::Catalog;
use crate::config::config_dir;
use crate::form::form_for;

pub fn run() -> Result<(), CliError> {
    let catalog = Catalog::load_default()?;
    println!("Plugboard installs, tests and secures MCP servers for your AI agents.\n");
    println!(
        "1. The catalog has {} integrations in {} categories. The most popular:",
        catalog.entries().len(),
        catalog.categories().len()
    );
    for entry in catalog.search("", None).into_iter().take(8) {
        let transport = form_for(entry, None)
            .map(|f| f.transport.label())
            .unwrap_or("?");
        println!("     {:<22} {:<18} {}", entry.id, transport, entry.name);
    }
    println!("\n   Search it:            plugboard catalog github");
    println!(
        "   By category:          plugboard catalog --categories; plugboard catalog --category search"
    );
    println!("   One entry's form:     plugboard catalog show slack\n");
    println!("2. Install from the catalog. Secret fields never go on the command line:");
    println!("     printf %s \"$TOKEN\" | plugboard install tavily --secret-stdin TAVILY_API_KEY");
    println!("   or add your own server:");
    println!(
        "     plugboard add everything --stdio -- npx -y @modelcontextprotocol/server-everything\n"
    );
    println!("3. Manage what is installed:");
    println!(
        "     plugboard list; plugboard show NAME; plugboard disable NAME; plugboard rename OLD NEW\n"
    );
    match config_dir() {
        Some(dir) => println!(
            "Your servers live in {}; their secrets in the OS keyring.",
            dir.join(crate::config::CONFIG_FILE).display()
        ),
        None => println!("Set PLUGBOARD_HOME to choose where your servers are kept."),
    }
    Ok(())
}
