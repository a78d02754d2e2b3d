//! What live mode can run, per model: which configurations it starts servers for (and why not
//! the others), how it starts them, which wire adapter carries the client library's messages,
//! and which server leads. A model without a backend is refused with the reason.

use std::path::Path;

use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::backends::etcd::EtcdBackend;
use crate::backends::redis::RedisBackend;
use crate::backends::redlock::RedlockBackend;
use crate::client::ClientSpec;
use crate::servers::Server;

/// A model's live backend.
pub trait Backend: Sync {
    /// Why this configuration cannot run live, if it cannot.
    fn check(&self, params: &Params) -> Result<(), String>;
    /// The servers to start (not started yet), in `root`.
    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String>;
    /// Each server program's name and version, for the results.
    fn versions(&self) -> Vec<(String, String)>;
    /// Runs one client process's workload (called in the client process).
    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String>;
    /// Waits until the started servers serve (a quorum formed, a leader elected); the default
    /// trusts the open client ports.
    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        let _ = servers;
        Ok(())
    }
    /// Where the `leader` selector points (asked of the real system where it has one).
    fn leader(&self, servers: &[Server]) -> Option<String> {
        servers.first().map(|s| s.node.clone())
    }
    /// `sim compare`'s calibration: the median round trip, in milliseconds, of `n` requests of
    /// the kind that names the model's `service_ms` (see each backend), sent to the first of the
    /// started, ready `servers` from a connection thread as a live client sends them, with what
    /// the request was. `None`: not measured for this model.
    fn probe_request_ms(&self, servers: &[Server], n: usize) -> Option<Result<(f64, &'static str), String>> {
        let _ = (servers, n);
        None
    }
    /// What the live run does differently from the model, shown with the results.
    fn boundary(&self) -> &'static str;
}

/// The models live mode runs today.
pub const LIVE_MODELS: &[&str] = &["db", "redis", "redlock", "zookeeper", "etcd"];

/// The backend for a model, or why there is none.
pub fn backend_for(model: &str) -> Result<&'static dyn Backend, String> {
    match model {
        "db" => Ok(&crate::backends::db::DbBackend),
        "redis" => Ok(&RedisBackend),
        "redlock" => Ok(&RedlockBackend),
        "zookeeper" => Ok(&crate::backends::zookeeper::ZooKeeperBackend),
        "etcd" => Ok(&EtcdBackend),
        other => Err(format!(
            "live mode does not run the `{other}` model yet (it runs: {}); its servers and client library adapter are not written",
            LIVE_MODELS.join(", ")
        )),
    }
}
