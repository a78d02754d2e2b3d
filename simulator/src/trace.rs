//! The trace: one entry per event, in true time, with the node, its local clock and what
//! happened. Rendered as readable lines or JSON lines; hashed for determinism checks.

use serde::Serialize;

use crate::rng::stable_hash;
use crate::time::Nanos;

/// One line of the trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceEntry {
    /// True time of the event.
    pub at_ns: Nanos,
    /// The node it happened at (`-` for the simulator itself).
    pub node: String,
    /// The node's monotonic and wall clock readings at that moment.
    pub mono_ns: Nanos,
    /// The wall clock reading (may be negative after a backward jump). For `-` entries both
    /// readings are the true time.
    pub wall_ns: i64,
    /// `start`, `restart`, `send`, `deliver`, `drop`, `queued` (reached a paused node), `resume`,
    /// `timer`, `fault`, `history`, `note`, `violation`.
    pub kind: &'static str,
    /// What happened, in words (a message's `Debug`, a history event, a fault's targets).
    pub detail: String,
}

/// A run's event log, recorded only when asked for ([`crate::outcome::RunOptions::trace`]).
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The entries, in true-time order.
    pub entries: Vec<TraceEntry>,
}

fn ms(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
}

impl TraceEntry {
    /// `   12.345678 ms  client-3    mono=12.345921 wall=12.345921  send  → server-0 Set{…}`
    pub fn line(&self) -> String {
        format!(
            "{:>14} ms  {:<11} mono={} wall={}  {:<9} {}",
            ms(self.at_ns as i128),
            self.node,
            ms(self.mono_ns as i128),
            ms(self.wall_ns as i128),
            self.kind,
            self.detail
        )
    }
}

impl Trace {
    /// Appends an entry (the caller keeps true-time order).
    pub fn push(&mut self, entry: TraceEntry) {
        self.entries.push(entry);
    }

    /// The readable form: one line per entry.
    pub fn render_text(&self) -> String {
        let mut out = String::with_capacity(self.entries.len() * 100);
        out.push_str("#        true time  node        local clocks (ms)            event     detail\n");
        for e in &self.entries {
            out.push_str(&e.line());
            out.push('\n');
        }
        out
    }

    /// A hash of every entry (stable across platforms), for determinism checks.
    pub fn hash(&self) -> u64 {
        let mut h = 0u64;
        for e in &self.entries {
            h = stable_hash(&[&h.to_le_bytes(), e.line().as_bytes()]);
        }
        h
    }
}
