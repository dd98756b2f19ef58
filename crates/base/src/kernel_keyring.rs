//! The Linux kernel's key retention service, for one job: holding a passphrase in memory for the
//! user's processes (`plugboard secrets unlock`), so that programs with no terminal (MCP clients
//! launching `plugboard run`) can open the encrypted secret store without the passphrase ever
//! being written to a file.
//!
//! A held value is a `user` key in the user keyring (`@u`), readable only by processes that
//! *possess* it: those whose session keyring reaches the user keyring (a login session, or no
//! session keyring at all). Every server Plugboard starts leaves that chain first
//! ([`leave_user_keyring`]), so a server never possesses the key and cannot read it. The key
//! expires after the time it was held for, is gone at reboot, and `forget` removes it at once.
//! On other systems, and where a seccomp filter blocks the calls, every function reports
//! `Unsupported`.

use std::io;
use std::time::Duration;

/// A value the kernel holds, and the error of a call.
pub type Result<T> = io::Result<T>;

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CString;
    use std::io;
    use std::time::Duration;

    const KEY_SPEC_USER_KEYRING: libc::c_long = -4;
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    const KEYCTL_SETPERM: libc::c_long = 5;
    const KEYCTL_SEARCH: libc::c_long = 10;
    const KEYCTL_READ: libc::c_long = 11;
    const KEYCTL_SET_TIMEOUT: libc::c_long = 15;
    const KEYCTL_INVALIDATE: libc::c_long = 21;
    /// Possessor: view, read, write, search, link, set attributes. Nobody else: view only (the
    /// key's description shows in /proc/keys; its value does not).
    const POSSESSOR_ONLY: libc::c_ulong = 0x3f01_0000;

    fn c_string(text: &str) -> io::Result<CString> {
        CString::new(text).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte"))
    }

    fn checked(result: libc::c_long) -> io::Result<libc::c_long> {
        if result < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(result)
        }
    }

    fn unsupported(e: io::Error) -> io::Error {
        match e.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EPERM) | Some(libc::EOPNOTSUPP) => io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the kernel keyring is not available here ({e})"),
            ),
            _ => e,
        }
    }

    pub fn hold(description: &str, value: &[u8], ttl: Duration) -> io::Result<()> {
        let kind = c_string("user")?;
        let description = c_string(description)?;
        // SAFETY: pointers to live NUL-terminated strings and a live byte slice.
        let key = checked(unsafe {
            libc::syscall(
                libc::SYS_add_key,
                kind.as_ptr(),
                description.as_ptr(),
                value.as_ptr(),
                value.len(),
                KEY_SPEC_USER_KEYRING,
            )
        })
        .map_err(unsupported)?;
        let seconds = ttl.as_secs().clamp(1, u32::MAX as u64) as libc::c_ulong;
        // SAFETY: plain integer arguments.
        let settled = unsafe {
            checked(libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_SETPERM,
                key,
                POSSESSOR_ONLY,
            ))
            .and_then(|_| {
                checked(libc::syscall(
                    libc::SYS_keyctl,
                    KEYCTL_SET_TIMEOUT,
                    key,
                    seconds,
                ))
            })
        };
        if let Err(e) = settled {
            // Never leave a key behind whose lifetime or access is not what was asked.
            // SAFETY: plain integer arguments.
            unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_INVALIDATE, key) };
            return Err(e);
        }
        Ok(())
    }

    /// The key held under `description`, `None` when there is none (any more).
    fn find(description: &str) -> io::Result<Option<libc::c_long>> {
        let kind = c_string("user")?;
        let description = c_string(description)?;
        // SAFETY: pointers to live NUL-terminated strings; no destination keyring.
        let found = checked(unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_SEARCH,
                KEY_SPEC_USER_KEYRING,
                kind.as_ptr(),
                description.as_ptr(),
                0 as libc::c_long,
            )
        });
        match found {
            Ok(key) => Ok(Some(key)),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOKEY | libc::EKEYEXPIRED | libc::EKEYREVOKED)
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(unsupported(e)),
        }
    }

    pub fn read(description: &str) -> io::Result<Option<Vec<u8>>> {
        let Some(key) = find(description)? else {
            return Ok(None);
        };
        let mut buffer = vec![0u8; 4096];
        loop {
            // SAFETY: the buffer is live and its length is passed.
            let len = checked(unsafe {
                libc::syscall(
                    libc::SYS_keyctl,
                    KEYCTL_READ,
                    key,
                    buffer.as_mut_ptr(),
                    buffer.len(),
                )
            })? as usize;
            if len <= buffer.len() {
                buffer.truncate(len);
                return Ok(Some(buffer));
            }
            buffer.resize(len, 0);
        }
    }

    pub fn forget(description: &str) -> io::Result<bool> {
        let Some(key) = find(description)? else {
            return Ok(false);
        };
        // SAFETY: plain integer arguments.
        checked(unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_INVALIDATE, key) })?;
        Ok(true)
    }

    /// # Safety
    /// Async-signal-safe: one system call, for use between fork and exec.
    pub unsafe fn leave_user_keyring() {
        // A new anonymous session keyring that does not link the user keyring. Failure (no
        // keyring support) leaves nothing to protect, so it is ignored.
        // SAFETY: a null name asks for an anonymous keyring.
        unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_JOIN_SESSION_KEYRING,
                std::ptr::null::<libc::c_char>(),
            )
        };
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use std::io;
    use std::time::Duration;

    fn unsupported() -> io::Error {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "the kernel keyring exists only on Linux",
        )
    }
    pub fn hold(_: &str, _: &[u8], _: Duration) -> io::Result<()> {
        Err(unsupported())
    }
    pub fn read(_: &str) -> io::Result<Option<Vec<u8>>> {
        Err(unsupported())
    }
    pub fn forget(_: &str) -> io::Result<bool> {
        Err(unsupported())
    }
}

#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(target_os = "linux"))]
use other as imp;

/// Hold `value` under `description` in the user keyring for `ttl`, replacing a value held
/// under the same description. Only processes that possess the user keyring can read it.
pub fn hold(description: &str, value: &[u8], ttl: Duration) -> Result<()> {
    imp::hold(description, value, ttl)
}

/// The value held under `description`, or `None` when none is (never held, expired, forgotten,
/// or not readable by this process).
pub fn read(description: &str) -> Result<Option<Vec<u8>>> {
    match imp::read(description) {
        Err(e) if e.raw_os_error() == Some(EACCES) => Ok(None),
        other => other,
    }
}

/// Remove the value held under `description` now. `Ok(false)`: none was held.
pub fn forget(description: &str) -> Result<bool> {
    imp::forget(description)
}

#[cfg(target_os = "linux")]
const EACCES: i32 = libc::EACCES;
#[cfg(not(target_os = "linux"))]
const EACCES: i32 = 13;

/// Between fork and exec of a server: join a new session keyring that does not reach the user
/// keyring, so the server cannot read what [`hold`] keeps there.
///
/// # Safety
/// Makes one async-signal-safe system call.
#[cfg(target_os = "linux")]
pub unsafe fn leave_user_keyring() {
    // SAFETY: forwarded contract.
    unsafe { imp::leave_user_keyring() }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_held_value_is_read_back_and_forgotten() {
        let description = format!("plugboard:test:{}", std::process::id());
        match hold(
            &description,
            b"correct horse battery",
            Duration::from_secs(60),
        ) {
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                eprintln!("skipped: {e}");
                return;
            }
            other => other.unwrap(),
        }
        assert_eq!(
            read(&description).unwrap().as_deref(),
            Some(&b"correct horse battery"[..])
        );
        hold(&description, b"replaced", Duration::from_secs(60)).unwrap();
        assert_eq!(
            read(&description).unwrap().as_deref(),
            Some(&b"replaced"[..])
        );
        assert!(forget(&description).unwrap());
        assert_eq!(read(&description).unwrap(), None);
        assert!(!forget(&description).unwrap());
    }
}
