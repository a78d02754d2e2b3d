//! A test hook, compiled into debug (and test) builds only, as `sim run`'s
//! `LOCKSIM_TEST_PANIC_SEEDS` is (`locksim_simulator::batch`): `LOCKSIM_TEST_PANIC_EXHAUST` makes
//! the world `sim exhaust` searches panic as a model with a bug would, so the command's handling
//! of a model's panic (exit 3, the message, the path written) can be tested end to end through
//! the binary, with a real model underneath. Its value is either [`FIRST_WORLD`] (the panic comes
//! while the first world is built, before the search) or an event key such as
//! `deliver server-0 -> client-1` (every copy of the world panics on taking that event, the
//! search's and the replay file's). Release builds have no such hook and never read the variable.

use locksim_simulator::directory::NodeKind;
use locksim_simulator::history::History;
use locksim_simulator::process::NodeId;
use locksim_simulator::search::{ChosenTimes, Enabled, Injection, SearchWorld, StepTaken};
use locksim_simulator::time::Nanos;

/// The variable naming where the searched world panics on purpose.
pub const TEST_PANIC_EXHAUST_VAR: &str = "LOCKSIM_TEST_PANIC_EXHAUST";

/// The variable's value for a panic while the first world is built.
pub const FIRST_WORLD: &str = "first-world";

/// `world` as the variable asks: panicking now ([`FIRST_WORLD`]), wrapped to panic on an event
/// key, or unchanged (the variable unset).
pub fn wrap(world: Box<dyn SearchWorld>) -> Box<dyn SearchWorld> {
    match std::env::var(TEST_PANIC_EXHAUST_VAR) {
        Err(_) => world,
        Ok(v) if v == FIRST_WORLD => panic!("{TEST_PANIC_EXHAUST_VAR}: the first world panics on purpose"),
        Ok(key) => Box::new(PanicsOn { inner: world, key }),
    }
}

/// A world that panics on taking the event keyed `key` (in every copy: the search's, its probes'
/// and the replay file's re-run), as a model's bug would.
pub struct PanicsOn {
    inner: Box<dyn SearchWorld>,
    key: String,
}

impl PanicsOn {
    /// `inner`, panicking on the event keyed `key`.
    pub fn new(inner: Box<dyn SearchWorld>, key: impl Into<String>) -> Self {
        PanicsOn { inner, key: key.into() }
    }

    fn check(&self, seq: u64) {
        if self.inner.event_key(seq).as_deref() == Some(self.key.as_str()) {
            panic!("{TEST_PANIC_EXHAUST_VAR}: `{}` panics on purpose", self.key);
        }
    }
}

impl SearchWorld for PanicsOn {
    fn box_clone(&self) -> Box<dyn SearchWorld> {
        Box::new(PanicsOn { inner: self.inner.box_clone(), key: self.key.clone() })
    }
    fn fingerprint(&self) -> u64 {
        self.inner.fingerprint()
    }
    fn fingerprint_symmetric(&self) -> u64 {
        self.inner.fingerprint_symmetric()
    }
    fn symmetry_applies(&self) -> bool {
        self.inner.symmetry_applies()
    }
    fn pin_for_symmetry(&mut self, nodes: &[NodeId]) {
        self.inner.pin_for_symmetry(nodes)
    }
    fn now_ns(&self) -> Nanos {
        self.inner.now_ns()
    }
    fn enabled(&mut self) -> Vec<Enabled> {
        self.inner.enabled()
    }
    fn step(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos) -> usize {
        self.check(seq);
        self.inner.step(seq, delays_ns, fallback_ns)
    }
    fn step_timed(&mut self, seq: u64, delays_ns: &[Nanos], fallback_ns: Nanos, times: &ChosenTimes) -> StepTaken {
        self.check(seq);
        self.inner.step_timed(seq, delays_ns, fallback_ns, times)
    }
    fn inject_fault(&mut self, fault: &Injection, at_ns: Nanos) -> u64 {
        self.inner.inject_fault(fault, at_ns)
    }
    fn event_key(&self, seq: u64) -> Option<String> {
        self.inner.event_key(seq)
    }
    fn clients_finished(&self) -> bool {
        self.inner.clients_finished()
    }
    fn node_is_up(&self, node: NodeId) -> bool {
        self.inner.node_is_up(node)
    }
    fn is_waiting(&self, node: NodeId) -> bool {
        self.inner.is_waiting(node)
    }
    fn is_holding(&self, node: NodeId) -> bool {
        self.inner.is_holding(node)
    }
    fn is_blocked(&self, node: NodeId) -> bool {
        self.inner.is_blocked(node)
    }
    fn leader(&self) -> Option<NodeId> {
        self.inner.leader()
    }
    fn history_len(&self) -> usize {
        self.inner.history_len()
    }
    fn history_so_far(&self, at_end: bool) -> History {
        self.inner.history_so_far(at_end)
    }
    fn seed(&self) -> u64 {
        self.inner.seed()
    }
    fn nodes(&self) -> &[(String, NodeKind)] {
        self.inner.nodes()
    }
}
