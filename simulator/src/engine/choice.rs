//! Choice points: a world run step by step, where the caller picks which of the events due at the
//! same instant happens next and what delay each message gets, instead of the queue's order and
//! the network's random stream. A systematic search (`sim exhaust`) branches on these choices; a
//! scenario's `[replay]` table replays one path of choices exactly (`sim run`).
//!
//! - [`World::enabled`]: the events that may happen next: every live event due at the earliest
//!   instant, except a message queued behind an earlier one on the same link (TCP order);
//! - [`World::step`]: handles one of them, its sends' latencies taken from a [`DelayFeed`];
//!   [`World::step_timed`] also takes the workload's hold and think times it needs from a
//!   [`WorkloadFeed`] (a search's choice per acquisition);
//! - [`World::inject_fault`]: queues a fault occurrence to start now, at a fixed time and length;
//! - [`World::follow_replay`]: a normal run (`run_until`) follows a recorded path: each step
//!   the event a key names ([`World::event_key`]), each latency the next of a list;
//!   [`World::follow_workload_times`]: each hold and think time the next of a list.
//!
//! A normal run pays nothing for this: `run_until` looks once, on entry, whether a replay is
//! set; the network tests its delay feed once per latency, the workload driver its time feed once
//! per hold or think.

use std::sync::atomic::AtomicBool;

use super::network::DelayFeed;
use super::queue::EventKind;
use super::{poll, Applied, Status, Watch, World, POLL_EVENTS};
use crate::dist::Dist;
use crate::history::{History, HistoryEvent};
use crate::outcome::Halt;
use crate::process::NodeKind;
use crate::process::{ClientState, NodeId, Protocol};
pub use crate::search::{ChosenTimes, Enabled, Injection, SearchWorld, StepTaken};
use crate::setup::{FaultSpec, Selector};
use crate::time::Nanos;
use crate::wire::DriverTimer;

use super::schedule::Occurrence;
use super::Behaviour;

/// A recorded path a run follows: at each step the event whose [`World::event_key`] is the next
/// key (then the queue's order once the keys run out), and the latencies in order (then drawn).
#[derive(Clone, Debug, Default)]
pub(crate) struct Followed {
    keys: Vec<String>,
    next: usize,
    /// The step at which an enabled event matched no key: the rest ran in the queue's order.
    pub(crate) diverged_at: Option<usize>,
}

/// Hold and think times given to the workload driver instead of drawn: each hold time a grant
/// needs takes the next of `holds_ns`, each think time the next of `thinks_ns`; past either list
/// the driver draws as it would (what a search chooses at a step, or what a `[replay]`'s
/// `hold_ms` and `think_ms` replay). It counts what was asked, past the lists too, so a step
/// taken once with empty lists tells a search how many choices that step has.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadFeed {
    /// Hold times, in the order grants need them (over every client).
    pub holds_ns: Vec<Nanos>,
    /// Think times, in the order the driver needs them (over every client).
    pub thinks_ns: Vec<Nanos>,
    /// Hold times asked for so far.
    pub holds_taken: usize,
    /// Think times asked for so far.
    pub thinks_taken: usize,
}

impl WorkloadFeed {
    /// The next time of the driver's `timer` (`Hold` or `Think`), or `None` to draw it.
    pub(crate) fn next(&mut self, timer: DriverTimer) -> Option<Nanos> {
        let (list, taken) = match timer {
            DriverTimer::Hold => (&self.holds_ns, &mut self.holds_taken),
            DriverTimer::Think => (&self.thinks_ns, &mut self.thinks_taken),
            _ => return None,
        };
        *taken += 1;
        list.get(*taken - 1).copied()
    }
}

impl<P: Protocol> World<P> {
    /// The events that may happen next: every live event due at the earliest instant (within the
    /// run), in queue order, except a delivery or reset queued behind an earlier one on the same
    /// directed link (TCP keeps a link's order even at one instant), and a delivery, reset or
    /// timer of a node whose start is still queued (every node starts at 0 before anything else
    /// due then, in the normal loop's queue order too: a message sent at 0 with no latency reaches
    /// a started node; models may rely on `on_start` having run). Events already dead (timers
    /// cancelled, or moved by a clock-rate change) are dropped on the way, counted as processed as
    /// the normal loop counts them. Empty: the run is over.
    pub fn enabled(&mut self) -> Vec<Enabled> {
        loop {
            let tied = self.queue.earliest_tied();
            let Some(&(_, t, _)) = tied.first() else { return Vec::new() };
            if t > self.end_ns {
                return Vec::new();
            }
            // Starts are all queued at 0, so one still queued is among the tied events.
            let unstarted: Vec<NodeId> = tied
                .iter()
                .filter_map(|(_, _, kind)| match kind {
                    EventKind::Start { node } => Some(*node),
                    _ => None,
                })
                .collect();
            let mut dead = Vec::new();
            let mut out: Vec<Enabled> = Vec::with_capacity(tied.len());
            let mut links: Vec<(NodeId, NodeId)> = Vec::new();
            for (seq, at_ns, kind) in tied {
                let node = match kind {
                    EventKind::Start { node } => Some(*node),
                    EventKind::Deliver { from, to, .. } | EventKind::Reset { from, to } => {
                        if unstarted.contains(to) || links.contains(&(*from, *to)) {
                            continue;
                        }
                        links.push((*from, *to));
                        Some(*to)
                    }
                    EventKind::Timer { id } => match self.timers.peek(*id) {
                        Some((node, due)) if due == at_ns && unstarted.contains(&node) => continue,
                        Some((node, due)) if due == at_ns => Some(node),
                        _ => {
                            dead.push(seq);
                            continue;
                        }
                    },
                    EventKind::FaultStart { .. } | EventKind::FaultEnd { .. } => None,
                };
                out.push(Enabled { seq, at_ns, node });
            }
            if dead.is_empty() {
                return out;
            }
            for seq in dead {
                self.queue.take_seq(seq);
                self.events_processed += 1;
            }
        }
    }

    /// Handles the queued event `seq` (one of [`World::enabled`]) as the normal loop would, each
    /// latency its handlers need taken from `delays_ns` in order and, past its end, `fallback_ns`.
    /// Returns how many latencies the step needed (a caller enumerating delays learns how many
    /// choices the step had). Panics if `seq` is not queued.
    pub fn step(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos) -> usize {
        let feed = DelayFeed { script_ns: delays_ns.to_vec(), taken: 0, fallback_ns: Some(fallback_ns) };
        self.network.set_feed(Some(feed));
        let ev = self.queue.take_seq(seq).expect("a step takes an enabled event");
        self.now_ns = ev.at_ns;
        self.events_processed += 1;
        self.handle(ev.kind, ev.at_ns);
        let taken = self.network.feed().map_or(0, |f| f.taken);
        self.network.set_feed(None);
        taken
    }

    /// [`World::step`], with the workload's hold and think times taken from `times` in order
    /// (past its lists: drawn as the workload says). Returns how many latencies, hold times and
    /// think times the step needed.
    pub fn step_timed(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos, times: &ChosenTimes) -> StepTaken {
        self.workload_feed = Some(Box::new(WorkloadFeed {
            holds_ns: times.holds_ns.clone(),
            thinks_ns: times.thinks_ns.clone(),
            ..WorkloadFeed::default()
        }));
        let latencies = self.step(seq, delays_ns, fallback_ns);
        let feed = self.workload_feed.take().expect("the step's time feed");
        StepTaken { latencies, holds: feed.holds_taken, thinks: feed.thinks_taken }
    }

    /// From now on the workload driver takes each hold time from `holds_ns` and each think time
    /// from `thinks_ns`, in order, over every client (a `[replay]`'s `hold_ms` and `think_ms`);
    /// past a list it draws them as the workload says.
    pub fn follow_workload_times(&mut self, holds_ns: Vec<Nanos>, thinks_ns: Vec<Nanos>) {
        self.workload_feed = Some(Box::new(WorkloadFeed { holds_ns, thinks_ns, ..WorkloadFeed::default() }));
    }

    /// Queues `fault` to start at `at_ns` (not before now), as an occurrence of its own: its
    /// start is then an enabled event like any other. Returns the start's sequence number.
    pub fn inject_fault(&mut self, fault: &Injection, at_ns: Nanos) -> u64 {
        let at_ns = at_ns.max(self.now_ns);
        let name = self.dir.name_of(fault.target).to_string();
        std::sync::Arc::make_mut(&mut self.faults).push(FaultSpec {
            kind: fault.kind.clone(),
            targets: vec![Selector::Named(name)],
            at_ms: Dist::Const(at_ns as f64 / 1e6),
            duration_ms: fault.duration_ns.map(|d| Dist::Const(d as f64 / 1e6)),
            every_ms: None,
            probability: 1.0,
        });
        let occurrence = self.occurrences.len();
        self.occurrences.push(Occurrence {
            fault: self.faults.len() - 1,
            start_ns: at_ns,
            duration_ns: fault.duration_ns,
            value: fault.value,
        });
        self.applied.push(Applied::default());
        self.window_of.push(None);
        self.queue.push(at_ns, EventKind::FaultStart { occurrence });
        self.queue.last_seq()
    }

    /// What names a queued event across runs of the same path, whatever its sequence number:
    /// `start client-0`, `deliver server-1 -> client-0`, `reset server-1 -> client-0`, `timer
    /// client-0 workload Hold`, `fault 0 start`, `fault 0 end` (fault occurrences by index).
    /// `None`: `seq` is not queued.
    pub fn event_key(&self, seq: u64) -> Option<String> {
        let (_, kind) = self.queue.events_with_seq().find(|(s, _)| *s == seq)?;
        let name = |n: &NodeId| self.dir.name_of(*n);
        Some(match kind {
            EventKind::Start { node } => format!("start {}", name(node)),
            EventKind::Deliver { from, to, .. } => format!("deliver {} -> {}", name(from), name(to)),
            EventKind::Reset { from, to } => format!("reset {} -> {}", name(from), name(to)),
            EventKind::Timer { id } => {
                let tag = self.timers.live().find(|(t, ..)| t == id).map(|(_, _, _, tag)| format!("{tag:?}"));
                let node = self.timers.peek(*id).map_or("-", |(n, _)| self.dir.name_of(n));
                format!("timer {node} {}", tag.unwrap_or_default())
            }
            EventKind::FaultStart { occurrence } => format!("fault {occurrence} start"),
            EventKind::FaultEnd { occurrence } => format!("fault {occurrence} end"),
        })
    }

    /// From now on a run ([`World::run_until`]) follows a recorded path: at each step the enabled
    /// event whose key is the next of `keys`, and each latency the next of `delays_ns`. Past the
    /// keys, events go in the queue's order; past the delays, latencies are drawn. A key that no
    /// enabled event has ends the following there (the run goes on in the queue's order; the
    /// trace says so, and [`World::replay_diverged_at`] tells the step).
    pub fn follow_replay(&mut self, keys: Vec<String>, delays_ns: Vec<Nanos>) {
        self.network.set_feed(Some(DelayFeed { script_ns: delays_ns, taken: 0, fallback_ns: None }));
        self.followed = Some(Box::new(Followed { keys, next: 0, diverged_at: None }));
    }

    /// The step at which a followed replay named an event that was not enabled; `None`: it was
    /// followed to its end (or none was set).
    pub fn replay_diverged_at(&self) -> Option<usize> {
        self.followed.as_ref().and_then(|f| f.diverged_at)
    }

    /// `run_until` with a replay set: step by step, as [`World::follow_replay`] says.
    pub(super) fn run_followed(&mut self, stop: Option<&AtomicBool>) -> Result<(), Halt> {
        let mut watch = Watch { polled_ns: None, still_events: 0 };
        loop {
            let enabled = self.enabled();
            let Some(first) = enabled.first() else { break };
            if self.events_processed & (POLL_EVENTS - 1) == 0 {
                poll(stop, first.at_ns, &mut watch)?;
            }
            let mut pick = first.seq;
            let followed = self.followed.as_deref().expect("a replay is followed");
            if followed.diverged_at.is_none() {
                if let Some(key) = followed.keys.get(followed.next) {
                    let step = followed.next;
                    match enabled.iter().find(|e| self.event_key(e.seq).as_deref() == Some(key.as_str())) {
                        Some(e) => pick = e.seq,
                        None => {
                            let detail = format!("the [replay] names `{key}` at step {step}, which is not due now: the rest runs in queue order");
                            self.trace_at(None, "replay", || detail);
                            self.followed.as_deref_mut().expect("followed").diverged_at = Some(step);
                        }
                    }
                }
            }
            if let Some(f) = self.followed.as_deref_mut() {
                f.next += 1;
            }
            let ev = self.queue.take_seq(pick).expect("an enabled event is queued");
            self.now_ns = ev.at_ns;
            self.events_processed += 1;
            self.handle(ev.kind, ev.at_ns);
        }
        self.now_ns = self.end_ns;
        Ok(())
    }

    /// Whether every client has made all its acquisitions and released (the workload's `Done`),
    /// and no message to the resource is in flight: nothing a client does can change any more.
    pub fn clients_finished(&self) -> bool {
        let done = self.nodes.iter().all(|n| match &n.behaviour {
            Behaviour::Client(c) => c.is_done(),
            _ => true,
        });
        done && !self
            .queue
            .events()
            .any(|(_, k)| matches!(k, EventKind::Deliver { to, .. } if self.dir.kind_of(*to) == NodeKind::Resource))
    }

    /// Whether `node` is up (neither paused nor crashed).
    pub fn node_is_up(&self, node: NodeId) -> bool {
        self.nodes[node].status == Status::Up
    }

    /// The server that claims leadership with the highest term (for a leaderless model, `server-0`).
    pub fn leader_now(&self) -> Option<NodeId> {
        self.leader()
    }

    /// What was recorded so far.
    pub fn history(&self) -> &[crate::history::Stamped] {
        &self.history
    }
}

/// A typed world with what judging its history needs, behind [`SearchWorld`].
pub struct SearchRun<P: Protocol> {
    world: World<P>,
    /// Fixed for the run: shared by the copies.
    nodes: std::sync::Arc<[(String, NodeKind)]>,
    fenced: bool,
    seed: u64,
    locks: u32,
    /// Nodes the symmetric fingerprint keeps as themselves ([`SearchWorld::pin_for_symmetry`]).
    pinned: std::sync::Arc<[NodeId]>,
}

impl<P: Protocol> SearchRun<P> {
    /// `world` at true time 0 (`run::build_world`) with its nodes' names and kinds; `fenced`:
    /// grants carry tokens; `locks`: the workload's lock keys.
    pub fn new(world: World<P>, nodes: Vec<(String, NodeKind)>, fenced: bool, seed: u64, locks: u32) -> Self {
        SearchRun { world, nodes: nodes.into(), fenced, seed, locks, pinned: std::sync::Arc::new([]) }
    }
}

impl<P: Protocol> SearchWorld for SearchRun<P> {
    fn box_clone(&self) -> Box<dyn SearchWorld> {
        Box::new(SearchRun {
            world: self.world.clone(),
            nodes: self.nodes.clone(),
            fenced: self.fenced,
            seed: self.seed,
            locks: self.locks,
            pinned: self.pinned.clone(),
        })
    }
    fn fingerprint(&self) -> u64 {
        self.world.fingerprint()
    }
    fn fingerprint_symmetric(&self) -> u64 {
        self.world.fingerprint_symmetric_pinned(&self.pinned)
    }
    fn symmetry_applies(&self) -> bool {
        self.world.symmetry_applies_pinned(&self.pinned)
    }
    fn pin_for_symmetry(&mut self, nodes: &[NodeId]) {
        self.pinned = nodes.into();
    }
    fn now_ns(&self) -> Nanos {
        self.world.now_ns
    }
    fn enabled(&mut self) -> Vec<Enabled> {
        self.world.enabled()
    }
    fn step(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos) -> usize {
        self.world.step(seq, delays_ns, fallback_ns)
    }
    fn step_timed(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos, times: &ChosenTimes) -> StepTaken {
        self.world.step_timed(seq, delays_ns, fallback_ns, times)
    }
    fn inject_fault(&mut self, fault: &Injection, at_ns: Nanos) -> u64 {
        self.world.inject_fault(fault, at_ns)
    }
    fn event_key(&self, seq: u64) -> Option<String> {
        self.world.event_key(seq)
    }
    fn clients_finished(&self) -> bool {
        self.world.clients_finished()
    }
    fn node_is_up(&self, node: NodeId) -> bool {
        self.world.node_is_up(node)
    }
    fn is_waiting(&self, node: NodeId) -> bool {
        self.world.nodes[node].behaviour.client_state() == ClientState::Waiting
    }
    fn is_holding(&self, node: NodeId) -> bool {
        self.world.nodes[node].behaviour.client_state() == ClientState::Holding
    }
    fn is_blocked(&self, node: NodeId) -> bool {
        matches!(&self.world.nodes[node].behaviour, Behaviour::Client(c) if c.is_blocked())
    }
    fn leader(&self) -> Option<NodeId> {
        self.world.leader()
    }
    fn history_len(&self) -> usize {
        self.world.history.len()
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn history_so_far(&self, at_end: bool) -> History {
        let events = self.world.history.clone();
        let mut final_counter = vec![0u64; self.locks as usize];
        for e in &events {
            if let HistoryEvent::ResourceWrite { key, value, .. } = e.event {
                if let Some(c) = final_counter.get_mut(key as usize) {
                    *c = value;
                }
            }
        }
        History {
            events,
            folded: self.world.folded,
            messages: self.world.messages,
            client_messages: self.world.client_messages,
            duration_ns: if at_end { self.world.run_end_ns } else { self.world.now_ns },
            final_counter,
            clients: self
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, (_, k))| *k == NodeKind::Client)
                .map(|(i, _)| i)
                .collect(),
            fenced: self.fenced,
            node_names: self.nodes.iter().map(|(n, _)| n.clone()).collect(),
            faults: self.world.fault_windows.clone(),
            ..History::default()
        }
    }
    fn nodes(&self) -> &[(String, NodeKind)] {
        &self.nodes
    }
}
