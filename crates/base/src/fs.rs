//! The one atomic file write every file Plugboard writes goes through: its own files (config,
//! settings, health, pins, exports, the registry cache) with [`write_private`], and other
//! clients' config files with [`write_atomic`].
//!
//! A reader sees the old contents or the new, never a part: the bytes go to a temporary file
//! beside the target, which is fsynced and renamed over it, then the directory is fsynced. A
//! target that is a symbolic link (a dotfiles setup) is written through: the link stays and the
//! file it points to gets the new contents. Plugboard's own files are its owner's only (0600, in
//! directories of 0700, which a write makes so if they were opened up); another app's file keeps
//! its permissions (a new one is 0600).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write another app's file `path` atomically (see the module doc): a file that exists keeps
/// its permissions, a new one is 0600. Missing parent directories are created (0700).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, false)
}

/// Write one of Plugboard's own files atomically: it is 0600 afterwards whatever it was, and
/// its directory 0700 (created so, or closed when it is ours and others could read it).
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, true)
}

/// Make directory `dir` (and missing parents) exist, its owner's only when `private` (an
/// existing one of ours that others can enter is closed to 0700).
pub fn create_dir(dir: &Path, private: bool) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = fs::metadata(dir)?;
        // SAFETY: geteuid has no preconditions.
        let mine = meta.uid() == unsafe { libc::geteuid() };
        if mine && meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Why `path` (a directory or file Plugboard is about to trust with secrets) is not safe, as
/// ssh judges its own files: writable by its group or by others, or owned by another user.
/// `None` when it is safe or does not exist.
pub fn unsafe_ownership(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = fs::metadata(path).ok()?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me && meta.uid() != 0 {
            return Some(format!(
                "{} is owned by another user (uid {})",
                path.display(),
                meta.uid()
            ));
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o022 != 0 {
            return Some(format!(
                "{} can be changed by other users (mode {mode:03o}); fix it with `chmod go-w {}`",
                path.display(),
                path.display()
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    None
}

/// Open (creating it, 0600) the empty file `path` whose lock serializes writers of another file.
pub fn open_lock_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

fn write(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    let target = through_links(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    create_dir(dir, private)?;
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        match fs::metadata(&target) {
            Ok(meta) if !private => meta.permissions().mode() & 0o777,
            _ => 0o600,
        }
    };
    let tmp = temp_path_beside(&target);
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        let mut file = options.open(&tmp)?;
        #[cfg(unix)]
        {
            // The umask may have taken bits away; a kept mode is set exactly.
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        file.write_all(bytes)?;
        put_in_place(&file, &tmp, &target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A fresh temporary path in the directory of `path`, for a file that will replace it.
pub fn temp_path_beside(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(
        ".{name}.{}.{:08x}.tmp",
        std::process::id(),
        rand::random::<u32>()
    ))
}

/// Finish a replacement written to `tmp` (open as `file`): fsync it, rename it over `path`,
/// fsync the directory.
pub fn put_in_place(file: &File, tmp: &Path, path: &Path) -> std::io::Result<()> {
    file.sync_all()?;
    fs::rename(tmp, path)?;
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The file `path` finally names: itself, or the target of the symbolic link(s) it is. A link
/// that points nowhere yet names the file to create.
fn through_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "{} is a chain of too many symbolic links",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn plugboards_own_files_and_directories_are_closed_to_others() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let open = |p: &Path, m| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
        // A home made by an older version, or by hand: 0755 with a 0644 file in a 0755 folder.
        open(home.path(), 0o755);
        let health = home.path().join("health");
        fs::create_dir(&health).unwrap();
        open(&health, 0o755);
        let record = health.join("a.json");
        fs::write(&record, "{}").unwrap();
        open(&record, 0o644);
        write_private(&record, b"{\"ok\":true}").unwrap();
        assert_eq!(mode(&record), 0o600);
        assert_eq!(mode(&health), 0o700);
        write_private(&home.path().join("mcp_config.json"), b"{}").unwrap();
        assert_eq!(mode(home.path()), 0o700);
        assert_eq!(unsafe_ownership(home.path()), None);
        open(home.path(), 0o777);
        let why = unsafe_ownership(home.path()).unwrap();
        assert!(why.contains("can be changed by other users"), "{why}");
        open(home.path(), 0o700);
    }

    #[test]
    fn a_new_file_is_private_and_an_existing_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/file.json");
        write_atomic(&path, b"one").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
            write_atomic(&path, b"two").unwrap();
            assert_eq!(mode(&path), 0o644);
        }
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, ["file.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, b"old").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink("dotfiles/settings.json", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }
}
