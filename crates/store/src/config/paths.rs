//! Where Plugboard keeps its files: `$PLUGBOARD_HOME`, else the platform's config directory.

use std::path::PathBuf;

/// The config directory: `$PLUGBOARD_HOME` if set, else `~/.config/plugboard` on Linux
/// (`$XDG_CONFIG_HOME` respected), `~/Library/Application Support/plugboard` on macOS and
/// `%APPDATA%\plugboard` on Windows. `None` when no home directory can be found.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("PLUGBOARD_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(home));
    }
    default_config_dir()
}

/// The platform's config directory for Plugboard, whatever `$PLUGBOARD_HOME` says: where a
/// Plugboard started without it (by another client, from the desktop) looks.
pub fn default_config_dir() -> Option<PathBuf> {
    platform_config_base().map(|base| base.join("plugboard"))
}

#[cfg(target_os = "windows")]
fn platform_config_base() -> Option<PathBuf> {
    std::env::var_os("APPDATA").map(PathBuf::from)
}

#[cfg(target_os = "macos")]
fn platform_config_base() -> Option<PathBuf> {
    home().map(|h| h.join("Library").join("Application Support"))
}

#[cfg(not(any(target_os = "windows", target_os = "macos")))]
fn platform_config_base() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".config")))
}

#[cfg(not(target_os = "windows"))]
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
