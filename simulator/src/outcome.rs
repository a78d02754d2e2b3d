//! What running one seed is asked for and what it gives back: the engine's recording
//! ([`Recorded`]), and that recording checked ([`SeedOutcome`]); and why a seed can end before
//! its simulated end ([`Halt`]).

use std::fmt;

use crate::checker::{self, SeedMetrics};
use crate::history::History;
use crate::time::{ns_to_ms, Nanos};
use crate::trace::{Trace, TraceEntry};
use crate::traced::Subject;

/// How to run a seed, beyond the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record the event trace (slower; for replays and determinism checks).
    pub trace: bool,
}

/// One seed as the engine recorded it, before any checker looked at it.
pub struct Recorded {
    /// The seed.
    pub seed: u64,
    /// The recorded history.
    pub history: History,
    /// The event trace, when asked for ([`RunOptions::trace`]).
    pub trace: Option<Trace>,
    /// Events the engine processed.
    pub events: u64,
}

/// The result of one seed: its recording, checked.
pub struct SeedOutcome {
    /// Everything the checkers measured.
    pub metrics: SeedMetrics,
    /// The recorded history the metrics come from.
    pub history: History,
    /// With violations merged in at their true times.
    pub trace: Option<Trace>,
    /// Hash of the trace (0 without one).
    pub trace_hash: u64,
    /// Events the engine processed.
    pub events: u64,
}

impl SeedOutcome {
    /// `recorded` checked: every metric of its history, and, when it has a trace, every
    /// violation merged into the trace at its true time and the trace's hash. A trace shows
    /// every violation; without one only the first few are kept with their text.
    pub fn checked(recorded: Recorded) -> SeedOutcome {
        let Recorded { seed, history, mut trace, events } = recorded;
        let keep = if trace.is_some() { usize::MAX } else { checker::MAX_STORED_VIOLATIONS };
        let metrics = checker::check_keeping(seed, &history, keep);
        if let Some(t) = trace.as_mut() {
            for v in &metrics.violations {
                t.push(TraceEntry {
                    at_ns: v.at_ns,
                    node: "-".into(),
                    mono_ns: v.at_ns,
                    wall_ns: v.at_ns as i64,
                    kind: "violation",
                    detail: format!("{}: {}", v.kind, v.detail),
                    subject: Subject::None,
                });
            }
            // Stable: violations land after the events of the same instant.
            t.entries.sort_by_key(|e| e.at_ns);
        }
        let trace_hash = trace.as_ref().map_or(0, |t| t.hash());
        SeedOutcome { metrics, history, trace, trace_hash, events }
    }
}

/// Events in a row at one simulated instant after which a seed is stopped as a zero-time loop.
/// A real run advances its time within a few hundred events (a round of messages between a
/// handful of nodes); ten million is about two seconds of a release build's engine.
pub const STUCK_EVENTS: u64 = 10_000_000;

/// Why a seed ended before its simulated end: it has no results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Halt {
    /// The stop flag was raised (Ctrl-C, SIGTERM): the seed is unfinished and its partial
    /// results are discarded.
    Stopped,
    /// Simulated time stopped advancing (a zero-time loop).
    Stuck(Stuck),
}

/// A seed whose simulated time did not advance for at least [`STUCK_EVENTS`] events in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// The instant time stuck at (true time).
    pub at_ns: Nanos,
    /// Events handled at that instant when the engine gave up (at least this many: the engine
    /// counts them between its polls).
    pub events: u64,
}

impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "simulated time stuck at {} ms for {} events: a zero-time loop (every latency, service, hold \
             and think time the run draws is 0, or a model retries without delay); give one of them a \
             positive value",
            ns_to_ms(self.at_ns),
            grouped(self.events)
        )
    }
}

impl fmt::Display for Halt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Halt::Stopped => f.write_str("stopped before its end (interrupted)"),
            Halt::Stuck(s) => s.fmt(f),
        }
    }
}

/// `10000000` as `10 000 000`: a count a person reads at a glance.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stuck_seed_names_the_instant_the_count_and_the_cause() {
        let text = Stuck { at_ns: 2_500_000, events: STUCK_EVENTS }.to_string();
        assert!(text.starts_with("simulated time stuck at 2.5 ms for 10 000 000 events: a zero-time loop"), "{text}");
        assert!(text.contains("give one of them a positive value"), "{text}");
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(1234), "1 234");
    }
}
