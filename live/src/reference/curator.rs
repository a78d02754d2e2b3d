//! Apache Curator 5.4.0's `InterProcessMutex` (Debian `libcurator-recipes-java`, Java 17) for the
//! `zookeeper` model's `sequential` rows: the session timeout from the row, a
//! `ConnectionStateListener` whose SUSPENDED or LOST ends the section, the lock node's czxid as
//! the token.

use locksim_simulator::history::LockKey;
use locksim_simulator::model::Params;
use serde_json::{json, Value};

use super::Library;

/// Only Curator's mutex has a harness (not the naive herd lock or the read-write lock).
pub fn fits_sequential(params: &Params) -> Result<(), String> {
    match params.str("recipe") {
        "sequential" => Ok(()),
        other => Err(format!("recipe = \"{other}\": only InterProcessMutex (\"sequential\") has a harness")),
    }
}

/// The session timeout, Curator's retry policy (kazoo does not read it) and the application's
/// policy: stop at SUSPENDED (`"suspended"`) or only at LOST (`"lost"`).
pub fn session_settings(params: &Params) -> Value {
    // The values after the row's `client` preset (the scenario's own values kept): the harness
    // runs with what the model would run with; `locksim-1` changes nothing.
    let params = &locksim_algorithms::zookeeper::library::resolve(params);
    json!({
        "session_timeout_ms": params.f64("session_timeout_ms"),
        "retry_base_sleep_ms": params.f64("retry_base_sleep_ms"),
        "retry_max_retries": params.int("retry_max_retries"),
        "on_connection_loss": params.str("on_connection_loss"),
    })
}

/// Curator 5.4.0.
pub const LIBRARY: Library = Library {
    name: "curator",
    model: "zookeeper",
    version: "Apache Curator 5.4.0 InterProcessMutex (Debian libcurator-recipes-java), ZooKeeper client 3.8",
    preset: "curator-5.4",
    fenced: true,
    lock_name: |key: LockKey| format!("/locks/{key}"),
    fits: fits_sequential,
    settings: session_settings,
    note: "Curator's InterProcessMutex runs; SUSPENDED (with on_connection_loss = \"suspended\") or LOST \
at its ConnectionStateListener ends the section, the token is the lock node's czxid (one exists after the grant)",
};
