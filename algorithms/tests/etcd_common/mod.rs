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
