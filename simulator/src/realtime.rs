//! Hosting one node in real time, for live mode (`sim live`): the same client node (workload
//! driver over a model's client library) or resource node the engine runs, driven by a real
//! clock and a real network instead of the event queue. The host owns the node's timers and
//! random stream; whoever drives it passes in clock readings and arriving messages, asks when the
//! next timer is due, and carries out what comes back ([`Output`]): messages to send, history
//! events to record. Nothing here touches I/O, so the recipe code is exactly the simulated one.

use std::collections::BTreeSet;

use crate::directory::Directory;
use crate::history::HistoryEvent;
use crate::lockclient::LockClient;
use crate::process::{ClientState, Ctx, Effect, NodeId, NodeKind, Protocol, TimerId};
use crate::rng::ChaCha8Rng;
use crate::setup::WorkloadSpec;
use crate::time::Nanos;
use crate::timers::TimerSlab;
use crate::wire::{Tag, Wire};
use crate::workload::{ClientNode, ResourceNode};

/// The node's clocks at the moment a handler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Readings {
    /// The monotonic clock, nanoseconds since the run's start.
    pub mono_ns: Nanos,
    /// The wall clock, nanoseconds since the run's start.
    pub wall_ns: i64,
}

/// What a handler asked the outside world to do, in the order it asked.
#[derive(Debug)]
pub enum Output<M> {
    /// Send `msg` to node `to`, after `after_ns` of processing time (0 for a client).
    Send {
        /// The receiving node.
        to: NodeId,
        /// The message.
        msg: Wire<M>,
        /// Processing time before it leaves.
        after_ns: Nanos,
    },
    /// Record a history event, stamped by the driver with its clock.
    Record(HistoryEvent),
    /// A trace note (only produced when the host was made with tracing on).
    Note(String),
}

enum Hosted<P: Protocol> {
    Client(Box<ClientNode<P>>),
    Resource(ResourceNode),
}

/// One node, hosted in real time.
pub struct RealtimeNode<P: Protocol> {
    hosted: Hosted<P>,
    me: NodeId,
    names: Directory,
    rng: ChaCha8Rng,
    timers: TimerSlab<Tag<P::Timer>>,
    /// Armed timers by (deadline, arming order): a cancelled one is skipped when it comes due.
    due: BTreeSet<(Nanos, u64, TimerId)>,
    armed: u64,
    effects: Vec<Effect<P>>,
    tracing: bool,
}

impl<P: Protocol> RealtimeNode<P> {
    /// Client `me` of a run whose nodes are `names` (services, clients, resource, in the order
    /// the simulator numbers them): the workload driver over `lib`.
    pub fn client(
        lib: Box<dyn LockClient<P>>,
        workload: WorkloadSpec,
        workload_rng: ChaCha8Rng,
        model_rng: ChaCha8Rng,
        names: &[(String, NodeKind)],
        me: NodeId,
    ) -> Self {
        let node = ClientNode::new(lib, workload, workload_rng);
        Self::host(Hosted::Client(Box::new(node)), model_rng, names, me)
    }

    /// The protected resource for keys `0..locks`.
    pub fn resource(locks: u32, rng: ChaCha8Rng, names: &[(String, NodeKind)], me: NodeId) -> Self {
        Self::host(Hosted::Resource(ResourceNode::new(locks)), rng, names, me)
    }

    fn host(hosted: Hosted<P>, rng: ChaCha8Rng, names: &[(String, NodeKind)], me: NodeId) -> Self {
        RealtimeNode {
            hosted,
            me,
            names: Directory::new(names),
            rng,
            timers: TimerSlab::default(),
            due: BTreeSet::new(),
            armed: 0,
            effects: Vec::new(),
            tracing: false,
        }
    }

    /// Also produce the handlers' trace notes as [`Output::Note`].
    pub fn with_notes(mut self) -> Self {
        self.tracing = true;
        self
    }

    /// This node's id.
    pub fn me(&self) -> NodeId {
        self.me
    }

    /// The run's directory of node names.
    pub fn directory(&self) -> &Directory {
        &self.names
    }

    /// Runs `handler` on the hosted node with a context at `now`, then turns its effects into
    /// outputs (arming timers here).
    fn handle(&mut self, now: Readings, handler: impl FnOnce(&mut Hosted<P>, &mut Ctx<P>)) -> Vec<Output<P::Msg>> {
        let RealtimeNode { hosted, me, names, rng, timers, effects, tracing, .. } = self;
        let mut ctx = Ctx {
            node: *me,
            mono_ns: now.mono_ns,
            wall_ns: now.wall_ns,
            rng,
            outlet: effects,
            timer_ids: timers,
            clock: None,
            true_ns: 0,
            cancelled: 0,
            names,
            tracing: *tracing,
        };
        handler(hosted, &mut ctx);
        let mut out = Vec::new();
        for effect in std::mem::take(&mut self.effects) {
            match effect {
                Effect::Send { to, msg, after_ns } => out.push(Output::Send { to, msg, after_ns }),
                // Armed in the slab already; a cancelled one is skipped when it comes due.
                Effect::QueueTimer { id, due_ns } => {
                    self.armed += 1;
                    self.due.insert((due_ns, self.armed, id));
                }
                Effect::Record(e) => out.push(Output::Record(e)),
                Effect::Note(n) => out.push(Output::Note(n)),
            }
        }
        out
    }

    /// The node starts (a client connects and begins its workload).
    pub fn start(&mut self, now: Readings) -> Vec<Output<P::Msg>> {
        self.handle(now, |h, ctx| {
            if let Hosted::Client(c) = h {
                c.on_start(ctx)
            }
        })
    }

    /// A message from `from` arrived.
    pub fn message(&mut self, now: Readings, from: NodeId, msg: Wire<P::Msg>) -> Vec<Output<P::Msg>> {
        self.handle(now, |h, ctx| match h {
            Hosted::Client(c) => c.on_message(ctx, from, msg),
            Hosted::Resource(r) => r.on_message(ctx, from, msg),
        })
    }

    /// The connection to `peer` was closed from its end (its process was killed).
    pub fn reset(&mut self, now: Readings, peer: NodeId) -> Vec<Output<P::Msg>> {
        self.handle(now, |h, ctx| {
            if let Hosted::Client(c) = h {
                c.on_reset(ctx, peer)
            }
        })
    }

    /// When the earliest armed timer is due, on the monotonic clock (`None`: no timer armed).
    pub fn next_deadline(&mut self) -> Option<Nanos> {
        // Cancelled timers stay in `due` until they come up; skip them here.
        while let Some(&(at, _, id)) = self.due.first() {
            if self.timers.is_live(id) {
                return Some(at);
            }
            self.due.pop_first();
        }
        None
    }

    /// Fires every timer due at `now`, earliest first (each with the clock as it reads now: in
    /// real time a timer fires late, never early).
    pub fn fire_due(&mut self, now: Readings) -> Vec<Output<P::Msg>> {
        let mut out = Vec::new();
        while let Some(&(at, seq, id)) = self.due.first() {
            if at > now.mono_ns {
                break;
            }
            self.due.remove(&(at, seq, id));
            let Some((_, tag)) = self.timers.take(id) else { continue };
            out.extend(self.handle(now, |h, ctx| {
                if let Hosted::Client(c) = h {
                    c.on_timer(ctx, id, tag)
                }
            }));
        }
        out
    }

    /// What the client believes about its locks (the `holder` and `waiter` selectors).
    pub fn client_state(&self) -> ClientState {
        match &self.hosted {
            Hosted::Client(c) => c.client_state(),
            Hosted::Resource(_) => ClientState::Idle,
        }
    }
}
