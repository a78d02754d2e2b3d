//! redis-py's `Lock` (PyPI `redis`, pinned in `reference/redis-py/requirements.txt`) for the
//! `redis` model's plain SET NX PX rows: `SET name token NX PX ttl`, a sleep between refused
//! tries, the compare-and-delete release script. Rows with Redisson's watchdog or with replicas
//! have no reference client here (Redisson cannot be obtained; the harness talks to one server).

use locksim_simulator::history::LockKey;
use locksim_simulator::model::Params;
use serde_json::{json, Value};

use super::Library;

fn fits(params: &Params) -> Result<(), String> {
    if params.bool("watchdog") {
        return Err("watchdog = true is Redisson's lock, which cannot be obtained here (no Maven repository)".into());
    }
    if params.int("replicas") > 0 {
        return Err("replicas > 0: the harness talks to one server (no Sentinel client)".into());
    }
    Ok(())
}

fn settings(params: &Params) -> Value {
    // The values after the row's `client` preset (the scenario's own values kept): the harness
    // runs with what the model would run with; `locksim-1` changes nothing.
    let params = &locksim_algorithms::redis::library::resolve(params);
    json!({ "ttl_ms": params.f64("ttl_ms"), "retry_ms": params.dist("retry_ms").mean() })
}

/// redis-py 5.2.1.
pub const LIBRARY: Library = Library {
    name: "redis-py",
    model: "redis",
    version: "redis-py 5.2.1 (PyPI redis==5.2.1)",
    preset: "redis-py-5",
    fenced: false,
    lock_name: |key: LockKey| format!("lock:{key}"),
    fits,
    settings,
    note: "redis-py's Lock runs (SET NX PX with a random token, sleep retry_ms between tries, the \
compare-and-delete script): not the row's unlock/acquire variant, no fencing token, no check before the write",
};
