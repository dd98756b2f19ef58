//! Child processes at the level std does not reach: reaping one with the kernel's accounting
//! (exit code, CPU time, peak RSS, from `wait4`) and a watchdog that SIGKILLs one that runs past
//! its limit.

use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
    fn wait4(pid: i32, status: *mut i32, options: i32, rusage: *mut Rusage) -> i32;
}

const SIGKILL: i32 = 9;

#[repr(C)]
#[derive(Default)]
struct Timeval {
    sec: i64,
    usec: i64,
}

impl Timeval {
    fn micros(&self) -> i64 {
        self.sec * 1_000_000 + self.usec
    }
}

/// `struct rusage` of Linux on 64-bit targets.
#[repr(C)]
#[derive(Default)]
struct Rusage {
    utime: Timeval,
    stime: Timeval,
    /// `ru_maxrss` (KiB) first, then fields the harness does not read.
    rest: [i64; 14],
}

/// How a reaped child ended and what it used.
pub struct Exit {
    /// The exit code, -1 for a signal.
    pub code: i32,
    /// CPU time (user + system) of the child and the children it reaped.
    pub cpu: Duration,
    /// Peak resident set size (KiB) of the child, or of its largest reaped descendant.
    pub peak_rss_kib: i64,
}

/// Reap `child`, which std's `wait` must never be called on.
pub fn reap(child: &Child) -> std::io::Result<Exit> {
    let mut status = 0;
    let mut usage = Rusage::default();
    loop {
        // SAFETY: our own child, reaped exactly once here (std's `wait` is never called).
        let rc = unsafe { wait4(child.id() as i32, &mut status, 0, &mut usage) };
        if rc >= 0 {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let code = if status & 0x7f == 0 {
        (status >> 8) & 0xff
    } else {
        -1
    };
    Ok(Exit {
        code,
        cpu: Duration::from_micros((usage.utime.micros() + usage.stime.micros()) as u64),
        peak_rss_kib: usage.rest[0],
    })
}

/// Kills a process that runs past its limit.
pub struct Watchdog {
    cancel: mpsc::Sender<()>,
    fired: mpsc::Receiver<bool>,
}

impl Watchdog {
    /// Watch `pid`, a child of the harness not yet reaped.
    pub fn arm(pid: u32, limit: Duration) -> Watchdog {
        let (cancel, cancelled) = mpsc::channel::<()>();
        let (fire, fired) = mpsc::channel();
        std::thread::spawn(move || {
            let timed_out = matches!(
                cancelled.recv_timeout(limit),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            if timed_out {
                // SAFETY: the harness's own, not yet reaped child.
                unsafe {
                    kill(pid as i32, SIGKILL);
                }
            }
            let _ = fire.send(timed_out);
        });
        Watchdog { cancel, fired }
    }

    /// Stop watching; whether the process had been killed.
    pub fn disarm(self) -> bool {
        let _ = self.cancel.send(());
        self.fired.recv().unwrap_or(false)
    }
}
