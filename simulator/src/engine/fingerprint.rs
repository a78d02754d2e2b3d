//! A world's canonical fingerprint: one 64-bit hash of the state a run's future depends on, equal
//! for two worlds that will behave alike however they got there. A search keeps the fingerprints
//! of the states it has explored (a visited set) and explores a state reached twice only once.
//!
//! What it hashes (with [`StableHasher`], the same in every build and on every platform):
//! - every node, by id: its kind, status (up, paused, crashed and how), pause depth, its clock's
//!   readings now (monotonic, wall) and rate, its random stream's key, stream and position, the
//!   work backlogged while it is paused, and its process's state: the `Debug` text of the
//!   service, the client (workload driver and library) or the resource ([`crate::process::Process`]
//!   asks for `Debug`: derive it, so every field is shown);
//! - the events queued, as a multiset (sorted hashes, so neither the queue's sequence numbers nor
//!   its layout count): each delivery as (from, to, due relative to now, message), each reset, node
//!   start and fault start or end as (what, due relative to now). Timer events are left out: the
//!   armed timers below are the truth (a cancelled timer's event does nothing);
//! - the armed timers, as a multiset of (node, due relative to now, tag);
//! - the network: the fault rules in force (in order) and, per ordered link, how long after now
//!   its last delivery is due (the FIFO bound; one already past is 0: it bounds nothing);
//! - the open and stale connections; the network, reset and fault random streams' positions;
//!   what each fault occurrence did (its targets, saved drift).
//!
//! Timer ids are canonical: a process holds timer ids (slot and generation in the run's slab,
//! which depend on the order timers were armed and freed). While a fingerprint is taken, a
//! `TimerId`'s `Debug` text is not its slot but the hash of the timer it names (its node, due
//! time relative to now and tag), or `dead` for one that fired or was cancelled (a process can
//! only cancel it, which does nothing). Outside a fingerprint the `Debug` text is unchanged.
//!
//! Not hashed: what was recorded (history, trace, fault windows, counters: the past, not the
//! state; a search judges a violation when it happens) and the run's fixed configuration (link
//! parameters, the fault schedule, the directory): two worlds compared belong to the same run.
//!
//! What it does not merge:
//! - **Different instants.** Processes keep absolute readings of their own clocks (a lease's end,
//!   a request's start), so the nodes' clock readings are hashed as they are, not relative to
//!   now: two states at different true times differ. Within one instant, relative and absolute
//!   due times are the same thing; the relative form is what lets a model that stores only
//!   durations merge across instants later.
//! - **Interchangeable clients (symmetry).** Not implemented: clients are hashed by node id. A
//!   permutation of clients that run the same library with the same parameters gives another
//!   fingerprint. Hashing the clients' states as a multiset alone would be unsound: servers,
//!   messages and the resource name clients by node id (a holder, a waiter queue, a session
//!   owner) and node ids are plain `usize` in model state, so they cannot be renamed in the
//!   `Debug` text; a multiset would merge "client 1 holds, the server says client 1" with
//!   "client 2 holds, the server says client 1". Symmetry needs node ids typed in model state
//!   (a `NodeId` newtype) so a canonical renaming can be applied everywhere.
//! - **Tie order.** Events due at the same instant are hashed as a multiset: the random runner
//!   handles them in sequence order, a search chooses among them, so their order is a choice,
//!   not state.
//! - **Custom `Debug`.** A message or state type whose hand-written `Debug` leaves a field out
//!   (the trace's short forms) hides that field from the fingerprint.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::hash::Hasher;

use super::queue::EventKind;
use super::{Node, World};
use crate::process::Protocol;
use crate::time::Nanos;
use crate::timers::CanonicalTimerNames;
use crate::wire::Wire;

/// FNV-1a over the bytes, finished with a 64-bit mix (splitmix64's): the same value in every
/// build, on every platform and Rust version (std's `DefaultHasher` promises none of that).
/// Writes through `fmt::Write` too, so `Debug` text is hashed as it is formatted, unallocated.
#[derive(Clone, Copy, Debug)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for StableHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl fmt::Write for StableHasher {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write(s.as_bytes());
        Ok(())
    }
}

impl StableHasher {
    /// Hashes a value's `Debug` text, then a separator (so adjacent texts cannot run together).
    pub fn debug(&mut self, value: &(impl fmt::Debug + ?Sized)) {
        // Writing to a hasher cannot fail.
        let _ = write!(self, "{value:?}");
        self.write_u8(0xff);
    }
}

/// A due time relative to now (negative: overdue, e.g. a timer backlogged on a paused node).
fn relative(due_ns: Nanos, now_ns: Nanos) -> i128 {
    due_ns as i128 - now_ns as i128
}

/// Hashes sorted, so the order the parts came in does not count.
fn multiset(h: &mut StableHasher, mut parts: Vec<u64>) {
    parts.sort_unstable();
    h.write_usize(parts.len());
    for p in parts {
        h.write_u64(p);
    }
}

impl<P: Protocol> World<P> {
    /// The world's canonical fingerprint (see the module docs for what it hashes and what it
    /// does not merge). Reads only: taking it changes nothing in the run.
    pub fn fingerprint(&self) -> u64 {
        let now = self.now_ns;
        // Timers first: the processes' and backlogs' timer ids print as these hashes.
        let mut timers = BTreeMap::new();
        let mut timer_hashes = Vec::new();
        for (id, node, due_ns, tag) in self.timers.live() {
            let mut t = StableHasher::default();
            t.write_usize(node);
            t.write_i128(relative(due_ns, now));
            t.debug(tag);
            let th = t.finish();
            timers.insert(id, th);
            timer_hashes.push(th);
        }
        let _named = CanonicalTimerNames::set(timers);

        let mut h = StableHasher::default();
        h.write_usize(self.nodes.len());
        for (id, node) in self.nodes.iter().enumerate() {
            h.write_u64(self.node_hash(id, node));
        }
        multiset(&mut h, timer_hashes);
        let events = self.queue.events().filter_map(|(at_ns, kind)| {
            let mut e = StableHasher::default();
            e.write_i128(relative(at_ns, now));
            match kind {
                EventKind::Timer { .. } => return None,
                EventKind::Start { node } => {
                    e.write_u8(0);
                    e.write_usize(*node);
                }
                EventKind::Deliver { from, to, msg } => {
                    e.write_u8(1);
                    e.write_usize(*from);
                    e.write_usize(*to);
                    match msg {
                        Wire::Model(m) => e.debug(m),
                        Wire::Resource(r) => e.debug(r),
                    }
                }
                EventKind::Reset { from, to } => {
                    e.write_u8(2);
                    e.write_usize(*from);
                    e.write_usize(*to);
                }
                EventKind::FaultStart { occurrence } => {
                    e.write_u8(3);
                    e.write_usize(*occurrence);
                }
                EventKind::FaultEnd { occurrence } => {
                    e.write_u8(4);
                    e.write_usize(*occurrence);
                }
            }
            Some(e.finish())
        });
        multiset(&mut h, events.collect());
        self.network.fingerprint(now, &mut h);
        let n = self.nodes.len();
        for a in 0..n {
            for b in 0..n {
                h.write_u8(self.conns.get(a, b) as u8 | (self.stale.get(a, b) as u8) << 1);
            }
        }
        for rng in [&self.net_rng, &self.reset_rng, &self.fault_rng] {
            rng_hash(&mut h, rng);
        }
        h.debug(&self.applied);
        h.finish()
    }

    fn node_hash(&self, id: usize, node: &Node<P>) -> u64 {
        let now = self.now_ns;
        let mut h = StableHasher::default();
        h.debug(&self.dir.kind_of(id));
        h.debug(&node.status);
        h.debug(&node.crash_kind);
        h.write_u32(node.pauses);
        h.write_u64(node.clock.mono_ns(now));
        h.write_i64(node.clock.wall_ns(now));
        h.write_u64(node.clock.drift_ppm().to_bits());
        rng_hash(&mut h, &node.rng);
        h.debug(&node.backlog);
        match &node.behaviour {
            super::Behaviour::Service(p) => h.debug(p),
            super::Behaviour::Client(c) => h.debug(c),
            super::Behaviour::Resource(r) => h.debug(r),
        }
        h.finish()
    }
}

/// A random stream's state: its key, stream number and position (what its next draw depends on).
fn rng_hash(h: &mut StableHasher, rng: &crate::rng::ChaCha8Rng) {
    h.write(&rng.get_seed());
    h.write_u64(rng.get_stream());
    h.write_u128(rng.get_word_pos());
}
