//! Interleaved rounds: every compared command runs once per round, the order rotating, after
//! waiting for the machine to be quiet; rounds that never got a quiet machine are counted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::command::Cmd;
use crate::row::Row;

/// Timed rounds that started while the machine was still busy after waiting.
static NOISY_ROUNDS: AtomicUsize = AtomicUsize::new(0);

/// CPU share (over both cores) above which the machine counts as busy.
const QUIET_BUSY: f64 = 0.15;

/// How many timed rounds so far started on a machine that never got quiet.
pub fn noisy_rounds() -> usize {
    NOISY_ROUNDS.load(Ordering::Relaxed)
}

/// The timed samples of one command: wall time and CPU time of each run.
#[derive(Clone, Default)]
pub struct Samples {
    pub wall: Vec<Duration>,
    pub cpu: Vec<Duration>,
}

/// Run every command of `cmds` `warmup + runs` times, interleaved: each round runs each
/// command once, starting one further along the list each round. Warm-up rounds check the
/// output (the first round does even without warm-up) and are not counted.
pub fn interleave(
    cmds: &[(String, Cmd)],
    warmup: usize,
    runs: usize,
) -> Result<Vec<Samples>, String> {
    let mut samples = vec![Samples::default(); cmds.len()];
    for round in 0..warmup + runs {
        let check = round < warmup.max(1);
        if round >= warmup && !wait_for_quiet() {
            NOISY_ROUNDS.fetch_add(1, Ordering::Relaxed);
        }
        for k in 0..cmds.len() {
            let i = (round + k) % cmds.len();
            let (label, cmd) = &cmds[i];
            let timing = cmd.measure(check).map_err(|e| format!("{label}: {e}"))?;
            if round >= warmup {
                samples[i].wall.push(timing.wall);
                samples[i].cpu.push(timing.cpu);
            }
        }
        eprint!("\r  round {}/{}", round + 1, warmup + runs);
    }
    eprintln!();
    Ok(samples)
}

/// Before a round: wait (up to 2 minutes) until the machine is quiet, so other people's
/// builds do not land in the samples. Returns false when it never got quiet.
pub fn wait_for_quiet() -> bool {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut warned = false;
    while Instant::now() < deadline {
        let busy = cpu_busy(Duration::from_millis(150));
        if busy < QUIET_BUSY {
            return true;
        }
        if !warned {
            eprint!(" [waiting for a quiet machine: {:.0}% busy]", busy * 100.0);
            warned = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// Share of CPU time (0..1) that was busy over `window` (0 when /proc/stat is unreadable).
fn cpu_busy(window: Duration) -> f64 {
    let before = cpu_ticks();
    std::thread::sleep(window);
    let (Some((total0, idle0)), Some((total1, idle1))) = (before, cpu_ticks()) else {
        return 0.0;
    };
    let total = total1.saturating_sub(total0).max(1);
    1.0 - idle1.saturating_sub(idle0) as f64 / total as f64
}

/// All CPUs' ticks so far from /proc/stat: (total, idle + iowait).
fn cpu_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((v.iter().sum(), idle))
}

/// [`interleave`] the commands of a section and add a row for each, labelled (subject, client).
pub fn rows_of(
    section: &'static str,
    labelled: Vec<((String, String), (String, Cmd))>,
    warmup: usize,
    runs: usize,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let (labels, cmds): (Vec<_>, Vec<_>) = labelled.into_iter().unzip();
    let samples = interleave(&cmds, warmup, runs)?;
    for ((subject, client), samples) in labels.into_iter().zip(samples) {
        rows.push(Row {
            cpu: samples.cpu,
            ..Row::times(section, subject, client, samples.wall, "")
        });
    }
    Ok(())
}
