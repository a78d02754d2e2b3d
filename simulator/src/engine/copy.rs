//! Copying a world: `World<P>: Clone`, so a search can branch a run at any event and carry on
//! each copy independently. A copy holds everything the run's future depends on (every node's
//! process, clock, random stream, status and backlog; the queue with its sequence numbers; the
//! timer slab; the network and its fault rules; the fault schedule and what each occurrence did)
//! and what it has recorded so far (history, fault windows, counters, trace), so a copy run to
//! the end gives exactly the history and trace the original gives.
//!
//! The impls are written out because a derive would ask for `P: Clone`, and a protocol is only a
//! marker type; the processes are copied through [`crate::process::CloneProcess`].

use std::sync::atomic::AtomicBool;

use super::{Behaviour, Node, World};
use crate::outcome::Halt;
use crate::process::Protocol;
use crate::time::Nanos;

impl<P: Protocol> World<P> {
    /// True time now: the time of the last event handled, or the bound the last
    /// [`World::run_through`] stopped at.
    pub fn now_ns(&self) -> Nanos {
        self.now_ns
    }

    /// Runs every event due up to `until_ns` (and no later than the run's end), leaving the rest
    /// queued: a world stopped here and run on with [`World::run_until`] does exactly what one
    /// run in one go does (the loop keeps no state of its own but its poll watch, which only
    /// reads), so a copy can be taken at any point of a run.
    pub fn run_through(&mut self, until_ns: Nanos, stop: Option<&AtomicBool>) -> Result<(), Halt> {
        self.end_ns = until_ns.min(self.run_end_ns);
        let ran = self.run_until(stop);
        self.end_ns = self.run_end_ns;
        ran
    }
}

impl<P: Protocol> Clone for Behaviour<P> {
    fn clone(&self) -> Self {
        match self {
            Behaviour::Service(p) => Behaviour::Service(p.clone()),
            Behaviour::Client(c) => Behaviour::Client(c.clone()),
            Behaviour::Resource(r) => Behaviour::Resource(r.clone()),
        }
    }
}

impl<P: Protocol> Clone for Node<P> {
    fn clone(&self) -> Self {
        Node {
            behaviour: self.behaviour.clone(),
            clock: self.clock.clone(),
            rng: self.rng.clone(),
            status: self.status,
            crash_kind: self.crash_kind,
            backlog: self.backlog.clone(),
            pauses: self.pauses,
        }
    }
}

impl<P: Protocol> Clone for World<P> {
    fn clone(&self) -> Self {
        World {
            now_ns: self.now_ns,
            end_ns: self.end_ns,
            run_end_ns: self.run_end_ns,
            queue: self.queue.clone(),
            nodes: self.nodes.clone(),
            dir: self.dir.clone(),
            timers: self.timers.clone(),
            network: self.network.clone(),
            net_rng: self.net_rng.clone(),
            reset_rng: self.reset_rng.clone(),
            conns: self.conns.clone(),
            stale: self.stale.clone(),
            fault_rng: self.fault_rng.clone(),
            faults: self.faults.clone(),
            occurrences: self.occurrences.clone(),
            applied: self.applied.clone(),
            leaderless: self.leaderless,
            history: self.history.clone(),
            fold_counted: self.fold_counted,
            folded: self.folded,
            fault_windows: self.fault_windows.clone(),
            window_of: self.window_of.clone(),
            clock_segments: self.clock_segments.clone(),
            claims: self.claims.clone(),
            leader_changes: self.leader_changes.clone(),
            messages: self.messages,
            client_messages: self.client_messages,
            events_processed: self.events_processed,
            dead_timers: self.dead_timers,
            trace: self.trace.clone(),
            followed: self.followed.clone(),
            workload_feed: self.workload_feed.clone(),
        }
    }
}
