//! What running one seed is asked for and what it gives back.

use crate::checker::SeedMetrics;
use crate::history::History;
use crate::trace::Trace;

/// How to run a seed, beyond the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record the event trace (slower; for replays and determinism checks).
    pub trace: bool,
}

/// The result of one seed.
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
