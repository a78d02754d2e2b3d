//! The sans-IO interface every simulated node implements, and the context through which a handler
//! acts. A handler never touches real time, threads, I/O or global randomness: it reads its own
//! clocks, draws from its own stream, and pushes effects (sends, timers, history) that the engine
//! applies after the handler returns.

use std::any::Any;
use std::fmt::Debug;

use crate::history::HistoryEvent;
use crate::rng::ChaCha8Rng;
use crate::time::Nanos;

/// Index of a node in the world (stable for the whole run).
pub type NodeId = usize;

/// A message body. Any `Clone + Debug + Send` type is one; receivers downcast with
/// [`downcast`]. `Debug` is what the trace prints.
pub trait Payload: Any + Debug + Send {
    fn clone_box(&self) -> Box<dyn Payload>;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any + Debug + Clone + Send> Payload for T {
    fn clone_box(&self) -> Box<dyn Payload> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A message in flight.
pub type Msg = Box<dyn Payload>;

/// Takes the message as `T` if it is one, or gives it back.
pub fn downcast<T: Any>(msg: Msg) -> Result<Box<T>, Msg> {
    if msg.as_any().is::<T>() {
        Ok(msg.into_any().downcast::<T>().expect("checked type"))
    } else {
        Err(msg)
    }
}

/// A timer handle, valid until the timer fires or is cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

/// What a node is, for selectors and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    Server,
    Sentinel,
    Client,
    Resource,
}

/// What a client believes about its locks, for the `holder` and `waiter` selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientState {
    #[default]
    Idle,
    Waiting,
    Holding,
}

/// A simulated node's behaviour.
pub trait Process: Send {
    /// Called once at true time 0 (before any message).
    fn on_start(&mut self, ctx: &mut Ctx);
    /// A message from `from` arrived.
    fn on_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Msg);
    /// A timer this node set fired; `tag` is what it passed to [`Ctx::set_timer`].
    fn on_timer(&mut self, ctx: &mut Ctx, timer: TimerId, tag: u64);
    /// The node crashed: drop every piece of volatile state and keep only what the model declares
    /// durable (a Redis AOF, a Raft term and log, a database's committed rows). The engine has
    /// already discarded the node's timers and will drop messages that arrive while it is down.
    fn on_crash(&mut self);
    /// The node restarts after a crash, with the durable state `on_crash` kept.
    fn on_restart(&mut self, ctx: &mut Ctx) {
        self.on_start(ctx)
    }
    /// `Some(term)` when this node believes it is the leader or primary (for the `leader` selector;
    /// where several believe it, the highest term wins).
    fn leadership(&self) -> Option<u64> {
        None
    }
    /// For clients: whether it is waiting for or holding a lock (the `holder` / `waiter` selectors).
    fn client_state(&self) -> ClientState {
        ClientState::Idle
    }
}

/// Something a handler asked for; applied by the engine after the handler returns, in order.
#[derive(Debug)]
pub enum Effect {
    Send {
        to: NodeId,
        msg: Msg,
        after_ns: Nanos,
    },
    /// Arm a timer for when the node's monotonic clock reaches `deadline_mono_ns`.
    ArmTimer {
        id: TimerId,
        deadline_mono_ns: Nanos,
        tag: u64,
    },
    CancelTimer {
        id: TimerId,
    },
    Record(HistoryEvent),
    Note(String),
}

/// The handler's window on the world: its own clocks, its own random stream, and effects.
pub struct Ctx<'a> {
    pub(crate) node: NodeId,
    pub(crate) mono_ns: Nanos,
    pub(crate) wall_ns: i64,
    pub(crate) rng: &'a mut ChaCha8Rng,
    pub(crate) effects: &'a mut Vec<Effect>,
    pub(crate) timer_ids: &'a mut crate::engine::timers::TimerSlab,
    pub(crate) names: &'a crate::engine::Directory,
    pub(crate) tracing: bool,
}

impl<'a> Ctx<'a> {
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
    pub fn send<M: Payload>(&mut self, to: NodeId, msg: M) {
        self.effects.push(Effect::Send { to, msg: Box::new(msg), after_ns: 0 });
    }
    /// Sends a message that leaves this node after `after_ns` of processing time (a server's
    /// `service_ms`, a database commit), then crosses the network as usual.
    pub fn send_after<M: Payload>(&mut self, after_ns: Nanos, to: NodeId, msg: M) {
        self.effects.push(Effect::Send { to, msg: Box::new(msg), after_ns });
    }
    /// Sends an already boxed message.
    pub fn send_boxed(&mut self, to: NodeId, msg: Msg) {
        self.effects.push(Effect::Send { to, msg, after_ns: 0 });
    }
    /// Sets a timer that fires after `after_ns` of this node's monotonic clock.
    pub fn set_timer(&mut self, after_ns: Nanos, tag: u64) -> TimerId {
        let id = self.timer_ids.allocate(self.node);
        self.effects.push(Effect::ArmTimer { id, deadline_mono_ns: self.mono_ns + after_ns, tag });
        id
    }
    /// Cancels a timer; cancelling one that already fired or was cancelled does nothing.
    pub fn cancel_timer(&mut self, id: TimerId) {
        self.effects.push(Effect::CancelTimer { id });
    }
    /// Records a history event (the engine stamps it with true time and this node).
    pub fn record(&mut self, event: HistoryEvent) {
        self.effects.push(Effect::Record(event));
    }
    /// Adds a line to the trace (only when a trace is being recorded; the closure is not called otherwise).
    pub fn note(&mut self, text: impl FnOnce() -> String) {
        if self.tracing {
            self.effects.push(Effect::Note(text()));
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
    /// The name of a node.
    pub fn name_of(&self, id: NodeId) -> &str {
        self.names.name_of(id)
    }
    /// The resource node's id.
    pub fn resource(&self) -> NodeId {
        self.names.resource()
    }
}
