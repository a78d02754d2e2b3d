//! node-redlock 5 (npm `redlock`, with `ioredis`, pinned in `reference/node-redlock/`) for the
//! `redlock` model: `acquire` on every master with `retryCount`, `retryDelay` and `driftFactor`
//! from the row, the validity (`lock.expiration`) checked before the write when the row's
//! application does (`respect_validity`), `release` on every master.

use locksim_simulator::history::LockKey;
use locksim_simulator::model::Params;
use serde_json::{json, Value};

use super::Library;

fn settings(params: &Params) -> Value {
    // The values after the row's `client` preset (the scenario's own values kept): the harness
    // runs with what the model would run with; `locksim-1` changes nothing.
    let params = &locksim_algorithms::redlock::library::resolve(params);
    json!({
        "ttl_ms": params.f64("ttl_ms"),
        "retries": params.int("retries"),
        "retry_delay_ms": params.dist("retry_delay_ms").mean(),
        "drift_factor": params.f64("drift_factor"),
        "respect_validity": params.bool("respect_validity"),
    })
}

/// node-redlock 5.0.0-beta.2.
pub const LIBRARY: Library = Library {
    name: "node-redlock",
    model: "redlock",
    version: "node-redlock 5.0.0-beta.2 with ioredis 5.9.3 (npm)",
    preset: "node-redlock",
    fenced: false,
    lock_name: |key: LockKey| format!("lock:{key}"),
    fits: |_| Ok(()),
    settings,
    note: "node-redlock's acquire/release run on every master (retryJitter 0); with respect_validity the \
application checks lock.expiration before the write",
};
