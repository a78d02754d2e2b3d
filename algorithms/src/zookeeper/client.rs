//! The client library: a Curator-like lock client over the [`Connection`], running one of the
//! three recipes per lock key as a state machine (the steps a Curator thread runs blocking).
//!
//! `sequential` and `read_write` (Curator `LockInternals.attemptLock` / `internalLockLoop`):
//! create `/locks/<key>/_c_<protection>-lock-` (or `__READ__` / `__WRIT__`) EPHEMERAL_SEQUENTIAL;
//! list the children; hold the lock, or `getData` the node to wait for with a watch and wait for
//! it to fire (a NoNode answer means it is already gone: list again); any watch firing means
//! list again. A create whose answer was lost to a connection loss is retried after first
//! looking for a child carrying our protection id (Curator's protected mode). Our node missing
//! from a listing (its session expired) restarts from the create while the retry policy allows
//! (`attemptLock`'s `NoNodeException` branch). Operations that fail for want of a connection are
//! retried with the configured [`RetryPolicy`]; when it is exhausted the acquisition fails and our node is
//! deleted. Release deletes our node (`delete().guaranteed()`: retried in the background until
//! it succeeds or the node is gone). Reentrant: a nested acquisition only counts (Curator's
//! per-thread `LockData.lockCount`); the fencing token is our node's czxid (from `create2`'s
//! stat, or a `getData` after a protected-mode recovery).
//!
//! `naive` (the ZooKeeper paper's "simple lock"): create `/naive/<key>` EPHEMERAL; if it exists,
//! `exists` it with a watch and try again when the watch fires, so every release wakes every
//! waiter. Not reentrant. The path is shared by every client, so two things the paper leaves to
//! the implementer are done carefully: a create whose answer was lost is simply retried, and
//! when that finds the node taken, the stat the `exists` returns shows whether the node is our
//! own (its ephemeral owner is our session): then we hold the lock; and a release whose answer
//! was lost is retried only after reading the node and finding it is still ours (same czxid), so
//! a retry never deletes the next holder's node.
//!
//! Connection states (Curator): at SUSPENDED every held lock is reported lost, and the
//! application honours it when `on_connection_loss = "suspended"`; at LOST it is reported again
//! and honoured under either policy. An honoured notice stops a section still working. The
//! application also checks just before it writes ([`LockClient::check_before_write`]): its
//! `ConnectionStateListener` sets a flag at a state it honours, and the write goes out only if
//! the flag is clear since the grant. Before the flag is read the connection looks at its own
//! clock ([`Connection::catch_up`]): after a pause the overdue hold ends first, and without
//! this the check would read a flag the listener had no chance to set; with it, a holder
//! paused past its read timeout sees SUSPENDED at its check. Only a pause between the check and
//! the write (`check_to_write_ms`) defeats it. That is `state_delivery = "sync"`, the model before
//! presets. With `"threads"` (Curator 5.4: SendThread → EventThread → `ConnectionStateManager`'s
//! own thread, `ConnectionStateManager.java:116, 256, 263-281`) every connection state reaches
//! the listener `state_delivery_ms` after the connection noticed it, in order, SUSPENDED also
//! after the ZooKeeper client's cleanup sleep (`ClientCnxnSocketNIO.cleanup()`'s
//! `Thread.sleep(100)`, before `Disconnected` is queued). After a pause the application thread
//! and the SendThread resume together and race ([`ZkClient::race_to_the_check`]): the SendThread
//! notices the overdue read timeout at once, the application thread reaches its check
//! `resume_to_check_ms` after the resume and sees what the listener got by then. With Curator's
//! figures a thread whose hold ended inside the pause checks and writes long before SUSPENDED
//! arrives; one whose hold ends more than the delivery after the resume sees it first.
//!
//! Release (`release`): `fail_fast`, the model before presets, reports `ReleaseFailed` at the
//! first failed delete and leaves the delete to the background; `retry_loop` (Curator 5.4
//! `DeleteBuilderImpl.java:297-353`, kazoo `recipe/lock.py:329-341`) retries the delete under the
//! retry policy (connection loss and session expiry alike: `RetryPolicy.java:47-58`; a delete on a
//! new session that finds the node gone is a release, as `LockInternals.deleteOurPath` ignores
//! `NoNodeException`) and reports `ReleaseFailed` only when the policy gives up.
//!
//! Waiters are woken by the `Disconnected` state event (every ZooKeeper watcher gets it) and list
//! the children again once connected; only watch events on nodes count as notifications.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::smallmap::SmallMap;

use rand::Rng;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_MS};

use crate::notice_race::NoticeRace;

use super::connection::{CallError, ConnEvent, Connection, Tag};
use super::protocol::{
    ChildName, ClientTimer, CreateSpec, ErrCode, LockName, Op, Outcome, ZPath, ZkMsg, ZkTimer, Zxid,
};
use super::recipe::{decide, RetryPolicy, Verdict};
use super::ZooKeeper;

mod fingerprint;

/// Which lock recipe the clients run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recipe {
    /// Curator's InterProcessMutex: ephemeral sequential children, each waiter watching the one
    /// before it.
    Sequential,
    /// The ZooKeeper paper's simple lock: one ephemeral `/naive/<key>`, every waiter watching it.
    Naive,
    /// Curator's InterProcessReadWriteLock: shared acquisitions read, exclusive ones write.
    ReadWrite,
}

/// When the application stops treating a lock as held after the connection goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossPolicy {
    /// At SUSPENDED: the connection is lost.
    Suspended,
    /// Only at LOST: the session is gone.
    Lost,
}

/// How a connection state reaches the application's `ConnectionStateListener` (`state_delivery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateDelivery {
    /// At once, and the check before a write runs the connection's clock first (the model
    /// before presets; kazoo's listeners run on the connection thread itself).
    Sync,
    /// Through other threads, `state_delivery_ms` after the connection noticed (Curator).
    Threads,
}

/// What a release does when its delete fails (`release`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseMode {
    /// `ReleaseFailed` at the first failure; the delete goes on in the background.
    FailFast,
    /// Retried under the retry policy; `ReleaseFailed` (and the background delete) only when it
    /// gives up.
    RetryLoop,
}

/// The lock client's settings (from the model's parameters).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The ensemble's server names.
    pub servers: Vec<String>,
    /// The session timeout the client asks for (`session_timeout_ms`).
    pub session_timeout_ms: u64,
    /// Which lock recipe it runs (`recipe`).
    pub recipe: Recipe,
    /// When the application stops treating a lock as held (`on_connection_loss`).
    pub policy: LossPolicy,
    /// The retry policy (`retry_policy`, `retry_base_sleep_ms`, `retry_max_retries`).
    pub retry: RetryPolicy,
    /// How long an operation waits for a connection (`connection_timeout_ms`).
    pub connection_timeout_ms: u64,
    /// How connection states reach the application (`state_delivery`).
    pub state_delivery: StateDelivery,
    /// `StateDelivery::Threads`: the delay from the connection noticing a state to the listener
    /// (`state_delivery_ms`, less [`ClientConfig::cleanup_sleep_ms`]) and, after a pause that
    /// outlived the read timeout, the resumed application thread's time to its check before a
    /// write (`resume_to_check_ms`): the race shared with etcd's clientv3 ([`NoticeRace`]).
    pub race: NoticeRace,
    /// Who carries the states to the listener, for the trace's notes (`curator`, `kazoo`).
    pub notice_path: &'static str,
    /// The ZooKeeper Java client's sleep in `ClientCnxnSocketNIO.cleanup()` after a lost
    /// connection, before `Disconnected` is queued and the next connect is tried (100 ms under
    /// `curator-5.4`, 0 otherwise: the model before presets and kazoo have none).
    pub cleanup_sleep_ms: u64,
    /// What a failed release does (`release`).
    pub release: ReleaseMode,
    /// Whether a nested acquisition only counts (Curator) or is not offered (kazoo).
    pub reentrant: bool,
}

/// The step a key's state machine is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The create is out (or queued for a connection).
    Create,
    /// After a failed create: looking for a child with our protection id.
    Recover,
    /// `getChildren` is out.
    List,
    /// `getData(pred, watch)` is out; `fired` if the watch already went off.
    SetWatch {
        pred: ZPath,
        fired: bool,
    },
    /// The watch is set: waiting for it to fire.
    Wait {
        pred: ZPath,
    },
    /// We hold it but do not know our czxid yet (recovered node): `getData` on our own node.
    StatOwn,
    /// Backing off before redoing `then`.
    Sleep {
        then: Redo,
    },
    /// naive: `exists(path, watch)` is out; `fired` if the watch already went off.
    NaiveExists {
        fired: bool,
    },
    /// naive: the watch is set.
    NaiveWait,
    Held,
    /// The delete of our node is out.
    Release,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Redo {
    Create,
    Recover,
    List,
    StatOwn,
    Release,
}

#[derive(Clone, Debug)]
struct KeyState {
    name: LockName,
    step: Step,
    /// Generation of the current operation or timer; older answers are stale.
    gen: u64,
    /// Curator `RetryLoop` count for the current operation.
    op_retries: u32,
    /// `attemptLock`'s count of restarts after our node vanished.
    lock_retries: u32,
    protection: u32,
    /// Our node and its czxid once known.
    ours: Option<(ZPath, Option<Zxid>)>,
    /// Nested holds (Curator `lockCount`).
    count: u32,
    /// A lost notice honoured by the application already went out for this hold: the flag the
    /// application's `ConnectionStateListener` sets and its check before a write reads.
    honoured: bool,
}

/// What an operation's answer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Lock {
        key: LockKey,
        gen: u64,
    },
    /// `delete().guaranteed()` carrying on after the caller moved on.
    Delete(ZPath),
    /// Curator's `FindAndDeleteProtectedNodeInBackground`: an abandoned protected create.
    FindAndDelete {
        key: LockKey,
        protection: u32,
        name: LockName,
    },
    /// naive: the node's path is shared, so a delete whose answer was lost is retried only
    /// after reading the node and finding it is still ours (same czxid).
    CheckOwner {
        path: ZPath,
        czxid: Zxid,
    },
    /// naive: the delete that follows a successful check.
    CheckedDelete {
        path: ZPath,
        czxid: Zxid,
    },
}

/// The ZooKeeper lock client of one client node.
#[derive(Clone, Debug)]
pub struct ZkClient {
    cfg: ClientConfig,
    /// Everything else: a client library keeps nothing across a crash.
    v: Volatile,
    /// A scratch buffer for the connection's events of one call, empty between calls (so a
    /// crash has nothing to clear): a new one per message was an allocation per message.
    conn_events: Vec<ConnEvent>,
    /// Numbers the connection states handed to the listener thread (`StateDelivery::Threads`);
    /// kept across a crash so a timer set before it never matches a state queued after it.
    next_delivery: u64,
}

/// The library's state, all of it lost in a crash.
#[derive(Clone, Debug)]
struct Volatile {
    conn: Connection,
    keys: BTreeMap<LockKey, KeyState>,
    purposes: SmallMap<u64, Purpose>,
    /// naive: czxids of our own nodes a background delete is removing (never to be adopted).
    doomed: BTreeSet<Zxid>,
    next_tag: u64,
    next_gen: u64,
    /// `StateDelivery::Threads`: states on their way to the listener, in order.
    deliveries: VecDeque<Delivery>,
    /// When the last queued state reaches the listener (one thread: no state overtakes another).
    last_delivery_ns: Nanos,
}

/// A connection state on its way to the application's listener (`StateDelivery::Threads`).
#[derive(Clone, Debug)]
struct Delivery {
    /// Its number (the timer that delivers it carries the same).
    seq: u64,
    state: ConnEvent,
    /// When the listener gets it.
    at_ns: Nanos,
    timer: TimerId,
}

impl Volatile {
    fn new(cfg: &ClientConfig) -> Self {
        Volatile {
            conn: Connection::new(cfg.servers.clone(), cfg.session_timeout_ms, cfg.connection_timeout_ms)
                .with_cleanup_sleep_ms(cfg.cleanup_sleep_ms),
            keys: BTreeMap::new(),
            purposes: SmallMap::new(),
            doomed: BTreeSet::new(),
            next_tag: 0,
            next_gen: 0,
            deliveries: VecDeque::new(),
            last_delivery_ns: 0,
        }
    }
}

impl ZkClient {
    /// A lock client; it connects when it starts.
    pub fn new(cfg: ClientConfig) -> Self {
        ZkClient::from_disk((cfg, 0))
    }

    fn call(&mut self, ctx: &mut Ctx<ZooKeeper>, purpose: Purpose, op: Op) {
        let tag = self.v.next_tag;
        self.v.next_tag += 1;
        self.v.purposes.insert(tag, purpose);
        self.v.conn.call(ctx, Tag(tag), op);
    }

    /// Deletes our node behind the caller's back (`delete().guaranteed()`); the naive recipe's
    /// shared path is checked first, so a retry never deletes the next holder's node.
    fn delete_in_background(&mut self, ctx: &mut Ctx<ZooKeeper>, path: ZPath, czxid: Option<Zxid>) {
        match (path, czxid) {
            (ZPath::Naive { .. }, Some(czxid)) => {
                self.v.doomed.insert(czxid);
                self.call(ctx, Purpose::CheckOwner { path, czxid }, Op::Exists { path, watch: false })
            }
            _ => self.call(ctx, Purpose::Delete(path), Op::Delete(path)),
        }
    }

    fn fresh_gen(&mut self) -> u64 {
        self.v.next_gen += 1;
        self.v.next_gen
    }

    /// Moves `key` to `step` and issues the operation that step waits on.
    fn go(&mut self, ctx: &mut Ctx<ZooKeeper>, key: LockKey, step: Step) {
        let gen = self.fresh_gen();
        let Some(st) = self.v.keys.get_mut(&key) else { return };
        st.step = step;
        st.gen = gen;
        let our_path = st.ours.map(|(p, _)| p);
        let op = match step {
            Step::Create => Some(Op::Create(match self.cfg.recipe {
                Recipe::Naive => CreateSpec::Naive { key },
                _ => CreateSpec::Sequential { key, protection: st.protection, name: st.name },
            })),
            Step::Recover | Step::List => Some(Op::GetChildren(key)),
            Step::SetWatch { pred, .. } => Some(Op::GetData { path: pred, watch: true }),
            Step::StatOwn => our_path.map(|path| Op::GetData { path, watch: false }),
            Step::NaiveExists { .. } => Some(Op::Exists { path: ZPath::Naive { key }, watch: true }),
            Step::Release => our_path.map(Op::Delete),
            Step::Wait { .. } | Step::NaiveWait | Step::Held | Step::Sleep { .. } => None,
        };
        if let Some(op) = op {
            self.call(ctx, Purpose::Lock { key, gen }, op);
        }
    }

    fn step_of(redo: Redo) -> Step {
        match redo {
            Redo::Create => Step::Create,
            Redo::Recover => Step::Recover,
            Redo::List => Step::List,
            Redo::StatOwn => Step::StatOwn,
            Redo::Release => Step::Release,
        }
    }

    /// Back off per the retry policy and redo, or give up.
    fn retry_or_fail(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey, redo: Redo) {
        let Some(st) = self.v.keys.get(&key) else { return };
        let n = st.op_retries;
        match self.cfg.retry.sleep_ms(n, ctx.rng()) {
            Some(ms) => {
                let gen = self.fresh_gen();
                let st = self.v.keys.get_mut(&key).expect("checked");
                st.op_retries += 1;
                st.step = Step::Sleep { then: redo };
                st.gen = gen;
                ctx.note(|| format!("curator: retry {} of {redo:?} on lock {key} in {ms} ms", n + 1));
                ctx.set_timer(ms * NS_PER_MS, ClientTimer::Backoff { key, gen });
            }
            None => {
                self.abandon_attempt(ctx, key);
                out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
            }
        }
    }

    /// Forget an acquisition that will not complete, cleaning up what it left on the servers.
    fn abandon_attempt(&mut self, ctx: &mut Ctx<ZooKeeper>, key: LockKey) {
        let Some(st) = self.v.keys.remove(&key) else { return };
        match st.ours {
            Some((path, czxid)) => self.delete_in_background(ctx, path, czxid),
            None if self.cfg.recipe != Recipe::Naive
                && matches!(st.step, Step::Create | Step::Recover | Step::Sleep { .. }) =>
            {
                let p = Purpose::FindAndDelete { key, protection: st.protection, name: st.name };
                self.call(ctx, p, Op::GetChildren(key));
            }
            None => {}
        }
    }

    fn grant(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey, token: Zxid) {
        let Some(st) = self.v.keys.get_mut(&key) else { return };
        st.step = Step::Held;
        st.count = 1;
        st.honoured = false;
        st.op_retries = 0;
        ctx.note(|| format!("lock {key}: granted, czxid {token:x}"));
        out.push(LockEvent::Granted { key, token: Some(token) });
    }

    fn on_reply(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, purpose: Purpose, outcome: Outcome) {
        let (key, gen) = match purpose {
            Purpose::Lock { key, gen } => (key, gen),
            Purpose::Delete(_) => return,
            Purpose::CheckedDelete { czxid, .. } => {
                self.v.doomed.remove(&czxid);
                return;
            }
            Purpose::CheckOwner { path, czxid } => {
                match outcome {
                    Outcome::Stat(Some(stat)) if stat.czxid == czxid => {
                        self.call(ctx, Purpose::CheckedDelete { path, czxid }, Op::Delete(path))
                    }
                    _ => {
                        self.v.doomed.remove(&czxid);
                    }
                }
                return;
            }
            Purpose::FindAndDelete { key, protection, name } => {
                if let Outcome::Children(kids) = outcome {
                    if let Some(c) = kids.iter().find(|c| c.protection == protection && c.name == name) {
                        let path = ZPath::Child { key, child: *c };
                        self.call(ctx, Purpose::Delete(path), Op::Delete(path));
                    }
                }
                return;
            }
        };
        let current = self.v.keys.get(&key).map(|s| s.gen) == Some(gen);
        if !current {
            // An answer for an acquisition given up on: a node it created must not linger.
            if let Outcome::Created { path, czxid } = outcome {
                self.delete_in_background(ctx, path, Some(czxid));
            }
            return;
        }
        let st = self.v.keys.get_mut(&key).expect("current");
        st.op_retries = 0;
        let step = st.step;
        match (step, outcome) {
            (Step::Create, Outcome::Created { path, czxid }) => {
                st.ours = Some((path, Some(czxid)));
                if self.cfg.recipe == Recipe::Naive {
                    self.grant(ctx, out, key, czxid);
                } else {
                    self.go(ctx, key, Step::List);
                }
            }
            (Step::Create, Outcome::Err(ErrCode::NodeExists)) => {
                // naive: someone holds it. Watch the node and try again when it goes.
                out.push(LockEvent::Refused { key });
                self.go(ctx, key, Step::NaiveExists { fired: false });
            }
            (Step::Recover, Outcome::Children(kids)) => {
                let (protection, name) = (st.protection, st.name);
                match kids.iter().find(|c| c.protection == protection && c.name == name) {
                    Some(c) => {
                        st.ours = Some((ZPath::Child { key, child: *c }, None));
                        ctx.note(|| format!("lock {key}: found our protected node {c:?}"));
                        self.go(ctx, key, Step::List);
                    }
                    None => self.go(ctx, key, Step::Create),
                }
            }
            (Step::List, Outcome::Children(kids)) => self.on_children(ctx, out, key, &kids),
            (Step::SetWatch { pred, fired }, Outcome::Stat(Some(_))) => {
                if fired {
                    self.go(ctx, key, Step::List);
                } else {
                    st.step = Step::Wait { pred };
                }
            }
            (Step::SetWatch { .. }, Outcome::Err(ErrCode::NoNode)) => self.go(ctx, key, Step::List),
            (Step::StatOwn, Outcome::Stat(Some(stat))) => {
                if let Some((_, z)) = st.ours.as_mut() {
                    *z = Some(stat.czxid);
                }
                self.grant(ctx, out, key, stat.czxid);
            }
            (Step::StatOwn, Outcome::Err(ErrCode::NoNode)) => self.node_vanished(ctx, out, key),
            (Step::NaiveExists { fired }, Outcome::Stat(found)) => {
                let session = self.v.conn.session();
                if let Some(stat) = found.filter(|s| s.owner == session && !self.v.doomed.contains(&s.czxid)) {
                    // Our own node: a create whose answer was lost went through. Reading the
                    // node (as the paper's recipe does) shows it is ours, so we hold the lock.
                    st.ours = Some((ZPath::Naive { key }, Some(stat.czxid)));
                    ctx.note(|| format!("lock {key}: the lock node is our own"));
                    self.grant(ctx, out, key, stat.czxid);
                } else if fired || found.is_none() {
                    self.go(ctx, key, Step::Create);
                } else {
                    st.step = Step::NaiveWait;
                }
            }
            (Step::Release, Outcome::Deleted | Outcome::Err(ErrCode::NoNode)) => {
                self.v.keys.remove(&key);
                out.push(LockEvent::Released { key });
            }
            (step, outcome) => {
                ctx.note(|| format!("lock {key}: unexpected {outcome:?} at {step:?}"));
            }
        }
    }

    fn on_children(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey, kids: &[ChildName]) {
        let st = self.v.keys.get(&key).expect("current");
        let Some((ZPath::Child { child: ours, .. }, czxid)) = st.ours else {
            return self.node_vanished(ctx, out, key);
        };
        match decide(kids, ours) {
            Verdict::Holds => match czxid {
                Some(z) => self.grant(ctx, out, key, z),
                None => self.go(ctx, key, Step::StatOwn),
            },
            Verdict::Watch(pred) => {
                self.go(ctx, key, Step::SetWatch { pred: ZPath::Child { key, child: pred }, fired: false })
            }
            Verdict::Missing => self.node_vanished(ctx, out, key),
        }
    }

    /// Our node is gone before we got the lock (its session expired): `attemptLock` starts
    /// over with a new node while the retry policy allows.
    fn node_vanished(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey) {
        let Some(st) = self.v.keys.get(&key) else { return };
        let n = st.lock_retries;
        match self.cfg.retry.sleep_ms(n, ctx.rng()) {
            Some(ms) => {
                let protection = ctx.rng().gen();
                let gen = self.fresh_gen();
                let st = self.v.keys.get_mut(&key).expect("checked");
                st.lock_retries += 1;
                st.ours = None;
                st.protection = protection;
                st.step = Step::Sleep { then: Redo::Create };
                st.gen = gen;
                ctx.note(|| format!("lock {key}: our node is gone, starting over in {ms} ms"));
                ctx.set_timer(ms * NS_PER_MS, ClientTimer::Backoff { key, gen });
            }
            None => {
                self.v.keys.remove(&key);
                out.push(LockEvent::Failed { key, reason: FailReason::SessionLost });
            }
        }
    }

    fn on_failed(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, purpose: Purpose, err: CallError) {
        let (key, gen) = match purpose {
            Purpose::Lock { key, gen } => (key, gen),
            // Guaranteed background work retries until it gets an answer.
            Purpose::Delete(path) => return self.call(ctx, purpose, Op::Delete(path)),
            Purpose::FindAndDelete { key, .. } => return self.call(ctx, purpose, Op::GetChildren(key)),
            Purpose::CheckOwner { path, czxid } | Purpose::CheckedDelete { path, czxid } => {
                return self.delete_in_background(ctx, path, Some(czxid))
            }
        };
        if self.v.keys.get(&key).map(|s| s.gen) != Some(gen) {
            return;
        }
        let step = self.v.keys[&key].step;
        ctx.note(|| format!("lock {key}: {step:?} failed: {err:?}"));
        match step {
            // Protected mode: before creating again, look for the node the lost create made.
            Step::Create if self.cfg.recipe != Recipe::Naive => self.retry_or_fail(ctx, out, key, Redo::Recover),
            Step::Create | Step::NaiveExists { .. } => self.retry_or_fail(ctx, out, key, Redo::Create),
            Step::Recover => self.retry_or_fail(ctx, out, key, Redo::Recover),
            Step::List | Step::SetWatch { .. } => self.retry_or_fail(ctx, out, key, Redo::List),
            Step::StatOwn => self.retry_or_fail(ctx, out, key, Redo::StatOwn),
            Step::Release if self.cfg.release == ReleaseMode::RetryLoop => self.retry_release(ctx, out, key, err),
            Step::Release => {
                // release() throws (`DeleteBuilderImpl.forPath` hands a retryable failure of a
                // guaranteed delete to the `FailedDeleteManager`, then rethrows it) and the
                // delete goes on in the background until it gets an answer (a new session may
                // delete the node too).
                let reason = match err {
                    CallError::SessionExpired => FailReason::SessionLost,
                    CallError::ConnectionLoss => FailReason::Unavailable,
                };
                out.push(LockEvent::ReleaseFailed { key, reason });
                if let Some((path, czxid)) = self.v.keys.remove(&key).and_then(|s| s.ours) {
                    self.delete_in_background(ctx, path, czxid);
                }
            }
            Step::Wait { .. } | Step::NaiveWait | Step::Held | Step::Sleep { .. } => {}
        }
    }

    /// `release = "retry_loop"`: the failed delete is tried again after the retry policy's sleep
    /// (`RetryLoopImpl`); when the policy gives up, release() throws and the delete goes on in the
    /// background (`DeleteBuilderImpl.java:345-353`), as under `fail_fast`.
    fn retry_release(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey, err: CallError) {
        let Some(st) = self.v.keys.get(&key) else { return };
        let n = st.op_retries;
        match self.cfg.retry.sleep_ms(n, ctx.rng()) {
            Some(ms) => {
                let gen = self.fresh_gen();
                let st = self.v.keys.get_mut(&key).expect("checked");
                st.op_retries += 1;
                st.step = Step::Sleep { then: Redo::Release };
                st.gen = gen;
                ctx.note(|| format!("curator: retry {} of the release of lock {key} in {ms} ms", n + 1));
                ctx.set_timer(ms * NS_PER_MS, ClientTimer::Backoff { key, gen });
            }
            None => {
                let reason = match err {
                    CallError::SessionExpired => FailReason::SessionLost,
                    CallError::ConnectionLoss => FailReason::Unavailable,
                };
                out.push(LockEvent::ReleaseFailed { key, reason });
                if let Some((path, czxid)) = self.v.keys.remove(&key).and_then(|s| s.ours) {
                    self.delete_in_background(ctx, path, czxid);
                }
            }
        }
    }

    fn on_watch(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, path: ZPath) {
        let key = path.key();
        let Some(st) = self.v.keys.get_mut(&key) else { return };
        match st.step {
            Step::Wait { pred } if pred == path => {
                out.push(LockEvent::Notified { key });
                self.go(ctx, key, Step::List);
            }
            Step::SetWatch { pred, fired: false } if pred == path => {
                out.push(LockEvent::Notified { key });
                st.step = Step::SetWatch { pred, fired: true };
            }
            Step::NaiveWait if path == (ZPath::Naive { key }) => {
                out.push(LockEvent::Notified { key });
                self.go(ctx, key, Step::Create);
            }
            Step::NaiveExists { fired: false } if path == (ZPath::Naive { key }) => {
                out.push(LockEvent::Notified { key });
                st.step = Step::NaiveExists { fired: true };
            }
            _ => {}
        }
    }

    /// Runs `call` on the connection and handles the events it gives, in order.
    fn with_conn(
        &mut self,
        ctx: &mut Ctx<ZooKeeper>,
        out: &mut LockEvents,
        call: impl FnOnce(&mut Connection, &mut Ctx<ZooKeeper>, &mut Vec<ConnEvent>),
    ) {
        let mut events = std::mem::take(&mut self.conn_events);
        call(&mut self.v.conn, ctx, &mut events);
        self.on_conn_events(ctx, out, &mut events);
        self.conn_events = events;
    }

    /// Handles (and empties) `events`.
    fn on_conn_events(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, events: &mut Vec<ConnEvent>) {
        for e in events.drain(..) {
            match e {
                ConnEvent::Reply { tag, outcome } => {
                    if let Some(p) = self.v.purposes.remove(&tag.0) {
                        self.on_reply(ctx, out, p, outcome);
                    }
                }
                ConnEvent::Failed { tag, err } => {
                    if let Some(p) = self.v.purposes.remove(&tag.0) {
                        self.on_failed(ctx, out, p, err);
                    }
                }
                ConnEvent::Watch(w) => self.on_watch(ctx, out, w.path),
                ConnEvent::Disconnected => {
                    // Every watcher gets the Disconnected event: Curator's waiting thread wakes
                    // and lists again (the listing waits for a connection).
                    let waiting: Vec<LockKey> = self
                        .v
                        .keys
                        .iter()
                        .filter(|(_, s)| matches!(s.step, Step::Wait { .. } | Step::NaiveWait))
                        .map(|(k, _)| *k)
                        .collect();
                    for key in waiting {
                        let next = if self.cfg.recipe == Recipe::Naive { Step::Create } else { Step::List };
                        self.go(ctx, key, next);
                    }
                }
                ConnEvent::Suspended | ConnEvent::Lost if self.cfg.state_delivery == StateDelivery::Threads => {
                    self.hand_to_listener(ctx, e)
                }
                ConnEvent::Suspended => self.report_loss(ctx, out, self.cfg.policy == LossPolicy::Suspended),
                ConnEvent::Lost => self.report_loss(ctx, out, true),
                ConnEvent::Connected { .. } => {}
            }
        }
    }

    /// `StateDelivery::Threads`: the state reaches the listener after the hops (EventThread, then
    /// `ConnectionStateManager`'s thread), never before a state queued earlier. SUSPENDED comes
    /// from `Disconnected`, which the SendThread queues only after `ClientCnxnSocketNIO.cleanup()`
    /// has slept (`cleanAndNotifyState`, `ClientCnxn.java:1328-1331 @release-3.7.1`;
    /// `Thread.sleep(100)`, `ClientCnxnSocketNIO.java:213-217`); LOST comes from `Expired` (queued
    /// at once, `ClientCnxn.java:1425`) or from `ConnectionStateManager`'s own thread.
    fn hand_to_listener(&mut self, ctx: &mut Ctx<ZooKeeper>, state: ConnEvent) {
        let sleep_ns = if state == ConnEvent::Suspended { self.cfg.cleanup_sleep_ms * NS_PER_MS } else { 0 };
        let hops_ns = self.cfg.race.delivery_ns(ctx.rng());
        let now = ctx.now_mono_ns();
        let at_ns = (now + sleep_ns + hops_ns).max(self.v.last_delivery_ns);
        self.v.last_delivery_ns = at_ns;
        let seq = self.next_delivery;
        self.next_delivery += 1;
        let path = self.cfg.notice_path;
        ctx.note(|| {
            format!(
                "{path}: {state:?} queued for the listener thread, in {} ms ({} ms cleanup sleep, {} ms hops)",
                (at_ns - now) as f64 / 1e6,
                sleep_ns / NS_PER_MS,
                hops_ns as f64 / 1e6
            )
        });
        let timer = ctx.set_timer(at_ns - now, ClientTimer::StateDelivery { seq });
        self.v.deliveries.push_back(Delivery { seq, state, at_ns, timer });
    }

    /// The state numbered `seq` reaches the listener (if it is the next one).
    fn deliver_state(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, seq: u64) {
        if self.v.deliveries.front().map(|d| d.seq) != Some(seq) {
            return;
        }
        let Some(d) = self.v.deliveries.pop_front() else { return };
        let path = self.cfg.notice_path;
        ctx.note(|| format!("{path}: listener gets {:?}", d.state));
        match d.state {
            ConnEvent::Suspended => self.report_loss(ctx, out, self.cfg.policy == LossPolicy::Suspended),
            ConnEvent::Lost => self.report_loss(ctx, out, true),
            _ => {}
        }
    }

    /// `StateDelivery::Threads`, the check before a write: the application thread and the
    /// threads that carry connection states to its listener race. In a running process each runs
    /// at its own time (its timer), so nothing is to decide. After a pause they resume together,
    /// each with work overdue: then the ZooKeeper SendThread, whose read timeout passed during
    /// the pause, notices now (its `to <= 0` check or the end of stream, `ClientCnxn.java:1240-1251`)
    /// and SUSPENDED is queued for the listener (cleanup sleep, then the hops); the application
    /// thread reaches its check `resume_to_check_ms` after the resume (its timed wait returning,
    /// the resource's buffered answer read). Every state that reaches the listener by then is
    /// seen. The model makes the check at the resume instant and delivers those states first
    /// (time within the draw is not spent: the write, if any, leaves at the resume).
    fn race_to_the_check(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents) {
        let now = ctx.now_mono_ns();
        let send_thread_overdue = self.v.conn.read_timeout_overdue(now);
        let delivery_overdue = self.v.deliveries.front().is_some_and(|d| d.at_ns < now);
        let Some(check) = self.cfg.race.check_after_resume(ctx.rng(), now, send_thread_overdue, delivery_overdue)
        else {
            return;
        };
        if send_thread_overdue {
            self.with_conn(ctx, out, |conn, ctx, ev| conn.catch_up(ctx, ev));
        }
        let path = self.cfg.notice_path;
        ctx.note(|| {
            format!("{path}: resumed: the application thread reaches its check in {} ms", check.app_ns as f64 / 1e6)
        });
        while let Some(d) = self.v.deliveries.front() {
            if !check.sees(d.at_ns) {
                ctx.note(|| {
                    format!(
                        "{path}: {:?} reaches the listener {} ms after the check",
                        d.state,
                        (d.at_ns - check.at_ns) as f64 / 1e6
                    )
                });
                break;
            }
            let (seq, timer) = (d.seq, d.timer);
            ctx.cancel_timer(timer);
            self.deliver_state(ctx, out, seq);
        }
    }

    /// Tell the application about every held lock; `honour` makes it stop.
    fn report_loss(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, honour: bool) {
        for (key, st) in self.v.keys.iter_mut() {
            if st.step == Step::Held && !st.honoured {
                st.honoured = honour;
                let key = *key;
                ctx.note(|| format!("lock {key}: reported lost (honour {honour})"));
                out.push(LockEvent::Lost { key, honour });
            }
        }
    }
}

impl Durable for ZkClient {
    /// The configuration, and the number of the next state handed to the listener thread.
    type Disk = (ClientConfig, u64);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.next_delivery)
    }
    fn from_disk((cfg, next_delivery): Self::Disk) -> Self {
        ZkClient { v: Volatile::new(&cfg), cfg, conn_events: Vec::new(), next_delivery }
    }
}

impl LockClient<ZooKeeper> for ZkClient {
    fn on_start(&mut self, ctx: &mut Ctx<ZooKeeper>, _out: &mut LockEvents) {
        self.v.conn.start(ctx);
    }

    fn acquire(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey, mode: LockMode) {
        let reentrant = self.reentrant();
        if let Some(st) = self.v.keys.get_mut(&key) {
            if st.step == Step::Held && reentrant {
                // Reentrant: Curator counts, no new node.
                st.count += 1;
                let token = st.ours.and_then(|(_, z)| z);
                out.push(LockEvent::Granted { key, token });
                return;
            }
            // A leftover (a release still retrying): forget it, cleaning up behind it.
            self.abandon_attempt(ctx, key);
        }
        let name = match (self.cfg.recipe, mode) {
            (Recipe::ReadWrite, LockMode::Shared) => LockName::Read,
            (Recipe::ReadWrite, LockMode::Exclusive) => LockName::Write,
            _ => LockName::Lock,
        };
        let protection = ctx.rng().gen();
        self.v.keys.insert(
            key,
            KeyState {
                name,
                step: Step::Create,
                gen: 0,
                op_retries: 0,
                lock_retries: 0,
                protection,
                ours: None,
                count: 0,
                honoured: false,
            },
        );
        self.go(ctx, key, Step::Create);
    }

    fn release(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey) {
        let Some(st) = self.v.keys.get_mut(&key) else {
            out.push(LockEvent::Released { key });
            return;
        };
        if st.step == Step::Held && st.count > 1 {
            st.count -= 1;
            out.push(LockEvent::Released { key });
            return;
        }
        if st.ours.is_none() {
            self.v.keys.remove(&key);
            out.push(LockEvent::Released { key });
            return;
        }
        st.op_retries = 0;
        self.go(ctx, key, Step::Release);
    }

    fn cancel(&mut self, ctx: &mut Ctx<ZooKeeper>, _out: &mut LockEvents, key: LockKey) {
        // Curator's acquire(time) timing out: delete our node (doDelete), or find the protected
        // node a pending create may have made.
        self.abandon_attempt(ctx, key);
    }

    fn on_message(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, from: NodeId, msg: ZkMsg) {
        self.with_conn(ctx, out, |conn, ctx, ev| conn.on_message(ctx, from, msg, ev));
    }

    fn on_reset(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, peer: NodeId) {
        self.with_conn(ctx, out, |conn, ctx, ev| conn.on_reset(ctx, peer, ev));
    }

    fn on_timer(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, _timer: TimerId, tag: ZkTimer) {
        let ZkTimer::Client(timer) = tag else { return };
        match timer {
            ClientTimer::Connection(t) => {
                self.with_conn(ctx, out, |conn, ctx, ev| conn.on_timer(ctx, t, ev));
            }
            ClientTimer::Backoff { key, gen } => {
                let Some(st) = self.v.keys.get(&key) else { return };
                // A back-off of an earlier step (or attempt) of this key: nothing to do.
                if st.gen != gen {
                    return;
                }
                if let Step::Sleep { then } = st.step {
                    self.go(ctx, key, Self::step_of(then));
                }
            }
            ClientTimer::StateDelivery { seq } => self.deliver_state(ctx, out, seq),
        }
    }

    /// Did the application see a state its policy honours (SUSPENDED under `suspended`, LOST
    /// under either) since the grant? Then it does not write.
    /// Under `StateDelivery::Threads` the application's thread does not run the connection's
    /// clock: it reads the flag as the listener left it by the time the thread gets there
    /// ([`ZkClient::race_to_the_check`]).
    fn check_before_write(&mut self, ctx: &mut Ctx<ZooKeeper>, out: &mut LockEvents, key: LockKey) -> bool {
        match self.cfg.state_delivery {
            StateDelivery::Sync => self.with_conn(ctx, out, |conn, ctx, ev| conn.catch_up(ctx, ev)),
            StateDelivery::Threads => self.race_to_the_check(ctx, out),
        }
        let saw_loss = self.v.keys.get(&key).is_some_and(|st| st.honoured);
        ctx.note(|| {
            format!(
                "lock {key}: check before the write: {}",
                if saw_loss { "saw the connection lost, abandon" } else { "no loss seen, write" }
            )
        });
        !saw_loss
    }

    fn reentrant(&self) -> bool {
        self.cfg.recipe != Recipe::Naive && self.cfg.reentrant
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
