//! A handler's way out into the world: what a handler sends, arms, records and notes is applied
//! the moment it asks (a send routed and queued, a timer's event queued, a history event
//! stamped), in the order it asks.
//!
//! Why not a list of effects applied after the handler returns: each effect was written to the
//! list, read back and moved again, and the read came right after the write in wider loads than
//! the write (a store-forwarding stall); the engine's share of a run was mostly that. The order
//! is the same either way, so the runs are: same queue sequence numbers, same trace lines.

use crate::directory::Directory;
use crate::history::{Folded, HistoryEvent, Stamped};
use crate::process::{NodeId, NodeKind, Outlet, Protocol, TimerId};
use crate::rng::ChaCha8Rng;
use crate::time::Nanos;
use crate::trace::{Trace, TraceEntry};
use crate::traced::Subject;
use crate::wire::{DriverTimer, Wire};

use super::choice::WorkloadFeed;
use super::network::{Network, Route};
use super::pairs::PairTable;
use super::queue::{EventKind, EventQueue};

/// The parts of the world a handler's node reaches while it runs (borrowed from the world for
/// one dispatch), and who is running.
pub(super) struct Post<'w, P: Protocol> {
    /// True time now.
    pub now_ns: Nanos,
    /// The node whose handler runs.
    pub node: NodeId,
    /// Its clocks' readings now (for its trace lines).
    pub mono_ns: Nanos,
    pub wall_ns: i64,
    pub dir: &'w Directory,
    pub queue: &'w mut EventQueue<Wire<P::Msg>>,
    pub network: &'w mut Network,
    pub net_rng: &'w mut ChaCha8Rng,
    /// The world's stale connections (see `World::stale`).
    pub stale: &'w mut PairTable<bool>,
    pub history: &'w mut Vec<Stamped>,
    /// Where the events only counted go instead of `history`, when the world folds them.
    pub folded: Option<&'w mut Folded>,
    pub trace: &'w mut Option<Trace>,
    pub messages: &'w mut u64,
    pub client_messages: &'w mut u64,
    /// Hold and think times given instead of drawn (`World::workload_feed`).
    pub workload_feed: Option<&'w mut WorkloadFeed>,
}

impl<P: Protocol> Outlet<P> for Post<'_, P> {
    fn send(&mut self, to: NodeId, msg: Wire<P::Msg>, after_ns: Nanos) {
        let from = self.node;
        *self.messages += 1;
        if self.dir.kind_of(from) == NodeKind::Client || self.dir.kind_of(to) == NodeKind::Client {
            *self.client_messages += 1;
        }
        // A node back from a host failure opens a new connection to `to`; the model does not
        // tell connections apart, so `to`'s old one counts as replaced.
        self.stale.set(from, to, false);
        // Saturating, as every sum of times in the engine: past the end of time it never arrives.
        let leave_ns = self.now_ns.saturating_add(after_ns);
        match self.network.route(from, to, leave_ns, self.net_rng) {
            Route::Drop(reason) => {
                self.trace_about(
                    "drop",
                    |dir| Subject::message_of(dir.name_of(to), &msg),
                    |dir| format!("→ {} {:?} ({})", dir.name_of(to), msg, reason.as_str()),
                );
            }
            Route::Dead { dead_at_ns } => {
                self.trace_about(
                    "drop",
                    |dir| Subject::message_of(dir.name_of(to), &msg),
                    |dir| {
                        format!(
                            "→ {} {:?} (every TCP retransmission lost: the connection dies at {:.3} ms)",
                            dir.name_of(to),
                            msg,
                            dead_at_ns as f64 / 1e6
                        )
                    },
                );
                // The sender's own stack gives up: its library sees the error as a reset.
                self.queue.push(dead_at_ns, EventKind::Reset { from: to, to: from });
            }
            Route::Deliver { at_ns, duplicate_at_ns, retransmits } => {
                self.trace_about(
                    "send",
                    |dir| Subject::sent_of(dir.name_of(to), &msg, at_ns),
                    |dir| {
                        format!(
                            "→ {} {:?} (arrives {:.3} ms{}{})",
                            dir.name_of(to),
                            msg,
                            at_ns as f64 / 1e6,
                            if duplicate_at_ns.is_some() { ", duplicated" } else { "" },
                            match retransmits {
                                0 => String::new(),
                                1 => ", lost once and retransmitted".to_string(),
                                n => format!(", lost and retransmitted {n} times"),
                            }
                        )
                    },
                );
                if let Some(dup_ns) = duplicate_at_ns {
                    self.queue.push(dup_ns, EventKind::Deliver { from, to, msg: msg.clone() });
                }
                self.queue.push(at_ns, EventKind::Deliver { from, to, msg });
            }
        }
    }

    fn queue_timer(&mut self, id: TimerId, due_ns: Nanos) {
        self.queue.push(due_ns, EventKind::Timer { id });
    }

    fn chosen_time(&mut self, timer: DriverTimer) -> Option<Nanos> {
        self.workload_feed.as_deref_mut().and_then(|feed| feed.next(timer))
    }

    fn record(&mut self, event: HistoryEvent) {
        self.trace_about("history", |_| Subject::History(event.clone()), |dir| describe(dir, &event));
        if let Some(folded) = self.folded.as_deref_mut() {
            if folded.count(&event) {
                return;
            }
        }
        self.history.push(Stamped { at_ns: self.now_ns, node: self.node, event });
    }

    fn note(&mut self, text: String) {
        self.trace_with("note", |_| text);
    }
}

impl<P: Protocol> Post<'_, P> {
    /// Adds a trace line of the running node while a trace is recorded; `detail` is not called
    /// otherwise (the test inline, the formatting out of line, as `World::trace_with`).
    #[inline(always)]
    fn trace_with(&mut self, kind: &'static str, detail: impl FnOnce(&Directory) -> String) {
        if self.trace.is_some() {
            self.push_trace(kind, detail);
        }
    }

    /// [`Self::trace_with`] with what the line is about as typed values ([`crate::traced`]).
    #[inline(always)]
    fn trace_about(
        &mut self,
        kind: &'static str,
        subject: impl FnOnce(&Directory) -> Subject,
        detail: impl FnOnce(&Directory) -> String,
    ) {
        if self.trace.is_some() {
            self.push_trace_about(kind, subject, detail);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_trace_about(
        &mut self,
        kind: &'static str,
        subject: impl FnOnce(&Directory) -> Subject,
        detail: impl FnOnce(&Directory) -> String,
    ) {
        let subject = subject(self.dir);
        self.push_trace(kind, detail);
        if let Some(entry) = self.trace.as_mut().and_then(|t| t.entries.last_mut()) {
            entry.subject = subject;
        }
    }

    #[cold]
    #[inline(never)]
    fn push_trace(&mut self, kind: &'static str, detail: impl FnOnce(&Directory) -> String) {
        let detail = detail(self.dir);
        let Some(trace) = self.trace.as_mut() else { return };
        trace.push(node_line(self.dir, self.now_ns, self.node, self.mono_ns, self.wall_ns, kind, detail));
    }
}

/// A trace line of `node` at true time `at_ns`: its name and its clocks' readings then (the
/// world's lines and a running handler's are formed the same way).
pub(super) fn node_line(
    dir: &Directory,
    at_ns: Nanos,
    node: NodeId,
    mono_ns: Nanos,
    wall_ns: i64,
    kind: &'static str,
    detail: String,
) -> TraceEntry {
    TraceEntry { at_ns, node: dir.name_of(node).to_string(), mono_ns, wall_ns, kind, detail, subject: Subject::None }
}

/// A history event as its trace line says it: clients by name, not node id.
pub(super) fn describe(dir: &Directory, event: &HistoryEvent) -> String {
    let text = format!("{event:?}");
    match event {
        HistoryEvent::ResourceRead { client, .. } | HistoryEvent::ResourceWrite { client, .. } => {
            text.replacen(&format!("client: {client},"), &format!("client: {},", dir.name_of(*client)), 1)
        }
        _ => text,
    }
}
