//! Plugboard's home is its user's only: a home opened up (0755, as an older version or a hand
//! left it) is closed on first use and every file written is 0600; `run` refuses to hand secrets
//! to a server when others could change the home or the config.

use std::os::unix::fs::PermissionsExt;

use crate::run_stdio::add_fixture;
use crate::support::{Home, assert_code, stderr};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn open_up(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn an_opened_up_home_is_closed_and_every_file_is_private() {
    let home = Home::new();
    open_up(home.path(), 0o755);
    for dir in ["health", "pins", "registry", "sessions"] {
        let dir = home.path().join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        open_up(&dir, 0o755);
    }
    add_fixture(&home, "fx", &[], None);
    assert_code(&home.run(&["test", "fx"]), 0);
    let out = home.run_with_stdin(
        &["run", "fx"],
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
    );
    assert_code(&out, 0);
    assert_eq!(mode(home.path()), 0o700, "the home");
    let mut checked = 0;
    for entry in walk(home.path()) {
        let meta = std::fs::symlink_metadata(&entry).unwrap();
        if meta.is_dir() {
            if ["health", "pins"].iter().any(|d| entry.ends_with(d)) {
                assert_eq!(mode(&entry), 0o700, "{}", entry.display());
            }
        } else {
            assert_eq!(mode(&entry), 0o600, "{}", entry.display());
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} files were written");
}

#[test]
fn run_refuses_a_home_or_config_others_can_change() {
    let home = Home::new();
    add_fixture(&home, "fx", &[], Some("token-for-a-private-home-only"));
    for (path, loose) in [
        (home.path().to_path_buf(), 0o777),
        (home.config_path(), 0o666),
    ] {
        let before = mode(&path);
        open_up(&path, loose);
        let out = home.run(&["run", "fx"]);
        assert_code(&out, 2);
        let said = stderr(&out);
        assert!(
            said.contains("refusing to start a server with its secrets")
                && said.contains("can be changed by other users"),
            "{said}"
        );
        open_up(&path, before);
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}
