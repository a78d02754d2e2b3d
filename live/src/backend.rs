//! What live mode can run, per model: which configurations it starts servers for (and why not
//! the others), how it starts them, which wire adapter carries the client library's messages,
//! and which server leads. A model without a backend is refused with the reason.

use std::path::Path;

use locksim_algorithms::redis::Redis;
use locksim_algorithms::redlock::Redlock;
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::adapters::redis::RedisAdapter;
use crate::adapters::redlock::RedlockAdapter;
use crate::client::{self, ClientSpec};
use crate::servers::{self, Server};

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
    /// Where the `leader` selector points (asked of the real system where it has one).
    fn leader(&self, servers: &[Server]) -> Option<String> {
        servers.first().map(|s| s.node.clone())
    }
    /// What the live run does differently from the model, shown with the results.
    fn boundary(&self) -> &'static str;
}

/// The models live mode runs today.
pub const LIVE_MODELS: &[&str] = &["redis", "redlock"];

/// The backend for a model, or why there is none.
pub fn backend_for(model: &str) -> Result<&'static dyn Backend, String> {
    match model {
        "redis" => Ok(&RedisBackend),
        "redlock" => Ok(&RedlockBackend),
        other => Err(format!(
            "live mode does not run the `{other}` model yet (it runs: {}); its servers and client library adapter are not written",
            LIVE_MODELS.join(", ")
        )),
    }
}

fn redis_version() -> Vec<(String, String)> {
    let v = servers::find_binary("redis-server", "redis-server")
        .map(|b| servers::version_of(&b, "--version"))
        .unwrap_or_else(|e| e);
    vec![("redis-server".to_string(), v)]
}

/// `redis`: one `redis-server` (replicas and Sentinel are not started yet).
struct RedisBackend;

impl Backend for RedisBackend {
    fn check(&self, params: &Params) -> Result<(), String> {
        if params.int("replicas") > 0 {
            return Err(format!(
                "replicas = {}: live mode starts one redis-server; replicas and Sentinel are not started in live mode yet (set replicas = 0)",
                params.int("replicas")
            ));
        }
        Ok(())
    }
    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        Ok(vec![servers::redis_server(root, "server-0", params.str("persistence"))?])
    }
    fn versions(&self) -> Vec<(String, String)> {
        redis_version()
    }
    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        client::run_typed(&Redis, setup, run, spec, |servers, tx| Box::new(RedisAdapter::new(servers, tx)))
    }
    fn boundary(&self) -> &'static str {
        "the model's client library (SET NX PX or Redisson: lock, watchdog, pub/sub wait, unlock) runs unchanged; \
its commands are sent by the `redis` crate as the real scripts; the server is a real redis-server with the model's persistence"
    }
}

/// `redlock`: `masters` independent `redis-server`s.
struct RedlockBackend;

impl Backend for RedlockBackend {
    fn check(&self, _params: &Params) -> Result<(), String> {
        Ok(())
    }
    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        let persistence = params.str("persistence");
        (0..params.int("masters")).map(|i| servers::redis_server(root, &format!("server-{i}"), persistence)).collect()
    }
    fn versions(&self) -> Vec<(String, String)> {
        redis_version()
    }
    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        client::run_typed(&Redlock, setup, run, spec, |servers, tx| Box::new(RedlockAdapter::new(servers, tx)))
    }
    fn boundary(&self) -> &'static str {
        "the model's Redlock library (quorum, validity arithmetic, retries) runs unchanged; SET NX PX and the unlock \
script go to real redis-servers through the `redis` crate; clocks are the machine's (no drift can be injected)"
    }
}
