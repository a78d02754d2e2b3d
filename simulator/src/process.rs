//! The sans-IO interface every simulated service node implements, and the context through which a
//! handler acts. A handler never touches real time, threads, I/O or global randomness: it reads
//! its own clocks, draws from its own stream, and acts through its [`Outlet`] (sends, timer
//! events, history, notes), which the engine applies as the handler makes them, in order (live
//! mode collects them as [`Effect`]s instead). A timer is armed and cancelled in the run's timer
//! slab at once, so a timer's tag is stored once and a cancellation queues nothing.
//!
//! Everything is typed by the model's [`Protocol`]: a server receives its model's message enum
//! and its timers' enum, never a boxed value to downcast.
//!
//! State that survives a crash is a type: a process implements [`crate::durable::Durable`],
//! whose `Disk` is what the real system keeps (a Redis AOF, a Raft log, a table's committed rows,
//! and its configuration); a crash turns the process into its disk and the node comes back built
//! from it, so no volatile field can be forgotten at a restart.

use std::fmt::Debug;

use crate::clock::NodeClock;
use crate::directory::Directory;
use crate::durable::Rebuild;
pub use crate::durable::{Crash, CrashKind};
use crate::history::HistoryEvent;
use crate::rng::ChaCha8Rng;
use crate::time::Nanos;
use crate::timers::TimerSlab;
use crate::wire::{DriverTimer, ResourceMsg, Tag, Wire};

pub use crate::directory::{NodeId, NodeKind};
use crate::fingerprint::Fingerprint;
pub use crate::timers::TimerId;

/// A model's wire and timer types. Usually implemented by the model's own unit struct.
pub trait Protocol: Send + Sync + 'static {
    /// Every message the model's nodes exchange (one enum per model, or per client-server pair).
    /// `Debug` is what the trace prints.
    type Msg: Clone + Debug + Send + 'static;
    /// Every timer the model's nodes set (typically an enum with one variant per process kind,
    /// each holding that process's own timer enum). `Debug` is what the trace prints.
    type Timer: Clone + Debug + Send + 'static;
    /// The message's typed state hash, if the model wrote one (`crate::fingerprint`): a world
    /// whose messages all have one can be fingerprinted with interchangeable clients renamed.
    /// The default: none (the message is hashed by its `Debug` text, no symmetry).
    fn msg_fingerprint(msg: &Self::Msg) -> Option<&dyn Fingerprint> {
        let _ = msg;
        None
    }
    /// The timer tag's typed state hash, as [`Protocol::msg_fingerprint`].
    fn timer_fingerprint(timer: &Self::Timer) -> Option<&dyn Fingerprint> {
        let _ = timer;
        None
    }
}

/// What a client believes about its locks, for the `holder` and `waiter` selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientState {
    /// Neither waiting nor holding: thinking, releasing, done, or holding a grant it abandoned.
    #[default]
    Idle,
    /// An acquire call is outstanding.
    Waiting,
    /// Inside a critical section on a grant it has not abandoned.
    Holding,
}

/// A simulated service node (server, sentinel, …) of protocol `P`.
///
/// `Debug` and [`CloneProcess`] (given to every `Clone` process) let the engine copy a world and
/// fingerprint it (`engine::fingerprint`): the `Debug` text is the state a fingerprint hashes, so
/// it must show every field that matters to the process's future (derive it).
pub trait Process<P: Protocol>: Send + Debug + CloneProcess<P> + Rebuild {
    /// Called once at true time 0 (before any message).
    fn on_start(&mut self, ctx: &mut Ctx<P>);
    /// A message from `from` arrived.
    fn on_message(&mut self, ctx: &mut Ctx<P>, from: NodeId, msg: P::Msg);
    /// A timer this node set fired.
    fn on_timer(&mut self, ctx: &mut Ctx<P>, timer: TimerId, tag: P::Timer);
    /// The node restarts after a crash, built from what its disk kept. (A crash has no handler:
    /// the engine discards the node's timers, drops what arrives while it is down, and rebuilds
    /// it from its [`crate::durable::Durable`] disk through [`Rebuild`].)
    fn on_restart(&mut self, ctx: &mut Ctx<P>) {
        self.on_start(ctx)
    }
    /// The TCP connection to `peer` was closed from the other end: `peer`'s process was killed
    /// (its OS sent the FIN or RST), or `peer` refused a message (its port is closed, or it
    /// restarted and no longer knows the connection). The real library sees `ECONNRESET` or an
    /// end of stream here and fails what was outstanding on it. Arrives one network latency
    /// after the event, after the data sent before it on the same link; never across a cut link.
    /// The default ignores it (the node learns only through its own timeouts).
    fn on_reset(&mut self, ctx: &mut Ctx<P>, peer: NodeId) {
        let _ = (ctx, peer);
    }
    /// `Some(term)` when this node believes it is the leader or primary (for the `leader` selector;
    /// where several believe it, the highest term wins).
    fn leadership(&self) -> Option<u64> {
        None
    }
    /// For a service that stands in for a client (an engine-only harness): the `holder` /
    /// `waiter` selectors read it. Real clients are the workload driver's, which knows this itself.
    fn client_state(&self) -> ClientState {
        ClientState::Idle
    }
    /// Whether this server may be renamed with the others of its class by the symmetric
    /// fingerprint (`World::fingerprint_symmetric`, docs/world-state.md "Interchangeable
    /// servers"): its behaviour does not depend on its id or name (it holds no other server's id
    /// in an order that matters, and its random draws after the first start cannot change what
    /// it does, since its stream is keyed by its name). Servers are renamed only when every
    /// client's library also treats them as a set (`LockClient::servers_interchangeable`). The
    /// default: no.
    fn interchangeable_server(&self) -> bool {
        false
    }
    /// The process's typed state hash (`crate::fingerprint`), if the model wrote one: return
    /// `Some(self)`. A world fingerprints with interchangeable clients renamed only when every
    /// process has one. The default: none (hashed by its `Debug` text).
    fn as_fingerprint(&self) -> Option<&dyn Fingerprint> {
        None
    }
}

/// A boxed copy of a process: implemented for every `Clone` process, so a world can be copied
/// through its `Box<dyn Process<P>>` nodes.
pub trait CloneProcess<P: Protocol> {
    /// A copy of this process, boxed.
    fn box_clone(&self) -> Box<dyn Process<P>>;
}

impl<P: Protocol, T: Process<P> + Clone + 'static> CloneProcess<P> for T {
    fn box_clone(&self) -> Box<dyn Process<P>> {
        Box::new(self.clone())
    }
}

impl<P: Protocol> Clone for Box<dyn Process<P>> {
    fn clone(&self) -> Self {
        self.box_clone()
    }
}

/// Something a handler asked for, as live mode collects it (its runner acts on the list after
/// the handler returns, in order; the simulator's engine applies each at once instead).
pub enum Effect<P: Protocol> {
    /// Send a message over the simulated network.
    Send {
        /// The receiving node.
        to: NodeId,
        /// The message.
        msg: Wire<P::Msg>,
        /// Processing time (true time) before the message leaves this node; 0: it leaves now.
        after_ns: Nanos,
    },
    /// Queue the event of a timer [`Ctx`] has armed (its slot holds the tag and due time).
    QueueTimer {
        /// The timer.
        id: TimerId,
        /// When it is due, in true time (in live mode, on the node's monotonic clock).
        due_ns: Nanos,
    },
    /// Append an event to the history, stamped with the current true time and this node.
    Record(HistoryEvent),
    /// Add a `note` line to the trace (only pushed while a trace is being recorded).
    Note(String),
}

/// Where a handler's sends, timers' events, history events and notes go, as the handler makes
/// them, in order: the engine applies each at once (`engine::post`); live mode collects them as
/// [`Effect`]s (the impl for `Vec<Effect<P>>`) and acts on them after the handler.
pub trait Outlet<P: Protocol> {
    /// A message from the running node to `to`, leaving after `after_ns` of processing time.
    fn send(&mut self, to: NodeId, msg: Wire<P::Msg>, after_ns: Nanos);
    /// The event of a timer [`Ctx`] has armed in the slab.
    fn queue_timer(&mut self, id: TimerId, due_ns: Nanos);
    /// A history event of the running node, stamped now.
    fn record(&mut self, event: HistoryEvent);
    /// A `note` trace line of the running node (only called while a trace is recorded).
    fn note(&mut self, text: String);
    /// The workload's hold or think time (`timer`) chosen instead of drawn (a search's choice,
    /// a `[replay]`'s list); `None`: draw it.
    fn chosen_time(&mut self, _timer: DriverTimer) -> Option<Nanos> {
        None
    }
}

impl<P: Protocol> Outlet<P> for Vec<Effect<P>> {
    fn send(&mut self, to: NodeId, msg: Wire<P::Msg>, after_ns: Nanos) {
        self.push(Effect::Send { to, msg, after_ns });
    }
    fn queue_timer(&mut self, id: TimerId, due_ns: Nanos) {
        self.push(Effect::QueueTimer { id, due_ns });
    }
    fn record(&mut self, event: HistoryEvent) {
        self.push(Effect::Record(event));
    }
    fn note(&mut self, text: String) {
        self.push(Effect::Note(text));
    }
}

/// The handler's window on the world: its own clocks, its own random stream, and its outlet.
pub struct Ctx<'a, P: Protocol> {
    pub(crate) node: NodeId,
    pub(crate) mono_ns: Nanos,
    pub(crate) wall_ns: i64,
    pub(crate) rng: &'a mut ChaCha8Rng,
    pub(crate) outlet: &'a mut dyn Outlet<P>,
    pub(crate) timer_ids: &'a mut TimerSlab<Tag<P::Timer>>,
    /// The node's clock, to place a timer in true time; `None`: its monotonic clock is the time
    /// the caller queues by (live mode).
    pub(crate) clock: Option<&'a NodeClock>,
    /// True time now (when `clock` is given).
    pub(crate) true_ns: Nanos,
    /// Live timers this handler cancelled: their queued events are now dead.
    pub(crate) cancelled: usize,
    pub(crate) names: &'a Directory,
    pub(crate) tracing: bool,
}

impl<'a, P: Protocol> Ctx<'a, P> {
    /// This node.
    pub fn me(&self) -> NodeId {
        self.node
    }
    /// This node's monotonic clock (drifts, never jumps). Use it for elapsed time and timeouts.
    pub fn now_mono_ns(&self) -> Nanos {
        self.mono_ns
    }
    /// This node's wall clock (drifts and jumps), nanoseconds since the run's epoch.
    pub fn now_wall_ns(&self) -> i64 {
        self.wall_ns
    }
    /// This node's random stream.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
    }
    /// Sends a message over the simulated network (which may delay, drop or duplicate it).
    #[inline]
    pub fn send(&mut self, to: NodeId, msg: impl Into<P::Msg>) {
        self.outlet.send(to, Wire::Model(msg.into()), 0);
    }
    /// Sends a message that leaves this node after `after_ns` of processing time (a server's
    /// `service_ms`, a database commit), then crosses the network as usual.
    #[inline]
    pub fn send_after(&mut self, after_ns: Nanos, to: NodeId, msg: impl Into<P::Msg>) {
        self.outlet.send(to, Wire::Model(msg.into()), after_ns);
    }
    /// Sets a timer that fires after `after_ns` of this node's monotonic clock.
    #[inline]
    pub fn set_timer(&mut self, after_ns: Nanos, timer: impl Into<P::Timer>) -> TimerId {
        self.arm(after_ns, Tag::Model(timer.into()))
    }
    /// Cancels a timer; cancelling one that already fired or was cancelled does nothing.
    #[inline]
    pub fn cancel_timer(&mut self, id: TimerId) {
        if self.timer_ids.cancel(id) {
            self.cancelled += 1;
        }
    }
    /// Records a history event (the engine stamps it with true time and this node).
    #[inline]
    pub fn record(&mut self, event: HistoryEvent) {
        self.outlet.record(event);
    }
    /// Adds a line to the trace (only when a trace is being recorded; the closure is not called otherwise).
    pub fn note(&mut self, text: impl FnOnce() -> String) {
        if self.tracing {
            self.outlet.note(text());
        }
    }
    /// Whether a trace is being recorded (to skip building expensive notes).
    pub fn tracing(&self) -> bool {
        self.tracing
    }
    /// The id of the node with this name, if any.
    pub fn node_named(&self, name: &str) -> Option<NodeId> {
        self.names.id_of(name)
    }
    /// The name of a node. It borrows the run's directory, not the context, so a note's text can
    /// use it without copying it first (`let name = ctx.name_of(peer); ctx.note(|| …name…)`):
    /// a copy would be made on every call, traced or not.
    pub fn name_of(&self, id: NodeId) -> &'a str {
        self.names.name_of(id)
    }
    /// The resource node's id.
    pub fn resource(&self) -> NodeId {
        self.names.resource()
    }

    // The workload driver's and the resource's own traffic (not part of any model's protocol).

    pub(crate) fn send_resource(&mut self, to: NodeId, msg: ResourceMsg) {
        self.outlet.send(to, Wire::Resource(msg), 0);
    }
    /// The workload's hold or think time chosen for this one (see [`Outlet::chosen_time`]).
    pub(crate) fn chosen_time_ns(&mut self, timer: DriverTimer) -> Option<Nanos> {
        self.outlet.chosen_time(timer)
    }
    pub(crate) fn set_driver_timer(&mut self, after_ns: Nanos, timer: DriverTimer) -> TimerId {
        self.arm(after_ns, Tag::Driver(timer))
    }
    // Inlined into each `set_timer`: out of line, it read the caller's tag back from the stack
    // in wider loads than the caller had just stored it with, a stall on every timer (the
    // costliest instruction of the call in a profile).
    #[inline(always)]
    fn arm(&mut self, after_ns: Nanos, tag: Tag<P::Timer>) -> TimerId {
        // Saturating: a timer due past the end of time never fires (the run ends first).
        let deadline_mono_ns = self.mono_ns.saturating_add(after_ns);
        let due_ns = match self.clock {
            Some(clock) => clock.true_time_of_mono(deadline_mono_ns, self.true_ns),
            None => deadline_mono_ns,
        };
        let id = self.timer_ids.allocate(self.node);
        self.timer_ids.arm(id, deadline_mono_ns, due_ns, tag);
        self.outlet.queue_timer(id, due_ns);
        id
    }
}
