//! Redis Sentinel (`sentinel-i`): watches the primary and its replicas, agrees with the other
//! Sentinels that the primary is down, elects a leader for the epoch, promotes the best replica,
//! reconfigures the rest, and tells the clients.
//!
//! Follows `sentinel.c` (Redis 7):
//! - The timer runs at a random `hz` of 10–19 per second, drawn afresh each tick (Sentinel
//!   desynchronises itself from its peers this way).
//! - Each instance is pinged every `min(down_after_ms, 1000)`. An instance is subjectively down
//!   (SDOWN) when its oldest unanswered ping is older than `down_after_ms` (`act_ping_time`).
//!   The model folds `INFO` (role, replication offset, run id) into the ping's reply, so role
//!   changes are seen within a second (real Sentinel polls `INFO` every 10 s, every second for a
//!   primary in failover).
//! - While it sees the primary in SDOWN, a Sentinel asks the others every second
//!   (`is-master-down-by-addr`); replies older than 5 s are forgotten. SDOWN here plus the peers
//!   that answered "down" reaching `quorum` is ODOWN.
//! - ODOWN with no failover in progress and none started in the last 2 × `failover_timeout`
//!   (180 s) starts one: `current_epoch + 1`, and vote requests to the peers. Each Sentinel votes
//!   once per epoch, for the first candidate that asks (and then holds off its own attempt for a
//!   random 0–1 s more, `SENTINEL_MAX_DESYNC`). The candidate counts the votes of the current
//!   epoch plus its own; it leads with a majority of all Sentinels and at least `quorum` votes.
//!   Without that within the election timeout (10 s) it aborts; another try waits 2 × 180 s.
//! - The leader picks a replica that is not SDOWN and answered in the last 5 s: the highest
//!   replication offset, ties broken by the lexicographically smaller run id (random per
//!   process start, so the seed decides). It sends `REPLICAOF NO ONE`, and when the replica
//!   reports the primary role, takes the failover epoch as the new configuration epoch, sends
//!   `REPLICAOF new` to the other replicas, and announces `+switch-master` to clients and (by
//!   hello) to the other Sentinels, which adopt any configuration with a higher epoch and announce
//!   it too. A promotion not seen within `failover_timeout` is aborted.
//! - An instance reporting the primary role that is not this Sentinel's primary (an old primary
//!   back from a crash) is converted with `REPLICAOF` once it has reported that role for 8 s
//!   (`SENTINEL_PUBLISH_PERIOD * 4`) without being down meanwhile, if the real primary looks sane.
//! - A replica's SDOWN and its end are announced to clients (`+sdown` / `-sdown`).
//! - Durable (`sentinel.conf`, flushed on every change): the current epoch, the primary and its
//!   config epoch, this Sentinel's last vote. Everything else is rebuilt after a restart.
//!
//! Not modelled: TILT mode, the hello channel through the Redis instances (hellos go straight to
//! the other Sentinels every 2 s), `parallel-syncs` (every other replica is reconfigured at once
//! and `+switch-master` does not wait for them), replica priority (all 100).

use std::collections::BTreeMap;

use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ms_to_ns, Nanos, NS_PER_MS};
use rand::Rng;

use super::protocol::*;
use super::Redis;

mod fingerprint;

/// `SENTINEL_PING_PERIOD`.
const PING_PERIOD_NS: Nanos = 1_000 * NS_PER_MS;
/// `SENTINEL_ASK_PERIOD`.
const ASK_PERIOD_NS: Nanos = 1_000 * NS_PER_MS;
/// `SENTINEL_PUBLISH_PERIOD`: hellos.
const PUBLISH_PERIOD_NS: Nanos = 2_000 * NS_PER_MS;
/// `failover-timeout` default.
const FAILOVER_TIMEOUT_NS: Nanos = 180_000 * NS_PER_MS;
/// `SENTINEL_ELECTION_TIMEOUT` (capped by the failover timeout).
const ELECTION_TIMEOUT_NS: Nanos = 10_000 * NS_PER_MS;
/// `SENTINEL_MAX_DESYNC`.
const MAX_DESYNC_MS: u64 = 1_000;

/// The parts of the model's parameters a Sentinel uses.
#[derive(Clone, Debug)]
pub struct SentinelConfig {
    /// Redis servers (`server-0 …`): the primary and its replicas.
    pub servers: usize,
    /// Sentinels (`sentinel-0 …`), this one included.
    pub sentinels: usize,
    /// Clients (`client-0 …`), told about failovers and replicas' SDOWN.
    pub clients: usize,
    /// Sentinels that must see the primary down for ODOWN; also the fewest votes a leader needs
    /// (`quorum`).
    pub quorum: usize,
    /// How long a ping may go unanswered before the instance is SDOWN (`down-after-milliseconds`).
    pub down_after_ms: f64,
}

/// A Redis server as this Sentinel sees it.
#[derive(Clone, Debug)]
struct Instance {
    id: NodeId,
    last_ping_sent: Option<Nanos>,
    /// When the oldest unanswered ping was sent (`act_ping_time`).
    act_ping: Option<Nanos>,
    last_avail: Nanos,
    sdown: bool,
    /// When the instance last left or entered SDOWN.
    down_changed_at: Option<Nanos>,
    role: Option<Role>,
    role_reported_at: Nanos,
    offset: u64,
    run_id: u64,
    last_reconf_sent: Option<Nanos>,
    /// What clients were last told about this replica (`+sdown` / `-sdown`).
    announced_up: bool,
}

/// Another Sentinel as this one sees it.
#[derive(Clone, Debug)]
struct Peer {
    id: NodeId,
    master_down: bool,
    reply_at: Option<Nanos>,
    leader: Option<(NodeId, u64)>,
    last_ask: Option<Nanos>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Failover {
    None,
    WaitStart,
    WaitPromotion { replica: NodeId, since: Nanos },
}

/// A Sentinel process.
#[derive(Clone, Debug)]
pub struct Sentinel {
    cfg: SentinelConfig,
    // Durable (sentinel.conf).
    primary: Option<NodeId>,
    config_epoch: u64,
    current_epoch: u64,
    /// This Sentinel's vote: (leader, epoch).
    vote: Option<(NodeId, u64)>,
    // Not in sentinel.conf, but kept across a restart.
    /// The last ping sequence number sent. It keeps counting after a crash: a reply to a ping sent
    /// before it (on a connection the restarted process no longer has) must not be taken for the
    /// reply to a new ping.
    ping_seq: u64,
    v: Volatile,
}

/// What a Sentinel keeps through a crash ([`Durable::Disk`]): its configuration, sentinel.conf
/// (the primary, the epochs and the vote) and the ping counter (see [`Sentinel`]).
#[derive(Clone, Debug)]
pub struct SentinelFiles {
    cfg: SentinelConfig,
    primary: Option<NodeId>,
    config_epoch: u64,
    current_epoch: u64,
    vote: Option<(NodeId, u64)>,
    ping_seq: u64,
}

impl Durable for Sentinel {
    type Disk = SentinelFiles;

    fn into_disk(self, _crash: &Crash) -> SentinelFiles {
        let Sentinel { cfg, primary, config_epoch, current_epoch, vote, ping_seq, v: _ } = self;
        SentinelFiles { cfg, primary, config_epoch, current_epoch, vote, ping_seq }
    }

    fn from_disk(files: SentinelFiles) -> Self {
        let SentinelFiles { cfg, primary, config_epoch, current_epoch, vote, ping_seq } = files;
        Sentinel { cfg, primary, config_epoch, current_epoch, vote, ping_seq, v: Volatile::default() }
    }
}

/// What a Sentinel rebuilds after a restart (`boot` fills it in).
#[derive(Clone, Debug)]
struct Volatile {
    me: NodeId,
    instances: Vec<Instance>,
    peers: Vec<Peer>,
    clients: Vec<NodeId>,
    odown: bool,
    failover: Failover,
    failover_epoch: u64,
    failover_start: Option<Nanos>,
    last_hello: Option<Nanos>,
    /// Ping sequence → instance index, for matching replies.
    pings: BTreeMap<u64, usize>,
}

impl Default for Volatile {
    fn default() -> Self {
        Volatile {
            me: 0,
            instances: Vec::new(),
            peers: Vec::new(),
            clients: Vec::new(),
            odown: false,
            failover: Failover::None,
            failover_epoch: 0,
            failover_start: None,
            last_hello: None,
            pings: BTreeMap::new(),
        }
    }
}

impl Sentinel {
    /// A Sentinel that takes `server-0` as the primary until told otherwise.
    pub fn new(cfg: SentinelConfig) -> Self {
        Self::from_disk(SentinelFiles {
            cfg,
            primary: None,
            config_epoch: 0,
            current_epoch: 0,
            vote: None,
            ping_seq: 0,
        })
    }

    fn down_after_ns(&self) -> Nanos {
        ms_to_ns(self.cfg.down_after_ms)
    }

    fn primary(&self) -> NodeId {
        self.primary.expect("set at start")
    }

    fn idx(&self, node: NodeId) -> Option<usize> {
        self.v.instances.iter().position(|i| i.id == node)
    }

    fn boot(&mut self, ctx: &mut Ctx<Redis>) {
        self.v.me = ctx.me();
        let now = ctx.now_mono_ns();
        let servers: Vec<NodeId> =
            (0..self.cfg.servers).map(|i| ctx.node_named(&format!("server-{i}")).expect("server exists")).collect();
        if self.primary.is_none() {
            self.primary = Some(servers[0]);
        }
        self.v.instances = servers
            .iter()
            .map(|&id| Instance {
                id,
                last_ping_sent: None,
                act_ping: Some(now),
                last_avail: now,
                sdown: false,
                down_changed_at: None,
                role: None,
                role_reported_at: now,
                offset: 0,
                run_id: u64::MAX,
                last_reconf_sent: None,
                announced_up: true,
            })
            .collect();
        let me = self.v.me;
        self.v.peers = (0..self.cfg.sentinels)
            .map(|i| ctx.node_named(&format!("sentinel-{i}")).expect("sentinel exists"))
            .filter(|&id| id != me)
            .map(|id| Peer { id, master_down: false, reply_at: None, leader: None, last_ask: None })
            .collect();
        self.v.clients = (0..self.cfg.clients).filter_map(|i| ctx.node_named(&format!("client-{i}"))).collect();
        self.v.odown = false;
        self.v.failover = Failover::None;
        self.v.failover_start = None;
        self.v.last_hello = None;
        self.v.pings.clear();
        self.schedule_tick(ctx);
    }

    fn schedule_tick(&mut self, ctx: &mut Ctx<Redis>) {
        let hz: u64 = 10 + ctx.rng().gen_range(0..10);
        ctx.set_timer(1_000 * NS_PER_MS / hz, SentinelTimer::Tick);
    }

    fn tick(&mut self, ctx: &mut Ctx<Redis>) {
        let now = ctx.now_mono_ns();
        let ping_period = self.down_after_ns().min(PING_PERIOD_NS);
        let down_after = self.down_after_ns();
        let primary = self.primary();
        for i in 0..self.v.instances.len() {
            let inst = &mut self.v.instances[i];
            if inst.last_ping_sent.is_none_or(|t| now - t >= ping_period) {
                inst.last_ping_sent = Some(now);
                if inst.act_ping.is_none() {
                    inst.act_ping = Some(now);
                }
                self.ping_seq += 1;
                self.v.pings.insert(self.ping_seq, i);
                ctx.send(inst.id, SentinelPing { seq: self.ping_seq });
            }
            let elapsed = inst.act_ping.map_or(0, |t| now.saturating_sub(t));
            let sdown = elapsed > down_after;
            if sdown != inst.sdown {
                inst.sdown = sdown;
                inst.down_changed_at = Some(now);
                let id = inst.id;
                let name = ctx.name_of(id);
                ctx.note(|| format!("{}sdown {name}", if sdown { "+" } else { "-" }));
                if sdown && id != primary && inst.announced_up {
                    inst.announced_up = false;
                    for &c in &self.v.clients {
                        ctx.send(c, SentinelEvent::ReplicaDown { node: id });
                    }
                }
            }
        }
        self.check_primary(ctx, now);
        if self.v.last_hello.is_none_or(|t| now - t >= PUBLISH_PERIOD_NS) {
            self.send_hello(ctx, now);
        }
        self.schedule_tick(ctx);
    }

    fn send_hello(&mut self, ctx: &mut Ctx<Redis>, now: Nanos) {
        self.v.last_hello = Some(now);
        let hello =
            Hello { current_epoch: self.current_epoch, config_epoch: self.config_epoch, primary: self.primary() };
        for p in &self.v.peers {
            ctx.send(p.id, hello.clone());
        }
    }

    fn check_primary(&mut self, ctx: &mut Ctx<Redis>, now: Nanos) {
        let pi = self.idx(self.primary()).expect("primary is an instance");
        let sdown = self.v.instances[pi].sdown;
        // Replies older than 5 ask periods are forgotten.
        for p in &mut self.v.peers {
            if p.reply_at.is_some_and(|t| now - t > 5 * ASK_PERIOD_NS) {
                p.master_down = false;
                p.leader = None;
                p.reply_at = None;
            }
        }
        let votes_down = 1 + self.v.peers.iter().filter(|p| p.master_down).count();
        let odown = sdown && votes_down >= self.cfg.quorum;
        if odown != self.v.odown {
            self.v.odown = odown;
            let name = ctx.name_of(self.primary());
            ctx.note(|| {
                format!("{}odown {name} ({votes_down}/{} agree)", if odown { "+" } else { "-" }, self.cfg.quorum)
            });
        }
        let mut forced = false;
        if self.v.odown
            && self.v.failover == Failover::None
            && self.v.failover_start.is_none_or(|t| now.saturating_sub(t) >= 2 * FAILOVER_TIMEOUT_NS)
        {
            self.current_epoch += 1;
            self.v.failover_epoch = self.current_epoch;
            self.v.failover = Failover::WaitStart;
            let desync = ctx.rng().gen_range(0..MAX_DESYNC_MS) * NS_PER_MS;
            self.v.failover_start = Some(now + desync);
            let epoch = self.v.failover_epoch;
            ctx.note(|| format!("+try-failover (epoch {epoch})"));
            forced = true;
        }
        self.failover_step(ctx, now);
        if self.v.instances[pi].sdown {
            self.ask_peers(ctx, now, forced);
        }
    }

    fn ask_peers(&mut self, ctx: &mut Ctx<Redis>, now: Nanos, forced: bool) {
        let candidate = (self.v.failover != Failover::None).then_some(self.v.me);
        let req = IsMasterDownReq { primary: self.primary(), epoch: self.current_epoch, candidate };
        for p in &mut self.v.peers {
            if forced || p.last_ask.is_none_or(|t| now - t >= ASK_PERIOD_NS) {
                p.last_ask = Some(now);
                ctx.send(p.id, req.clone());
            }
        }
    }

    /// `sentinelVoteLeader`: one vote per epoch, for the first candidate that asks.
    fn vote_for(&mut self, ctx: &mut Ctx<Redis>, req_epoch: u64, candidate: NodeId) -> Option<(NodeId, u64)> {
        if req_epoch > self.current_epoch {
            self.current_epoch = req_epoch;
        }
        let leader_epoch = self.vote.map_or(0, |(_, e)| e);
        if leader_epoch < req_epoch && self.current_epoch <= req_epoch {
            self.vote = Some((candidate, self.current_epoch));
            let name = ctx.name_of(candidate);
            ctx.note(|| format!("+vote-for-leader {name} (epoch {req_epoch})"));
            if candidate != self.v.me {
                let desync = ctx.rng().gen_range(0..MAX_DESYNC_MS) * NS_PER_MS;
                self.v.failover_start = Some(ctx.now_mono_ns() + desync);
            }
        }
        self.vote
    }

    /// `sentinelGetLeader`.
    fn leader(&mut self, ctx: &mut Ctx<Redis>, epoch: u64) -> Option<NodeId> {
        let mut counters: BTreeMap<NodeId, usize> = BTreeMap::new();
        for p in &self.v.peers {
            if let Some((l, e)) = p.leader {
                if e == self.current_epoch {
                    *counters.entry(l).or_default() += 1;
                }
            }
        }
        let best = |c: &BTreeMap<NodeId, usize>| {
            c.iter().max_by_key(|(id, v)| (**v, std::cmp::Reverse(**id))).map(|(id, v)| (*id, *v))
        };
        let winner = best(&counters).map(|(id, _)| id);
        let my = self.vote_for(ctx, epoch, winner.unwrap_or(self.v.me));
        if let Some((l, e)) = my {
            if e == epoch {
                *counters.entry(l).or_default() += 1;
            }
        }
        let (winner, votes) = best(&counters)?;
        let voters = self.v.peers.len() + 1;
        (votes > voters / 2 && votes >= self.cfg.quorum).then_some(winner)
    }

    fn failover_step(&mut self, ctx: &mut Ctx<Redis>, now: Nanos) {
        match self.v.failover {
            Failover::None => {}
            Failover::WaitStart => {
                let epoch = self.v.failover_epoch;
                if self.leader(ctx, epoch) == Some(self.v.me) {
                    ctx.note(|| format!("+elected-leader (epoch {epoch})"));
                    match self.select_replica(now) {
                        Some(r) => {
                            let name = ctx.name_of(r);
                            ctx.note(|| format!("+selected-slave {name}; REPLICAOF NO ONE"));
                            ctx.send(r, ReplicaOf { primary: None, epoch });
                            self.v.failover = Failover::WaitPromotion { replica: r, since: now };
                        }
                        None => {
                            ctx.note(|| "-failover-abort-no-good-slave".to_string());
                            self.v.failover = Failover::None;
                        }
                    }
                } else if now.saturating_sub(self.v.failover_start.unwrap_or(now)) > ELECTION_TIMEOUT_NS {
                    ctx.note(|| format!("-failover-abort-not-elected (epoch {epoch})"));
                    self.v.failover = Failover::None;
                }
            }
            Failover::WaitPromotion { since, .. } => {
                if now - since > FAILOVER_TIMEOUT_NS {
                    ctx.note(|| "-failover-abort (promotion not seen)".to_string());
                    self.v.failover = Failover::None;
                }
            }
        }
    }

    /// `sentinelSelectSlave`.
    fn select_replica(&self, now: Nanos) -> Option<NodeId> {
        let primary = self.primary();
        self.v
            .instances
            .iter()
            .filter(|i| i.id != primary && !i.sdown && matches!(i.role, Some(Role::Replica { .. })))
            .filter(|i| now.saturating_sub(i.last_avail) <= 5 * PING_PERIOD_NS)
            .min_by_key(|i| (std::cmp::Reverse(i.offset), i.run_id))
            .map(|i| i.id)
    }

    /// Takes a newer configuration: `sentinelResetMasterAndChangeAddress` and `+switch-master`.
    fn switch_master(&mut self, ctx: &mut Ctx<Redis>, config_epoch: u64, primary: NodeId) {
        let old = self.primary();
        self.config_epoch = config_epoch;
        self.primary = Some(primary);
        self.v.failover = Failover::None;
        self.v.failover_start = None; // "We can failover again ASAP."
        self.v.odown = false;
        let now = ctx.now_mono_ns();
        for p in &mut self.v.peers {
            p.master_down = false;
        }
        if let Some(i) = self.idx(old) {
            // Clients count the old primary out until it replicates the new one.
            self.v.instances[i].announced_up = false;
        }
        if let Some(i) = self.idx(primary) {
            let inst = &mut self.v.instances[i];
            inst.act_ping = Some(now);
            inst.last_avail = now;
            inst.sdown = false;
            inst.role_reported_at = now;
        }
        let (from, to) = (ctx.name_of(old), ctx.name_of(primary));
        ctx.note(|| format!("+switch-master {from} -> {to} (config epoch {config_epoch})"));
        for &c in &self.v.clients {
            ctx.send(c, SentinelEvent::SwitchMaster { config_epoch, primary });
        }
    }

    fn on_ping_reply(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, r: PingReply) {
        let Some(i) = self.v.pings.remove(&r.seq) else { return };
        if self.v.instances[i].id != from {
            return;
        }
        let now = ctx.now_mono_ns();
        // Drop bookkeeping for pings that will never be answered.
        self.v.pings.retain(|_, idx| *idx != i);
        let inst = &mut self.v.instances[i];
        inst.act_ping = None;
        inst.last_avail = now;
        if inst.role != Some(r.role) {
            inst.role = Some(r.role);
            inst.role_reported_at = now;
        }
        inst.offset = r.offset;
        inst.run_id = r.run_id;
        let primary = self.primary.expect("set at start");
        // A replica is announced up again once it answers as a replica of the current primary
        // (a returning old primary only after its conversion).
        if !inst.announced_up && !inst.sdown && r.role == (Role::Replica { of: primary }) {
            inst.announced_up = true;
            for &c in &self.v.clients {
                ctx.send(c, SentinelEvent::ReplicaUp { node: from });
            }
        }
        if let Failover::WaitPromotion { replica, .. } = self.v.failover {
            if from == replica && r.role == Role::Primary {
                // +promoted-slave: the failover epoch becomes the configuration epoch.
                let epoch = self.v.failover_epoch;
                self.switch_master(ctx, epoch, replica);
                for inst in &self.v.instances {
                    if inst.id != replica && matches!(inst.role, Some(Role::Replica { .. })) {
                        ctx.send(inst.id, ReplicaOf { primary: Some(replica), epoch });
                    }
                }
                self.send_hello(ctx, now);
                return;
            }
        }
        // An instance that is not our primary and claims to be one (an old primary back from
        // a crash): convert it after 8 s, if our primary looks sane.
        let wait = 4 * PUBLISH_PERIOD_NS;
        let primary_sane = self.idx(primary).is_some_and(|p| {
            let p = &self.v.instances[p];
            !p.sdown && p.role == Some(Role::Primary)
        });
        let inst = &self.v.instances[i];
        let promoted = matches!(self.v.failover, Failover::WaitPromotion { replica, .. } if replica == from);
        let no_down_for = inst.down_changed_at.is_none_or(|t| now - t > wait) && !inst.sdown;
        let convert = from != primary
            && r.role == Role::Primary
            && !promoted
            && primary_sane
            && no_down_for
            && now - inst.role_reported_at > wait;
        // A replica following another primary (missed a reconfiguration), after the failover timeout.
        let misdirected = from != primary
            && matches!(r.role, Role::Replica { of } if of != primary)
            && primary_sane
            && now - inst.role_reported_at > FAILOVER_TIMEOUT_NS;
        if (convert || misdirected) && inst.last_reconf_sent.is_none_or(|t| now - t >= PING_PERIOD_NS) {
            self.v.instances[i].last_reconf_sent = Some(now);
            let name = ctx.name_of(from);
            ctx.note(|| format!("+convert-to-slave {name}"));
            ctx.send(from, ReplicaOf { primary: Some(primary), epoch: self.config_epoch });
        }
    }

    fn on_hello(&mut self, ctx: &mut Ctx<Redis>, h: Hello) {
        if h.current_epoch > self.current_epoch {
            self.current_epoch = h.current_epoch;
        }
        if h.config_epoch > self.config_epoch && Some(h.primary) != self.primary {
            self.switch_master(ctx, h.config_epoch, h.primary);
        } else if h.config_epoch > self.config_epoch {
            self.config_epoch = h.config_epoch;
        }
    }
}

impl Process<Redis> for Sentinel {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Redis>) {
        self.boot(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, msg: RedisMsg) {
        match msg {
            RedisMsg::PingReply(r) => self.on_ping_reply(ctx, from, r),
            RedisMsg::IsMasterDownReq(q) => {
                let down =
                    Some(q.primary) == self.primary && self.idx(q.primary).is_some_and(|i| self.v.instances[i].sdown);
                let ours = Some(q.primary) == self.primary;
                let leader = q.candidate.filter(|_| ours).and_then(|c| self.vote_for(ctx, q.epoch, c));
                ctx.send(from, IsMasterDownReply { primary: q.primary, down, leader });
            }
            // A reply about another primary (one Sentinel has since replaced) is stale.
            RedisMsg::IsMasterDownReply(r) if Some(r.primary) == self.primary => {
                let now = ctx.now_mono_ns();
                if let Some(p) = self.v.peers.iter_mut().find(|p| p.id == from) {
                    p.master_down = r.down;
                    p.reply_at = Some(now);
                    if r.leader.is_some() {
                        p.leader = r.leader;
                    }
                }
            }
            RedisMsg::Hello(h) => self.on_hello(ctx, h),
            RedisMsg::GetMasterAddr(_) => {
                ctx.send(from, MasterAddr { config_epoch: self.config_epoch, primary: self.primary() });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Redis>, _timer: TimerId, tag: RedisTimer) {
        if let RedisTimer::Sentinel(SentinelTimer::Tick) = tag {
            self.tick(ctx);
        }
    }

    fn on_restart(&mut self, ctx: &mut Ctx<Redis>) {
        self.boot(ctx);
    }
}
