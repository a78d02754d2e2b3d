//! One seed's measurements, computed from its history by the checkers and folded by the reports
//! crate into totals across seeds.

use hdrhistogram::Histogram;

use crate::time::Nanos;

/// Histograms record microseconds (1 µs to ~2.7 h, 3 significant digits).
pub const HIST_MAX_US: u64 = 10_000_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("valid histogram bounds")
}

/// Records a duration in nanoseconds into a microsecond histogram (saturating at the bounds).
pub fn record_ns(h: &mut Histogram<u64>, ns: Nanos) {
    let us = (ns / 1_000).clamp(1, HIST_MAX_US);
    h.saturating_record(us);
}

/// One safety violation, for reports and the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub at_ns: Nanos,
    /// `overlap`, `stale_unfenced`, `stale_fenced`, `lost_update`, `token_regression`.
    pub kind: &'static str,
    pub detail: String,
}

/// Everything the results report for one seed of one algorithm.
#[derive(Clone, Debug)]
pub struct SeedMetrics {
    pub seed: u64,
    pub duration_ns: Nanos,
    /// V1: overlapping pairs of holder intervals on one key, at least one exclusive.
    pub overlap_events: u64,
    /// V2: writes the unfenced resource accepted from a superseded grant.
    pub stale_unfenced_events: u64,
    /// The same writes that the fenced resource also accepted; `None` when the model has no token.
    pub stale_fenced_events: Option<u64>,
    /// Completed read-modify-write sections whose increment is missing from the final counter.
    pub lost_updates: u64,
    /// Grants whose token was not above an earlier grant's on the same key.
    pub token_regressions: u64,
    pub acquisitions: u64,
    pub failed_acquisitions: u64,
    /// Holder intervals ended by a release (critical sections completed).
    pub completed_sections: u64,
    /// Release calls (non-nested), the denominator of notifications per release.
    pub releases: u64,
    pub acquire_latency_us: Histogram<u64>,
    pub handoff_us: Histogram<u64>,
    /// Time during which some client waited for a key and none held it, summed over keys.
    pub unavailable_ns: Nanos,
    pub messages: u64,
    pub notifications: u64,
    /// Lock requests refused by a server (failed INSERTs, SET NX on a taken key).
    pub refused_attempts: u64,
    /// Every violation found, in true-time order (first few kept for reports).
    pub violations: Vec<Violation>,
}

impl SeedMetrics {
    pub fn empty(seed: u64, duration_ns: Nanos, fenced: bool) -> Self {
        SeedMetrics {
            seed,
            duration_ns,
            overlap_events: 0,
            stale_unfenced_events: 0,
            stale_fenced_events: if fenced { Some(0) } else { None },
            lost_updates: 0,
            token_regressions: 0,
            acquisitions: 0,
            failed_acquisitions: 0,
            completed_sections: 0,
            releases: 0,
            acquire_latency_us: new_histogram(),
            handoff_us: new_histogram(),
            unavailable_ns: 0,
            messages: 0,
            notifications: 0,
            refused_attempts: 0,
            violations: Vec::new(),
        }
    }

    /// Whether any safety property failed in this seed.
    pub fn has_violation(&self) -> bool {
        self.overlap_events > 0
            || self.stale_unfenced_events > 0
            || self.stale_fenced_events.unwrap_or(0) > 0
            || self.lost_updates > 0
            || self.token_regressions > 0
    }
}
