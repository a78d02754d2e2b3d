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
//!
//! A new model is one folder here plus one line in [`registry`] (see `docs/adding-a-model.md`).

#![warn(missing_docs)]

pub mod consensus;
pub mod consul;
pub mod db;
pub mod dynamodb;
pub mod etcd;
pub mod hazelcast;
pub mod kubernetes;
pub mod notice_race;
pub mod postgres;
pub mod redis;
pub mod redlock;
mod smallmap;
pub mod zookeeper;

use locksim_simulator::model::DynModel;

/// Every model this build has, in the order `sim list` shows them. Adding a model is one line here.
pub fn registry() -> Vec<&'static dyn DynModel> {
    vec![
        &db::DB,
        &redis::REDIS,
        &redlock::REDLOCK,
        &zookeeper::ZOOKEEPER,
        &etcd::ETCD,
        &kubernetes::KUBERNETES,
        &postgres::POSTGRES,
        &consul::CONSUL,
        &hazelcast::HAZELCAST,
        &dynamodb::DYNAMODB,
    ]
}

/// The model with this name.
pub fn find(name: &str) -> Option<&'static dyn DynModel> {
    registry().into_iter().find(|m| m.name() == name)
}
