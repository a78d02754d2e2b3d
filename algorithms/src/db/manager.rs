//! The failover manager (`sentinel-0`, present when replication is on), as MySQL deployments run
//! one: MHA's `masterha_manager` or orchestrator. A MySQL replica never promotes itself; an
//! outside manager watches the primary and moves the service.
//!
//! - It pings every server once a second (`PROBE_EVERY_NS`; MHA's `ping_interval` is 3 s and it
//!   gives up after four misses, about the 10 s that `failover_after_ms` defaults to).
//! - When the primary has not answered for `failover_after_ms` and the replica answers, it
//!   promotes the replica under a new epoch (repeating the order until the replica confirms), then
//!   tells every client the new primary (the VIP or proxy switch) and tells the old primary to go
//!   read-only whenever it hears from it again.
//! - It has no secondary check: cut off from a healthy primary, it fails over anyway, and clients
//!   that still reach the old primary keep using it until they hear otherwise (the split brain MHA
//!   warns about without `secondary_check_script`).
//! - Its decisions (who is primary, the epoch, a promotion under way) are durable (a manager
//!   keeps them in its own store); the probe history is not.

use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{ns_to_ms, Nanos, NS_PER_SEC};

use super::protocol::{DbMsg, DbTimer, ManagerTimer, Role};
use super::{Config, Db};

mod fingerprint;

/// How often the manager pings each server.
pub const PROBE_EVERY_NS: Nanos = NS_PER_SEC;
/// A replica counts as a live candidate if it answered within this long.
const CANDIDATE_FRESH_NS: Nanos = 3 * PROBE_EVERY_NS;

/// What a crash wipes: the node ids it resolved and the probe history.
#[derive(Clone, Debug, Default)]
struct Volatile {
    servers: Vec<NodeId>,
    clients: Vec<NodeId>,
    /// Last answer from each server (monotonic).
    last_pong_ns: Vec<Nanos>,
    roles: Vec<Option<(Role, u64)>>,
    probe: Option<TimerId>,
}

/// The failover manager.
#[derive(Clone, Debug)]
pub struct FailoverManager {
    cfg: Config,
    // Durable.
    primary: usize,
    epoch: u64,
    promoting: Option<(usize, u64)>,
    v: Volatile,
}

impl FailoverManager {
    /// A manager that takes `server-0` as the primary, in epoch 1.
    pub fn new(cfg: Config) -> FailoverManager {
        FailoverManager::from_disk(ManagerDisk { cfg, primary: 0, epoch: 1, promoting: None })
    }

    fn probe(&mut self, ctx: &mut Ctx<Db>) {
        let now = ctx.now_mono_ns();
        for &s in &self.v.servers {
            ctx.send(s, DbMsg::Ping { epoch: self.epoch });
        }
        if let Some((candidate, epoch)) = self.promoting {
            ctx.send(self.v.servers[candidate], DbMsg::Promote { epoch });
        } else {
            let silent_ns = now.saturating_sub(self.v.last_pong_ns[self.primary]);
            if silent_ns >= self.cfg.failover_after_ns {
                let candidate = (0..self.v.servers.len()).find(|&i| {
                    i != self.primary
                        && matches!(self.v.roles[i], Some((Role::Replica, _)))
                        && now.saturating_sub(self.v.last_pong_ns[i]) < CANDIDATE_FRESH_NS
                });
                if let Some(c) = candidate {
                    let epoch = self.epoch + 1;
                    self.promoting = Some((c, epoch));
                    let old = self.primary;
                    ctx.note(|| {
                        format!(
                            "primary server-{old} silent for {:.0} ms: promoting server-{c} (epoch {epoch})",
                            ns_to_ms(silent_ns)
                        )
                    });
                    ctx.send(self.v.servers[c], DbMsg::Promote { epoch });
                }
            }
        }
        self.v.probe = Some(ctx.set_timer(PROBE_EVERY_NS, ManagerTimer::Probe));
    }

    fn server_index(&self, node: NodeId) -> Option<usize> {
        self.v.servers.iter().position(|&s| s == node)
    }
}

/// What the manager keeps across a crash: its decisions (primary, epoch, promotion) and its
/// configuration; everything else restarts.
#[derive(Clone, Debug)]
pub struct ManagerDisk {
    cfg: Config,
    primary: usize,
    epoch: u64,
    promoting: Option<(usize, u64)>,
}

impl Durable for FailoverManager {
    type Disk = ManagerDisk;
    fn into_disk(self, _crash: &Crash) -> ManagerDisk {
        let FailoverManager { cfg, primary, epoch, promoting, v: _ } = self;
        ManagerDisk { cfg, primary, epoch, promoting }
    }
    fn from_disk(disk: ManagerDisk) -> Self {
        let ManagerDisk { cfg, primary, epoch, promoting } = disk;
        FailoverManager { cfg, primary, epoch, promoting, v: Volatile::default() }
    }
}

impl Process<Db> for FailoverManager {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Db>) {
        let servers: Vec<NodeId> =
            ["server-0", "server-1"].iter().map(|n| ctx.node_named(n).expect("db servers exist")).collect();
        let clients: Vec<NodeId> =
            (0..self.cfg.clients).filter_map(|i| ctx.node_named(&format!("client-{i}"))).collect();
        let now = ctx.now_mono_ns();
        // A fresh manager gives every server a full grace period before judging it.
        self.v = Volatile {
            last_pong_ns: vec![now; servers.len()],
            roles: vec![None; servers.len()],
            servers,
            clients,
            probe: None,
        };
        self.probe(ctx);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Db>, from: NodeId, msg: DbMsg) {
        match msg {
            DbMsg::Pong { role, epoch, .. } => {
                let Some(i) = self.server_index(from) else { return };
                self.v.last_pong_ns[i] = ctx.now_mono_ns();
                self.v.roles[i] = Some((role, epoch));
                if role == Role::Primary && epoch < self.epoch {
                    let primary = self.v.servers[self.primary];
                    ctx.send(from, DbMsg::Demote { epoch: self.epoch, primary });
                }
            }
            DbMsg::Promoted { epoch } => {
                let Some(i) = self.server_index(from) else { return };
                if self.promoting != Some((i, epoch)) {
                    return;
                }
                let old = self.primary;
                self.primary = i;
                self.epoch = epoch;
                self.promoting = None;
                ctx.note(|| format!("failover done: server-{i} is primary (epoch {epoch}); telling the clients"));
                for &c in &self.v.clients {
                    ctx.send(c, DbMsg::NewPrimary { primary: from, epoch });
                }
                ctx.send(self.v.servers[old], DbMsg::Demote { epoch, primary: from });
            }
            DbMsg::WhoIsPrimary => {
                let primary = self.v.servers[self.primary];
                ctx.send(from, DbMsg::NewPrimary { primary, epoch: self.epoch });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Db>, timer: TimerId, tag: DbTimer) {
        match tag {
            DbTimer::Manager(ManagerTimer::Probe) if self.v.probe == Some(timer) => self.probe(ctx),
            _ => {}
        }
    }
}
