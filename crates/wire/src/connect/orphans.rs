//! Descendants a server leaves behind. A server's process group is ended with it, but a
//! grandchild that left the group (`setsid`, a daemonizing helper) would outlive it. A command
//! that runs servers first makes this process the reaper of its orphaned descendants (Linux
//! `PR_SET_CHILD_SUBREAPER`): such a grandchild becomes its child when its parent dies, and
//! [`end_orphans`] ends every child still alive when the command is done.
//!
//! Only for commands whose children are all servers: a command that opens a browser must not
//! adopt it.

/// Make this process the reaper of its orphaned descendants. Returns whether it took (always
/// `false` outside Linux).
pub fn adopt_orphans() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a plain prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// End (SIGKILL, with their process groups) every child of this process that is still alive,
/// and reap them; repeated while ending one hands its own children over. Returns how many were
/// ended. Call when every server the command started is finished.
pub fn end_orphans() -> usize {
    #[cfg(target_os = "linux")]
    {
        let mut ended = 0;
        for _ in 0..8 {
            let children = children_of(std::process::id());
            if children.is_empty() {
                break;
            }
            for (pid, pgid) in &children {
                // SAFETY: plain kill calls on processes that are our children (a child cannot
                // be reused as a pid before we reap it).
                unsafe {
                    if *pgid == *pid {
                        libc::kill(-(*pgid as libc::pid_t), libc::SIGKILL);
                    }
                    libc::kill(*pid as libc::pid_t, libc::SIGKILL);
                }
                ended += 1;
            }
            for (pid, _) in &children {
                let mut status = 0;
                // SAFETY: waiting for our own child.
                unsafe {
                    libc::waitpid(*pid as libc::pid_t, &mut status, 0);
                }
            }
        }
        ended
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// The children of `parent` (pid, process group), zombies included, from `/proc`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<(u32, u32)> {
    super::proc_table::processes()
        .into_iter()
        .filter(|p| p.ppid == parent)
        .map(|p| (p.pid, p.pgrp))
        .collect()
}
