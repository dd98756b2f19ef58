//! The servers' log messages on their way to the gateway's clients: MCP's levels, and a limit
//! on how many of one server's pass each second, so that a server that floods its log cannot
//! flood its clients (or the gateway's memory, when a client reads slowly).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The log levels of MCP, least severe first.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The most log messages of one server passed on in a second.
pub const LOGS_PER_SECOND: u32 = 50;

/// Where `level` is in [`LOG_LEVELS`], when MCP names it.
pub fn level_index(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// Where `level` is in [`LOG_LEVELS`]; a level MCP does not name counts as `info`.
pub fn log_rank(level: &str) -> usize {
    level_index(level).unwrap_or(1)
}

/// What [`LogLimit::admit`] says of one message.
#[derive(Debug, PartialEq, Eq)]
pub struct Admitted {
    /// Whether it is passed on.
    pub passes: bool,
    /// How many of the server's messages were left out in the second before this one's, to say
    /// first (a new second has begun).
    pub left_out_before: u32,
}

/// Counts each server's messages by the second.
#[derive(Default)]
pub struct LogLimit {
    seconds: HashMap<String, Second>,
}

struct Second {
    began: Instant,
    passed: u32,
    left_out: u32,
}

impl LogLimit {
    /// Whether a message of `server` at `now` is passed on.
    pub fn admit(&mut self, server: &str, now: Instant) -> Admitted {
        let second = self.seconds.entry(server.to_owned()).or_insert(Second {
            began: now,
            passed: 0,
            left_out: 0,
        });
        let mut left_out_before = 0;
        if now.duration_since(second.began) >= Duration::from_secs(1) {
            left_out_before = second.left_out;
            *second = Second {
                began: now,
                passed: 0,
                left_out: 0,
            };
        }
        let passes = second.passed < LOGS_PER_SECOND;
        if passes {
            second.passed += 1;
        } else {
            second.left_out += 1;
        }
        Admitted {
            passes,
            left_out_before,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_at_the_limit_and_what_was_left_out_is_said_the_next_second() {
        let mut limit = LogLimit::default();
        let start = Instant::now();
        let passed = (0..200)
            .filter(|_| limit.admit("noisy", start).passes)
            .count();
        assert_eq!(passed, LOGS_PER_SECOND as usize);
        // Another server is counted on its own.
        assert!(limit.admit("quiet", start).passes);
        let next = limit.admit("noisy", start + Duration::from_millis(1000));
        assert_eq!(
            next,
            Admitted {
                passes: true,
                left_out_before: 200 - LOGS_PER_SECOND
            }
        );
        let after = limit.admit("noisy", start + Duration::from_millis(1001));
        assert_eq!(after.left_out_before, 0);
    }

    #[test]
    fn levels_rank_by_severity_and_an_unknown_one_counts_as_info() {
        assert!(log_rank("debug") < log_rank("info"));
        assert!(log_rank("error") < log_rank("emergency"));
        assert_eq!(log_rank("loud"), log_rank("info"));
    }
}
