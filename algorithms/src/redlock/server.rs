//! One independent Redis master of a Redlock deployment: `SET NX PX` with expiry on the master's
//! WALL clock (Redis stores an absolute unix-time expiry and compares it with the current time, so
//! a wall-clock jump forward expires keys early and one backward keeps them longer), the
//! compare-and-delete unlock script, redsync's extend script, and a delayed restart.
//!
//! A master is a Redis server as the `redis` model's are, configured as Redlock deploys it: no
//! replicas, no Sentinel, no save rules. It shares their server core: the single-threaded
//! command loop ([`crate::redis::command_loop`], `service_ms` per command) and the persistence
//! model ([`crate::redis::persistence`]: one [`Persistence`] setting and one [`Disk`]) and the
//! keyspace ([`Keyspace`]: the same expiry rule and the same scripts, `SET NX PX` and the
//! compare-and-delete unlock the redis model's clients run too, and redsync's extend scripts).
//! What differs is configuration ([`MasterConfig`]): the AOF
//! settings only ([`Persistence::AOF_CHOICES`], `everysec` by default), the restart delay, and the
//! first fsync's phase, drawn from the master's seeded stream at its start (the background fsync
//! thread's phase relative to the workload is arbitrary in a real server).
//!
//! A key set with `PX ttl_ms` at wall time `t` still stands at `t + ttl_ms` and is gone after it
//! (Redis 7.2 `src/db.c` `keyIsExpired`: `now > when`). The PX is the whole number of
//! milliseconds the client library sends (see [`super::client`]). Expired keys are removed
//! lazily when a command touches them (Redis also expires keys actively; for a lock key the two
//! are indistinguishable to clients). A master has no replicas: the write operations a command
//! returns are not sent anywhere, and its AOF is modelled as the dataset it holds ([`Disk`]).
//!
//! `restart_delay_ms` (redis.io: "make the instance unavailable for at least a bit more than the
//! max TTL"): the engine restarts a crashed node when the fault's duration ends, so a restarted
//! master stays silent (drops every request, as a node that is down) until `restart_delay_ms`
//! after its crash (`Crash::mono_ns`) on its own monotonic clock: with restart_delay_ms >=
//! ttl_ms every key it acknowledged before the crash has expired before it answers again.

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_SEC};

use super::protocol::{Command, RedlockMsg, RedlockTimer, Reply, ServerTimer};
use super::Redlock;
use crate::redis::command_loop::CommandLoop;
use crate::redis::keyspace::{self, Key, Keyspace, Value};
use crate::redis::persistence::{Disk, Persistence, SaveState, FSYNC_EVERY_NS};

mod fingerprint;

/// A master's configuration: the parts of the model's parameters a master uses.
#[derive(Clone, Debug)]
pub struct MasterConfig {
    /// `persistence`: what a restarted master still has (one of [`Persistence::AOF_CHOICES`]).
    pub persistence: Persistence,
    /// `restart_delay_ms`, in nanoseconds: how long after its crash a master stays silent.
    pub restart_delay_ns: Nanos,
    /// `service_ms`: the time per command, milliseconds.
    pub service_ms: Dist,
}

/// What a master loses at a crash: everything in memory. The keyspace it comes back with is
/// the one its [`Disk`] gives back.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// The keyspace in memory.
    keyspace: Keyspace,
    /// The single-threaded command loop.
    commands: CommandLoop,
    /// Set at a restart; the restarted master answers nothing until this monotonic time.
    silent_until_mono_ns: Option<Nanos>,
}

impl Volatile {
    /// A master's memory right after a (re)start: the keyspace it loaded, nothing else.
    fn with_keyspace(keyspace: Keyspace) -> Volatile {
        Volatile { keyspace, ..Volatile::default() }
    }
}

/// A Redis master process.
#[derive(Clone, Debug)]
pub struct RedisMaster {
    cfg: MasterConfig,
    /// Durable: the AOF on disk (with `everysec`, as of the last fsync).
    disk: Disk,
    /// Between a crash and the restart: the crash instant on the master's monotonic clock
    /// (`Crash::mono_ns`), carried from `on_crash` to `on_restart`.
    crashed_at_mono_ns: Option<Nanos>,
    v: Volatile,
}

/// What a master keeps through a crash ([`Durable::Disk`]): its configuration, its AOF as the
/// persistence setting and the kind of crash leave it ([`Disk::on_crash`]), and the crash instant
/// the restart delay counts from.
#[derive(Clone, Debug)]
pub struct MasterFiles {
    cfg: MasterConfig,
    disk: Disk,
    crashed_at_mono_ns: Option<Nanos>,
}

impl Durable for RedisMaster {
    type Disk = MasterFiles;

    fn into_disk(mut self, crash: &Crash) -> MasterFiles {
        // The disk decides what comes back (see the persistence module): nothing; every
        // acknowledged write (`always`, or a killed process whose AOF writes sit in the page
        // cache); or, when the machine went down with `everysec`, the keyspace as of the last
        // fsync. A master runs no save rules, so no BGSAVE is under way.
        self.disk.on_crash(crash.kind, self.v.keyspace, SaveState::default());
        MasterFiles { cfg: self.cfg, disk: self.disk, crashed_at_mono_ns: Some(crash.mono_ns) }
    }

    fn from_disk(files: MasterFiles) -> Self {
        let MasterFiles { cfg, disk, crashed_at_mono_ns } = files;
        // The keyspace the disk gives back (empty before the first start).
        let v = Volatile::with_keyspace(disk.load());
        RedisMaster { cfg, disk, crashed_at_mono_ns, v }
    }
}

impl RedisMaster {
    /// A master with this configuration, its disk empty.
    pub fn new(cfg: MasterConfig) -> RedisMaster {
        let disk = Disk::new(cfg.persistence);
        Self::from_disk(MasterFiles { cfg, disk, crashed_at_mono_ns: None })
    }

    /// The keyspace (for tests and notes).
    pub fn keyspace(&self) -> &Keyspace {
        &self.v.keyspace
    }

    fn arm_fsync(&mut self, ctx: &mut Ctx<Redlock>, after_ns: Nanos) {
        if self.cfg.persistence == Persistence::EverySec {
            ctx.set_timer(after_ns, ServerTimer::Fsync);
        }
    }

    /// Whether the master is still inside its delayed restart; notes the moment it comes back.
    fn silent(&mut self, ctx: &mut Ctx<Redlock>) -> bool {
        match self.v.silent_until_mono_ns {
            Some(until) if ctx.now_mono_ns() < until => true,
            Some(_) => {
                self.v.silent_until_mono_ns = None;
                ctx.note(|| "restart delay over: serving again".to_string());
                false
            }
            None => false,
        }
    }
}

impl Process<Redlock> for RedisMaster {
    fn on_start(&mut self, ctx: &mut Ctx<Redlock>) {
        // The fsync thread's phase relative to the workload is arbitrary in a real server: drawn
        // whatever the setting, so the master's stream is the same for every setting.
        let phase_ns = rand::Rng::gen_range(ctx.rng(), 1..=NS_PER_SEC);
        self.arm_fsync(ctx, phase_ns);
    }

    fn on_message(&mut self, ctx: &mut Ctx<Redlock>, from: NodeId, msg: RedlockMsg) {
        let RedlockMsg::Request(req) = msg else { return };
        if self.silent(ctx) {
            ctx.note(|| format!("down (restart delay): dropped {req:?}"));
            return;
        }
        let v = &mut self.v;
        let now_wall = ctx.now_wall_ns();
        // No replicas: the write operations each command returns go nowhere.
        let ok = match req.cmd {
            Command::SetNx { key, value, px_ms } => {
                matches!(v.keyspace.set_nx_px(key, value, px_ms, false, now_wall).0, keyspace::Reply::Acquired { .. })
            }
            Command::Unlock { key, value } => {
                v.keyspace.del_if_equals(key, value, now_wall).0 == keyspace::Reply::Int(1)
            }
            Command::Touch { key, value, px_ms, set_if_missing } => {
                v.keyspace.pexpire_if_equals(key, value, px_ms, set_if_missing, now_wall).0 == keyspace::Reply::Int(1)
            }
        };
        // Commands run one after another; the reply leaves when this one is done.
        let after = v.commands.turn(ctx, &self.cfg.service_ms);
        let key = req.cmd.key();
        // The lookup is only for the trace: inside the note, it costs nothing when not tracing.
        let keys = &v.keyspace;
        ctx.note(|| match keys.get_live(&Key::Lock(key), now_wall).map(|e| &e.value) {
            Some(Value::Str(v)) => format!("lock{key} = {:08x}", *v as u32),
            _ => format!("lock{key} unset"),
        });
        ctx.send_after(after, from, Reply { id: req.id, ok });
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Redlock>, _timer: TimerId, tag: RedlockTimer) {
        match tag {
            RedlockTimer::Server(ServerTimer::Fsync) => {
                self.disk.fsync(&self.v.keyspace);
                self.arm_fsync(ctx, FSYNC_EVERY_NS);
            }
            RedlockTimer::Client(_) => {}
        }
    }

    fn on_restart(&mut self, ctx: &mut Ctx<Redlock>) {
        let now = ctx.now_mono_ns();
        let crashed_at = self.crashed_at_mono_ns.take().unwrap_or(now).min(now);
        let until = crashed_at + self.cfg.restart_delay_ns;
        if until > now {
            self.v.silent_until_mono_ns = Some(until);
        }
        let (kept, silent_ms) = (self.v.keyspace.len(), until.saturating_sub(now) / 1_000_000);
        ctx.note(|| format!("restarted with {kept} keys; silent for {silent_ms} ms"));
        self.arm_fsync(ctx, FSYNC_EVERY_NS);
    }

    /// A master never names another master or itself; its one draw that can matter is the
    /// fsync phase at its first start (the engine renames no server before it has started);
    /// after that it draws only service times, which change nothing when `service_ms` is a
    /// constant.
    fn interchangeable_server(&self) -> bool {
        match self.cfg.service_ms {
            Dist::Const(_) => true,
            Dist::Uniform(a, b) => a == b,
            _ => false,
        }
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}
