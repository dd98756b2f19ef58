//! The `plugboard` command line.

fn main() -> std::process::ExitCode {
    plugboard::cli::main()
}
