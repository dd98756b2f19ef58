//! The one atomic file write every file Plugboard writes goes through: its own files (config,
//! settings, health, pins, exports, the registry cache) and other clients' config files.
//!
//! A reader sees the old contents or the new, never a part: the bytes go to a temporary file
//! beside the target, which is fsynced and renamed over it, then the directory is fsynced. A
//! new file is readable by its owner only; a file that exists keeps its permissions. A target
//! that is a symbolic link (a dotfiles setup) is written through: the link stays and the file
//! it points to gets the new contents.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically (see the module doc). Missing parent directories are
/// created (mode 0700 on Unix).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = through_links(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(&target)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0o600)
    };
    let tmp = temp_path_beside(&target);
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
        let mut file = options.open(&tmp)?;
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
