//! The AWS DynamoDB Lock Client (awslabs/amazon-dynamodb-lock-client,
//! `AmazonDynamoDBLockClient.java`, 1.x).
//!
//! `acquireLock`: wait budget `additionalTimeToWaitForLock` (default `DEFAULT_BUFFER_MS`, 1 s);
//! loop: `GetItem` (consistent); no item, or a released one: `PutItem` with a new random RVN on
//! the condition that the item is absent (or still has the RVN read); granted. Held by someone
//! else: the first time, remember the item and the time it was read (the client's
//! `System.nanoTime()`), and add its lease duration to the budget; later, if the RVN is still the
//! one remembered and a lease has passed since it was first seen, `PutItem` on the condition
//! that the RVN is still that one (taking the lock over); if the RVN changed, remember the new
//! one from now. Past the budget: `LockNotGrantedException`; else sleep `refreshPeriod` (1 s).
//! A failed condition is someone else winning: the loop goes on.
//!
//! The heartbeat thread (`heartbeatPeriod`, 5 s): for each held lock, `UpdateItem` with a new
//! random RVN on the condition that the RVN is the last one this client wrote; on success the
//! client keeps the new RVN and its lookup time; on a failed condition it drops the lock (the
//! application is not told unless it polls `isExpired()` or set a session monitor); on any
//! other error it keeps the old RVN and tries again next round: if that failed call had
//! reached the table, the next heartbeat's condition fails and the lock is dropped
//! (cirello-io/dynamolock#280, the same in the Java client).
//!
//! `releaseLock`: `DeleteItem` (`deleteLockOnRelease`, the default) if the RVN is still ours;
//! it waits for a heartbeat in flight on the same lock (both run `synchronized (lockItem)`).
//! No fencing token: the RVN is random, so a resource cannot order two holders.

use std::collections::BTreeMap;

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_MS};

use super::protocol::{Answer, Call, ClientTimer, DynamoMsg, DynamoTimer, Item, Request, Rvn};
use super::Dynamo;

mod fingerprint;

/// The client's settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `leaseDuration`.
    pub lease_ns: Nanos,
    /// `heartbeatPeriod`.
    pub heartbeat_ns: Nanos,
    /// `refreshPeriod`.
    pub refresh_ns: Nanos,
    /// `additionalTimeToWaitForLock`.
    pub additional_wait_ns: Nanos,
    /// The SDK call's timeout (`None`: it waits for the answer).
    pub request_timeout_ns: Option<Nanos>,
    /// When the heartbeat thread ends, after the client's start (`None`: never).
    pub heartbeat_stops_ns: Option<Nanos>,
    /// The application checks `lockItem.isExpired()` before it writes.
    pub check_expired: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// `acquireLock`'s loop: started at, the budget's end, the item being watched (RVN, when
    /// first seen with it), whether the budget was extended by a lease.
    Acquiring { start_ns: Nanos, wait_ns: Nanos, watching: Option<(Rvn, Nanos)>, extended: bool },
    /// Held, with the RVN last written and the time of the last success.
    Held { rvn: Rvn, lookup_ns: Nanos },
    /// Dropped by the heartbeat (failed condition); the application still runs.
    Dropped,
    /// `releaseLock` waiting for the heartbeat in flight (both synchronise on the lock item),
    /// with the RVN last written.
    ReleaseAfterHeartbeat { rvn: Rvn },
    /// `releaseLock` in flight.
    Releasing,
}

/// How a call ended, as the client sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Answered: the item after the call.
    Done(Option<Item>),
    /// `ConditionalCheckFailedException`.
    ConditionFailed,
    /// No answer within the request timeout (the call may have taken effect).
    TimedOut,
}

#[derive(Clone, Debug)]
struct Pending {
    key: LockKey,
    call: Call,
    timeout: Option<TimerId>,
}

#[derive(Clone, Debug, Default)]
struct Volatile {
    table: NodeId,
    next_id: u64,
    calls: BTreeMap<u64, Pending>,
    locks: BTreeMap<LockKey, (Phase, Option<TimerId>)>,
    heartbeat: Option<TimerId>,
    /// The client's start (monotonic), for the heartbeat thread's end.
    started_ns: Nanos,
    /// The heartbeat thread has ended.
    heartbeat_ended: bool,
}

/// One lock client.
#[derive(Clone, Debug)]
pub struct DynamoClient {
    index: u32,
    cfg: ClientConfig,
    v: Volatile,
}

impl DynamoClient {
    /// Client `index`.
    pub fn new(index: u32, cfg: ClientConfig) -> Self {
        DynamoClient::from_disk((index, cfg))
    }

    fn send(&mut self, ctx: &mut Ctx<Dynamo>, key: LockKey, call: Call) {
        self.v.next_id += 1;
        let id = self.v.next_id;
        let timeout = self.cfg.request_timeout_ns.map(|t| ctx.set_timer(t, ClientTimer::CallTimeout { id }));
        self.v.calls.insert(id, Pending { key, call, timeout });
        ctx.send(self.v.table, Request { id, call });
    }

    fn item(&self, ctx: &mut Ctx<Dynamo>) -> Item {
        Item { owner: self.index, rvn: ctx.rng().gen(), lease_ms: self.cfg.lease_ns / NS_PER_MS, released: false }
    }

    fn set_phase(&mut self, key: LockKey, phase: Phase) {
        if let Some(l) = self.v.locks.get_mut(&key) {
            l.0 = phase;
        }
    }

    /// After a look at the item in `acquireLock`'s loop: take it, or sleep, or give up.
    fn on_lookup(&mut self, ctx: &mut Ctx<Dynamo>, out: &mut LockEvents, key: LockKey, found: Option<Item>) {
        let Some(&(Phase::Acquiring { start_ns, mut wait_ns, mut watching, mut extended }, _)) = self.v.locks.get(&key)
        else {
            return;
        };
        let now = ctx.now_mono_ns();
        match found {
            None => {
                let item = self.item(ctx);
                return self.send(ctx, key, Call::Put { key, expected: None, item });
            }
            Some(cur) if cur.released => {
                let item = self.item(ctx);
                return self.send(ctx, key, Call::Put { key, expected: Some(cur.rvn), item });
            }
            Some(cur) => match watching {
                None => {
                    watching = Some((cur.rvn, now));
                    if !extended {
                        extended = true;
                        wait_ns += cur.lease_ms * NS_PER_MS;
                    }
                }
                Some((rvn, since)) if rvn == cur.rvn && now > since + cur.lease_ms * NS_PER_MS => {
                    ctx.note(|| format!("lock-{key}: RVN {rvn:x} unchanged for a lease on this clock: taking it over"));
                    let item = self.item(ctx);
                    return self.send(ctx, key, Call::Put { key, expected: Some(rvn), item });
                }
                Some((rvn, _)) if rvn != cur.rvn => watching = Some((cur.rvn, now)),
                Some(_) => {}
            },
        }
        out.push(LockEvent::Refused { key });
        if now - start_ns > wait_ns {
            self.v.locks.remove(&key);
            out.push(LockEvent::Failed { key, reason: FailReason::Timeout });
            return;
        }
        let timer = ctx.set_timer(self.cfg.refresh_ns, ClientTimer::Refresh { key });
        self.v.locks.insert(key, (Phase::Acquiring { start_ns, wait_ns, watching, extended }, Some(timer)));
    }

    fn answered(&mut self, ctx: &mut Ctx<Dynamo>, out: &mut LockEvents, p: Pending, outcome: Outcome) {
        let key = p.key;
        let Some(&(phase, _)) = self.v.locks.get(&key) else { return };
        let now = ctx.now_mono_ns();
        match (p.call, phase) {
            (Call::Get { .. }, Phase::Acquiring { .. }) => match outcome {
                Outcome::Done(found) => self.on_lookup(ctx, out, key, found),
                _ => {
                    self.v.locks.remove(&key);
                    out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
                }
            },
            (Call::Put { item, .. }, Phase::Acquiring { .. }) => match outcome {
                Outcome::Done(_) => {
                    self.set_phase(key, Phase::Held { rvn: item.rvn, lookup_ns: now });
                    out.push(LockEvent::Granted { key, token: None });
                    self.arm_heartbeat(ctx);
                }
                Outcome::ConditionFailed => {
                    // Someone else wrote first: look again after the refresh period.
                    out.push(LockEvent::Refused { key });
                    let timer = ctx.set_timer(self.cfg.refresh_ns, ClientTimer::Refresh { key });
                    if let Some(l) = self.v.locks.get_mut(&key) {
                        l.1 = Some(timer);
                    }
                }
                _ => {
                    self.v.locks.remove(&key);
                    out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
                }
            },
            (Call::Heartbeat { rvn, .. }, Phase::Held { .. }) => match outcome {
                Outcome::Done(_) => self.set_phase(key, Phase::Held { rvn, lookup_ns: now }),
                Outcome::ConditionFailed => {
                    ctx.note(|| format!("lock-{key}: heartbeat's condition failed: the lock is dropped"));
                    self.set_phase(key, Phase::Dropped);
                    out.push(LockEvent::Lost { key, honour: false });
                }
                Outcome::TimedOut => {
                    ctx.note(|| format!("lock-{key}: heartbeat failed (no answer in time): the RVN is kept"))
                }
            },
            (Call::Heartbeat { rvn: new, .. }, Phase::ReleaseAfterHeartbeat { rvn: old }) => {
                let rvn = if matches!(outcome, Outcome::Done(_)) { new } else { old };
                self.set_phase(key, Phase::Releasing);
                self.send(ctx, key, Call::Delete { key, expected: rvn, owner: self.index });
            }
            (Call::Delete { .. }, Phase::Releasing) => {
                self.v.locks.remove(&key);
                out.push(match outcome {
                    Outcome::Done(_) => LockEvent::Released { key },
                    Outcome::ConditionFailed => LockEvent::ReleaseFailed { key, reason: FailReason::Refused },
                    Outcome::TimedOut => LockEvent::ReleaseFailed { key, reason: FailReason::Timeout },
                });
            }
            _ => {}
        }
    }

    /// Whether the heartbeat thread has ended by now (noted once, when it is found so).
    fn heartbeat_thread_ended(&mut self, ctx: &mut Ctx<Dynamo>) -> bool {
        if !self.v.heartbeat_ended {
            let Some(stops) = self.cfg.heartbeat_stops_ns else { return false };
            if ctx.now_mono_ns() < self.v.started_ns + stops {
                return false;
            }
            self.v.heartbeat_ended = true;
            ctx.note(|| "the heartbeat thread has ended: held locks keep their last RVN".to_string());
        }
        true
    }

    fn arm_heartbeat(&mut self, ctx: &mut Ctx<Dynamo>) {
        if self.v.heartbeat.is_none() && !self.heartbeat_thread_ended(ctx) {
            self.v.heartbeat = Some(ctx.set_timer(self.cfg.heartbeat_ns, ClientTimer::Heartbeat));
        }
    }
}

impl Durable for DynamoClient {
    /// A client library keeps only its index and configuration.
    type Disk = (u32, ClientConfig);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.index, self.cfg)
    }
    fn from_disk((index, cfg): Self::Disk) -> Self {
        DynamoClient { index, cfg, v: Volatile::default() }
    }
}

impl LockClient<Dynamo> for DynamoClient {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Dynamo>, _out: &mut LockEvents) {
        self.v.table = ctx.node_named("server-0").expect("the table's node");
        self.v.started_ns = ctx.now_mono_ns();
    }

    fn acquire(&mut self, ctx: &mut Ctx<Dynamo>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        let start_ns = ctx.now_mono_ns();
        let phase =
            Phase::Acquiring { start_ns, wait_ns: self.cfg.additional_wait_ns, watching: None, extended: false };
        self.v.locks.insert(key, (phase, None));
        self.send(ctx, key, Call::Get { key });
    }

    fn release(&mut self, ctx: &mut Ctx<Dynamo>, out: &mut LockEvents, key: LockKey) {
        match self.v.locks.get(&key).map(|l| l.0) {
            Some(Phase::Held { rvn, .. }) => {
                let beating = self.v.calls.values().any(|c| c.key == key && matches!(c.call, Call::Heartbeat { .. }));
                if beating {
                    self.set_phase(key, Phase::ReleaseAfterHeartbeat { rvn });
                } else {
                    self.set_phase(key, Phase::Releasing);
                    self.send(ctx, key, Call::Delete { key, expected: rvn, owner: self.index });
                }
            }
            _ => {
                // Dropped by the heartbeat: releaseLock finds it is not ours.
                self.v.locks.remove(&key);
                out.push(LockEvent::ReleaseFailed { key, reason: FailReason::SessionLost });
            }
        }
    }

    fn cancel(&mut self, ctx: &mut Ctx<Dynamo>, _out: &mut LockEvents, key: LockKey) {
        if let Some((_, Some(t))) = self.v.locks.remove(&key) {
            ctx.cancel_timer(t);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Dynamo>, out: &mut LockEvents, _from: NodeId, msg: DynamoMsg) {
        let DynamoMsg::Answer(Answer { id, result }) = msg else { return };
        let Some(p) = self.v.calls.remove(&id) else { return };
        if let Some(t) = p.timeout {
            ctx.cancel_timer(t);
        }
        let outcome = match result {
            Ok(found) => Outcome::Done(found),
            Err(_) => Outcome::ConditionFailed,
        };
        self.answered(ctx, out, p, outcome);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Dynamo>, out: &mut LockEvents, timer: TimerId, tag: DynamoTimer) {
        let DynamoTimer::Client(t) = tag;
        match t {
            ClientTimer::Refresh { key } => {
                if self.v.locks.get(&key).is_some_and(|l| l.1 == Some(timer)) {
                    self.v.locks.get_mut(&key).expect("present").1 = None;
                    self.send(ctx, key, Call::Get { key });
                }
            }
            ClientTimer::Heartbeat if self.v.heartbeat == Some(timer) => {
                self.v.heartbeat = None;
                if self.heartbeat_thread_ended(ctx) {
                    return;
                }
                let held: Vec<(LockKey, Rvn)> = self
                    .v
                    .locks
                    .iter()
                    .filter_map(|(k, l)| match l.0 {
                        Phase::Held { rvn, .. } => Some((*k, rvn)),
                        _ => None,
                    })
                    .collect();
                for (key, expected) in held {
                    let rvn = ctx.rng().gen();
                    self.send(ctx, key, Call::Heartbeat { key, expected, rvn, owner: self.index });
                }
                if !self.v.locks.is_empty() {
                    self.arm_heartbeat(ctx);
                }
            }
            ClientTimer::CallTimeout { id } => {
                if let Some(p) = self.v.calls.remove(&id) {
                    self.answered(ctx, out, p, Outcome::TimedOut);
                }
            }
            ClientTimer::Heartbeat => {}
        }
    }

    fn check_before_write(&mut self, ctx: &mut Ctx<Dynamo>, _out: &mut LockEvents, key: LockKey) -> bool {
        if !self.cfg.check_expired {
            return true;
        }
        // lockItem.isExpired(): released, or a lease since the last successful heartbeat.
        match self.v.locks.get(&key).map(|l| l.0) {
            Some(Phase::Held { lookup_ns, .. }) => ctx.now_mono_ns() <= lookup_ns + self.cfg.lease_ns,
            _ => false,
        }
    }
}
