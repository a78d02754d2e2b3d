//! The trace: one entry per event, in true time, with the node, its local clock and what
//! happened. Rendered as readable lines or JSON lines; hashed for determinism checks.

use std::any::Any;

use serde::Serialize;

use crate::rng::stable_hash;
use crate::time::Nanos;
use crate::traced::{Subject, TracedFault};

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
    /// What happened, as typed values (the message and its other end, the timer, the history
    /// event, the fault): what tests match on. Not rendered, hashed nor serialised.
    #[serde(skip)]
    pub subject: Subject,
}

/// A message line of the trace, typed: see [`Trace::sent`].
#[derive(Debug)]
pub struct MessageLine<'t, M> {
    /// True time of the line.
    pub at_ns: Nanos,
    /// The node the line is at (the sender of a `send`, the receiver of a `deliver`).
    pub node: &'t str,
    /// The node at the other end.
    pub peer: &'t str,
    /// The message.
    pub msg: &'t M,
    /// For a sent message, when it arrives.
    pub arrives_ns: Option<Nanos>,
}

impl<M> Clone for MessageLine<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for MessageLine<'_, M> {}

impl<'t, M> MessageLine<'t, M> {
    /// The line's true time in milliseconds.
    pub fn at_ms(&self) -> f64 {
        self.at_ns as f64 / 1e6
    }

    /// The same line with a part of its message in place of the message (a variant's
    /// content, say), if `part` finds one there:
    /// `line.part(|m| match m { Msg::Request(r) => Some(r), _ => None })`.
    pub fn part<T>(self, part: impl FnOnce(&'t M) -> Option<&'t T>) -> Option<MessageLine<'t, T>> {
        let msg = part(self.msg)?;
        Some(MessageLine { at_ns: self.at_ns, node: self.node, peer: self.peer, msg, arrives_ns: self.arrives_ns })
    }
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

    /// The lines of `kind` that carry a message of type `M` (the model's message type, or
    /// [`crate::wire::ResourceMsg`]), in order.
    pub fn messages<M: Any>(&self, kind: &'static str) -> impl Iterator<Item = MessageLine<'_, M>> {
        self.entries.iter().filter(move |e| e.kind == kind).filter_map(|e| {
            let msg = e.subject.message::<M>()?;
            let (peer, arrives_ns) = (e.subject.peer()?, e.subject.arrives_ns());
            Some(MessageLine { at_ns: e.at_ns, node: &e.node, peer, msg, arrives_ns })
        })
    }

    /// Every message of type `M` sent (and not dropped at once by a fault), in order.
    pub fn sent<M: Any>(&self) -> impl Iterator<Item = MessageLine<'_, M>> {
        self.messages("send")
    }

    /// Every message of type `M` handed to its receiver's handler (at once or after a pause).
    pub fn delivered<M: Any>(&self) -> impl Iterator<Item = MessageLine<'_, M>> {
        self.messages("deliver")
    }

    /// Every message of type `M` dropped, at its sender or at its receiver.
    pub fn dropped<M: Any>(&self) -> impl Iterator<Item = MessageLine<'_, M>> {
        self.messages("drop")
    }

    /// Every fault line (starts, ends, waits), with its line.
    pub fn faults(&self) -> impl Iterator<Item = (&TraceEntry, &TracedFault)> {
        self.entries.iter().filter_map(|e| Some((e, e.subject.fault()?)))
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
