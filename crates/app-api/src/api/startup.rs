//! The startup trace the app benchmark reads (`bench/app-probe`): the UI reports marks after its
//! first renders (`marketplace-ready` once the catalog is in the DOM, `installed-ready` once the
//! installed list is), and, only when `PLUGBOARD_STARTUP_TRACE=1`, each is printed to stderr as
//! `plugboard-app: <mark> <ms since process start> <count>`.
//!
//! Process start is the kernel's: `/proc/self/stat` field 22 (start time in clock ticks since
//! boot) against `CLOCK_BOOTTIME` now, so the time includes exec and dynamic loading, not only
//! `main`. Its resolution is one clock tick (10 ms on Linux). Elsewhere no time is known and
//! nothing is printed.
//!
//! For the memory-with-many-servers measurement, `PLUGBOARD_STARTUP_TRACE_INSTALLED_AFTER_MS=N`
//! makes the answer to `marketplace-ready` ask the UI to open the installed servers N ms later;
//! `PLUGBOARD_STARTUP_TRACE_SCROLL_AFTER_MS=N` instead asks it to scroll the marketplace in ten
//! jumps from top to bottom N ms later and report how long each took to render (`scroll-median`,
//! `scroll-max` marks whose count is the milliseconds); without these variables the UI does
//! nothing different.

use serde::Serialize;

/// The trace switch.
pub const TRACE_ENV: &str = "PLUGBOARD_STARTUP_TRACE";
/// Open the installed servers this many ms after `marketplace-ready` (trace only).
pub const INSTALLED_AFTER_ENV: &str = "PLUGBOARD_STARTUP_TRACE_INSTALLED_AFTER_MS";
/// Milliseconds after `marketplace-ready` at which the UI scrolls the marketplace (traced).
pub const SCROLL_AFTER_ENV: &str = "PLUGBOARD_STARTUP_TRACE_SCROLL_AFTER_MS";

/// What the UI should do next after a mark (only ever set in a startup trace).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, specta::Type)]
pub struct StartupStep {
    /// The page to show: `installed`.
    pub page: String,
    pub after_ms: u32,
}

/// Milliseconds since this process started, from the kernel's record of it.
#[cfg(target_os = "linux")]
pub fn ms_since_process_start() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let ticks = start_ticks(&stat)?;
    // SAFETY: sysconf and clock_gettime only write to the timespec we own.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz <= 0 {
        return None;
    }
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut now) } != 0 {
        return None;
    }
    let now_ms = now.tv_sec as f64 * 1e3 + now.tv_nsec as f64 / 1e6;
    Some((now_ms - ticks as f64 * 1e3 / hz as f64).max(0.0))
}

#[cfg(not(target_os = "linux"))]
pub fn ms_since_process_start() -> Option<f64> {
    None
}

/// Field 22 of a `/proc/<pid>/stat` line (the process's start time in clock ticks after boot).
/// The command name (field 2) is in parentheses and may contain spaces and `)`: fields are
/// counted after its last `)`.
pub fn start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After `)`: field 3 (state) is the first; field 22 is the 20th.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The trace line of a mark.
pub fn trace_line(mark: &str, ms: f64, count: u32) -> String {
    let mark: String = mark
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect();
    format!("plugboard-app: {mark} {} {count}", ms.round() as u64)
}

/// The UI reached `mark` with `count` items on screen. Prints the trace line when the trace is
/// on; answers the next step of a traced tour, if one was asked for.
pub fn ui_ready(mark: &str, count: u32) -> Option<StartupStep> {
    if std::env::var(TRACE_ENV).ok().as_deref() != Some("1") {
        return None;
    }
    if let Some(ms) = ms_since_process_start() {
        eprintln!("{}", trace_line(mark, ms, count));
    }
    if mark != "marketplace-ready" {
        return None;
    }
    let after = |name: &str| std::env::var(name).ok()?.trim().parse::<u32>().ok();
    if let Some(after_ms) = after(SCROLL_AFTER_ENV) {
        return Some(StartupStep {
            page: "scroll".into(),
            after_ms,
        });
    }
    after(INSTALLED_AFTER_ENV).map(|after_ms| StartupStep {
        page: "installed".into(),
        after_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_field_22_even_with_odd_command_names() {
        let stat = "4242 (we ird) pr) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 \
                    987654 123456789 500 18446744073709551615";
        assert_eq!(start_ticks(stat), Some(987_654));
        assert_eq!(start_ticks("garbage"), None);
        assert_eq!(start_ticks("1 (x) S 1 2"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_started_a_while_ago_but_not_before_boot() {
        let ms = ms_since_process_start().expect("linux has /proc");
        assert!((0.0..86_400_000.0).contains(&ms), "{ms}");
    }

    #[test]
    fn trace_lines_are_one_line_of_known_shape() {
        assert_eq!(
            trace_line("marketplace-ready", 412.4, 31),
            "plugboard-app: marketplace-ready 412 31"
        );
        assert_eq!(
            trace_line("bad mark\n$(x)", 1.0, 0),
            "plugboard-app: badmarkx 1 0"
        );
    }
}
