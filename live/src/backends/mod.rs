//! One live backend per model that live mode runs (see [`crate::backend::backend_for`]).
//!
//! - [`redis`]: one `redis-server`; plain `SET NX PX` and Redisson
//! - [`redlock`]: `masters` independent `redis-server`s
//! - [`etcd`]: `servers` etcd members on loopback, with the model's Raft timing

pub mod etcd;
pub mod redis;
pub mod redlock;
