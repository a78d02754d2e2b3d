//! One live backend per model that live mode runs, and which model each runs: the registry
//! (`locksim_algorithms::entries`) declares a model's [`LiveBackend`], and [`backend`] maps each
//! one to its servers and client adapter here.
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

use locksim_algorithms::LiveBackend;

use crate::backend::Backend;

/// The backend a registry entry's declaration names.
pub fn backend(live: LiveBackend) -> &'static dyn Backend {
    match live {
        LiveBackend::Db => &db::DbBackend,
        LiveBackend::Redis => &redis::RedisBackend,
        LiveBackend::Redlock => &redlock::RedlockBackend,
        LiveBackend::ZooKeeper => &zookeeper::ZooKeeperBackend,
        LiveBackend::Etcd => &etcd::EtcdBackend,
        LiveBackend::Postgres => &postgres::PostgresBackend,
    }
}

/// The backend of the model named `model`, as the registry declares it, or why there is none
/// (the models that have one, from the registry).
pub fn backend_for(model: &str) -> Result<&'static dyn Backend, String> {
    locksim_algorithms::live_backend(model).map(backend).ok_or_else(|| {
        format!(
            "live mode does not run the `{model}` model yet (it runs: {}); its servers and client library adapter are not written",
            locksim_algorithms::live_models().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registry entry that declares a live backend gets one here, and every backend here
    /// is declared by exactly one entry (a backend no model names would never run).
    #[test]
    fn the_registry_and_the_backends_name_each_other() {
        let entries = locksim_algorithms::entries();
        for e in &entries {
            let name = e.model.name();
            match e.live {
                Some(_) => assert!(backend_for(name).is_ok(), "{name} declares a live backend"),
                None => assert!(backend_for(name).is_err(), "{name} declares none"),
            }
        }
        for live in LiveBackend::ALL {
            let declaring: Vec<&str> =
                entries.iter().filter(|e| e.live == Some(live)).map(|e| e.model.name()).collect();
            assert_eq!(declaring.len(), 1, "{live:?} is declared by {declaring:?}");
        }
        let declared = entries.iter().filter(|e| e.live.is_some()).count();
        assert_eq!(declared, LiveBackend::ALL.len(), "an entry declares a backend outside LiveBackend::ALL");
    }

    /// The refusal lists the models the registry gives a backend, in its order.
    #[test]
    fn a_model_without_a_backend_is_refused_with_the_registry_s_live_models() {
        let Err(why) = backend_for("kubernetes") else { panic!("kubernetes has no live backend") };
        assert_eq!(
            why,
            "live mode does not run the `kubernetes` model yet (it runs: db, redis, redlock, zookeeper, etcd, postgres); \
             its servers and client library adapter are not written"
        );
    }
}
