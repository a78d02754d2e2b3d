//! The event loop: nodes (processes with their own clocks and random streams), the event queue,
//! the network and the faults, and the trace. One `World` is one seed of one algorithm; it runs on
//! one thread and allocates nothing per event beyond the message it carries.
//!
//! The world is generic over the model's [`Protocol`]: messages and timers are the model's own
//! types, queued inline (no box, no downcast).
//!
//! - [`queue`]: events ordered by (true time, sequence)
//! - `post`: a handler's sends, timers, history events and notes, applied as it makes them
//! - [`network`]: latency, loss, duplication, order, fault rules
//! - [`schedule`]: fault occurrences drawn from the seed
//! - `faults`: a fault occurrence's start and end (crash, restart, pause, clock, network rules),
//!   its targets' selectors, and the connection resets a crash sends
//! - [`pairs`]: a value per pair of nodes (connections, FIFO order), linear in the nodes
//!
//! Connections: every link in these models is TCP, so the engine keeps, per pair of nodes
//! ([`pairs`]: in memory linear in the nodes), whether a connection is open (a message was
//! delivered between them since either last went down). A killed process (`crash`,
//! `mode = "process"`) resets each of its connections: the peer gets [`Process::on_reset`] one
//! latency later; a message to it while it is down is refused the same way. A lost host
//! (`mode = "machine"`) tells nobody; after it restarts, the first message on a connection from
//! before the crash is refused with a reset, as a fresh kernel does.

pub mod choice;
mod copy;
mod faults;
pub mod fingerprint;
pub mod network;
pub mod pairs;
mod post;
pub mod queue;
pub mod schedule;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::clock::NodeClock;
use crate::directory::Directory;
use crate::durable::Rebuild;
use crate::history::{ClockSegment, FaultWindow, Folded, HistoryEvent, LeaderChange, Stamped};
use crate::outcome::{Halt, Stuck, STUCK_EVENTS};
use crate::process::{ClientState, Crash, CrashKind, Ctx, NodeId, Process, Protocol, TimerId};
use crate::rng::ChaCha8Rng;
use crate::setup::FaultSpec;
use crate::time::{Nanos, NS_PER_MS};
use crate::timers::TimerSlab;
use crate::trace::{Trace, TraceEntry};
use crate::traced::Subject;
use crate::wire::{Tag, Wire};
use crate::workload::{ClientNode, ResourceNode};
use network::Network;
use pairs::{PairIndex, PairTable};
use post::Post;
use queue::{EventKind, EventQueue};
use schedule::Occurrence;

/// How often (in events) a run looks at its stop flag and at how long time has stood still:
/// often enough that a stop takes effect within a millisecond or so of wall time, rarely enough
/// to cost nothing measurable per event. A power of two, so the test is a mask.
pub const POLL_EVENTS: u64 = 4096;

/// A role selector with no member yet is tried again this often (true time).
const ROLE_RETRY_NS: Nanos = NS_PER_MS;

/// Cancelled timers leave their events in the queue; once at least this many (and at least half
/// the queue) are dead, they are purged in one pass.
const PURGE_MIN_DEAD: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Up,
    Paused,
    Crashed,
}

/// Work that reached a paused node, handled in order when it resumes.
#[derive(Clone, Debug)]
enum Backlogged<M> {
    /// The node was paused before it started (a pause at time 0): it starts at resume.
    Start,
    Message {
        from: NodeId,
        msg: Wire<M>,
    },
    Timer {
        id: TimerId,
    },
    Reset {
        peer: NodeId,
    },
}

/// What runs on a node: one of the model's services, a client (the workload driver over the
/// model's client library), or the protected resource.
pub enum Behaviour<P: Protocol> {
    /// A model's server or sentinel; it sees only its model's messages and timers.
    Service(Box<dyn Process<P>>),
    /// A workload client over the model's client library.
    Client(Box<ClientNode<P>>),
    /// The protected resource; it sees only resource messages.
    Resource(ResourceNode),
}

impl<P: Protocol> Behaviour<P> {
    fn on_start(&mut self, ctx: &mut Ctx<P>) {
        match self {
            Behaviour::Service(p) => p.on_start(ctx),
            Behaviour::Client(c) => c.on_start(ctx),
            Behaviour::Resource(_) => {}
        }
    }
    fn on_message(&mut self, ctx: &mut Ctx<P>, from: NodeId, msg: Wire<P::Msg>) {
        match self {
            Behaviour::Service(p) => {
                if let Wire::Model(m) = msg {
                    p.on_message(ctx, from, m)
                }
            }
            Behaviour::Client(c) => c.on_message(ctx, from, msg),
            Behaviour::Resource(r) => r.on_message(ctx, from, msg),
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<P>, id: TimerId, tag: Tag<P::Timer>) {
        match self {
            Behaviour::Service(p) => {
                if let Tag::Model(t) = tag {
                    p.on_timer(ctx, id, t)
                }
            }
            Behaviour::Client(c) => c.on_timer(ctx, id, tag),
            Behaviour::Resource(_) => {}
        }
    }
    fn on_reset(&mut self, ctx: &mut Ctx<P>, peer: NodeId) {
        match self {
            Behaviour::Service(p) => p.on_reset(ctx, peer),
            Behaviour::Client(c) => c.on_reset(ctx, peer),
            Behaviour::Resource(_) => {}
        }
    }
    fn on_crash(&mut self, crash: &Crash) {
        match self {
            Behaviour::Service(p) => p.rebuild(crash),
            Behaviour::Client(c) => c.rebuild(crash),
            // The resource stands for a durable store: a crash keeps its counters.
            Behaviour::Resource(_) => {}
        }
    }
    fn on_restart(&mut self, ctx: &mut Ctx<P>) {
        match self {
            Behaviour::Service(p) => p.on_restart(ctx),
            Behaviour::Client(c) => c.on_restart(ctx),
            Behaviour::Resource(_) => {}
        }
    }
    fn leadership(&self) -> Option<u64> {
        match self {
            Behaviour::Service(p) => p.leadership(),
            _ => None,
        }
    }
    fn client_state(&self) -> ClientState {
        match self {
            Behaviour::Client(c) => c.client_state(),
            Behaviour::Service(p) => p.client_state(),
            Behaviour::Resource(_) => ClientState::Idle,
        }
    }
}

/// One simulated node.
pub struct Node<P: Protocol> {
    /// What runs on it.
    pub behaviour: Behaviour<P>,
    /// Its clock.
    pub clock: NodeClock,
    rng: ChaCha8Rng,
    status: Status,
    /// How it went down, while `status` is `Crashed`.
    crash_kind: CrashKind,
    backlog: Vec<Backlogged<P::Msg>>,
    /// How many pause occurrences hold the node (overlapping pauses nest).
    pauses: u32,
}

impl<P: Protocol> Node<P> {
    /// A node that is up, with `rng` as the stream its handlers draw from (`Ctx::rng`).
    pub fn new(behaviour: Behaviour<P>, clock: NodeClock, rng: ChaCha8Rng) -> Self {
        Node {
            behaviour,
            clock,
            rng,
            status: Status::Up,
            crash_kind: CrashKind::default(),
            backlog: Vec::new(),
            pauses: 0,
        }
    }
}

/// What [`poll`] keeps between its calls: the instant at the last poll, and for how many events
/// since the instant has not moved.
struct Watch {
    polled_ns: Option<Nanos>,
    still_events: u64,
}

/// The checks [`World::run_until`] makes every [`POLL_EVENTS`] events, out of the loop: the stop
/// flag, and whether simulated time has stood at `now_ns` for [`STUCK_EVENTS`] events.
#[cold]
#[inline(never)]
fn poll(stop: Option<&AtomicBool>, now_ns: Nanos, watch: &mut Watch) -> Result<(), Halt> {
    if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
        return Err(Halt::Stopped);
    }
    if watch.polled_ns == Some(now_ns) {
        watch.still_events += POLL_EVENTS;
        if watch.still_events >= STUCK_EVENTS {
            return Err(Halt::Stuck(Stuck { at_ns: now_ns, events: watch.still_events }));
        }
    } else {
        *watch = Watch { polled_ns: Some(now_ns), still_events: 0 };
    }
    Ok(())
}

/// What a fault occurrence did, so its end can undo it.
#[derive(Clone, Debug, Default)]
struct Applied {
    nodes: Vec<NodeId>,
    /// Drift before a `clock_drift` fault, per node, to restore at its end.
    saved_drift_ppm: Vec<f64>,
    started: bool,
}

/// One seed of one algorithm.
pub struct World<P: Protocol> {
    now_ns: Nanos,
    /// Where the loop stops: the run's end, or sooner during [`World::run_through`].
    end_ns: Nanos,
    /// The run's end (what the purge counts dead events up to, wherever the loop stops).
    run_end_ns: Nanos,
    queue: EventQueue<Wire<P::Msg>>,
    nodes: Vec<Node<P>>,
    /// Fixed for the run: shared by a world's copies (a search copies at every branch).
    dir: Arc<Directory>,
    timers: TimerSlab<Tag<P::Timer>>,
    network: Network,
    net_rng: ChaCha8Rng,
    /// The stream for connection resets' latency: separate, so a model that ignores resets
    /// sees exactly the network draws it saw before resets existed.
    reset_rng: ChaCha8Rng,
    /// Open connections, per pair (kept symmetric: both directions set and cleared together).
    conns: PairTable<bool>,
    /// After a host failure: `stale(x, p)` when `p` still has a connection to `x` from before `x`
    /// went down (refused with a reset when `p` next sends on it).
    stale: PairTable<bool>,
    fault_rng: ChaCha8Rng,
    /// Shared by a world's copies until one injects a fault (`World::inject_fault`).
    faults: Arc<Vec<FaultSpec>>,
    occurrences: Vec<Occurrence>,
    applied: Vec<Applied>,
    leaderless: bool,
    history: Vec<Stamped>,
    /// Fold the events only counted into `folded` instead of recording them in `history`
    /// ([`crate::history::fold_counted_events`], read when the world is made).
    fold_counted: bool,
    folded: Folded,
    /// Faults that took effect, and for each occurrence its index there (to close the window).
    fault_windows: Vec<FaultWindow>,
    window_of: Vec<Option<usize>>,
    /// The nodes' wall clocks as they start and change (for the report's clock plot; no
    /// decision reads it).
    clock_segments: Vec<ClockSegment>,
    /// Each node's claim to lead as last seen ([`World::note_leadership`]), and every change of
    /// it (for the report's server lanes; like the clock segments, no decision reads them).
    claims: Vec<Option<u64>>,
    leader_changes: Vec<LeaderChange>,
    messages: u64,
    /// Messages a client sent or was sent (what a client process can count in live mode).
    client_messages: u64,
    events_processed: u64,
    /// Timers cancelled (or dropped by a crash) since the last purge: about how many dead events
    /// the queue holds.
    dead_timers: usize,
    trace: Option<Trace>,
    /// A recorded path the run follows (a scenario's `[replay]`: [`choice`]); `None` in a normal run.
    followed: Option<Box<choice::Followed>>,
    /// Hold and think times given to the workload driver (a search's step, or a `[replay]`'s
    /// lists: [`choice::WorkloadFeed`]); `None` in a normal run, where they are drawn.
    workload_feed: Option<Box<choice::WorkloadFeed>>,
}

/// Everything `World::new` needs besides the nodes.
pub struct WorldConfig {
    /// True time at which the run stops; events due later are never handled.
    pub end_ns: Nanos,
    /// The network, with its link parameters.
    pub network: Network,
    /// The stream for network draws (latency, loss, duplication, fault rules).
    pub net_rng: ChaCha8Rng,
    /// The stream for picking the members of random and role selectors.
    pub fault_rng: ChaCha8Rng,
    /// The scenario's `[[faults]]`, which `occurrences` index.
    pub faults: Vec<FaultSpec>,
    /// The fault occurrences drawn for this seed ([`schedule::draw`]).
    pub occurrences: Vec<Occurrence>,
    /// The model has no leader: no server claims leadership (so the engine does not ask after
    /// each handler, and records no leader change), and `leader` means `server-0`.
    pub leaderless: bool,
    /// Record the trace.
    pub tracing: bool,
}

/// What a finished world hands back.
pub struct WorldResult {
    /// Every recorded history event, in the order recorded.
    pub history: Vec<Stamped>,
    /// The events counted instead of recorded.
    pub folded: Folded,
    /// Every fault that took effect, in start order.
    pub faults: Vec<FaultWindow>,
    /// Every node's wall clock at the start and after each step or rate change.
    pub clocks: Vec<ClockSegment>,
    /// Every change of a server's claim to lead, in time order.
    pub leaders: Vec<LeaderChange>,
    /// Messages sent (every send, dropped or not).
    pub messages: u64,
    /// Of those, the ones a client sent or was sent.
    pub client_messages: u64,
    /// Events taken from the queue up to the end of the run; dead timer events count, purged
    /// ones included.
    pub events_processed: u64,
    /// The trace; `None` unless `tracing` was set.
    pub trace: Option<Trace>,
}

impl<P: Protocol> World<P> {
    /// A world at true time 0 with every node's start and every fault occurrence queued.
    /// `nodes` are by id, as `dir` names them.
    pub fn new(dir: Directory, nodes: Vec<Node<P>>, cfg: WorldConfig) -> Self {
        let mut queue = EventQueue::default();
        // Faults first: one scheduled at 0 is in force before any node starts.
        for (i, occ) in cfg.occurrences.iter().enumerate() {
            queue.push(occ.start_ns, EventKind::FaultStart { occurrence: i });
        }
        for i in 0..nodes.len() {
            queue.push(0, EventKind::Start { node: i });
        }
        let applied = vec![Applied::default(); cfg.occurrences.len()];
        let window_of = vec![None; cfg.occurrences.len()];
        let mut reset_rng = cfg.net_rng.clone();
        reset_rng.set_stream(1);
        let pairs = PairTable::new(PairIndex::of_directory(&dir));
        let clock_segments = (0..nodes.len()).map(|i| clock_segment(i, &nodes[i].clock, 0)).collect();
        let nodes_len = nodes.len();
        World {
            now_ns: 0,
            end_ns: cfg.end_ns,
            run_end_ns: cfg.end_ns,
            queue,
            nodes,
            dir: Arc::new(dir),
            timers: TimerSlab::default(),
            network: cfg.network,
            net_rng: cfg.net_rng,
            reset_rng,
            conns: pairs.clone(),
            stale: pairs,
            fault_rng: cfg.fault_rng,
            faults: Arc::new(cfg.faults),
            occurrences: cfg.occurrences,
            applied,
            leaderless: cfg.leaderless,
            history: Vec::new(),
            fold_counted: crate::history::folds_counted_events(),
            folded: Folded::default(),
            fault_windows: Vec::new(),
            window_of,
            clock_segments,
            claims: vec![None; nodes_len],
            leader_changes: Vec::new(),
            messages: 0,
            client_messages: 0,
            events_processed: 0,
            dead_timers: 0,
            trace: cfg.tracing.then(Trace::default),
            followed: None,
            workload_feed: None,
        }
    }

    /// Records the history into `buffer` (emptied first): a caller running many seeds on one
    /// thread hands back the last seed's buffer, so its memory is reused instead of allocated
    /// (and faulted in) afresh.
    pub fn with_history_buffer(mut self, mut buffer: Vec<Stamped>) -> Self {
        buffer.clear();
        self.history = buffer;
        self
    }

    /// The run's node names and kinds.
    pub fn directory(&self) -> &Directory {
        &self.dir
    }

    /// Runs every event up to the end of the run. A zero-time loop panics with its
    /// [`Stuck`] message (a caller that wants it as a value calls [`World::run_until`]).
    pub fn run(&mut self) {
        if let Err(halt) = self.run_until(None) {
            panic!("{halt}");
        }
    }

    /// Runs every event up to the end of the run, unless `stop` becomes true (checked every
    /// [`POLL_EVENTS`] events: [`Halt::Stopped`]) or simulated time stays at one instant for
    /// [`STUCK_EVENTS`] events ([`Halt::Stuck`]); after a halt the world is unfinished. Neither
    /// check changes what a run that reaches its end does: both only read.
    pub fn run_until(&mut self, stop: Option<&AtomicBool>) -> Result<(), Halt> {
        // Per event this costs one mask test: the stop flag and whether time moved are looked at
        // only once every POLL_EVENTS events (time never goes back, so an instant unchanged from
        // one poll to the next held every event between them).
        if self.followed.is_some() {
            return self.run_followed(stop);
        }
        let mut watch = Watch { polled_ns: None, still_events: 0 };
        while let Some(t) = self.queue.peek_time() {
            if t > self.end_ns {
                break;
            }
            if self.events_processed & (POLL_EVENTS - 1) == 0 {
                poll(stop, t, &mut watch)?;
            }
            let ev = self.queue.pop().expect("peeked");
            self.now_ns = ev.at_ns;
            self.events_processed += 1;
            self.handle(ev.kind, ev.at_ns);
        }
        self.now_ns = self.end_ns;
        Ok(())
    }

    /// Handles one event taken from the queue, at `at_ns` (now).
    #[inline(always)]
    fn handle(&mut self, kind: EventKind<Wire<P::Msg>>, at_ns: Nanos) {
        match kind {
            EventKind::Start { node } => match self.nodes[node].status {
                Status::Up => {
                    self.trace_at(Some(node), "start", String::new);
                    self.dispatch(node, |p, ctx| p.on_start(ctx));
                }
                // A fault at time 0 is in force before any node starts: a node paused then
                // starts when it resumes; one crashed then starts at its restart.
                Status::Paused => self.nodes[node].backlog.push(Backlogged::Start),
                Status::Crashed => self.trace_at(Some(node), "start", || "skipped: the node is down".to_string()),
            },
            EventKind::Deliver { from, to, msg } => self.deliver(from, to, msg),
            EventKind::Reset { from, to } => self.deliver_reset(from, to),
            EventKind::Timer { id } => self.fire_timer(id, at_ns),
            EventKind::FaultStart { occurrence } => {
                self.fault_start(occurrence);
                self.note_all_leadership();
            }
            EventKind::FaultEnd { occurrence } => {
                self.fault_end(occurrence);
                self.note_all_leadership();
            }
        }
    }

    /// Records a change of `node`'s claim to lead (a crashed node claims nothing, as the
    /// `leader` selector sees it). Only reads the node: nothing the run does depends on it.
    #[inline]
    fn note_leadership(&mut self, node: NodeId) {
        let n = &self.nodes[node];
        let claim = match &n.behaviour {
            Behaviour::Service(p) if n.status != Status::Crashed => p.leadership(),
            _ => None,
        };
        if claim != self.claims[node] {
            self.claims[node] = claim;
            self.leader_changes.push(LeaderChange { node, at_ns: self.now_ns, term: claim });
        }
    }

    /// [`World::note_leadership`] for every node, after a fault (a crash, a restart) that may
    /// have changed several at once. A leaderless model's servers claim nothing: not asked.
    fn note_all_leadership(&mut self) {
        if self.leaderless {
            return;
        }
        for node in 0..self.nodes.len() {
            self.note_leadership(node);
        }
    }

    /// Ends the world and hands back what it recorded.
    pub fn finish(self) -> WorldResult {
        WorldResult {
            history: self.history,
            folded: self.folded,
            faults: self.fault_windows,
            clocks: self.clock_segments,
            leaders: self.leader_changes,
            messages: self.messages,
            client_messages: self.client_messages,
            events_processed: self.events_processed,
            trace: self.trace,
        }
    }

    // ----- dispatch -------------------------------------------------------------------------

    /// Runs a handler of `node`: what it sends, arms and records is applied as it asks
    /// ([`post::Post`]).
    fn dispatch(&mut self, node: NodeId, f: impl FnOnce(&mut Behaviour<P>, &mut Ctx<P>)) {
        let tracing = self.trace.is_some();
        let World {
            now_ns,
            nodes,
            dir,
            timers,
            queue,
            network,
            net_rng,
            stale,
            history,
            fold_counted,
            folded,
            trace,
            messages,
            client_messages,
            workload_feed,
            ..
        } = self;
        let n = &mut nodes[node];
        let mono_ns = n.clock.mono_ns(*now_ns);
        let wall_ns = n.clock.wall_ns(*now_ns);
        let mut post = Post {
            now_ns: *now_ns,
            node,
            mono_ns,
            wall_ns,
            dir,
            queue,
            network,
            net_rng,
            stale,
            history,
            folded: fold_counted.then_some(folded),
            trace,
            messages,
            client_messages,
            workload_feed: workload_feed.as_deref_mut(),
        };
        let mut ctx = Ctx {
            node,
            mono_ns,
            wall_ns,
            rng: &mut n.rng,
            outlet: &mut post,
            timer_ids: timers,
            clock: Some(&n.clock),
            true_ns: *now_ns,
            cancelled: 0,
            names: dir,
            tracing,
        };
        f(&mut n.behaviour, &mut ctx);
        let cancelled = ctx.cancelled;
        if cancelled > 0 {
            self.note_dead_timers(cancelled);
        }
        // Only a server of a model with a leader can claim to lead (`leadership()` is a
        // `Process` method; clients, the resource and a leaderless model's servers claim
        // nothing), so the other handlers, most of a run's events, skip the call.
        if !self.leaderless && matches!(self.nodes[node].behaviour, Behaviour::Service(_)) {
            self.note_leadership(node);
        }
    }

    fn record(&mut self, node: NodeId, event: HistoryEvent) {
        self.trace_about(
            Some(node),
            "history",
            |_| Subject::History(event.clone()),
            |w| post::describe(&w.dir, &event),
        );
        self.history.push(Stamped { at_ns: self.now_ns, node, event });
    }

    fn deliver(&mut self, from: NodeId, to: NodeId, msg: Wire<P::Msg>) {
        if self.network.is_cut(from, to) {
            self.trace_about(
                Some(to),
                "drop",
                |w| Subject::message_of(w.dir.name_of(from), &msg),
                |w| format!("← {} {:?} (link cut in flight)", w.dir.name_of(from), msg),
            );
            return;
        }
        if self.nodes[to].status != Status::Crashed && self.stale.get(to, from) {
            // The host restarted since this connection was opened: its kernel answers with a reset.
            self.stale.set(to, from, false);
            self.trace_about(
                Some(to),
                "drop",
                |w| Subject::message_of(w.dir.name_of(from), &msg),
                |w| format!("← {} {:?} (refused: connection from before a host failure)", w.dir.name_of(from), msg),
            );
            self.send_reset(to, from);
            return;
        }
        match self.nodes[to].status {
            Status::Crashed => {
                let refused = self.nodes[to].crash_kind == CrashKind::Process;
                let why = if refused { "refused: process down" } else { "host down" };
                self.trace_about(
                    Some(to),
                    "drop",
                    |w| Subject::message_of(w.dir.name_of(from), &msg),
                    |w| format!("← {} {:?} ({why})", w.dir.name_of(from), msg),
                );
                if refused {
                    self.send_reset(to, from);
                }
            }
            Status::Paused => {
                self.connect(to, from);
                self.trace_about(
                    Some(to),
                    "queued",
                    |w| Subject::message_of(w.dir.name_of(from), &msg),
                    |w| format!("← {} {:?} (queued: paused)", w.dir.name_of(from), msg),
                );
                self.nodes[to].backlog.push(Backlogged::Message { from, msg });
            }
            Status::Up => {
                self.connect(to, from);
                self.trace_about(
                    Some(to),
                    "deliver",
                    |w| Subject::message_of(w.dir.name_of(from), &msg),
                    |w| format!("← {} {:?}", w.dir.name_of(from), msg),
                );
                self.dispatch(to, |p, ctx| p.on_message(ctx, from, msg));
            }
        }
    }

    fn fire_timer(&mut self, id: TimerId, at_ns: Nanos) {
        let Some((node, due)) = self.timers.peek(id) else { return };
        if due != at_ns {
            return; // re-armed after a clock-rate change: a newer event carries it
        }
        match self.nodes[node].status {
            Status::Crashed => {}
            Status::Paused => self.nodes[node].backlog.push(Backlogged::Timer { id }),
            Status::Up => {
                let Some((_, tag)) = self.timers.take(id) else { return };
                self.trace_about(Some(node), "timer", |_| Subject::timer_of(&tag), |_| format!("{tag:?}"));
                self.dispatch(node, |p, ctx| p.on_timer(ctx, id, tag));
            }
        }
    }

    /// Counts timers whose queued events just died, and purges the queue of dead timer events
    /// when they make up half of it. A dead event would pop, count as processed and do nothing;
    /// the purge counts those due within the run as processed, so `events_processed` is the same
    /// as if each had popped.
    fn note_dead_timers(&mut self, n: usize) {
        self.dead_timers += n;
        if self.dead_timers < PURGE_MIN_DEAD || self.dead_timers * 2 < self.queue.len() {
            return;
        }
        let timers = &self.timers;
        let due = self
            .queue
            .purge(self.run_end_ns, |kind| matches!(kind, EventKind::Timer { id } if timers.is_released(*id)));
        self.events_processed += due;
        self.dead_timers = 0;
    }

    // ----- trace ----------------------------------------------------------------------------

    /// Adds a trace line while a trace is being recorded; `detail` is not called otherwise.
    #[inline(always)]
    fn trace_at(&mut self, node: Option<NodeId>, kind: &'static str, detail: impl FnOnce() -> String) {
        self.trace_with(node, kind, |_| detail());
    }

    /// [`Self::trace_at`] whose detail reads the world (node names, say).
    ///
    /// The test is inline and the rest out of line and marked cold: an untraced run only pays
    /// the test, and the formatting code is not laid out in, nor counted against the inlining of,
    /// the hot functions that trace (send, deliver, fire a timer).
    #[inline(always)]
    fn trace_with(&mut self, node: Option<NodeId>, kind: &'static str, detail: impl FnOnce(&Self) -> String) {
        if self.trace.is_some() {
            self.push_trace(node, kind, detail);
        }
    }

    /// [`Self::trace_with`] with what the line is about as typed values (tests match those,
    /// not the detail's text); `subject` is not called either unless a trace is recorded.
    #[inline(always)]
    fn trace_about(
        &mut self,
        node: Option<NodeId>,
        kind: &'static str,
        subject: impl FnOnce(&Self) -> Subject,
        detail: impl FnOnce(&Self) -> String,
    ) {
        if self.trace.is_some() {
            self.push_trace_about(node, kind, subject, detail);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_trace_about(
        &mut self,
        node: Option<NodeId>,
        kind: &'static str,
        subject: impl FnOnce(&Self) -> Subject,
        detail: impl FnOnce(&Self) -> String,
    ) {
        let subject = subject(self);
        self.push_trace(node, kind, detail);
        if let Some(entry) = self.trace.as_mut().and_then(|t| t.entries.last_mut()) {
            entry.subject = subject;
        }
    }

    #[cold]
    #[inline(never)]
    fn push_trace(&mut self, node: Option<NodeId>, kind: &'static str, detail: impl FnOnce(&Self) -> String) {
        let detail = detail(self);
        let Some(trace) = self.trace.as_mut() else { return };
        let at_ns = self.now_ns;
        trace.push(match node {
            Some(n) => {
                let clock = &self.nodes[n].clock;
                post::node_line(&self.dir, at_ns, n, clock.mono_ns(at_ns), clock.wall_ns(at_ns), kind, detail)
            }
            None => TraceEntry {
                at_ns,
                node: "-".to_string(),
                mono_ns: at_ns,
                wall_ns: at_ns as i64,
                kind,
                detail,
                subject: Subject::None,
            },
        });
    }
}

/// `node`'s wall clock from true time `at_ns` on, as the history records it.
fn clock_segment(node: NodeId, clock: &NodeClock, at_ns: Nanos) -> ClockSegment {
    let offset_ns = clock.wall_ns(at_ns).saturating_sub(i64::try_from(at_ns).unwrap_or(i64::MAX));
    ClockSegment { node, at_ns, offset_ns, drift_ppm: clock.drift_ppm() }
}
