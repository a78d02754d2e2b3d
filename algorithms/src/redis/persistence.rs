//! What a Redis server keeps on disk, and what a restart loads, per persistence setting and per
//! kind of crash. One module for every Redis server the crate models: the `redis` model's
//! primary and replicas and Redlock's independent masters, each holding a [`Keyspace`].
//!
//! Sources (Redis 7.2): `redis.conf` (stock settings: `save 3600 1 300 100 60 10000`,
//! `appendonly no`, `appendfsync everysec`), `server.c` (`serverCron`: a save rule
//! `(seconds, changes)` fires when `server.dirty >= changes` and
//! `server.unixtime - server.lastsave > seconds`; `beforeSleep` calls `flushAppendOnlyFile`,
//! which `write(2)`s the AOF buffer, before `handleClientsWithPendingWrites` writes the replies
//! of that event-loop iteration, so every acknowledged write is in the AOF file's page cache,
//! which outlives the process), `rdb.c` (`rdbSaveBackground` forks; the child's `rdbSave` writes
//! a temp file, fsyncs it and renames it over `dump.rdb` itself; `backgroundSaveDoneHandler`
//! subtracts the changes counted at fork time from `dirty` and sets `lastsave`), `aof.c`
//! (`appendfsync always` fsyncs before replying; `everysec` once a second from a background
//! thread, `aof_background_fsync`), `replication.c` (`readSyncBulkPayload`: a replica with the
//! default `repl-diskless-load disabled` stores the primary's RDB as its own `dump.rdb` before
//! loading it).
//!
//! What survives:
//!
//! | setting | process killed (`mode = "process"`) | machine lost (`mode = "machine"`, the power loss redis.io's Redlock page discusses) |
//! |---|---|---|
//! | `none` | nothing | nothing |
//! | `rdb` | the last completed snapshot (a save in progress completes: the child survives its parent and renames its own file) | the last completed snapshot (fsynced before its rename) |
//! | `everysec` | every write (in the page cache) | the data as of the last once-a-second fsync |
//! | `always` | every write | every write |
//!
//! Which settings a server offers is configuration: the `redis` model's servers run the save
//! rules (`rdb`, the stock default, [`Persistence::CHOICES`]); Redlock's masters model the AOF
//! settings only ([`Persistence::AOF_CHOICES`], default `everysec`, the setting redis.io's
//! Redlock page discusses).

use locksim_simulator::process::CrashKind;
use locksim_simulator::time::{Nanos, NS_PER_MS};

use super::keyspace::Keyspace;

mod fingerprint;

/// `appendfsync everysec`: the background fsync's period (Redis 7.2 `aof.c`,
/// `flushAppendOnlyFile`: a background fsync starts when `server.unixtime > server.aof_last_fsync`,
/// at most once a second). The `redis` model's servers arm it one period after each start;
/// Redlock's masters draw the first one's phase (`redlock/server.rs`).
pub const FSYNC_EVERY_NS: Nanos = 1_000 * NS_PER_MS;
/// How long a `BGSAVE` takes from the fork to the rename of the new `dump.rdb`. A lock keyspace
/// holds a handful of keys, so the time is the fork and a small fsynced write; the model takes
/// 10 ms (a documented choice, not a Redis constant).
pub const BGSAVE_NS: Nanos = 10 * NS_PER_MS;

/// A `save <seconds> <changes>` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaveRule {
    /// Seconds since the last successful save.
    pub seconds: i64,
    /// Changes since the last successful save.
    pub changes: u64,
}

/// The stock `redis.conf` rules (Redis 7.x): `save 3600 1 300 100 60 10000`.
pub const STOCK_SAVE_RULES: &[SaveRule] = &[
    SaveRule { seconds: 3600, changes: 1 },
    SaveRule { seconds: 300, changes: 100 },
    SaveRule { seconds: 60, changes: 10_000 },
];

/// The persistence setting (`persistence` parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// `save ""` and `appendonly no`: nothing on disk.
    None,
    /// The stock configuration: RDB snapshots by the save rules, `appendonly no`.
    Rdb,
    /// `appendonly yes`, `appendfsync everysec`.
    EverySec,
    /// `appendonly yes`, `appendfsync always`.
    Always,
}

impl Persistence {
    /// The `persistence` parameter's choices for a server that runs the save rules (the `redis`
    /// model; validated by the schema).
    pub const CHOICES: &'static [&'static str] = &["none", "rdb", "everysec", "always"];
    /// The choices for a server without the save rules (Redlock's masters: no `serverCron` save
    /// check is modelled there, so `rdb` is not offered).
    pub const AOF_CHOICES: &'static [&'static str] = &["none", "everysec", "always"];

    /// Parses a value the schema accepted.
    pub fn parse(s: &str) -> Persistence {
        match s {
            "none" => Persistence::None,
            "rdb" => Persistence::Rdb,
            "always" => Persistence::Always,
            _ => Persistence::EverySec,
        }
    }
}

/// The snapshot schedule's volatile part: changes since the last save, when it was, and a
/// `BGSAVE` under way (lost with the process, except as [`Disk::on_crash`] says).
#[derive(Clone, Debug, Default)]
pub struct SaveState {
    /// `server.dirty`: changes since the last successful save.
    pub dirty: u64,
    /// `server.lastsave`: the wall-clock time of the last successful save (or the start).
    pub lastsave_wall_ns: i64,
    /// A `BGSAVE` under way: the data at fork time and the changes counted then.
    pub in_progress: Option<(Keyspace, u64)>,
}

impl SaveState {
    /// Whether a save rule fires now (`serverCron`), with no save already running.
    pub fn due(&self, now_wall_ns: i64) -> bool {
        let elapsed_s = (now_wall_ns - self.lastsave_wall_ns) / (1_000 * NS_PER_MS as i64);
        self.in_progress.is_none() && STOCK_SAVE_RULES.iter().any(|r| self.dirty >= r.changes && elapsed_s > r.seconds)
    }
}

/// What is on a server's disk: the last completed snapshot and the AOF as last fsynced.
#[derive(Clone, Debug)]
pub struct Disk {
    /// The setting.
    pub persistence: Persistence,
    /// `dump.rdb`: the last completed snapshot, if any.
    rdb: Option<Keyspace>,
    /// The AOF as of the last fsync (`everysec`).
    aof_fsynced: Keyspace,
    /// What the next start loads (set at the crash).
    to_load: Keyspace,
}

impl Disk {
    /// An empty disk.
    pub fn new(persistence: Persistence) -> Self {
        Disk { persistence, rdb: None, aof_fsynced: Keyspace::default(), to_load: Keyspace::default() }
    }

    /// Whether the save rules run (RDB persistence: with the AOF on, a restart loads the AOF and
    /// the model leaves the snapshots out).
    pub fn snapshots(&self) -> bool {
        self.persistence == Persistence::Rdb
    }

    /// The everysec fsync: the AOF on disk catches up with the keyspace.
    pub fn fsync(&mut self, data: &Keyspace) {
        self.aof_fsynced = data.clone();
    }

    /// A `BGSAVE` finished: its snapshot is `dump.rdb` (also a replica storing its primary's RDB).
    pub fn store_rdb(&mut self, snapshot: Keyspace) {
        self.rdb = Some(snapshot);
    }

    /// The process or machine went down with `data` in memory and `save` under way: decides what
    /// the next start loads.
    pub fn on_crash(&mut self, kind: CrashKind, data: Keyspace, save: SaveState) {
        if kind == CrashKind::Process {
            // The BGSAVE child is a separate process: it finishes and renames its own file.
            if let Some((snapshot, _)) = save.in_progress {
                self.rdb = Some(snapshot);
            }
        }
        self.to_load = match (self.persistence, kind) {
            (Persistence::None, _) => Keyspace::default(),
            (Persistence::Rdb, _) => self.rdb.clone().unwrap_or_default(),
            // Killed: every write was already in the page cache; the OS writes it out.
            (Persistence::EverySec, CrashKind::Process) | (Persistence::Always, _) => data,
            (Persistence::EverySec, CrashKind::Machine) => std::mem::take(&mut self.aof_fsynced),
        };
        // The AOF on disk is what was loaded (a restart rewrites nothing else).
        if self.persistence == Persistence::EverySec {
            self.aof_fsynced = self.to_load.clone();
        }
    }

    /// What a restart loads.
    pub fn load(&self) -> Keyspace {
        self.to_load.clone()
    }

    /// Where the loaded data came from, for the trace.
    pub fn source(&self) -> &'static str {
        match self.persistence {
            Persistence::None => "nothing (no persistence)",
            Persistence::Rdb => "the last RDB snapshot",
            Persistence::EverySec | Persistence::Always => "the AOF",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000 * NS_PER_MS as i64;

    fn with_lock() -> Keyspace {
        let mut ks = Keyspace::default();
        ks.set_nx_px(0, 7, 30_000, true, 0);
        ks
    }

    #[test]
    fn a_save_rule_needs_both_its_changes_and_its_seconds() {
        let mut st = SaveState { dirty: 99, lastsave_wall_ns: 0, in_progress: None };
        assert!(!st.due(301 * S), "99 changes: the 300 s rule needs 100");
        st.dirty = 100;
        assert!(!st.due(300 * S), "strictly more than 300 s");
        assert!(st.due(301 * S));
        st.dirty = 10_000;
        assert!(st.due(61 * S) && !st.due(60 * S));
        st.dirty = 1;
        assert!(st.due(3601 * S) && !st.due(3599 * S));
        st.in_progress = Some((Keyspace::default(), 1));
        assert!(!st.due(3601 * S), "one BGSAVE at a time");
    }

    #[test]
    fn a_save_under_way_survives_a_killed_process_but_not_a_lost_machine() {
        let save = || SaveState { dirty: 2, lastsave_wall_ns: 0, in_progress: Some((with_lock(), 2)) };
        let mut disk = Disk::new(Persistence::Rdb);
        disk.on_crash(CrashKind::Process, with_lock(), save());
        assert_eq!(disk.load(), with_lock());
        let mut disk = Disk::new(Persistence::Rdb);
        disk.on_crash(CrashKind::Machine, with_lock(), save());
        assert!(disk.load().is_empty());
    }

    #[test]
    fn what_each_setting_loads_after_each_kind_of_crash() {
        for (p, process_keeps, machine_keeps) in [
            (Persistence::None, false, false),
            (Persistence::Rdb, false, false),
            (Persistence::EverySec, true, false),
            (Persistence::Always, true, true),
        ] {
            for (kind, keeps) in [(CrashKind::Process, process_keeps), (CrashKind::Machine, machine_keeps)] {
                // Nothing fsynced and no snapshot yet: only the page cache or `always` keeps it.
                let mut disk = Disk::new(p);
                disk.on_crash(kind, with_lock(), SaveState::default());
                assert_eq!(!disk.load().is_empty(), keeps, "{p:?} {kind:?}");
            }
        }
        let mut disk = Disk::new(Persistence::EverySec);
        disk.fsync(&with_lock());
        disk.on_crash(CrashKind::Machine, Keyspace::default(), SaveState::default());
        assert_eq!(disk.load(), with_lock(), "the last fsync");
    }
}
