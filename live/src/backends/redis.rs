//! The `redis` model's live backend: one real `redis-server` with the model's persistence; the
//! model's client library (plain `SET NX PX` or Redisson) through [`RedisAdapter`].

use std::path::Path;

use locksim_algorithms::redis::Redis;
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::adapters::redis::RedisAdapter;
use crate::backend::Backend;
use crate::client::{self, ClientSpec};
use crate::servers::{self, Server};

pub(crate) fn redis_version() -> Vec<(String, String)> {
    let v = servers::find_binary("redis-server", "redis-server")
        .map(|b| servers::version_of(&b, "--version"))
        .unwrap_or_else(|e| e);
    vec![("redis-server".to_string(), v)]
}

/// `redis`: one `redis-server` (replicas and Sentinel are not started yet).
pub struct RedisBackend;

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
    fn probe_request_ms(&self, servers: &[Server], n: usize) -> Option<Result<(f64, &'static str), String>> {
        Some(probe_set(servers, n))
    }
    fn boundary(&self) -> &'static str {
        "the model's client library (SET NX PX or Redisson: lock, watchdog, pub/sub wait, unlock) runs unchanged; \
its commands are sent by the `redis` crate as the real scripts; the server is a real redis-server with the model's persistence"
    }
}

/// The median round trip of `SET` on the first server, through a connection thread.
pub(crate) fn probe_set(servers: &[Server], n: usize) -> Result<(f64, &'static str), String> {
    let addr = servers.first().ok_or("no server started")?.addr();
    let client = redis::Client::open(format!("redis://{addr}/")).map_err(|e| e.to_string())?;
    let mut con = client.get_connection_with_timeout(std::time::Duration::from_secs(2)).map_err(|e| e.to_string())?;
    let ms = crate::calibrate::through_a_thread(n, move |i| {
        redis::cmd("SET").arg("calibrate").arg(i).query::<()>(&mut con).map_err(|e| e.to_string())
    })?;
    Ok((ms, "a SET"))
}
