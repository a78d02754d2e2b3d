//! One Redis server (`server-i`): the keyspace and the lock scripts, pub/sub, `WAIT`, the
//! replication stream to replicas, the 100 ms cron's active expiry, AOF persistence, and the role
//! changes Sentinel orders.
//!
//! How it follows Redis (7.x):
//! - Single-threaded: requests are served one after another, each taking `service_ms`; a reply
//!   leaves when the request's turn is over (state changes apply in arrival order): see
//!   [`super::command_loop`], which Redlock's masters share.
//! - Expiry reads the WALL clock (`mstime()`): lazily when a command touches a key, and every
//!   100 ms in the cron's active cycle (`hz 10`), on a primary only. A replica never expires keys
//!   itself; it applies the primary's `DEL`s, and once promoted expires by its own clock.
//! - Replication is asynchronous: every write is appended to the stream at the next offset and
//!   leaves for the replicas `replication_lag_ms` later (the model's lag sits in the primary's
//!   output buffer, so a crash loses the tail that had not left yet: the failover-inside-the-lag
//!   window). Replicas apply in offset order, acknowledge (`REPLCONF ACK`) after applying and
//!   every second; `WAIT n timeout` counts replicas whose acknowledged offset reached the client's
//!   last write. A replica (re)connecting always gets a full resynchronisation (`+FULLRESYNC`): its
//!   data becomes the primary's snapshot, which is how a demoted old primary drops its data.
//!   Partial resync (PSYNC2) would give the same data when the replica's stream is a prefix of the
//!   primary's; the model does not distinguish the two.
//! - Persistence: see [`super::persistence`] (RDB snapshots by the stock save rules, or the AOF
//!   with `appendfsync everysec` / `always`, per kind of crash). The role is in the
//!   config file (Sentinel rewrites it), so it survives a restart: an old primary that crashed
//!   comes back as a primary until a Sentinel converts it.
//! - Pub/sub subscriptions live on the connection: lost when the server crashes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_MS};
use rand::Rng;

use super::command_loop::CommandLoop;
use super::keyspace::{Key, Keyspace, Reply, WriteOp};
use super::persistence::{Disk, Persistence, SaveState, BGSAVE_NS, FSYNC_EVERY_NS};
use super::protocol::*;
use super::Redis;

mod fingerprint;

/// Redis's cron period (`hz 10`): active expiry runs this often on a primary.
pub const CRON_NS: Nanos = 100 * NS_PER_MS;
/// `replicationCron`: a replica acknowledges (or retries `PSYNC`) this often.
pub const REPLICATION_CRON_NS: Nanos = 1_000 * NS_PER_MS;

/// The parts of the model's parameters a server uses.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Time to serve one request, milliseconds (requests are served one at a time).
    pub service_ms: Dist,
    /// From a write to its leaving for the replicas, milliseconds (drawn per command; the
    /// stream never reorders).
    pub replication_lag_ms: Dist,
    /// What survives a restart.
    pub persistence: Persistence,
    /// `min-replicas-to-write`: a primary with fewer good replicas refuses writes (0: off).
    pub min_replicas_to_write: u32,
    /// `min-replicas-max-lag`, seconds: a replica is good if its last `REPLCONF ACK` is at most
    /// this old.
    pub min_replicas_max_lag_s: i64,
    /// The initial primary's name (`server-0`); a server with another name starts as its replica.
    pub initial_primary: String,
}

/// A client blocked in `WAIT`.
#[derive(Clone, Debug)]
struct PendingWait {
    n: u64,
    client: NodeId,
    request: u64,
    answer: Answer,
    target_offset: u64,
    replicas: u32,
    timer: TimerId,
}

/// A Redis server process.
#[derive(Clone, Debug)]
pub struct RedisServer {
    cfg: ServerConfig,
    // Durable: the config file (role, epoch) and the data files.
    conf_role: Option<Role>,
    conf_epoch: u64,
    disk: Disk,
    v: Volatile,
}

/// What a server loses when it goes down: everything in memory. `boot` sets the role, epoch,
/// ids and offset afresh from the config file.
#[derive(Clone, Debug)]
struct Volatile {
    role: Role,
    epoch: u64,
    data: Keyspace,
    run_id: u64,
    repl_id: u64,
    /// `master_repl_offset` on a primary; the processed offset on a replica.
    offset: u64,
    /// Replica: the replication id it is synced to (None: waiting for a full sync).
    following: Option<u64>,
    /// Primary: replicas being fed and the offset each acknowledged.
    replicas: BTreeMap<NodeId, u64>,
    /// Primary: when each replica's last `REPLCONF ACK` arrived (wall clock, `repl_ack_time`).
    ack_wall_ns: BTreeMap<NodeId, i64>,
    /// Primary: the stream not yet sent (due time on the monotonic clock, offset, op).
    out: VecDeque<(Nanos, u64, WriteOp)>,
    flush_timer: Option<TimerId>,
    last_due: Nanos,
    /// Each client's last write offset (`c->woff`), for `WAIT`.
    woff: BTreeMap<NodeId, u64>,
    waits: Vec<PendingWait>,
    /// The last `WAIT` number given out (its timeout timer carries it; the timers die with the
    /// node, so the count may start over).
    next_wait: u64,
    /// Pub/sub subscriptions live on the clients' connections.
    subscribers: BTreeMap<LockKey, BTreeSet<NodeId>>,
    /// The single-threaded command loop.
    commands: CommandLoop,
    /// The RDB snapshot schedule (changes since the last save, a `BGSAVE` under way).
    save: SaveState,
}

impl Default for Volatile {
    fn default() -> Self {
        Volatile {
            role: Role::Primary,
            epoch: 0,
            data: Keyspace::default(),
            run_id: 0,
            repl_id: 0,
            offset: 0,
            following: None,
            replicas: BTreeMap::new(),
            ack_wall_ns: BTreeMap::new(),
            out: VecDeque::new(),
            flush_timer: None,
            last_due: 0,
            woff: BTreeMap::new(),
            waits: Vec::new(),
            next_wait: 0,
            subscribers: BTreeMap::new(),
            commands: CommandLoop::default(),
            save: SaveState::default(),
        }
    }
}

/// What a server keeps through a crash ([`Durable::Disk`]): its configuration, the config file
/// (the role and epoch Sentinel's `CONFIG REWRITE` wrote) and its data files as the persistence
/// setting and the kind of crash leave them ([`Disk::on_crash`]).
#[derive(Clone, Debug)]
pub struct ServerFiles {
    cfg: ServerConfig,
    conf_role: Option<Role>,
    conf_epoch: u64,
    disk: Disk,
}

impl ServerFiles {
    /// A server's files before its first start: no role written yet, an empty disk.
    pub fn new(cfg: ServerConfig) -> Self {
        let disk = Disk::new(cfg.persistence);
        ServerFiles { cfg, conf_role: None, conf_epoch: 0, disk }
    }
}

impl Durable for RedisServer {
    type Disk = ServerFiles;

    fn into_disk(mut self, crash: &Crash) -> ServerFiles {
        // The disk decides what the next start loads (see the persistence module).
        self.disk.on_crash(crash.kind, self.v.data, self.v.save);
        ServerFiles { cfg: self.cfg, conf_role: self.conf_role, conf_epoch: self.conf_epoch, disk: self.disk }
    }

    fn from_disk(files: ServerFiles) -> Self {
        let ServerFiles { cfg, conf_role, conf_epoch, disk } = files;
        // The keyspace is loaded from the disk by `on_restart`, which notes it.
        RedisServer { cfg, conf_role, conf_epoch, disk, v: Volatile::default() }
    }
}

impl RedisServer {
    /// A server; at its first start it is the primary if it is `initial_primary`, else its replica.
    pub fn new(cfg: ServerConfig) -> Self {
        Self::from_disk(ServerFiles::new(cfg))
    }

    /// The keyspace (for tests).
    pub fn data(&self) -> &Keyspace {
        &self.v.data
    }

    /// The server's current role.
    pub fn role(&self) -> Role {
        self.v.role
    }

    fn is_primary(&self) -> bool {
        self.v.role == Role::Primary
    }

    /// Time until this request's reply leaves: requests are served one at a time.
    fn turn(&mut self, ctx: &mut Ctx<Redis>) -> Nanos {
        self.v.commands.turn(ctx, &self.cfg.service_ms)
    }

    fn boot(&mut self, ctx: &mut Ctx<Redis>) {
        let role = match self.conf_role {
            Some(r) => r,
            None => {
                let me = ctx.name_of(ctx.me());
                let r = if me == self.cfg.initial_primary {
                    Role::Primary
                } else {
                    Role::Replica { of: ctx.node_named(&self.cfg.initial_primary).expect("initial primary exists") }
                };
                self.conf_role = Some(r);
                r
            }
        };
        self.v.role = role;
        self.v.epoch = self.conf_epoch;
        self.v.run_id = ctx.rng().gen();
        self.v.repl_id = ctx.rng().gen();
        self.v.offset = 0;
        self.v.following = None;
        // initServer: `lastsave` starts at the start time.
        self.v.save.lastsave_wall_ns = ctx.now_wall_ns();
        ctx.set_timer(CRON_NS, ServerTimer::Cron);
        if self.cfg.persistence == Persistence::EverySec {
            ctx.set_timer(FSYNC_EVERY_NS, ServerTimer::Fsync);
        }
        ctx.set_timer(REPLICATION_CRON_NS, ServerTimer::ReplCron);
        if let Role::Replica { of } = role {
            ctx.send(of, Psync);
        }
    }

    // ----- the replication stream --------------------------------------------------------------

    /// Appends a command's effects to the stream; they leave after the replication lag.
    fn propagate(&mut self, ctx: &mut Ctx<Redis>, ops: Vec<WriteOp>) {
        if ops.is_empty() || !self.is_primary() {
            return;
        }
        // `server.dirty`: every change counts towards the save rules.
        self.v.save.dirty += ops.len() as u64;
        let lag = ms_to_ns(self.cfg.replication_lag_ms.sample_non_negative(ctx.rng()));
        // The stream is FIFO: a shorter lag never lets a later write overtake an earlier one.
        let due = (ctx.now_mono_ns() + lag).max(self.v.last_due);
        self.v.last_due = due;
        // With no replica attached nothing needs to leave: a replica that attaches later gets
        // the keyspace in its full resync. The offset still counts every write (for WAIT).
        let feed = !self.v.replicas.is_empty();
        for op in ops {
            self.v.offset += 1;
            if feed {
                self.v.out.push_back((due, self.v.offset, op));
            }
        }
        self.arm_flush(ctx);
    }

    fn arm_flush(&mut self, ctx: &mut Ctx<Redis>) {
        if self.v.flush_timer.is_some() {
            return;
        }
        if let Some((due, _, _)) = self.v.out.front() {
            let after = due.saturating_sub(ctx.now_mono_ns());
            self.v.flush_timer = Some(ctx.set_timer(after, ServerTimer::ReplFlush));
        }
    }

    fn flush(&mut self, ctx: &mut Ctx<Redis>) {
        self.v.flush_timer = None;
        let now = ctx.now_mono_ns();
        let mut ops = Vec::new();
        let mut first = None;
        while let Some((due, off, _)) = self.v.out.front() {
            if *due > now {
                break;
            }
            first.get_or_insert(*off);
            ops.push(self.v.out.pop_front().expect("front").2);
        }
        if let Some(first_offset) = first {
            for &r in self.v.replicas.keys() {
                ctx.send(r, ReplBatch { repl_id: self.v.repl_id, first_offset, ops: ops.clone() });
            }
        }
        self.arm_flush(ctx);
    }

    /// `min-replicas-to-write` (`processCommand`, `checkGoodReplicasStatus`; the good count is
    /// refreshed by `refreshGoodSlavesCount`): replicas whose last ack is at most
    /// `min-replicas-max-lag` seconds old (whole seconds, as `server.unixtime`).
    fn enough_good_replicas(&self, now_wall_ns: i64) -> bool {
        let need = self.cfg.min_replicas_to_write;
        if need == 0 {
            return true;
        }
        let now_s = now_wall_ns.div_euclid(1_000_000_000);
        let good = self
            .v
            .replicas
            .keys()
            .filter(|r| {
                self.v
                    .ack_wall_ns
                    .get(r)
                    .is_some_and(|t| now_s - t.div_euclid(1_000_000_000) <= self.cfg.min_replicas_max_lag_s)
            })
            .count() as u32;
        good >= need
    }

    fn acked(&self, offset: u64) -> u32 {
        self.v.replicas.values().filter(|&&a| a >= offset).count() as u32
    }

    fn check_waits(&mut self, ctx: &mut Ctx<Redis>) {
        let mut i = 0;
        while i < self.v.waits.len() {
            let w = &self.v.waits[i];
            let n = self.acked(w.target_offset);
            if n >= w.replicas {
                let w = self.v.waits.remove(i);
                ctx.cancel_timer(w.timer);
                let after = self.turn(ctx);
                ctx.send_after(after, w.client, Response { id: w.request, answer: w.answer, synced: Some(n) });
            } else {
                i += 1;
            }
        }
    }

    // ----- client commands ---------------------------------------------------------------------

    fn on_request(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, req: Request) {
        let now_wall = ctx.now_wall_ns();
        let answer = match req.cmd {
            Command::Subscribe { key } => {
                self.v.subscribers.entry(key).or_default().insert(from);
                Answer::Subscribed
            }
            Command::Unsubscribe { key } => {
                if let Some(s) = self.v.subscribers.get_mut(&key) {
                    s.remove(&from);
                }
                Answer::Subscribed
            }
            // `connected_slaves`: the replicas this server feeds (none on a replica).
            Command::InfoReplication => Answer::Reply(Reply::Int(self.v.replicas.len() as i64)),
            _ if !self.is_primary() => Answer::ReadOnly,
            _ if !self.enough_good_replicas(ctx.now_wall_ns()) => Answer::NoReplicas,
            cmd => {
                self.note_expiry(ctx, &cmd, now_wall);
                let (reply, ops, publish) = self.execute(&cmd, now_wall);
                if !ops.is_empty() {
                    self.propagate(ctx, ops);
                    self.v.woff.insert(from, self.v.offset);
                }
                if let Some(key) = publish {
                    let after = self.turn(ctx);
                    for &s in self.v.subscribers.get(&key).into_iter().flatten() {
                        ctx.send_after(after, s, UnlockMessage { key });
                    }
                }
                Answer::Reply(reply)
            }
        };
        match req.wait {
            Some(spec) if matches!(answer, Answer::Reply(_)) => {
                let target_offset = self.v.woff.get(&from).copied().unwrap_or(0);
                let n = self.acked(target_offset);
                if n >= spec.replicas {
                    let after = self.turn(ctx);
                    ctx.send_after(after, from, Response { id: req.id, answer, synced: Some(n) });
                } else {
                    self.v.next_wait += 1;
                    let timer =
                        ctx.set_timer(spec.timeout_ms * NS_PER_MS, ServerTimer::WaitTimeout { n: self.v.next_wait });
                    self.v.waits.push(PendingWait {
                        n: self.v.next_wait,
                        client: from,
                        request: req.id,
                        answer,
                        target_offset,
                        replicas: spec.replicas,
                        timer,
                    });
                }
            }
            _ => {
                let after = self.turn(ctx);
                ctx.send_after(after, from, Response { id: req.id, answer, synced: None });
            }
        }
    }

    /// Notes, for the trace and `sim explain`, that the command's lock key has passed its PX
    /// deadline on this server's wall clock: Redis deletes it now (`expireIfNeeded`, lazy
    /// expiry), before the command sees it. The note names no id, so an explanation tells it as
    /// the server's expiry of the lock's key.
    fn note_expiry(&self, ctx: &mut Ctx<Redis>, cmd: &Command, now_wall: i64) {
        let key = match *cmd {
            Command::SetNxPx { key, .. }
            | Command::SetNx { key, .. }
            | Command::PExpire { key, .. }
            | Command::Get { key }
            | Command::DelIfEquals { key, .. }
            | Command::Del { key, .. }
            | Command::HLock { key, .. }
            | Command::HRenew { key, .. }
            | Command::HUnlock { key, .. } => key,
            _ => return,
        };
        // Stored but no longer live: the keyspace's own expiry rule, not a second copy of it.
        let key = Key::Lock(key);
        if self.v.data.raw(&key).is_some() && !self.v.data.exists_live(&key, now_wall) {
            ctx.note(|| "the lock's key expired (its PX deadline passed on this server's wall clock): deleted before the command ran".to_string());
        }
    }

    /// Runs a write command on the primary's keyspace: reply, effects, and the channel to publish on.
    fn execute(&mut self, cmd: &Command, now_wall: i64) -> (Reply, Vec<WriteOp>, Option<LockKey>) {
        let d = &mut self.v.data;
        match *cmd {
            Command::SetNxPx { key, value, px_ms, fence } => {
                let (r, ops) = d.set_nx_px(key, value, px_ms, fence, now_wall);
                (r, ops, None)
            }
            Command::SetNx { key, value, fence } => {
                let (r, ops) = d.set_nx(key, value, fence, now_wall);
                (r, ops, None)
            }
            Command::PExpire { key, ttl_ms } => {
                let (r, ops) = d.pexpire(key, ttl_ms, now_wall);
                (r, ops, None)
            }
            Command::Get { key } => {
                let (r, ops) = d.get(key, now_wall);
                (r, ops, None)
            }
            Command::DelIfEquals { key, value } => {
                let (r, ops) = d.del_if_equals(key, value, now_wall);
                (r, ops, None)
            }
            Command::Del { key, publish } => {
                let (r, ops) = d.del(key, now_wall);
                let deleted = r == Reply::Int(1);
                (r, ops, (publish && deleted).then_some(key))
            }
            Command::HLock { key, owner, lease_ms, fence } => {
                let (r, ops) = d.hlock(key, owner, lease_ms, fence, now_wall);
                (r, ops, None)
            }
            Command::HRenew { key, owner, lease_ms } => {
                let (r, ops) = d.hrenew(key, owner, lease_ms, now_wall);
                (r, ops, None)
            }
            Command::HUnlock { key, owner, lease_ms } => {
                let (r, ops, publish) = d.hunlock(key, owner, lease_ms, now_wall);
                (r, ops, publish.then_some(key))
            }
            Command::Subscribe { .. } | Command::Unsubscribe { .. } | Command::InfoReplication => {
                (Reply::Nil, Vec::new(), None)
            }
        }
    }

    // ----- replication, both sides ---------------------------------------------------------------

    fn on_psync(&mut self, ctx: &mut Ctx<Redis>, from: NodeId) {
        if !self.is_primary() {
            // A replica does not serve chained replicas in this model: the asker retries
            // its own PSYNC every second until its primary is one.
            return;
        }
        self.v.replicas.insert(from, 0);
        let after = self.turn(ctx);
        ctx.send_after(
            after,
            from,
            FullSync { repl_id: self.v.repl_id, offset: self.v.offset, data: self.v.data.clone() },
        );
    }

    fn on_full_sync(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, m: FullSync) {
        if self.v.role != (Role::Replica { of: from }) {
            return;
        }
        let dropped = self.v.data.len();
        if self.disk.snapshots() {
            // readSyncBulkPayload (repl-diskless-load disabled): the primary's RDB becomes this
            // replica's dump.rdb before it is loaded.
            self.disk.store_rdb(m.data.clone());
        }
        self.v.data = m.data;
        self.v.offset = m.offset;
        self.v.following = Some(m.repl_id);
        let keys = self.v.data.len();
        ctx.note(|| format!("full resync at offset {}: dropped {dropped} keys, loaded {keys}", m.offset));
        let ack = ReplAck { repl_id: m.repl_id, offset: self.v.offset };
        let after = self.turn(ctx);
        ctx.send_after(after, from, ack);
    }

    fn on_batch(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, b: ReplBatch) {
        if self.v.role != (Role::Replica { of: from }) || self.v.following != Some(b.repl_id) {
            return;
        }
        if b.first_offset > self.v.offset + 1 {
            // A hole in the stream: start over.
            self.v.following = None;
            ctx.send(from, Psync);
            return;
        }
        for (i, op) in b.ops.iter().enumerate() {
            if b.first_offset + i as u64 > self.v.offset {
                self.v.data.apply(op);
                // A replica counts the changes it applies towards its own save rules.
                self.v.save.dirty += 1;
            }
        }
        self.v.offset = self.v.offset.max(b.first_offset + b.ops.len() as u64 - 1);
        let ack = ReplAck { repl_id: b.repl_id, offset: self.v.offset };
        let after = self.turn(ctx);
        ctx.send_after(after, from, ack);
    }

    fn on_ack(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, a: ReplAck) {
        if !self.is_primary() {
            return;
        }
        if a.repl_id != self.v.repl_id || !self.v.replicas.contains_key(&from) {
            ctx.send(from, ResyncNeeded);
            return;
        }
        let acked = self.v.replicas.get_mut(&from).expect("known replica");
        *acked = (*acked).max(a.offset);
        self.v.ack_wall_ns.insert(from, ctx.now_wall_ns());
        self.check_waits(ctx);
    }

    fn on_replica_of(&mut self, ctx: &mut Ctx<Redis>, m: ReplicaOf) {
        self.conf_epoch = self.conf_epoch.max(m.epoch);
        self.v.epoch = self.conf_epoch;
        match m.primary {
            None => {
                if !self.is_primary() {
                    // REPLICAOF NO ONE: a new replication id; the offset continues (PSYNC2).
                    self.v.role = Role::Primary;
                    self.v.repl_id = ctx.rng().gen();
                    self.v.following = None;
                    self.v.replicas.clear();
                    self.v.last_due = 0;
                    let (epoch, offset) = (self.v.epoch, self.v.offset);
                    ctx.note(|| format!("promoted to primary (epoch {epoch}, offset {offset})"));
                }
            }
            Some(p) => {
                if self.v.role != (Role::Replica { of: p }) {
                    let was_primary = self.is_primary();
                    self.v.role = Role::Replica { of: p };
                    self.v.following = None;
                    self.v.replicas.clear();
                    self.v.out.clear();
                    if let Some(t) = self.v.flush_timer.take() {
                        ctx.cancel_timer(t);
                    }
                    // Clients blocked in WAIT are unblocked with an error when the role changes.
                    for w in std::mem::take(&mut self.v.waits) {
                        ctx.cancel_timer(w.timer);
                        ctx.send(w.client, Response { id: w.request, answer: Answer::ReadOnly, synced: Some(0) });
                    }
                    let name = ctx.name_of(p);
                    ctx.note(|| format!("now a replica of {name}{}", if was_primary { " (demoted)" } else { "" }));
                    ctx.send(p, Psync);
                }
            }
        }
        // CONFIG REWRITE: the role survives a restart.
        self.conf_role = Some(self.v.role);
    }
}

impl RedisServer {
    /// `serverCron`'s save check: a save rule met starts a `BGSAVE` of the data as it is now.
    fn save_cron(&mut self, ctx: &mut Ctx<Redis>) {
        if !self.disk.snapshots() || !self.v.save.due(ctx.now_wall_ns()) {
            return;
        }
        let dirty = self.v.save.dirty;
        self.v.save.in_progress = Some((self.v.data.clone(), dirty));
        ctx.set_timer(BGSAVE_NS, ServerTimer::BgsaveDone);
        ctx.note(|| format!("BGSAVE started ({dirty} changes since the last save)"));
    }

    fn on_server_timer(&mut self, ctx: &mut Ctx<Redis>, timer: TimerId, tag: ServerTimer) {
        match tag {
            ServerTimer::Cron => {
                ctx.set_timer(CRON_NS, ServerTimer::Cron);
                self.save_cron(ctx);
                if self.is_primary() {
                    let now_wall = ctx.now_wall_ns();
                    let ops = self.v.data.active_expire(now_wall);
                    if !ops.is_empty() {
                        ctx.note(|| format!("keys expired by the active expiry cycle (their PX deadlines passed on this server's wall clock): {ops:?}"));
                        self.propagate(ctx, ops);
                    }
                }
            }
            ServerTimer::Fsync => {
                ctx.set_timer(FSYNC_EVERY_NS, ServerTimer::Fsync);
                self.disk.fsync(&self.v.data);
            }
            ServerTimer::BgsaveDone => {
                // backgroundSaveDoneHandler: the snapshot is dump.rdb; the changes made since the
                // fork still count towards the next save.
                if let Some((snapshot, dirty_at_fork)) = self.v.save.in_progress.take() {
                    let keys = snapshot.len();
                    self.disk.store_rdb(snapshot);
                    self.v.save.dirty -= dirty_at_fork;
                    self.v.save.lastsave_wall_ns = ctx.now_wall_ns();
                    ctx.note(|| format!("BGSAVE done: dump.rdb has {keys} keys"));
                }
            }
            ServerTimer::ReplFlush => {
                if self.v.flush_timer == Some(timer) {
                    self.flush(ctx);
                }
            }
            ServerTimer::ReplCron => {
                ctx.set_timer(REPLICATION_CRON_NS, ServerTimer::ReplCron);
                if let Role::Replica { of } = self.v.role {
                    match self.v.following {
                        Some(repl_id) => ctx.send(of, ReplAck { repl_id, offset: self.v.offset }),
                        None => ctx.send(of, Psync),
                    }
                }
            }
            ServerTimer::WaitTimeout { n } => {
                if let Some(i) = self.v.waits.iter().position(|w| w.n == n) {
                    let w = self.v.waits.remove(i);
                    let synced = self.acked(w.target_offset);
                    let after = self.turn(ctx);
                    ctx.send_after(after, w.client, Response { id: w.request, answer: w.answer, synced: Some(synced) });
                }
            }
        }
    }
}

impl Process<Redis> for RedisServer {
    fn on_start(&mut self, ctx: &mut Ctx<Redis>) {
        self.boot(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, msg: RedisMsg) {
        match msg {
            RedisMsg::Request(r) => self.on_request(ctx, from, r),
            RedisMsg::ReplBatch(b) => self.on_batch(ctx, from, b),
            RedisMsg::ReplAck(a) => self.on_ack(ctx, from, a),
            RedisMsg::SentinelPing(p) => {
                let reply = PingReply { seq: p.seq, role: self.v.role, offset: self.v.offset, run_id: self.v.run_id };
                let after = self.turn(ctx);
                ctx.send_after(after, from, reply);
            }
            RedisMsg::Psync(_) => self.on_psync(ctx, from),
            RedisMsg::FullSync(f) => self.on_full_sync(ctx, from, f),
            // Only the primary this node replicates can ask it to resynchronise.
            RedisMsg::ResyncNeeded(_) if self.v.role == (Role::Replica { of: from }) => {
                self.v.following = None;
                ctx.send(from, Psync);
            }
            RedisMsg::ReplicaOf(m) => self.on_replica_of(ctx, m),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Redis>, timer: TimerId, tag: RedisTimer) {
        if let RedisTimer::Server(t) = tag {
            self.on_server_timer(ctx, timer, t);
        }
    }

    fn on_restart(&mut self, ctx: &mut Ctx<Redis>) {
        self.v.data = self.disk.load();
        let keys = self.v.data.len();
        let source = self.disk.source();
        ctx.note(|| format!("restart: loaded {keys} keys from {source}"));
        self.boot(ctx);
    }

    fn leadership(&self) -> Option<u64> {
        self.is_primary().then_some(self.v.epoch)
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
