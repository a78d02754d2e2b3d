//! Helpers the postgres model's tests share: grants and releases by client, and the overlap
//! the checkers counted, over the shared scenario runner.

#![allow(dead_code)]

use crate::common;
pub use common::*;

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;

pub const MS: f64 = 1e6;

/// A grant: true time (ms), client index, token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grant {
    pub at_ms: f64,
    pub client: usize,
    pub token: Option<u64>,
}

fn client_index(out: &SeedOutcome, node: usize) -> usize {
    out.history.clients.iter().position(|&c| c == node).expect("a client node")
}

/// Every grant, in time order.
pub fn grants(out: &SeedOutcome) -> Vec<Grant> {
    out.history
        .events
        .iter()
        .filter_map(|e| match e.event {
            HistoryEvent::Granted { token, .. } => {
                Some(Grant { at_ms: e.at_ns as f64 / MS, client: client_index(out, e.node), token })
            }
            _ => None,
        })
        .collect()
}

/// The scenario text every test starts from: constant 1 ms links, no service time, so every
/// time follows by arithmetic.
pub fn scenario(duration_ms: u64, variant: &str, rest: &str) -> String {
    format!(
        "name = \"t\"\nduration_ms = {duration_ms}\nseeds = 1\nalgorithms = []\n\n[[variants]]\nname = \"pg\"\nmodel = \"postgres\"\nservice_ms = 0\n{variant}\n\n[network]\nlatency_ms = 1\n\n{rest}"
    )
}
