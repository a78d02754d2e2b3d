//! The `redis` model's live backend: real `redis-server`s with the model's persistence (a
//! primary, and with `replicas > 0` its replicas and `sentinels` real `redis-sentinel`s watching
//! it with the model's `quorum` and `down_after_ms`); the model's client library (plain
//! `SET NX PX` or Redisson) through [`RedisAdapter`], which asks the real Sentinels where the
//! primary is and hears their `+switch-master`, `+sdown` and `-sdown`.

use std::path::Path;
use std::time::{Duration, Instant};

use locksim_algorithms::redis::Redis;
use locksim_simulator::model::{Model, Params};
use locksim_simulator::process::NodeId;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::adapters::redis::{sentinel_master, RedisAdapter};
use crate::backend::Backend;
use crate::client::{self, ClientSpec};
use crate::probe::{through_a_thread, Probe, ProbeSets};
use crate::servers::{self, Server};

pub(crate) fn redis_version() -> Vec<(String, String)> {
    let v = servers::find_binary("redis-server", "redis-server")
        .map(|b| servers::version_of(&b, "--version"))
        .unwrap_or_else(|e| e);
    vec![("redis-server".to_string(), v)]
}

/// How long the Sentinels may take to find every replica and each other.
const READY_LIMIT: Duration = Duration::from_secs(30);

/// `redis`: a `redis-server` per model server, and the Sentinels when it has replicas.
pub struct RedisBackend;

impl Backend for RedisBackend {
    fn check(&self, params: &Params) -> Result<(), String> {
        if params.int("replicas") > 0 {
            servers::find_binary("redis-sentinel", "redis-sentinel")?;
        }
        Ok(())
    }
    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        let persistence = params.str("persistence");
        let primary = servers::redis_server(root, "server-0", persistence)?;
        let primary_port = primary.port;
        let mut all = vec![primary];
        let replicas = params.int("replicas");
        if replicas == 0 {
            return Ok(all);
        }
        // min-replicas-* is set on every server: a replica promoted by Sentinel applies it too.
        let min_replicas = [
            "--min-replicas-to-write".to_string(),
            params.int("min_replicas_to_write").to_string(),
            "--min-replicas-max-lag".to_string(),
            ((params.f64("min_replicas_max_lag_ms") / 1000.0).floor() as u64).to_string(),
        ];
        all[0].command.extend(min_replicas.iter().cloned());
        for i in 1..=replicas {
            let mut s = servers::redis_server(root, &format!("server-{i}"), persistence)?;
            s.command.extend(["--replicaof".to_string(), "127.0.0.1".to_string(), primary_port.to_string()]);
            s.command.extend(min_replicas.iter().cloned());
            all.push(s);
        }
        for i in 0..params.int("sentinels") {
            all.push(servers::redis_sentinel(
                root,
                &format!("sentinel-{i}"),
                primary_port,
                params.int("quorum") as u32,
                params.f64("down_after_ms").round() as u64,
            )?);
        }
        Ok(all)
    }
    /// Without replicas, the open port. With them, every replica must be online on the primary
    /// (its initial sync done: until then Redisson's WAIT finds no replica and every acquisition
    /// fails), and every Sentinel must know every replica and every other Sentinel (they find
    /// each other through the primary's hello channel, every 2 s): until then a failover could
    /// not happen as the model's would.
    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        let sentinels: Vec<&Server> = servers.iter().filter(|s| s.node.starts_with("sentinel-")).collect();
        if sentinels.is_empty() {
            return Ok(());
        }
        let replicas = servers.iter().filter(|s| s.node.starts_with("server-")).count() - 1;
        let start = Instant::now();
        let mut last = String::from("no Sentinel answered");
        while start.elapsed() < READY_LIMIT {
            match replicas_online(&servers[0].addr()) {
                Ok(n) if n == replicas => {}
                Ok(n) => {
                    last = format!("{n} of {replicas} replicas online on the primary");
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                Err(e) => {
                    last = e;
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            }
            let views: Result<Vec<_>, String> = sentinels.iter().map(|s| sentinel_master(&s.addr())).collect();
            match views {
                Ok(v) if v.iter().all(|m| m.replicas == replicas && m.other_sentinels == sentinels.len() - 1) => {
                    return Ok(())
                }
                Ok(v) => {
                    last = format!(
                        "the Sentinels know {:?} replicas and {:?} other Sentinels",
                        v.iter().map(|m| m.replicas).collect::<Vec<_>>(),
                        v.iter().map(|m| m.other_sentinels).collect::<Vec<_>>()
                    )
                }
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("the Sentinels did not settle within {} s: {last}", READY_LIMIT.as_secs()))
    }
    /// The primary the running Sentinels name (else `server-0`, the primary at the start).
    fn leader(&self, servers: &[Server]) -> Option<String> {
        let port = servers
            .iter()
            .filter(|s| s.node.starts_with("sentinel-") && s.proc.is_some())
            .find_map(|s| sentinel_master(&s.addr()).ok())
            .map(|m| m.primary_port);
        match port {
            Some(p) => servers.iter().find(|s| s.port == p).map(|s| s.node.clone()),
            None => servers.first().map(|s| s.node.clone()),
        }
    }
    fn versions(&self) -> Vec<(String, String)> {
        redis_version()
    }
    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        // Node ids are the model's service order: the Sentinels are the services so named.
        let sentinels: Vec<NodeId> = Redis
            .services(&run.params)
            .iter()
            .enumerate()
            .filter(|(_, (name, _))| name.starts_with("sentinel-"))
            .map(|(id, _)| id)
            .collect();
        client::run_typed(&Redis, setup, run, spec, move |servers, tx| {
            Box::new(RedisAdapter::new(servers, &sentinels, tx))
        })
    }
    fn probe_requests_ms(&self, _: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        // One kind: every command is served from memory by one thread, as the model's
        // service_ms is per command.
        Some(probe_set(servers, n).map(|p| vec![p]))
    }
    fn boundary(&self) -> &'static str {
        "the model's client library (SET NX PX or Redisson: lock, watchdog, pub/sub wait, unlock, following Sentinel) \
runs unchanged; its commands are sent by the `redis` crate as the real scripts; the servers are real redis-servers with the \
model's persistence, and with replicas real redis-sentinels (the model's quorum and down-after; Sentinel's own \
failover-timeout and timings); the replication delay is the real one, not replication_lag_ms"
    }
}

/// Replicas the primary at `addr` reports online (`INFO replication`: `slaveN:…,state=online,…`).
fn replicas_online(addr: &str) -> Result<usize, String> {
    let client = redis::Client::open(format!("redis://{addr}/")).map_err(|e| e.to_string())?;
    let mut con = client.get_connection_with_timeout(Duration::from_secs(1)).map_err(|e| e.to_string())?;
    let info: String = redis::cmd("INFO").arg("replication").query(&mut con).map_err(|e| e.to_string())?;
    Ok(info.lines().filter(|l| l.starts_with("slave") && l.contains("state=online")).count())
}

/// The median round trip of `SET` on the first server, through a connection thread.
pub(crate) fn probe_set(servers: &[Server], n: usize) -> Result<Probe, String> {
    let addr = servers.first().ok_or("no server started")?.addr();
    let client = redis::Client::open(format!("redis://{addr}/")).map_err(|e| e.to_string())?;
    let mut con = client.get_connection_with_timeout(Duration::from_secs(2)).map_err(|e| e.to_string())?;
    let ms = through_a_thread(n, move |i| {
        redis::cmd("SET").arg("calibrate").arg(i).query::<()>(&mut con).map_err(|e| e.to_string())
    })?;
    Ok(Probe { what: "a SET", round_trip_ms: ms, sets: ProbeSets::Service })
}
