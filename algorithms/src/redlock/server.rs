//! One independent Redis master of a Redlock deployment: `SET NX PX` with expiry on the master's
//! WALL clock (Redis stores an absolute unix-time expiry and compares it with the current time, so
//! a wall-clock jump forward expires keys early and one backward keeps them longer), the
//! compare-and-delete unlock script, redsync's extend script, and a delayed restart.
//!
//! A master is a Redis server as the `redis` model's are, configured as Redlock deploys it: no
//! replicas, no Sentinel, no save rules. It shares their server core: the single-threaded
//! command loop ([`crate::redis::command_loop`], `service_ms` per command) and the persistence
//! model ([`crate::redis::persistence`]: one [`Persistence`] setting and one [`Disk`], here
//! holding a master's [`Store`]). What differs is configuration ([`MasterConfig`]): the AOF
//! settings only ([`Persistence::AOF_CHOICES`], `everysec` by default), the restart delay, and the
//! first fsync's phase, drawn from the master's seeded stream at its start (the background fsync
//! thread's phase relative to the workload is arbitrary in a real server).
//!
//! Expired keys are removed lazily when a command touches them (Redis also expires keys actively;
//! for a lock key the two are indistinguishable to clients).
//!
//! `restart_delay_ms` (redis.io: "make the instance unavailable for at least a bit more than the
//! max TTL"): the engine restarts a crashed node when the fault's duration ends, so a restarted
//! master stays silent (drops every request, as a node that is down) until `restart_delay_ms`
//! after its crash (`Crash::mono_ns`) on its own monotonic clock: with restart_delay_ms >=
//! ttl_ms every key it acknowledged before the crash has expired before it answers again.

use locksim_simulator::dist::Dist;
use locksim_simulator::durable::Durable;
use locksim_simulator::history::LockKey;
use locksim_simulator::process::{Crash, Ctx, NodeId, Process, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_SEC};

use super::protocol::{Command, RedlockMsg, RedlockTimer, Reply, ServerTimer};
use super::Redlock;
use crate::redis::command_loop::CommandLoop;
use crate::redis::persistence::{Dataset, Disk, Persistence, SaveState, FSYNC_EVERY_NS};
use crate::smallmap::SmallMap;

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

/// One lock key in the keyspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    value: u64,
    /// Absolute expiry on the master's wall clock (Redis keeps an absolute unix time in ms).
    expires_at_wall_ns: i64,
}

/// The keyspace: lock keys with their values and wall-clock expiries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Store {
    keys: SmallMap<LockKey, Entry>,
}

impl Store {
    /// Drops `key` if it has expired at `now_wall_ns` (Redis's lazy expiry on access).
    fn expire(&mut self, key: LockKey, now_wall_ns: i64) {
        if self.keys.get(&key).is_some_and(|e| now_wall_ns >= e.expires_at_wall_ns) {
            self.keys.remove(&key);
        }
    }

    /// `SET key value NX PX ttl`: true (`OK`) when the key was absent or expired and is now set.
    pub fn set_nx(&mut self, key: LockKey, value: u64, ttl_ns: Nanos, now_wall_ns: i64) -> bool {
        self.expire(key, now_wall_ns);
        if self.keys.contains_key(&key) {
            return false;
        }
        let expires_at_wall_ns = now_wall_ns.saturating_add(ttl_ns as i64);
        self.keys.insert(key, Entry { value, expires_at_wall_ns });
        true
    }

    /// The unlock script: deletes the key only if it holds `value`; true when it deleted.
    pub fn unlock(&mut self, key: LockKey, value: u64, now_wall_ns: i64) -> bool {
        self.expire(key, now_wall_ns);
        if self.keys.get(&key).is_some_and(|e| e.value == value) {
            self.keys.remove(&key);
            true
        } else {
            false
        }
    }

    /// redsync's extend script: a new TTL for a key that holds `value`; with `set_if_missing`,
    /// the key set when it is absent (`touchWithSetNXScript`). True (1) when the key now holds
    /// `value` with the new TTL.
    pub fn touch(&mut self, key: LockKey, value: u64, ttl_ns: Nanos, set_if_missing: bool, now_wall_ns: i64) -> bool {
        self.expire(key, now_wall_ns);
        let expires_at_wall_ns = now_wall_ns.saturating_add(ttl_ns as i64);
        match self.keys.get_mut(&key) {
            Some(e) if e.value == value => {
                e.expires_at_wall_ns = expires_at_wall_ns;
                true
            }
            Some(_) => false,
            None if set_if_missing => {
                self.keys.insert(key, Entry { value, expires_at_wall_ns });
                true
            }
            None => false,
        }
    }

    /// The value `key` holds at `now_wall_ns`, if it is set and not expired.
    pub fn get(&self, key: LockKey, now_wall_ns: i64) -> Option<u64> {
        self.keys.get(&key).filter(|e| now_wall_ns < e.expires_at_wall_ns).map(|e| e.value)
    }

    /// The number of keys stored, expired ones not yet removed included.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Dataset for Store {
    fn len(&self) -> usize {
        Store::len(self)
    }
}

/// What a master loses at a crash: everything in memory. The keyspace it comes back with is
/// the one its [`Disk`] gives back.
#[derive(Clone, Debug, Default)]
struct Volatile {
    /// The keyspace in memory.
    store: Store,
    /// The single-threaded command loop.
    commands: CommandLoop,
    /// Set at a restart; the restarted master answers nothing until this monotonic time.
    silent_until_mono_ns: Option<Nanos>,
}

impl Volatile {
    /// A master's memory right after a (re)start: the keyspace it loaded, nothing else.
    fn with_store(store: Store) -> Volatile {
        Volatile { store, ..Volatile::default() }
    }
}

/// A Redis master process.
#[derive(Clone, Debug)]
pub struct RedisMaster {
    cfg: MasterConfig,
    /// Durable: the AOF on disk (with `everysec`, as of the last fsync).
    disk: Disk<Store>,
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
    disk: Disk<Store>,
    crashed_at_mono_ns: Option<Nanos>,
}

impl Durable for RedisMaster {
    type Disk = MasterFiles;

    fn into_disk(mut self, crash: &Crash) -> MasterFiles {
        // The disk decides what comes back (see the persistence module): nothing; every
        // acknowledged write (`always`, or a killed process whose AOF writes sit in the page
        // cache); or, when the machine went down with `everysec`, the keyspace as of the last
        // fsync. A master runs no save rules, so no BGSAVE is under way.
        self.disk.on_crash(crash.kind, self.v.store, SaveState::default());
        MasterFiles { cfg: self.cfg, disk: self.disk, crashed_at_mono_ns: Some(crash.mono_ns) }
    }

    fn from_disk(files: MasterFiles) -> Self {
        let MasterFiles { cfg, disk, crashed_at_mono_ns } = files;
        // The keyspace the disk gives back (empty before the first start).
        let v = Volatile::with_store(disk.load());
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
    pub fn store(&self) -> &Store {
        &self.v.store
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
        let ok = match req.cmd {
            Command::SetNx { key, value, ttl_ns } => v.store.set_nx(key, value, ttl_ns, now_wall),
            Command::Unlock { key, value } => v.store.unlock(key, value, now_wall),
            Command::Touch { key, value, ttl_ns, set_if_missing } => {
                v.store.touch(key, value, ttl_ns, set_if_missing, now_wall)
            }
        };
        // Commands run one after another; the reply leaves when this one is done.
        let after = v.commands.turn(ctx, &self.cfg.service_ms);
        let key = req.cmd.key();
        // The lookup is only for the trace: inside the note, it costs nothing when not tracing.
        let store = &v.store;
        ctx.note(|| match store.get(key, now_wall) {
            Some(v) => format!("lock{key} = {:08x}", v as u32),
            None => format!("lock{key} unset"),
        });
        ctx.send_after(after, from, Reply { id: req.id, ok });
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Redlock>, _timer: TimerId, tag: RedlockTimer) {
        match tag {
            RedlockTimer::Server(ServerTimer::Fsync) => {
                self.disk.fsync(&self.v.store);
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
        let (kept, silent_ms) = (self.v.store.len(), until.saturating_sub(now) / 1_000_000);
        ctx.note(|| format!("restarted with {kept} keys; silent for {silent_ms} ms"));
        self.arm_fsync(ctx, FSYNC_EVERY_NS);
    }

    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn set_nx_refuses_a_live_key_and_takes_an_expired_one() {
        let mut s = Store::default();
        assert!(s.set_nx(0, 7, 10_000 * MS as u64, 0));
        assert!(!s.set_nx(0, 8, 10_000 * MS as u64, 9_999 * MS));
        // Expiry is on the wall clock: at exactly set + ttl the key is gone.
        assert!(s.set_nx(0, 8, 10_000 * MS as u64, 10_000 * MS));
        assert_eq!(s.get(0, 10_000 * MS), Some(8));
    }

    #[test]
    fn a_wall_clock_jump_expires_a_key_early() {
        let mut s = Store::default();
        assert!(s.set_nx(0, 7, 10_000 * MS as u64, 0));
        // 1 s of true time later, but the wall clock jumped 9.5 s ahead.
        assert_eq!(s.get(0, 10_500 * MS), None);
        assert!(s.set_nx(0, 9, 10_000 * MS as u64, 10_500 * MS));
    }

    #[test]
    fn extend_renews_its_own_key_and_sets_a_missing_one_only_when_asked() {
        let mut s = Store::default();
        assert!(s.set_nx(0, 7, 1_000 * MS as u64, 0));
        assert!(s.touch(0, 7, 1_000 * MS as u64, false, 900 * MS), "its own key: PEXPIRE");
        assert_eq!(s.get(0, 1_800 * MS), Some(7), "renewed from 900 ms");
        assert!(!s.touch(0, 8, 1_000 * MS as u64, true, 1_000 * MS), "another value: 0, even with SET NX");
        // A master that restarted empty: the plain script answers 0, the PR #149 one sets it.
        let mut empty = Store::default();
        assert!(!empty.touch(0, 7, 1_000 * MS as u64, false, 0));
        assert!(empty.is_empty());
        assert!(empty.touch(0, 7, 1_000 * MS as u64, true, 0));
        assert_eq!(empty.get(0, 999 * MS), Some(7));
    }

    #[test]
    fn unlock_deletes_only_its_own_value() {
        let mut s = Store::default();
        assert!(s.set_nx(3, 7, 1_000 * MS as u64, 0));
        assert!(!s.unlock(3, 8, 1));
        assert_eq!(s.get(3, 1), Some(7));
        assert!(s.unlock(3, 7, 2));
        assert!(s.is_empty());
        assert!(!s.unlock(3, 7, 3), "a second unlock finds nothing");
    }
}
