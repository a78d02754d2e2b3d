//! The shared workload driver and the protected resource.
//!
//! Every client node is a [`ClientNode`]: the workload loop (think, acquire, hold, release) over a
//! model's [`LockClient`]. Each critical section reads the resource at its start and writes
//! read+1 at its end, carrying the grant's fencing token; the [`ResourceNode`] judges every write
//! twice, unfenced (accepts all) and fenced (rejects a token below the highest accepted).

use std::collections::BTreeSet;
use std::sync::Arc;

use rand::Rng;

use crate::dist::{Dist, Sampler};
use crate::durable::Durable;
use crate::history::{FailReason, HistoryEvent, LockKey, LockMode};
use crate::lockclient::{LockClient, LockEvent, LockEvents};
use crate::process::{ClientState, Crash, Ctx, NodeId, Protocol, TimerId};
use crate::rng::ChaCha8Rng;
use crate::setup::WorkloadSpec;
use crate::time::Nanos;
pub use crate::wire::ResourceMsg;
use crate::wire::{DriverTimer, Tag, Wire};

mod fingerprint;

/// How long a critical section waits for the resource to answer a read or a write before it
/// gives up on that step (a lost message must not stall the client forever).
pub const RESOURCE_TIMEOUT_NS: Nanos = 1_000_000_000;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// Holding; the hold timer runs.
    Working,
    /// The hold is over, the read reply has not come: wait for it.
    AwaitRead,
    /// The application checked its lock and is preparing the write (`check_to_write_ms`).
    Writing,
    /// The write is out: wait for its answer.
    AwaitWrite,
}

#[derive(Clone, Debug)]
struct Held {
    key: LockKey,
    mode: LockMode,
    token: Option<u64>,
    grant: u64,
    /// A nested (reentrant) grant is held on top of the outer one.
    nested: bool,
    /// A nested acquire was asked and not answered yet.
    nesting_pending: bool,
    read_value: Option<u64>,
    step: Step,
    hold_timer: Option<TimerId>,
    resource_timer: Option<TimerId>,
    /// The lock was reported lost and the policy honoured it: the interval has ended.
    abandoned: bool,
}

#[derive(Clone, Debug)]
enum Phase {
    Thinking,
    Waiting {
        key: LockKey,
        mode: LockMode,
        timeout: Option<TimerId>,
    },
    Holding(Held),
    /// Release calls outstanding (one per nesting level still to release).
    Releasing {
        key: LockKey,
        remaining: u32,
    },
    Done,
}

/// The scheduled workload's next fire: the first multiple of the period on the wall clock
/// strictly after both `now_wall_ns` and the last fire (Spring's `CronTrigger.nextExecution`:
/// the next time after the last completion, or after the last scheduled time if the clock went
/// back below it), as (its wall time, monotonic delay from now). The delay is taken from the wall
/// clock once and then runs on the monotonic clock, as a `ScheduledExecutorService` does, so a
/// clock step after this moves only later fires.
pub(crate) fn next_fire(now_wall_ns: i64, last_slot_wall_ns: Option<i64>, period_ms: f64) -> (i64, Nanos) {
    let period_ns = ((period_ms * 1e6).round() as i64).max(1);
    let base = last_slot_wall_ns.map_or(now_wall_ns, |last| last.max(now_wall_ns));
    let slot = (base.div_euclid(period_ns).saturating_add(1)).saturating_mul(period_ns);
    (slot, (slot.saturating_sub(now_wall_ns)).max(1) as Nanos)
}

/// A draw in milliseconds from the client's workload stream, as nanoseconds.
fn draw_ns(d: &Sampler, rng: &mut ChaCha8Rng) -> Nanos {
    d.sample_ns(rng)
}

/// The workload's time distributions, prepared for drawing.
#[derive(Clone, Debug)]
struct Draws {
    hold: Sampler,
    think: Sampler,
    acquire_timeout: Option<Sampler>,
    /// `None`: the write leaves in the same instant as the check (the default: no draw).
    check_to_write: Option<Sampler>,
}

/// The workload loop of one client. Its configuration (`params`, `draws`) never changes in a
/// run: shared between a world's copies, not copied (a search copies worlds at every branch).
#[derive(Clone, Debug)]
struct Driver {
    params: Arc<WorkloadSpec>,
    draws: Arc<Draws>,
    rng: ChaCha8Rng,
    phase: Phase,
    think_timer: Option<TimerId>,
    grants: u64,
    completed: u64,
    /// Scheduled workload: the wall-clock time of the last fire set (volatile, as a scheduler's
    /// trigger context is).
    last_slot_wall_ns: Option<i64>,
}

/// What a client node keeps across a crash: its library as the library's own disk rebuilds it,
/// and the workload's configuration, stream and counters (the workload is the test's, not the
/// process's memory: a restarted client goes on with the same draws and its count of
/// acquisitions). What it was doing (its phase, its think timer, a schedule's last slot) is gone.
pub struct ClientDisk<P: Protocol> {
    lib: Box<dyn LockClient<P>>,
    params: Arc<WorkloadSpec>,
    draws: Arc<Draws>,
    rng: ChaCha8Rng,
    grants: u64,
    completed: u64,
}

impl<P: Protocol> Durable for ClientNode<P> {
    type Disk = ClientDisk<P>;
    fn into_disk(self, crash: &Crash) -> ClientDisk<P> {
        let ClientNode { mut lib, driver, events: _, batch: _ } = self;
        lib.rebuild(crash);
        let Driver { params, draws, rng, grants, completed, .. } = driver;
        ClientDisk { lib, params, draws, rng, grants, completed }
    }
    fn from_disk(disk: ClientDisk<P>) -> Self {
        let ClientDisk { lib, params, draws, rng, grants, completed } = disk;
        ClientNode {
            lib,
            driver: Driver {
                params,
                draws,
                rng,
                phase: Phase::Thinking,
                think_timer: None,
                grants,
                completed,
                last_slot_wall_ns: None,
            },
            events: Vec::new(),
            batch: Vec::new(),
        }
    }
}

/// A client node: the workload driver over a model's client library.
pub struct ClientNode<P: Protocol> {
    lib: Box<dyn LockClient<P>>,
    driver: Driver,
    events: LockEvents,
    /// The batch being handled by `drain` (kept to reuse its allocation).
    batch: LockEvents,
}

// By hand: a derive would ask for `P: Clone`, and the protocol is only a marker type.
impl<P: Protocol> Clone for ClientNode<P> {
    fn clone(&self) -> Self {
        ClientNode {
            lib: self.lib.clone(),
            driver: self.driver.clone(),
            events: self.events.clone(),
            batch: self.batch.clone(),
        }
    }
}

impl<P: Protocol> std::fmt::Debug for ClientNode<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientNode")
            .field("lib", &self.lib)
            .field("driver", &self.driver)
            .field("events", &self.events)
            .finish()
    }
}

impl<P: Protocol> ClientNode<P> {
    /// `workload_rng` is the client's own "workload" stream, separate from the library's, so every
    /// algorithm of a scenario sees the same hold and think draws.
    pub fn new(lib: Box<dyn LockClient<P>>, params: WorkloadSpec, workload_rng: ChaCha8Rng) -> Self {
        ClientNode::from_disk(ClientDisk {
            lib,
            draws: Arc::new(Draws {
                hold: Sampler::new(&params.hold_ms),
                think: Sampler::new(&params.think_ms),
                acquire_timeout: params.acquire_timeout_ms.as_ref().map(Sampler::new),
                check_to_write: (params.check_to_write_ms != Dist::Const(0.0))
                    .then(|| Sampler::new(&params.check_to_write_ms)),
            }),
            params: Arc::new(params),
            rng: workload_rng,
            grants: 0,
            completed: 0,
        })
    }

    fn think(&mut self, ctx: &mut Ctx<P>) {
        if let Some(limit) = self.driver.params.acquisitions_per_client {
            if self.driver.completed >= limit {
                self.driver.phase = Phase::Done;
                return;
            }
        }
        self.driver.phase = Phase::Thinking;
        let after = match &self.driver.params.schedule {
            Some(schedule) => {
                let (slot, after) = next_fire(ctx.now_wall_ns(), self.driver.last_slot_wall_ns, schedule.period_ms);
                self.driver.last_slot_wall_ns = Some(slot);
                after
            }
            // A chosen think time takes the draw's place (a search's choice, a replay's list).
            None => match ctx.chosen_time_ns(DriverTimer::Think) {
                Some(ns) => ns,
                None => draw_ns(&self.driver.draws.think, &mut self.driver.rng),
            },
        };
        self.driver.think_timer = Some(ctx.set_driver_timer(after, DriverTimer::Think));
    }

    fn acquire(&mut self, ctx: &mut Ctx<P>) {
        let p = &self.driver.params;
        let key = if p.locks <= 1 { 0 } else { self.driver.rng.gen_range(0..p.locks) };
        let mode = if p.read_fraction > 0.0 && self.driver.rng.gen::<f64>() < p.read_fraction {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        };
        let timeout = self
            .driver
            .draws
            .acquire_timeout
            .as_ref()
            .map(|d| ctx.set_driver_timer(draw_ns(d, &mut self.driver.rng), DriverTimer::AcquireTimeout));
        self.driver.phase = Phase::Waiting { key, mode, timeout };
        ctx.record(HistoryEvent::AcquireStart { key, mode });
        self.lib.acquire(ctx, &mut self.events, key, mode);
    }

    fn on_granted(&mut self, ctx: &mut Ctx<P>, key: LockKey, token: Option<u64>) {
        match &mut self.driver.phase {
            Phase::Waiting { key: k, mode, timeout } if *k == key => {
                let mode = *mode;
                if let Some(t) = timeout.take() {
                    ctx.cancel_timer(t);
                }
                self.driver.grants += 1;
                let grant = self.driver.grants;
                ctx.record(HistoryEvent::Granted { key, mode, token, grant, nested: false });
                let hold_ns = match ctx.chosen_time_ns(DriverTimer::Hold) {
                    Some(ns) => ns,
                    None => draw_ns(&self.driver.draws.hold, &mut self.driver.rng),
                };
                let hold_timer = Some(ctx.set_driver_timer(hold_ns, DriverTimer::Hold));
                if self.driver.params.resource {
                    let resource = ctx.resource();
                    ctx.send_resource(resource, ResourceMsg::Read { key, grant });
                }
                // Reentry is drawn for every grant, so the workload's draws do not depend on
                // whether the model is reentrant.
                let reenter = self.driver.rng.gen::<f64>() < self.driver.params.reentry;
                let nest = reenter && self.lib.reentrant();
                self.driver.phase = Phase::Holding(Held {
                    key,
                    mode,
                    token,
                    grant,
                    nested: false,
                    nesting_pending: nest,
                    read_value: None,
                    step: Step::Working,
                    hold_timer,
                    resource_timer: None,
                    abandoned: false,
                });
                if nest {
                    self.lib.acquire(ctx, &mut self.events, key, mode);
                }
            }
            Phase::Holding(h) if h.key == key && h.nesting_pending => {
                h.nesting_pending = false;
                h.nested = true;
                ctx.record(HistoryEvent::Granted { key, mode: h.mode, token, grant: h.grant, nested: true });
            }
            _ => {
                // A grant nobody waits for (after a timeout gave up): hand it straight back.
                ctx.note(|| format!("unexpected grant of key {key}: releasing it"));
                self.lib.release(ctx, &mut self.events, key);
                if let Phase::Releasing { remaining, .. } = &mut self.driver.phase {
                    *remaining += 1;
                }
            }
        }
    }

    fn on_failed(&mut self, ctx: &mut Ctx<P>, key: LockKey, reason: FailReason) {
        match &mut self.driver.phase {
            Phase::Waiting { key: k, timeout, .. } if *k == key => {
                if let Some(t) = timeout.take() {
                    ctx.cancel_timer(t);
                }
                ctx.record(HistoryEvent::AcquireFailed { key, reason });
                self.think(ctx);
            }
            Phase::Holding(h) if h.key == key && h.nesting_pending => {
                h.nesting_pending = false;
            }
            _ => {}
        }
    }

    /// The hold is over: write the result (if there is a resource), then release.
    fn end_of_hold(&mut self, ctx: &mut Ctx<P>) {
        let Phase::Holding(h) = &mut self.driver.phase else { return };
        h.hold_timer = None;
        if !self.driver.params.resource || h.mode == LockMode::Shared {
            return self.release(ctx);
        }
        match h.read_value {
            Some(_) => {
                // The application's own check, where it makes it: just before it writes.
                let key = h.key;
                if !self.lib.check_before_write(ctx, &mut self.events, key) {
                    ctx.note(|| "the application's check failed: abandoning without writing".to_string());
                    ctx.record(HistoryEvent::Abandoned { key });
                    if let Phase::Holding(h) = &mut self.driver.phase {
                        h.abandoned = true;
                    }
                    return self.release(ctx);
                }
                match &self.driver.draws.check_to_write {
                    None => self.write(ctx),
                    Some(d) => {
                        let after = draw_ns(d, &mut self.driver.rng);
                        if let Phase::Holding(h) = &mut self.driver.phase {
                            h.step = Step::Writing;
                            h.hold_timer = Some(ctx.set_driver_timer(after, DriverTimer::Write));
                        }
                    }
                }
            }
            None => {
                h.step = Step::AwaitRead;
                h.resource_timer = Some(ctx.set_driver_timer(RESOURCE_TIMEOUT_NS, DriverTimer::ResourceTimeout));
            }
        }
    }

    /// Sends the critical section's write (the value read plus one).
    fn write(&mut self, ctx: &mut Ctx<P>) {
        let Phase::Holding(h) = &mut self.driver.phase else { return };
        let Some(v) = h.read_value else { return };
        let (key, grant, token) = (h.key, h.grant, h.token);
        h.hold_timer = None;
        h.step = Step::AwaitWrite;
        h.resource_timer = Some(ctx.set_driver_timer(RESOURCE_TIMEOUT_NS, DriverTimer::ResourceTimeout));
        let resource = ctx.resource();
        ctx.send_resource(resource, ResourceMsg::Write { key, grant, token, value: v + 1 });
    }

    fn on_resource(&mut self, ctx: &mut Ctx<P>, msg: ResourceMsg) {
        let Phase::Holding(h) = &mut self.driver.phase else { return };
        match msg {
            ResourceMsg::ReadReply { key, grant, value } if key == h.key && grant == h.grant => {
                h.read_value = Some(value);
                if h.step == Step::AwaitRead && !h.abandoned {
                    if let Some(t) = h.resource_timer.take() {
                        ctx.cancel_timer(t);
                    }
                    self.end_of_hold(ctx);
                }
            }
            ResourceMsg::WriteReply { key, grant, .. }
                if key == h.key && grant == h.grant && h.step == Step::AwaitWrite =>
            {
                if let Some(t) = h.resource_timer.take() {
                    ctx.cancel_timer(t);
                }
                self.release(ctx);
            }
            _ => {}
        }
    }

    fn release(&mut self, ctx: &mut Ctx<P>) {
        let Phase::Holding(h) = &mut self.driver.phase else { return };
        for t in [h.hold_timer.take(), h.resource_timer.take()].into_iter().flatten() {
            ctx.cancel_timer(t);
        }
        let key = h.key;
        let levels = 1 + h.nested as u32;
        // An abandoned section's interval already ended; it still counts towards the client's
        // quota, so a fixed schedule ends.
        if !h.abandoned {
            if h.nested {
                ctx.record(HistoryEvent::Released { key, nested: true });
            }
            ctx.record(HistoryEvent::Released { key, nested: false });
        }
        self.driver.completed += 1;
        self.driver.phase = Phase::Releasing { key, remaining: levels };
        for _ in 0..levels {
            self.lib.release(ctx, &mut self.events, key);
        }
    }

    fn on_released(&mut self, ctx: &mut Ctx<P>, key: LockKey) {
        if let Phase::Releasing { key: k, remaining } = &mut self.driver.phase {
            if *k == key {
                *remaining = remaining.saturating_sub(1);
                if *remaining == 0 {
                    self.think(ctx);
                }
            }
        }
    }

    /// The release call failed: the application cannot know whether the server still names it
    /// the holder, and (as application code does) treats the lock as given up and moves on. The
    /// holder interval already ended at the release call; the failure is recorded after it, and
    /// the loop carries on as after a release (think, then acquire again).
    fn on_release_failed(&mut self, ctx: &mut Ctx<P>, key: LockKey, reason: FailReason) {
        ctx.record(HistoryEvent::ReleaseFailed { key, reason });
        ctx.note(|| format!("release of key {key} failed ({reason:?}): the lock is given up, it may still be held"));
        self.on_released(ctx, key);
    }

    fn on_lost(&mut self, ctx: &mut Ctx<P>, key: LockKey, honour: bool) {
        let holding = matches!(&self.driver.phase, Phase::Holding(h) if h.key == key && !h.abandoned);
        ctx.record(HistoryEvent::LostNotice { key });
        if !(holding && honour) {
            return;
        }
        ctx.record(HistoryEvent::Abandoned { key });
        if let Phase::Holding(h) = &mut self.driver.phase {
            h.abandoned = true;
        }
        self.release(ctx);
    }

    /// Handles the library's events until there are none (a handler may cause more).
    fn drain(&mut self, ctx: &mut Ctx<P>) {
        while !self.events.is_empty() {
            // Swap the pending events out (handlers may add more to `self.events`), keeping
            // both buffers' allocations for the next time.
            let mut batch = std::mem::take(&mut self.batch);
            std::mem::swap(&mut batch, &mut self.events);
            for e in batch.drain(..) {
                match e {
                    LockEvent::Granted { key, token } => self.on_granted(ctx, key, token),
                    LockEvent::Failed { key, reason } => self.on_failed(ctx, key, reason),
                    LockEvent::Released { key } => self.on_released(ctx, key),
                    LockEvent::ReleaseFailed { key, reason } => self.on_release_failed(ctx, key, reason),
                    LockEvent::Lost { key, honour } => self.on_lost(ctx, key, honour),
                    LockEvent::Notified { key } => ctx.record(HistoryEvent::Notification { key }),
                    LockEvent::Refused { key } => ctx.record(HistoryEvent::RefusedAttempt { key }),
                }
            }
            self.batch = batch;
        }
    }
}

/// The client node's handlers, called by the engine.
impl<P: Protocol> ClientNode<P> {
    pub(crate) fn on_start(&mut self, ctx: &mut Ctx<P>) {
        self.lib.on_start(ctx, &mut self.events);
        self.think(ctx);
        self.drain(ctx);
    }

    pub(crate) fn on_message(&mut self, ctx: &mut Ctx<P>, from: NodeId, msg: Wire<P::Msg>) {
        match msg {
            Wire::Resource(r) => self.on_resource(ctx, r),
            Wire::Model(msg) => self.lib.on_message(ctx, &mut self.events, from, msg),
        }
        self.drain(ctx);
    }

    pub(crate) fn on_timer(&mut self, ctx: &mut Ctx<P>, timer: TimerId, tag: Tag<P::Timer>) {
        let tag = match tag {
            Tag::Model(t) => {
                self.lib.on_timer(ctx, &mut self.events, timer, t);
                return self.drain(ctx);
            }
            Tag::Driver(d) => d,
        };
        match tag {
            DriverTimer::Think if self.driver.think_timer == Some(timer) => {
                self.driver.think_timer = None;
                self.acquire(ctx);
            }
            DriverTimer::Hold => {
                if matches!(&self.driver.phase, Phase::Holding(h) if h.hold_timer == Some(timer)) {
                    self.end_of_hold(ctx);
                }
            }
            DriverTimer::Write => {
                if matches!(&self.driver.phase, Phase::Holding(h) if h.hold_timer == Some(timer) && h.step == Step::Writing)
                {
                    self.write(ctx);
                }
            }
            DriverTimer::ResourceTimeout => {
                if matches!(&self.driver.phase, Phase::Holding(h) if h.resource_timer == Some(timer)) {
                    ctx.note(|| "resource did not answer: releasing without writing".to_string());
                    if let Phase::Holding(h) = &mut self.driver.phase {
                        h.resource_timer = None;
                    }
                    self.release(ctx);
                }
            }
            DriverTimer::AcquireTimeout => {
                if let Phase::Waiting { key, timeout, .. } = &self.driver.phase {
                    if *timeout == Some(timer) {
                        let key = *key;
                        ctx.record(HistoryEvent::AcquireFailed { key, reason: FailReason::Timeout });
                        self.lib.cancel(ctx, &mut self.events, key);
                        self.think(ctx);
                    }
                }
            }
            _ => {}
        }
        self.drain(ctx);
    }

    pub(crate) fn on_restart(&mut self, ctx: &mut Ctx<P>) {
        self.lib.on_restart(ctx, &mut self.events);
        self.think(ctx);
        self.drain(ctx);
    }

    pub(crate) fn on_reset(&mut self, ctx: &mut Ctx<P>, peer: NodeId) {
        // The resource never goes down, so only the library's connections can be reset.
        if peer == ctx.resource() {
            return;
        }
        self.lib.on_reset(ctx, &mut self.events, peer);
        self.drain(ctx);
    }

    /// Whether the client has made all its acquisitions and stopped (`sim exhaust`'s end of a path).
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.driver.phase, Phase::Done)
    }

    /// Whether an acquire call is outstanding and the library says it is blocked on the
    /// service's notification (`sim exhaust`'s `blocked` target).
    pub(crate) fn is_blocked(&self) -> bool {
        matches!(self.driver.phase, Phase::Waiting { .. }) && self.lib.blocked_on_service()
    }

    pub(crate) fn client_state(&self) -> ClientState {
        match &self.driver.phase {
            Phase::Waiting { .. } => ClientState::Waiting,
            Phase::Holding(h) if !h.abandoned => ClientState::Holding,
            _ => ClientState::Idle,
        }
    }
}

/// The protected resource: a counter per key, judged unfenced and fenced.
#[derive(Clone, Debug)]
pub struct ResourceNode {
    counter: Vec<u64>,
    highest_token: Vec<Option<u64>>,
    /// Writes already applied, by (client, grant number). The network may deliver a message twice;
    /// a repeated write is the same write (as a TCP stream would deduplicate it), so it is answered
    /// again but neither applied nor judged twice. A client writes once per grant.
    applied: BTreeSet<(NodeId, u64)>,
}

impl ResourceNode {
    /// A resource for keys `0..locks`, every counter at 0 and no token accepted yet.
    pub fn new(locks: u32) -> Self {
        ResourceNode {
            counter: vec![0; locks as usize],
            highest_token: vec![None; locks as usize],
            applied: BTreeSet::new(),
        }
    }
}

impl ResourceNode {
    /// A resource request from `from` (anything else is not for the resource).
    pub(crate) fn on_message<P: Protocol>(&mut self, ctx: &mut Ctx<P>, from: NodeId, msg: Wire<P::Msg>) {
        let Wire::Resource(msg) = msg else { return };
        match msg {
            ResourceMsg::Read { key, grant } => {
                let value = self.counter[key as usize];
                ctx.record(HistoryEvent::ResourceRead { client: from, key, value });
                ctx.send_resource(from, ResourceMsg::ReadReply { key, grant, value });
            }
            ResourceMsg::Write { key, grant, token, value } => {
                if !self.applied.insert((from, grant)) {
                    ctx.note(|| format!("duplicate write of grant {grant} ignored"));
                    let fenced_accepted = token.is_none_or(|t| self.highest_token[key as usize].is_none_or(|h| t >= h));
                    ctx.send_resource(from, ResourceMsg::WriteReply { key, grant, fenced_accepted });
                    return;
                }
                let k = key as usize;
                // The fenced resource rejects a token below the highest it has accepted.
                let fenced_accepted = match (token, self.highest_token[k]) {
                    (Some(t), Some(h)) => t >= h,
                    _ => true,
                };
                if fenced_accepted {
                    if let Some(t) = token {
                        self.highest_token[k] = Some(self.highest_token[k].map_or(t, |h| h.max(t)));
                    }
                }
                // The unfenced resource accepts every write.
                self.counter[k] = value;
                ctx.record(HistoryEvent::ResourceWrite { client: from, key, grant, token, value, fenced_accepted });
                ctx.send_resource(from, ResourceMsg::WriteReply { key, grant, fenced_accepted });
            }
            _ => {}
        }
    }

    // The resource stands for a durable store: a crash keeps its counters, and it sets no timers.
}

#[cfg(test)]
mod tests {
    use super::next_fire;

    const S: i64 = 1_000_000_000;

    /// Fires land on the period's multiples of the wall clock, strictly after now and after the
    /// last fire, whatever the sign of the clock.
    #[test]
    fn the_next_fire_is_the_next_multiple_of_the_period_on_the_wall_clock() {
        assert_eq!(next_fire(0, None, 1000.0), (S, S as u64));
        assert_eq!(next_fire(S + S / 2, None, 1000.0), (2 * S, (S / 2) as u64));
        // Exactly on a multiple: the next one (a cron time is strictly after its base).
        assert_eq!(next_fire(2 * S, None, 1000.0), (3 * S, S as u64));
        // A clock behind true time (negative wall readings) still aligns on multiples.
        assert_eq!(next_fire(-S - S / 2, None, 1000.0), (-S, (S / 2) as u64));
        // The clock went back below the last fire: that fire is not repeated.
        assert_eq!(next_fire(S / 2, Some(2 * S), 1000.0), (3 * S, (3 * S - S / 2) as u64));
        // A run that overran two periods skips them: the next multiple after its completion.
        assert_eq!(next_fire(4 * S + 1, Some(2 * S), 1000.0), (5 * S, (S - 1) as u64));
    }
}
