//! A world's canonical fingerprint: one 64-bit hash of the state a run's future depends on, equal
//! for two worlds that will behave alike however they got there. A search keeps the fingerprints
//! of the states it has explored (a visited set) and explores a state reached twice only once.
//!
//! What it hashes (with [`StableHasher`], the same in every build and on every platform), each
//! part by its typed [`Fingerprint`] (`crate::fingerprint`: complete, every field listed) where
//! the model has one, else by its `Debug` text:
//! - every node, by id: its kind, status (up, paused, crashed and how), pause depth, its clock's
//!   readings now (monotonic, wall) and rate, its random stream's key, stream and position, the
//!   work backlogged while it is paused, and its process's state (the service, the client's
//!   workload driver and library, or the resource);
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
//! - **Interchangeable clients (symmetry)**, in [`World::fingerprint`]: clients are hashed by
//!   node id. [`World::fingerprint_symmetric`] renames them: when every process, message and
//!   timer tag of the world has a typed [`Fingerprint`] (`crate::fingerprint`), the clients of
//!   one class (same links, no fault rule naming them) are sorted by their own state hashed with
//!   client ids abstracted, renamed by that order, and the renamed world is hashed, every node
//!   id in every process, message, timer and fault through the renaming. Ties keep id order:
//!   they only cost merges. Otherwise it is [`World::fingerprint`]. Servers are renamed the
//!   same way within their classes where every client's library treats them as a set and each
//!   says it is interchangeable, has started, and is named by no pending `leader`, `follower`
//!   or `random-server` fault (Redlock's masters under parallel requests; docs/world-state.md).
//! - **Tie order.** Events due at the same instant are hashed as a multiset: the random runner
//!   handles them in sequence order, a search chooses among them, so their order is a choice,
//!   not state.
//! - **Custom `Debug`**, for a part without a typed fingerprint only: a hand-written `Debug` that
//!   leaves a field out (the trace's short forms) hides that field. This is why the typed form is
//!   preferred even without symmetry: etcd's log entries print `t1:LeaseGrant(2000ms)` without
//!   their origin, so two worlds whose logs hold two clients' lease grants in either order (each
//!   client then gets the other's lease id) hashed alike (docs/world-state.md).

use std::collections::BTreeMap;
use std::hash::Hasher;

use super::queue::EventKind;
use super::{Backlogged, Behaviour, Node, World};
use crate::directory::{NodeId, NodeKind};
pub use crate::fingerprint::StableHasher;
use crate::fingerprint::{identity_owners, multiset, stream_position, stream_state, Fingerprint, Renaming};
use crate::process::Protocol;
use crate::setup::Selector;
use crate::time::Nanos;
use crate::timers::{CanonicalTimerNames, TimerNames};
use crate::wire::{Tag, Wire};

/// A due time relative to now (negative: overdue, e.g. a timer backlogged on a paused node).
fn relative(due_ns: Nanos, now_ns: Nanos) -> i128 {
    due_ns as i128 - now_ns as i128
}

impl<P: Protocol> World<P> {
    /// The world's canonical fingerprint (see the module docs for what it hashes and what it
    /// does not merge): every part hashed by its typed [`Fingerprint`] where it has one, by its
    /// `Debug` text where not, node ids as themselves. Reads only: taking it changes nothing in
    /// the run.
    pub fn fingerprint(&self) -> u64 {
        self.canonical_fingerprint(&[])
    }

    /// A node's kind, status, crash kind, pause depth, and its clock's readings now and rate.
    fn node_status_hash(&self, h: &mut StableHasher, id: NodeId, node: &Node<P>) {
        let now = self.now_ns;
        h.debug(&self.dir.kind_of(id));
        h.debug(&node.status);
        h.debug(&node.crash_kind);
        h.write_u32(node.pauses);
        h.write_u64(node.clock.mono_ns(now));
        h.write_i64(node.clock.wall_ns(now));
        h.write_u64(node.clock.drift_ppm().to_bits());
    }

    /// A fault occurrence: its index, its kind and targets (a node named: through the renaming),
    /// its length and value. The index alone would merge two faults a search injected at the
    /// same index on different nodes.
    fn occurrence_hash(&self, h: &mut StableHasher, occurrence: usize, ids: &Renaming) {
        h.write_usize(occurrence);
        let Some(occ) = self.occurrences.get(occurrence) else { return };
        occ.duration_ns.fingerprint(h, ids);
        occ.value.fingerprint(h, ids);
        let Some(spec) = self.faults.get(occ.fault) else { return };
        h.debug(&spec.kind);
        h.write_usize(spec.targets.len());
        for target in &spec.targets {
            match target {
                Selector::Named(name) => match self.dir.id_of(name) {
                    Some(id) => {
                        h.write_u8(0);
                        ids.node(h, id);
                    }
                    None => h.debug(target),
                },
                other => h.debug(other),
            }
        }
    }

    /// Whether [`World::fingerprint_symmetric`] renames clients here: every process, message
    /// and timer tag has a typed fingerprint and no pending fault picks a client by id.
    pub fn symmetry_applies(&self) -> bool {
        self.symmetry_applies_pinned(&[])
    }

    /// [`World::symmetry_applies`] with the nodes in `pinned` kept as themselves.
    pub fn symmetry_applies_pinned(&self, pinned: &[NodeId]) -> bool {
        self.symmetry_classes(pinned).is_some()
    }

    /// The world's fingerprint with interchangeable clients renamed canonically: equal for two
    /// worlds that differ only by a permutation of such clients (see the module docs). Where
    /// symmetry does not apply ([`World::symmetry_applies`]), [`World::fingerprint`]. Reads only.
    pub fn fingerprint_symmetric(&self) -> u64 {
        self.fingerprint_symmetric_pinned(&[])
    }

    /// [`World::fingerprint_symmetric`] with the nodes in `pinned` kept as themselves (never
    /// renamed): the nodes a search's fault menu names, which it treats apart from their class.
    pub fn fingerprint_symmetric_pinned(&self, pinned: &[NodeId]) -> u64 {
        match self.symmetry_classes(pinned) {
            Some(classes) => self.canonical_fingerprint(&classes),
            None => self.fingerprint(),
        }
    }

    /// The classes of interchangeable clients, then of interchangeable servers (each of two or
    /// more, ids ascending), or `None` where symmetry cannot be applied soundly.
    fn symmetry_classes(&self, pinned: &[NodeId]) -> Option<Vec<Vec<NodeId>>> {
        for node in &self.nodes {
            let typed = match &node.behaviour {
                Behaviour::Service(p) => p.as_fingerprint().is_some(),
                Behaviour::Client(c) => c.has_fingerprint(),
                Behaviour::Resource(_) => true,
            };
            let backlog_typed = node.backlog.iter().all(|b| match b {
                Backlogged::Message { msg: Wire::Model(m), .. } => P::msg_fingerprint(m).is_some(),
                _ => true,
            });
            if !typed || !backlog_typed {
                return None;
            }
        }
        if !self.timers.live().all(|(.., tag)| match tag {
            Tag::Model(t) => P::timer_fingerprint(t).is_some(),
            Tag::Driver(_) => true,
        }) {
            return None;
        }
        let mut fixed = vec![false; self.nodes.len()];
        for &id in pinned {
            if let Some(f) = fixed.get_mut(id) {
                *f = true;
            }
        }
        let mut servers_pinned = false;
        for (_, kind) in self.queue.events() {
            match kind {
                EventKind::Deliver { msg: Wire::Model(m), .. } if P::msg_fingerprint(m).is_none() => return None,
                EventKind::FaultStart { occurrence } => {
                    // A selector that picks clients by id order or by the fault stream cannot be
                    // renamed; a named target is renamed with its node.
                    let occ = self.occurrences.get(*occurrence)?;
                    let spec = self.faults.get(occ.fault)?;
                    if spec
                        .targets
                        .iter()
                        .any(|s| matches!(s, Selector::Holder | Selector::Waiter | Selector::RandomClient))
                    {
                        return None;
                    }
                    // Likewise for servers: `leader` is `server-0` in a leaderless model, and
                    // `follower` and `random-server` pick by id order and the fault stream.
                    servers_pinned |= spec
                        .targets
                        .iter()
                        .any(|s| matches!(s, Selector::Leader | Selector::Follower | Selector::RandomServer));
                }
                _ => {}
            }
        }
        // A network rule in force names its nodes in its own terms (not renamed): its targets
        // stay themselves.
        for owner in self.network.rule_owners() {
            for &id in self.applied.get(owner).map_or(&[][..], |a| &a.nodes[..]) {
                fixed[id] = true;
            }
        }
        let mut classes: BTreeMap<Vec<(bool, bool)>, Vec<NodeId>> = BTreeMap::new();
        for id in self.dir.of_kind(NodeKind::Client) {
            if !fixed[id] {
                classes.entry(self.network.link_class(id)).or_default().push(id);
            }
        }
        let mut classes: Vec<Vec<NodeId>> = classes.into_values().filter(|c| c.len() > 1).collect();
        if !servers_pinned {
            classes.extend(self.server_classes(&fixed));
        }
        Some(classes)
    }

    /// The classes of interchangeable servers: none unless every client's library treats the
    /// servers as a set (`LockClient::servers_interchangeable`: Redlock's parallel request
    /// modes); then the servers whose process says `Process::interchangeable_server`, not named
    /// by a network rule in force (`fixed`), grouped by their links (as clients are).
    fn server_classes(&self, fixed: &[bool]) -> Vec<Vec<NodeId>> {
        let clients_agree = self.dir.of_kind(NodeKind::Client).all(|id| match &self.nodes[id].behaviour {
            Behaviour::Client(c) => c.servers_interchangeable(),
            // A service standing in for a client (an engine-only harness) says nothing of servers.
            _ => false,
        });
        if !clients_agree {
            return Vec::new();
        }
        // A server yet to start draws from its stream, keyed by its name (Redlock's master its
        // fsync phase): until it has started, its future draws tell it apart.
        let mut unstarted = vec![false; self.nodes.len()];
        for (_, kind) in self.queue.events() {
            if let EventKind::Start { node } = kind {
                unstarted[*node] = true;
            }
        }
        let mut classes: BTreeMap<Vec<(bool, bool)>, Vec<NodeId>> = BTreeMap::new();
        for id in self.dir.of_kind(NodeKind::Server) {
            let node = &self.nodes[id];
            let interchangeable = match &node.behaviour {
                Behaviour::Service(p) => p.interchangeable_server(),
                _ => false,
            };
            let starting = unstarted[id] || node.backlog.iter().any(|b| matches!(b, Backlogged::Start));
            if interchangeable && !fixed[id] && !starting {
                classes.entry(self.network.link_class(id)).or_default().push(id);
            }
        }
        classes.into_values().filter(|c| c.len() > 1).collect()
    }

    /// Hashes the world renamed: clients sorted within their class by their state with client
    /// ids abstracted (ties by id), each renamed to the class's id of its rank. With no class,
    /// every node as itself: [`World::fingerprint`].
    fn canonical_fingerprint(&self, classes: &[Vec<NodeId>]) -> u64 {
        let n = self.nodes.len();
        let renamed: Vec<NodeId> = classes.iter().flatten().copied().collect();
        let mut in_class = vec![false; n];
        for &id in &renamed {
            in_class[id] = true;
        }
        let perm =
            if classes.is_empty() { (0..n).collect() } else { self.canonical_order(classes, &renamed, &in_class) };
        let ids = Renaming::from_permutation(&perm)
            .with_clients(self.dir.clients_by_index().to_vec())
            .with_servers(self.dir.servers_by_index().to_vec());
        // Plain (no class): identity values hash as values, as they always did.
        let ids = if classes.is_empty() { ids } else { self.with_identity_owners(ids, &in_class) };
        let (timers, timer_hashes) = self.timer_hashes(&ids);
        // A part without a typed fingerprint is hashed as its `Debug` text, in which a timer id
        // prints as the timer it names (`CanonicalTimerNames`), not as its slot.
        let _named = CanonicalTimerNames::set(timers.clone());
        let ids = ids.with_timers(timers);

        let mut h = StableHasher::default();
        h.write_u8(0x5e);
        h.write_usize(n);
        for &old in &perm {
            h.write_u64(self.node_hash_typed(old, &ids, &in_class));
        }
        multiset(&mut h, timer_hashes);
        multiset(&mut h, self.event_hashes(&ids));
        self.network.fingerprint_renamed(self.now_ns, &mut h, &perm);
        for &a in &perm {
            for &b in &perm {
                h.write_u8(self.conns.get(a, b) as u8 | (self.stale.get(a, b) as u8) << 1);
            }
        }
        for rng in [&self.net_rng, &self.reset_rng, &self.fault_rng] {
            stream_state(&mut h, rng);
        }
        h.write_usize(self.applied.len());
        for applied in &self.applied {
            let super::Applied { nodes, saved_drift_ppm, started } = applied;
            // Targets as a set (picked in id order, undone in any), each with its saved drift
            // (a clock_drift fault's, aligned with the targets; empty otherwise).
            let mut targets: Vec<(u64, Option<u64>)> = nodes
                .iter()
                .enumerate()
                .map(|(i, t)| (ids.name(*t), saved_drift_ppm.get(i).map(|d| d.to_bits())))
                .collect();
            targets.sort_unstable();
            targets.fingerprint(&mut h, &ids);
            saved_drift_ppm.len().fingerprint(&mut h, &ids);
            started.fingerprint(&mut h, &ids);
        }
        h.finish()
    }

    /// The canonical order of the nodes: old id `perm[k]` becomes node `k`; each class's clients
    /// sorted by their own state with client ids abstracted, ties broken by what the rest of the
    /// world says of each, remaining ties by id.
    fn canonical_order(&self, classes: &[Vec<NodeId>], renamed: &[NodeId], in_class: &[bool]) -> Vec<NodeId> {
        let n = self.nodes.len();
        let abstracted = Renaming::abstracting(n, renamed)
            .with_clients(self.dir.clients_by_index().to_vec())
            .with_servers(self.dir.servers_by_index().to_vec());
        let abstracted = self.with_identity_owners(abstracted, in_class);
        let (timers, _) = self.timer_hashes(&abstracted);
        let abstracted = abstracted.with_timers(timers);
        let mut perm: Vec<NodeId> = (0..n).collect();
        for class in classes {
            // (own state, what the rest of the world says of it, id): the second part only for
            // clients whose own states tie (both waiting, say, in a server's queue in some order).
            let mut ranked: Vec<(u64, u64, NodeId)> =
                class.iter().map(|&id| (self.node_hash_typed(id, &abstracted, in_class), 0, id)).collect();
            ranked.sort_unstable();
            let mut i = 0;
            while i < ranked.len() {
                let j = i + ranked[i..].iter().take_while(|r| r.0 == ranked[i].0).count();
                if j - i > 1 {
                    for r in &mut ranked[i..j] {
                        r.1 = self.marked_hash(r.2, renamed, in_class);
                    }
                }
                i = j;
            }
            ranked.sort_unstable();
            for (&slot, &(.., id)) in class.iter().zip(&ranked) {
                perm[slot] = id;
            }
        }
        perm
    }

    /// `ids` with the owners of the renamed clients' identity values named
    /// (`LockClient::identity_values`, [`Renaming::identity_value`]): each such value then
    /// hashes as its client, renamed with it.
    fn with_identity_owners(&self, ids: Renaming, in_class: &[bool]) -> Renaming {
        let mut claims = Vec::new();
        let mut values = Vec::new();
        for id in self.dir.of_kind(NodeKind::Client) {
            if let (true, Behaviour::Client(c)) = (in_class[id], &self.nodes[id].behaviour) {
                values.clear();
                c.identity_values(&mut values);
                claims.extend(values.iter().map(|&v| (v, id)));
            }
        }
        ids.with_identities(identity_owners(claims))
    }

    /// What the world says of client `marked` with the other renamed clients alike: the other
    /// nodes by id, the renamed clients as a multiset, the events in flight. The same for two
    /// clients a renaming swaps, so it breaks ties without depending on ids.
    fn marked_hash(&self, marked: NodeId, renamed: &[NodeId], in_class: &[bool]) -> u64 {
        let ids = Renaming::abstracting(self.nodes.len(), renamed)
            .marking(marked)
            .with_clients(self.dir.clients_by_index().to_vec())
            .with_servers(self.dir.servers_by_index().to_vec());
        let ids = self.with_identity_owners(ids, in_class);
        let (timers, timer_hashes) = self.timer_hashes(&ids);
        let ids = ids.with_timers(timers);
        let mut h = StableHasher::default();
        let mut clients = Vec::new();
        for id in 0..self.nodes.len() {
            let node = self.node_hash_typed(id, &ids, in_class);
            if in_class[id] {
                clients.push(node);
            } else {
                h.write_u64(node);
            }
        }
        multiset(&mut h, clients);
        multiset(&mut h, timer_hashes);
        multiset(&mut h, self.event_hashes(&ids));
        h.finish()
    }

    /// Each event in flight under `ids` (timer events left out: the armed timers are hashed).
    fn event_hashes(&self, ids: &Renaming) -> Vec<u64> {
        let now = self.now_ns;
        let events = self.queue.events().filter_map(|(at_ns, kind)| {
            let mut e = StableHasher::default();
            e.write_i128(relative(at_ns, now));
            match kind {
                EventKind::Timer { .. } => return None,
                EventKind::Start { node } => {
                    e.write_u8(0);
                    ids.node(&mut e, *node);
                }
                EventKind::Deliver { from, to, msg } => {
                    e.write_u8(1);
                    ids.node(&mut e, *from);
                    ids.node(&mut e, *to);
                    wire_hash::<P>(&mut e, msg, ids);
                }
                EventKind::Reset { from, to } => {
                    e.write_u8(2);
                    ids.node(&mut e, *from);
                    ids.node(&mut e, *to);
                }
                EventKind::FaultStart { occurrence } => {
                    e.write_u8(3);
                    self.occurrence_hash(&mut e, *occurrence, ids);
                }
                EventKind::FaultEnd { occurrence } => {
                    e.write_u8(4);
                    e.write_usize(*occurrence);
                }
            }
            Some(e.finish())
        });
        events.collect()
    }

    /// Each live timer's hash under `ids` (node renamed, due relative to now, tag), by id, and
    /// the hashes alone.
    fn timer_hashes(&self, ids: &Renaming) -> (TimerNames, Vec<u64>) {
        let now = self.now_ns;
        let mut by_id = Vec::new();
        let mut hashes = Vec::new();
        for (id, node, due_ns, tag) in self.timers.live() {
            let mut t = StableHasher::default();
            ids.node(&mut t, node);
            t.write_i128(relative(due_ns, now));
            match tag {
                Tag::Model(m) => {
                    t.write_u8(0);
                    match P::timer_fingerprint(m) {
                        Some(f) => f.fingerprint(&mut t, ids),
                        None => t.debug(m),
                    }
                }
                Tag::Driver(d) => {
                    t.write_u8(1);
                    d.fingerprint(&mut t, ids);
                }
            }
            let th = t.finish();
            by_id.push((id, th));
            hashes.push(th);
        }
        (TimerNames::new(by_id), hashes)
    }

    /// One node under `ids`: as [`World::node_hash`], with typed state; a renamed client's
    /// random stream by position only (`in_class`).
    fn node_hash_typed(&self, id: NodeId, ids: &Renaming, in_class: &[bool]) -> u64 {
        let node = &self.nodes[id];
        let mut h = StableHasher::default();
        self.node_status_hash(&mut h, id, node);
        if in_class[id] {
            stream_position(&mut h, &node.rng);
        } else {
            stream_state(&mut h, &node.rng);
        }
        h.write_usize(node.backlog.len());
        for b in &node.backlog {
            match b {
                Backlogged::Start => h.write_u8(0),
                Backlogged::Message { from, msg } => {
                    h.write_u8(1);
                    ids.node(&mut h, *from);
                    wire_hash::<P>(&mut h, msg, ids);
                }
                Backlogged::Timer { id } => {
                    h.write_u8(2);
                    ids.timer(&mut h, *id);
                }
                Backlogged::Reset { peer } => {
                    h.write_u8(3);
                    ids.node(&mut h, *peer);
                }
            }
        }
        match &node.behaviour {
            Behaviour::Service(p) => match p.as_fingerprint() {
                Some(f) => f.fingerprint(&mut h, ids),
                None => h.debug(p),
            },
            Behaviour::Client(c) => c.fingerprint(&mut h, ids),
            Behaviour::Resource(r) => r.fingerprint(&mut h, ids),
        }
        h.finish()
    }
}

/// A message under `ids` (a model message without a typed fingerprint: its `Debug` text; a
/// world with one is not fingerprinted with symmetry).
fn wire_hash<P: Protocol>(h: &mut StableHasher, msg: &Wire<P::Msg>, ids: &Renaming) {
    match msg {
        Wire::Model(m) => {
            h.write_u8(0);
            match P::msg_fingerprint(m) {
                Some(f) => f.fingerprint(h, ids),
                None => h.debug(m),
            }
        }
        Wire::Resource(r) => {
            h.write_u8(1);
            r.fingerprint(h, ids);
        }
    }
}
