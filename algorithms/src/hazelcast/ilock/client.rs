//! A Hazelcast 3.8 client using `ILock` with unisocket routing (`smartRouting = false`): every
//! call goes to the member it belongs to (`client-i` → `server-(i mod members)`), which invokes
//! the op on the lock's owner. `lock()` returns when the owner grants the lock (no lease: the
//! lock is held until `unlock()` or until the cluster releases it as a disconnected client's);
//! `unlock()` fails with `IllegalMonitorStateException` when the member's side no longer has
//! this client as the holder. The application is never told that a side released its lock.

use std::collections::BTreeMap;

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};

use super::{owner_member_of, IlockMsg, LockCall};
use crate::hazelcast::protocol::{HazelcastMsg, HazelcastTimer};
use crate::hazelcast::Hazelcast;

mod fingerprint;

#[derive(Clone, Debug, Default)]
struct Volatile {
    member: NodeId,
    epoch: u64,
    next: u64,
    /// uid → (key, call).
    calls: BTreeMap<u64, (LockKey, LockCall)>,
    /// Per key: the nesting count held.
    held: BTreeMap<LockKey, u32>,
}

/// One `ILock` client.
#[derive(Clone, Debug)]
pub struct IlockClient {
    index: u32,
    members: usize,
    v: Volatile,
}

impl IlockClient {
    /// Client `index` of a cluster of `members`.
    pub fn new(index: u32, members: usize) -> Self {
        IlockClient::from_disk((index, members))
    }

    fn call(&mut self, ctx: &mut Ctx<Hazelcast>, key: LockKey, call: LockCall) {
        self.v.next += 1;
        let uid = (self.v.epoch << 32) | self.v.next;
        self.v.calls.insert(uid, (key, call));
        ctx.send(self.v.member, IlockMsg::Request { uid, key, call });
    }
}

impl Durable for IlockClient {
    /// A client keeps only its index and the cluster's size.
    type Disk = (u32, usize);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.index, self.members)
    }
    fn from_disk((index, members): Self::Disk) -> Self {
        IlockClient { index, members, v: Volatile::default() }
    }
}

impl LockClient<Hazelcast> for IlockClient {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents) {
        let member = owner_member_of(self.index, self.members);
        self.v.member = ctx.node_named(&format!("server-{member}")).expect("the client's member");
        self.v.epoch = ctx.rng().gen_range(1..u32::MAX as u64);
    }

    fn acquire(&mut self, ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        self.call(ctx, key, LockCall::Lock);
    }

    fn release(&mut self, ctx: &mut Ctx<Hazelcast>, out: &mut LockEvents, key: LockKey) {
        if self.v.held.contains_key(&key) {
            self.call(ctx, key, LockCall::Unlock);
        } else {
            out.push(LockEvent::ReleaseFailed { key, reason: FailReason::Refused });
        }
    }

    fn cancel(&mut self, _ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents, key: LockKey) {
        // tryLock's timeout: the wait is abandoned here (the parked op stays on the owner).
        self.v.calls.retain(|_, (k, c)| !(*k == key && *c == LockCall::Lock));
    }

    fn on_message(&mut self, _ctx: &mut Ctx<Hazelcast>, out: &mut LockEvents, _from: NodeId, msg: HazelcastMsg) {
        let HazelcastMsg::Ilock(IlockMsg::Reply { uid, result }) = msg else { return };
        let Some((key, call)) = self.v.calls.remove(&uid) else { return };
        match (call, result) {
            (LockCall::Lock, Ok(())) => {
                *self.v.held.entry(key).or_insert(0) += 1;
                out.push(LockEvent::Granted { key, token: None });
            }
            (LockCall::Lock, Err(_)) => out.push(LockEvent::Failed { key, reason: FailReason::Refused }),
            (LockCall::Unlock, result) => {
                let count = self.v.held.get(&key).copied().unwrap_or(0);
                if count <= 1 {
                    self.v.held.remove(&key);
                } else {
                    self.v.held.insert(key, count - 1);
                }
                out.push(match result {
                    Ok(()) => LockEvent::Released { key },
                    Err(_) => LockEvent::ReleaseFailed { key, reason: FailReason::SessionLost },
                });
            }
        }
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<Hazelcast>, _out: &mut LockEvents, _timer: TimerId, _tag: HazelcastTimer) {}

    fn reentrant(&self) -> bool {
        true
    }
}
