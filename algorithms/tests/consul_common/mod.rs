//! Helpers for the consul model's tests: the shared ones, and the grants and lock-delay
//! refusals read from the trace.

#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;
pub use common::*;

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;

/// Every grant: (true time ms, client node id, token).
pub fn grants(out: &SeedOutcome) -> Vec<(f64, usize, Option<u64>)> {
    events(out, |e| matches!(e, HistoryEvent::Granted { .. }))
        .into_iter()
        .map(|s| match &s.event {
            HistoryEvent::Granted { token, .. } => (s.at_ns as f64 / 1e6, s.node, *token),
            _ => unreachable!(),
        })
        .collect()
}
