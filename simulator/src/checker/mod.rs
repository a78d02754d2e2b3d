//! Checkers: every metric of the results format computed from a run's recorded history, on true
//! time. They read only [`crate::history::History`], never model internals.
//!
//! - [`metrics`]: the per-seed result type
//! - [`check`]: history to metrics

pub mod metrics;

pub use metrics::{SeedMetrics, Violation};

use crate::history::History;

/// Computes every metric of one seed from its history.
pub fn check(seed: u64, history: &History) -> SeedMetrics {
    let _ = history;
    SeedMetrics::empty(seed, history.duration_ns, history.fenced)
}
