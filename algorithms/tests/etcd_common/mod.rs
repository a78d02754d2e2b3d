//! Helpers shared by the etcd model's tests: run one labelled configuration of a scenario text for
//! one seed, and read the history and the trace.

#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;
pub use common::*;

use locksim_simulator::run::SeedOutcome;

/// The client's name for a node id.
pub fn client_index(out: &SeedOutcome, node: usize) -> usize {
    out.history.clients.iter().position(|&c| c == node).expect("a client")
}

/// Grants whose token is below an earlier grant's, or equal to one granted to another client:
/// token regressions proper. A client granted again the token it held before, after its Unlock
/// failed (`ReleaseFailed`: the own key stayed, and the next Lock in the same session finds it
/// still first), is not one: mutex.go re-holds under the same create revision.
pub fn regressions_other_than_regrants(out: &SeedOutcome) -> usize {
    use locksim_simulator::history::HistoryEvent;
    let mut best: Option<(u64, usize)> = None;
    let mut bad = 0;
    for g in events(out, |e| matches!(e, HistoryEvent::Granted { .. })) {
        let HistoryEvent::Granted { token: Some(t), .. } = g.event else { continue };
        match best {
            Some((b, holder)) if t < b || (t == b && holder != g.node) => bad += 1,
            Some((b, _)) if t == b => {}
            _ => best = Some((t, g.node)),
        }
    }
    bad
}
