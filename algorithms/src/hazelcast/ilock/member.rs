//! One Hazelcast 3.8 member (`server-i`) serving `ILock`s: its view of the cluster kept by
//! heartbeats, the lock replicas it owns or backs up, the ops it invoked for its clients, and the
//! cleanup of a removed member's clients (see the [module](super) header for the sources).
//!
//! - Every `heartbeat_ns` it heartbeats every member in its view and removes those it has not
//!   heard from for `max_no_heartbeat_ns` (Hazelcast's master removes them and the others
//!   follow; here each member decides from its own silence, which gives each side of a clean cut
//!   the same view). A removed member never returns: the split-brain merge is not modelled.
//! - A client's call goes to the lock's owner in this member's view (itself, or an `Invoke` to
//!   another member); the owner answers the invoking member, which answers the client. When the
//!   target leaves the view, the call is invoked again on the new owner with the same reference
//!   id; a member that does not own the lock in its own view answers `WrongTargetException`
//!   and the call is retried after the retry pause; ops parked on this member for a removed
//!   caller are dropped.
//! - A lock's replica goes to the next member of its partition's replica order in the owner's
//!   view after each change (one backup). A member that becomes owner uses its backup copy, or an
//!   empty lock if it had none.
//! - `endpoint_remove_delay_ns` after removing a member, its clients' locks are released on every
//!   lock this member owns (`ClientDisconnectionOperation` → `releaseLocksOwnedBy`).

use std::collections::{BTreeMap, BTreeSet};

use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::Nanos;

use super::{owner_member_of, replica_order, Applied, IlockConfig, IlockMsg, IlockTimer, LockCall, OwnedLock};
use crate::hazelcast::protocol::{HazelcastMsg, HazelcastTimer};
use crate::hazelcast::Hazelcast;

mod fingerprint;

/// A call this member invoked for one of its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Invoked {
    key: LockKey,
    call: LockCall,
    target: usize,
}

#[derive(Clone, Debug, Default)]
struct Volatile {
    members: Vec<NodeId>,
    clients: Vec<NodeId>,
    view: BTreeSet<usize>,
    last_heard_ns: Vec<Nanos>,
    /// Lock replicas held here (as owner or backup).
    locks: BTreeMap<LockKey, OwnedLock>,
    /// (client, uid) → the call, for this member's clients.
    invoked: BTreeMap<(u32, u64), Invoked>,
    heartbeat: Option<TimerId>,
}

/// One member.
#[derive(Clone, Debug)]
pub struct IlockMember {
    index: usize,
    cfg: IlockConfig,
    v: Volatile,
}

impl IlockMember {
    /// Member `index`.
    pub fn new(index: usize, cfg: IlockConfig) -> Self {
        IlockMember::from_disk((index, cfg))
    }

    /// The lock's owner in this member's view.
    fn owner_of(&self, key: LockKey) -> usize {
        replica_order(key, self.cfg.members).find(|m| self.v.view.contains(m)).unwrap_or(self.index)
    }

    /// The lock's backup in this member's view (the next live member after the owner).
    fn backup_of(&self, key: LockKey) -> Option<usize> {
        replica_order(key, self.cfg.members).filter(|m| self.v.view.contains(m)).nth(1)
    }

    fn member_of(&self, node: NodeId) -> Option<usize> {
        self.v.members.iter().position(|m| *m == node)
    }

    /// Invokes (or re-invokes) a client's call on the lock's owner.
    fn invoke(&mut self, ctx: &mut Ctx<Hazelcast>, client: u32, uid: u64, key: LockKey, call: LockCall) {
        let target = self.owner_of(key);
        self.v.invoked.insert((client, uid), Invoked { key, call, target });
        if target == self.index {
            self.apply(ctx, client, uid, self.index, key, call);
        } else {
            ctx.send(self.v.members[target], IlockMsg::Invoke { client, uid, key, call });
        }
    }

    /// Runs an op on a lock this member owns.
    fn apply(&mut self, ctx: &mut Ctx<Hazelcast>, client: u32, uid: u64, caller: usize, key: LockKey, call: LockCall) {
        let applied = self.v.locks.entry(key).or_default().apply(client, uid, caller, call);
        self.settle(ctx, key, applied);
    }

    /// Sends a change's answers and backup.
    fn settle(&mut self, ctx: &mut Ctx<Hazelcast>, key: LockKey, applied: Applied) {
        if applied.changed {
            if let Some(b) = self.backup_of(key) {
                let replica = self.v.locks[&key].replica;
                ctx.send(self.v.members[b], IlockMsg::Backup { key, replica });
            }
        }
        for (client, uid, caller, result) in applied.answers {
            if caller == self.index {
                self.answered(ctx, client, uid, result);
            } else {
                ctx.send(self.v.members[caller], IlockMsg::Answer { client, uid, result });
            }
        }
    }

    /// An answer to a call this member invoked: pass it to the client.
    fn answered(&mut self, ctx: &mut Ctx<Hazelcast>, client: u32, uid: u64, result: Result<(), super::IlockError>) {
        if self.v.invoked.remove(&(client, uid)).is_some() {
            if let Some(node) = self.v.clients.get(client as usize) {
                ctx.send(*node, IlockMsg::Reply { uid, result });
            }
        }
    }

    fn heartbeat_round(&mut self, ctx: &mut Ctx<Hazelcast>) {
        let now = ctx.now_mono_ns();
        let silent: Vec<usize> = self
            .v
            .view
            .iter()
            .copied()
            .filter(|m| *m != self.index && now.saturating_sub(self.v.last_heard_ns[*m]) > self.cfg.max_no_heartbeat_ns)
            .collect();
        for m in silent {
            self.remove_member(ctx, m);
        }
        for m in self.v.view.iter().copied().filter(|m| *m != self.index).collect::<Vec<_>>() {
            ctx.send(self.v.members[m], IlockMsg::Heartbeat);
        }
        self.v.heartbeat = Some(ctx.set_timer(self.cfg.heartbeat_ns, IlockTimer::Heartbeat));
    }

    fn remove_member(&mut self, ctx: &mut Ctx<Hazelcast>, gone: usize) {
        self.v.view.remove(&gone);
        ctx.note(|| format!("member server-{gone} removed: no heartbeat for the timeout"));
        // Ops parked here by the removed member's invocations have no caller any more.
        for lock in self.v.locks.values_mut() {
            lock.parked.retain(|p| p.caller != gone);
        }
        // Locks whose owner this member now is: say so (a promoted backup, or an empty replica).
        let keys: Vec<LockKey> = self.v.locks.keys().copied().collect();
        for key in keys {
            if self.owner_of(key) == self.index && replica_order(key, self.cfg.members).next() == Some(gone) {
                let holder = self.v.locks[&key].replica.holder;
                ctx.note(|| format!("owner of lock-{key}'s partition now (holder {holder:?})"));
            }
        }
        // Invocations that targeted it go to the new owner (MemberLeftException → retry).
        let retry: Vec<((u32, u64), Invoked)> =
            self.v.invoked.iter().filter(|(_, i)| i.target == gone).map(|(k, i)| (*k, *i)).collect();
        for ((client, uid), i) in retry {
            self.invoke(ctx, client, uid, i.key, i.call);
        }
        ctx.set_timer(self.cfg.endpoint_remove_delay_ns, IlockTimer::EndpointRemoval { member: gone });
    }

    /// `ClientDisconnectionOperation` for every client of the removed member.
    fn release_clients_of(&mut self, ctx: &mut Ctx<Hazelcast>, gone: usize) {
        let clients: Vec<u32> =
            (0..self.cfg.clients as u32).filter(|c| owner_member_of(*c, self.cfg.members) == gone).collect();
        let keys: Vec<LockKey> = self.v.locks.keys().copied().filter(|k| self.owner_of(*k) == self.index).collect();
        for client in clients {
            for &key in &keys {
                let applied = self.v.locks.get_mut(&key).expect("listed").release_client(client);
                if applied.changed {
                    ctx.note(|| format!("client-{client} disconnected (its member left): lock-{key} released"));
                }
                self.settle(ctx, key, applied);
            }
        }
    }
}

impl Durable for IlockMember {
    /// An in-memory data grid: the member keeps its index and configuration, and its replicas go
    /// with it.
    type Disk = (usize, IlockConfig);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.index, self.cfg)
    }
    fn from_disk((index, cfg): Self::Disk) -> Self {
        IlockMember { index, cfg, v: Volatile::default() }
    }
}

impl Process<Hazelcast> for IlockMember {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Hazelcast>) {
        self.v.members = (0..self.cfg.members).filter_map(|i| ctx.node_named(&format!("server-{i}"))).collect();
        self.v.clients = (0..self.cfg.clients).filter_map(|i| ctx.node_named(&format!("client-{i}"))).collect();
        self.v.view = (0..self.cfg.members).collect();
        self.v.last_heard_ns = vec![ctx.now_mono_ns(); self.cfg.members];
        self.v.heartbeat = Some(ctx.set_timer(self.cfg.heartbeat_ns, IlockTimer::Heartbeat));
    }

    fn on_message(&mut self, ctx: &mut Ctx<Hazelcast>, from: NodeId, msg: HazelcastMsg) {
        let HazelcastMsg::Ilock(msg) = msg else { return };
        if let Some(m) = self.member_of(from) {
            if !self.v.view.contains(&m) {
                // A member this one removed: its messages are refused (no merge is modelled).
                return;
            }
            self.v.last_heard_ns[m] = ctx.now_mono_ns();
        }
        match msg {
            IlockMsg::Request { uid, key, call } => {
                let Some(client) = self.v.clients.iter().position(|c| *c == from) else { return };
                self.invoke(ctx, client as u32, uid, key, call);
            }
            IlockMsg::Invoke { client, uid, key, call } => {
                let Some(caller) = self.member_of(from) else { return };
                if self.owner_of(key) == self.index {
                    self.apply(ctx, client, uid, caller, key, call);
                } else {
                    ctx.send(from, IlockMsg::WrongTarget { client, uid });
                }
            }
            IlockMsg::WrongTarget { client, uid } => {
                if self.v.invoked.contains_key(&(client, uid)) {
                    ctx.set_timer(self.cfg.retry_pause_ns, IlockTimer::Retry { client, uid });
                }
            }
            IlockMsg::Answer { client, uid, result } => self.answered(ctx, client, uid, result),
            IlockMsg::Backup { key, replica } => {
                if self.owner_of(key) != self.index {
                    self.v.locks.entry(key).or_default().replica = replica;
                }
            }
            IlockMsg::Heartbeat | IlockMsg::Reply { .. } => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Hazelcast>, timer: TimerId, tag: HazelcastTimer) {
        match tag {
            HazelcastTimer::Ilock(IlockTimer::Heartbeat) if self.v.heartbeat == Some(timer) => {
                self.heartbeat_round(ctx)
            }
            HazelcastTimer::Ilock(IlockTimer::EndpointRemoval { member }) => self.release_clients_of(ctx, member),
            HazelcastTimer::Ilock(IlockTimer::Retry { client, uid }) => {
                if let Some(i) = self.v.invoked.get(&(client, uid)).copied() {
                    self.invoke(ctx, client, uid, i.key, i.call);
                }
            }
            _ => {}
        }
    }
}
