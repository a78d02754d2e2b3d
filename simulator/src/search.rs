//! What a systematic search (`sim exhaust`) sees of one world, its model's types erased: the
//! events that may happen next, a step that handles one with chosen latencies, a fault injected
//! at a fixed time, a copy, a fingerprint, and the history so far. A
//! [`crate::model::DynModel`] builds one ([`crate::model::DynModel::search_world`]); the engine
//! implements it over its typed world (`engine::choice`). The engine does not judge the history:
//! the search (in the campaign layer) hands it to the checkers, as `sim run`'s seed runner does.

use crate::directory::NodeKind;
use crate::history::History;
use crate::process::NodeId;
use crate::setup::FaultKind;
use crate::time::Nanos;

/// One event that may happen next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enabled {
    /// Its queue sequence number: what [`SearchWorld::step`] takes (the same in every copy of a
    /// world, and in every run that took the same steps).
    pub seq: u64,
    /// True time it is due.
    pub at_ns: Nanos,
    /// The node it happens on (a start, a delivery's receiver, a timer's owner, a reset's end
    /// told); `None` for a fault's start or end.
    pub node: Option<NodeId>,
}

/// A fault started at a fixed time on one node ([`SearchWorld::inject_fault`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Injection {
    /// What it does (`pause`, `crash`, `isolate`, `clock_jump`, …).
    pub kind: FaultKind,
    /// The node it hits.
    pub target: NodeId,
    /// How long it lasts; `None`: until the end of the run (a clock jump is instant).
    pub duration_ns: Option<Nanos>,
    /// A clock jump's step in milliseconds (0 for other kinds).
    pub value: f64,
}

/// The workload's hold and think times a step takes instead of drawing them, in the order the
/// driver needs them; past a list it draws them as the workload says (a search's choice of a
/// hold or think time per acquisition; `engine::choice::WorkloadFeed`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChosenTimes {
    /// Hold times, one per grant the step makes, in order.
    pub holds_ns: Vec<Nanos>,
    /// Think times, one per think the step starts, in order.
    pub thinks_ns: Vec<Nanos>,
}

/// How many choices a step needed ([`SearchWorld::step_timed`]): latencies, hold times, think times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepTaken {
    /// Latencies its sends needed.
    pub latencies: usize,
    /// Hold times its grants needed.
    pub holds: usize,
    /// Think times its driver needed.
    pub thinks: usize,
}

/// One world a search runs step by step. `Send`, so a search may run on any thread.
pub trait SearchWorld: Send {
    /// A copy to branch from.
    fn box_clone(&self) -> Box<dyn SearchWorld>;
    /// The world's canonical fingerprint (`engine::fingerprint`).
    fn fingerprint(&self) -> u64;
    /// The fingerprint with interchangeable clients renamed canonically: equal for two worlds
    /// that differ only by a permutation of such clients (`World::fingerprint_symmetric`,
    /// docs/world-state.md); [`SearchWorld::fingerprint`] where symmetry does not apply.
    fn fingerprint_symmetric(&self) -> u64 {
        self.fingerprint()
    }
    /// Whether [`SearchWorld::fingerprint_symmetric`] renames clients in this world (every
    /// process, message and timer has a typed fingerprint, no pending fault picks a client by id).
    fn symmetry_applies(&self) -> bool {
        false
    }
    /// True time now.
    fn now_ns(&self) -> Nanos;
    /// The events that may happen next (empty: the run is over); see `World::enabled`.
    fn enabled(&mut self) -> Vec<Enabled>;
    /// Handles event `seq`, its latencies `delays_ns` in order and `fallback_ns` past them;
    /// returns how many latencies it needed.
    fn step(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos) -> usize;
    /// [`SearchWorld::step`], with the workload's hold and think times from `times`; returns how
    /// many latencies, hold times and think times it needed.
    fn step_timed(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos, times: &ChosenTimes) -> StepTaken;
    /// Queues `fault` to start at `at_ns`; returns its start's sequence number.
    fn inject_fault(&mut self, fault: &Injection, at_ns: Nanos) -> u64;
    /// A queued event's key, the same in every run that took the same steps (`[replay]`).
    fn event_key(&self, seq: u64) -> Option<String>;
    /// Every client has finished its acquisitions and nothing is in flight to the resource.
    fn clients_finished(&self) -> bool;
    /// `node` is neither paused nor crashed.
    fn node_is_up(&self, node: NodeId) -> bool;
    /// `node` is a client with an acquire call outstanding (a waiter).
    fn is_waiting(&self, node: NodeId) -> bool;
    /// `node` is a client holding a grant it has learned (its acquire call answered).
    fn is_holding(&self, node: NodeId) -> bool;
    /// `node` is a waiter whose library is blocked on the service's notification, with no
    /// request of its own in flight (`LockClient::blocked_on_service`).
    fn is_blocked(&self, node: NodeId) -> bool;
    /// The server claiming leadership now (for a leaderless model, `server-0`).
    fn leader(&self) -> Option<NodeId>;
    /// How many history events were recorded so far.
    fn history_len(&self) -> usize;
    /// The history so far, as the checkers take it, as if the run ended now (`at_end`: as if it
    /// ended at its full length).
    fn history_so_far(&self, at_end: bool) -> History;
    /// The seed of the world's random streams.
    fn seed(&self) -> u64;
    /// The nodes' names and kinds, by id.
    fn nodes(&self) -> &[(String, NodeKind)];
    /// Keeps `nodes` out of the symmetric fingerprint's renaming, in this world and its copies:
    /// the nodes a search's fault menu names (by name, or as `leader`, which is `server-0` in a
    /// leaderless model), which the search treats apart from the rest of their class. The
    /// default: nothing to keep (a world without symmetry).
    fn pin_for_symmetry(&mut self, nodes: &[NodeId]) {
        let _ = nodes;
    }
}

impl Clone for Box<dyn SearchWorld> {
    fn clone(&self) -> Self {
        self.box_clone()
    }
}
