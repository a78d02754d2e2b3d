//! Helpers shared by the Redlock model's tests: the model's configuration stated in Rust
//! ([`RedlockConfig`], as the redis tests state `RedisConfig`), run on a scenario text that gives
//! only the network, workload and faults ([`run_config`]). Tests about reading the parameters (the
//! `client` presets, a refused value) parse TOML; the others build the configuration here.

#![allow(dead_code)]

use crate::common;
pub use common::*;

pub use locksim_algorithms::redis::persistence::Persistence;
pub use locksim_algorithms::redlock::client::{ElapsedClock, RequestMode};
pub use locksim_algorithms::redlock::library::Library;
pub use locksim_algorithms::redlock::RedlockConfig;
use locksim_algorithms::redlock::{Redlock, REDLOCK};
pub use locksim_simulator::dist::Dist;
use locksim_simulator::model::Cluster;
use locksim_simulator::process::NodeKind;
use locksim_simulator::setup::WorkloadSpec;

impl TypedConfig for RedlockConfig {
    type Shipped = Redlock;
    fn shipped() -> &'static Redlock {
        &REDLOCK
    }
    fn library_name(&self) -> String {
        self.client_name.clone()
    }
    fn services(&self) -> Vec<(String, NodeKind)> {
        RedlockConfig::services(self)
    }
    fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Redlock> {
        RedlockConfig::cluster(self, workload)
    }
}

/// A row with no `[models.redlock]` table: `client = "redlock-rb"` and every parameter at its
/// schema default, stated in Rust (`redlock_library.rs` checks it against the parsed row).
pub fn redlock_rb() -> RedlockConfig {
    RedlockConfig {
        library: Library::RedlockRb,
        client_name: "redlock-rb".into(),
        masters: 5,
        ttl_ms: 10_000,
        elapsed_clock: ElapsedClock::Mono,
        drift_factor: 0.01,
        drift_extra_ms: 2.0,
        requests: RequestMode::Sequential,
        node_timeout_ms: 100.0,
        retries: 3,
        retry_delay_ms: Dist::Uniform(200.0, 250.0),
        persistence: Persistence::EverySec,
        restart_delay_ms: 0.0,
        respect_validity: false,
        extend_every_ms: 0.0,
        extend_sets: false,
        service_ms: Dist::Const(0.05),
    }
}

/// `client = "redsync-4"` with `ttl_ms` and every other parameter at its default: the redsync
/// preset (`library.rs`), whose node timeout is ttl × `timeoutFactor` 0.05.
pub fn redsync(ttl_ms: u64) -> RedlockConfig {
    RedlockConfig {
        library: Library::Redsync,
        client_name: "redsync-4".into(),
        ttl_ms,
        retries: 32,
        retry_delay_ms: Dist::Uniform(50.0, 250.0),
        node_timeout_ms: ttl_ms as f64 * 0.05,
        drift_extra_ms: 0.0,
        requests: RequestMode::Parallel,
        ..redlock_rb()
    }
}
