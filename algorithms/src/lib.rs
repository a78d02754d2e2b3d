//! locksim's lock models, one module each, and the registry from model name to model.
//!
//! Module map:
//! - [`redis`]: one Redis primary, replicas, Sentinel, the redis.io lock and Redisson's watchdog lock
//! - [`db`]: a MySQL lock row (INSERT, poll, cleanup job, heartbeat) or GET_LOCK; replica and failover
//! - [`consensus`]: the Raft replicated log shared by ZooKeeper and etcd
//! - [`redlock`]: N independent Redis masters and the Redlock client (quorum, validity)
//! - [`etcd`]: a Raft cluster with leases and revisions, and the clientv3/concurrency Mutex
//! - [`zookeeper`]: a ZooKeeper ensemble (sessions, ephemeral sequential znodes, watches) and Curator's lock recipes
//! - [`kubernetes`]: client-go leader election on a Lease, API servers with resourceVersion-checked updates
//! - [`postgres`]: PostgreSQL advisory locks (session or transaction scope), PgBouncer, a self-promoting standby
//! - [`consul`]: Consul servers (Raft), sessions bound to serfHealth and a TTL, lock-delay, and the Go api's Lock
//! - [`hazelcast`]: Hazelcast's CP subsystem (a Raft CP group, CP sessions) and its FencedLock
//! - [`dynamodb`]: the AWS DynamoDB Lock Client on one conditional-write table (RVN heartbeats, takeover after a lease)
//! - [`notice_race`]: the race after a pause between a library's notice (Curator's SUSPENDED,
//!   kazoo's listener, clientv3's `Session.Done()`) and the application thread's check
//! - `smallmap`: a small sorted-vector map the models use for per-key state
//! - [`params`]: reading a model's parameters by name into its typed configuration, an unknown
//!   key or a mistyped read a parameter problem (exit 2), never a panic
//!
//! A new model is one folder here plus one line in [`entries`] (see `docs/adding-a-model.md`).

#![warn(missing_docs)]

pub mod consensus;
pub mod consul;
pub mod db;
pub mod dynamodb;
pub mod etcd;
pub mod hazelcast;
pub mod kubernetes;
pub mod notice_race;
pub mod params;
pub mod postgres;
pub mod redis;
pub mod redlock;
mod smallmap;
pub mod zookeeper;

use locksim_simulator::model::DynModel;

/// Declares [`LiveBackend`] and its [`LiveBackend::ALL`] from one list of variants, so that a new
/// backend cannot be left out of `ALL` (the live crate's test walks `ALL` to hold every backend
/// to a registry entry).
macro_rules! live_backends {
    ($($(#[doc = $doc:literal])* $variant:ident,)*) => {
        /// The backend that runs a model in live mode (`sim live`, `sim compare`) against real
        /// servers started on this machine. A registry entry declares it; `locksim-live` maps each
        /// one to its servers and client adapter (`live/src/backends/`), and a test there holds the
        /// two together.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum LiveBackend {
            $($(#[doc = $doc])* $variant,)*
        }

        impl LiveBackend {
            /// Every live backend, in declaration order.
            pub const ALL: [LiveBackend; [$(stringify!($variant)),*].len()] = [$(LiveBackend::$variant),*];
        }
    };
}

live_backends! {
    /// One MariaDB server (or PostgreSQL, for the rows that ask for it).
    Db,
    /// One `redis-server`, with replicas and Sentinels when the row has them.
    Redis,
    /// Independent `redis-server` masters.
    Redlock,
    /// A ZooKeeper ensemble.
    ZooKeeper,
    /// An etcd cluster.
    Etcd,
    /// One PostgreSQL server, PgBouncer in front of it when the row has it.
    Postgres,
}

/// One line of the registry: a model, and the live backend that runs it against real servers
/// (`None`: it is simulated only).
#[derive(Clone, Copy)]
pub struct Entry {
    /// The model.
    pub model: &'static dyn DynModel,
    /// Its live backend, if it has one.
    pub live: Option<LiveBackend>,
}

/// Every model this build has, in the order `sim list` shows them, each with its live backend.
/// Adding a model is one line here.
pub fn entries() -> Vec<Entry> {
    vec![
        Entry { model: &db::DB, live: Some(LiveBackend::Db) },
        Entry { model: &redis::REDIS, live: Some(LiveBackend::Redis) },
        Entry { model: &redlock::REDLOCK, live: Some(LiveBackend::Redlock) },
        Entry { model: &zookeeper::ZOOKEEPER, live: Some(LiveBackend::ZooKeeper) },
        Entry { model: &etcd::ETCD, live: Some(LiveBackend::Etcd) },
        Entry { model: &kubernetes::KUBERNETES, live: None },
        Entry { model: &postgres::POSTGRES, live: Some(LiveBackend::Postgres) },
        Entry { model: &consul::CONSUL, live: None },
        Entry { model: &hazelcast::HAZELCAST, live: None },
        Entry { model: &dynamodb::DYNAMODB, live: None },
    ]
}

/// Every model this build has, in the order `sim list` shows them ([`entries`]' models).
pub fn registry() -> Vec<&'static dyn DynModel> {
    entries().into_iter().map(|e| e.model).collect()
}

/// The live backend the registry declares for the model named `name` (`None`: the model has
/// none, or there is no such model).
pub fn live_backend(name: &str) -> Option<LiveBackend> {
    entries().into_iter().find(|e| e.model.name() == name).and_then(|e| e.live)
}

/// The names of the models that have a live backend, in the registry's order.
pub fn live_models() -> Vec<&'static str> {
    entries().into_iter().filter(|e| e.live.is_some()).map(|e| e.model.name()).collect()
}

/// The model with this name.
pub fn find(name: &str) -> Option<&'static dyn DynModel> {
    registry().into_iter().find(|m| m.name() == name)
}
