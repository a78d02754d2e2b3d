//! etcd clientv3 3.4.23's `concurrency.Session` and `Mutex` (Debian `golang-etcd-server-dev`,
//! built with Debian's `golang-go` in GOPATH mode) for the `etcd` model's `mutex` rows: the
//! lease TTL from the row, `Session.Done()` ending the section, the own key's create revision as
//! the token.

use locksim_simulator::history::LockKey;
use locksim_simulator::model::Params;
use serde_json::{json, Value};

use super::Library;

fn fits(params: &Params) -> Result<(), String> {
    match params.str("recipe") {
        "mutex" => Ok(()),
        other => Err(format!("recipe = \"{other}\": only concurrency.Mutex (\"mutex\") has a harness")),
    }
}

fn settings(params: &Params) -> Value {
    // The values after the row's `client` preset (the scenario's own values kept): the harness
    // runs with what the model would run with; `locksim-1` changes nothing.
    let params = &locksim_algorithms::etcd::library::resolve(params);
    json!({ "lease_ttl_ms": params.f64("lease_ttl_ms"), "on_session_lost": params.str("on_session_lost") })
}

/// clientv3 3.4.23.
pub const LIBRARY: Library = Library {
    name: "clientv3",
    model: "etcd",
    version: "etcd clientv3 3.4.23 concurrency.Session + Mutex (Debian golang-etcd-server-dev)",
    preset: "clientv3-3.4",
    fenced: true,
    lock_name: |key: LockKey| format!("/locks/{key}"),
    fits,
    settings,
    note: "clientv3's concurrency.Session and Mutex run over gRPC to every member; with on_session_lost = \"stop\" \
Session.Done() ends the section, the token is the own key's create revision",
};
