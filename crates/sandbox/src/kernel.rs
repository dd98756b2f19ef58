//! Which Landlock ABI the running kernel offers, asked of the kernel itself (the LSM list in
//! `/sys` is not always readable).

/// The kernel's Landlock ABI version; 0 when it has none (not built in, not enabled at boot,
/// or not Linux).
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// The kernel's Landlock ABI version; 0 when it has none (not built in, not enabled at boot,
/// or not Linux).
#[cfg(not(target_os = "linux"))]
pub fn landlock_abi() -> u32 {
    0
}
