//! One live backend per model that live mode runs (see [`crate::backend::backend_for`]).
//!
//! - [`db`]: one MariaDB server (`mariadbd`) holding the model's lock table
//! - [`redis`]: one `redis-server`; plain `SET NX PX` and Redisson
//! - [`redlock`]: `masters` independent `redis-server`s
//! - [`zookeeper`]: an ensemble of `servers` ZooKeeper 3.8 JVMs
//! - [`etcd`]: `servers` etcd members on loopback, with the model's Raft timing
//! - [`postgres`]: one PostgreSQL 15 server, and PgBouncer in front of it for the pgbouncer rows

pub mod db;
pub mod etcd;
pub mod postgres;
pub mod redis;
pub mod redlock;
pub mod zookeeper;
