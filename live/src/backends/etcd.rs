//! The `etcd` model's live backend: a cluster of `servers` real etcd members (Debian's
//! `etcd-server`, etcd 3.4) on loopback with the model's Raft timing; the model's clientv3
//! Session and Mutex through [`EtcdAdapter`] on etcd's gRPC-JSON gateway.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use locksim_algorithms::etcd::Etcd;
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;
use serde_json::json;

use crate::adapters::etcd::gateway::{b64, blocking_post, field};
use crate::adapters::etcd::EtcdAdapter;
use crate::backend::Backend;
use crate::client::{self, ClientSpec};
use crate::probe::{through_a_thread, Probe, ProbeSets};
use crate::servers::{self, Server};

/// etcd 3.4's lessor looks for expired leases every 500 ms, not configurable
/// (`lease/lessor.go`, `runLoop`: `time.Sleep(500 * time.Millisecond)`).
const ETCD_LEASE_CHECK_MS: f64 = 500.0;
/// etcd 3.4 refuses a longer election timeout (`etcdmain/config.go`, `maxElectionMs`).
const ETCD_MAX_ELECTION_MS: f64 = 50_000.0;
/// How long a new cluster may take to elect a leader and serve.
const READY_LIMIT: Duration = Duration::from_secs(30);
/// How long one status question may take (a member that does not answer in this is not asked
/// again in that round).
const ASK_LIMIT: Duration = Duration::from_millis(500);

/// `etcd`: `servers` members of one Raft group.
pub struct EtcdBackend;

fn whole(x: f64) -> bool {
    x.fract() == 0.0
}

impl Backend for EtcdBackend {
    fn check(&self, params: &Params) -> Result<(), String> {
        let ttl_ms = params.f64("lease_ttl_ms");
        if !whole(ttl_ms / 1000.0) {
            return Err(format!(
                "lease_ttl_ms = {ttl_ms}: etcd grants lease TTLs in whole seconds (LeaseGrantRequest.TTL); use a multiple of 1000"
            ));
        }
        let (hb, el) = (params.f64("heartbeat_ms"), params.f64("election_ms"));
        if !whole(hb) || !whole(el) {
            return Err(format!(
                "heartbeat_ms = {hb}, election_ms = {el}: etcd's --heartbeat-interval and --election-timeout are whole milliseconds"
            ));
        }
        if el > ETCD_MAX_ELECTION_MS {
            return Err(format!("election_ms = {el}: etcd 3.4 refuses an election timeout above 50 000 ms"));
        }
        let check_ms = params.f64("lease_check_ms");
        if check_ms != ETCD_LEASE_CHECK_MS {
            return Err(format!(
                "lease_check_ms = {check_ms}: etcd 3.4's lessor looks for expired leases every 500 ms (lease/lessor.go runLoop), which no flag changes; set lease_check_ms = 500"
            ));
        }
        let ka_ms = params.f64("keepalive_time_ms");
        if ka_ms > 0.0 {
            return Err(format!(
                "keepalive_time_ms = {ka_ms}: live mode reaches etcd through its gRPC-JSON gateway on HTTP/1.1, which has no keepalive ping; set keepalive_time_ms = 0 (clientv3's default)"
            ));
        }
        Ok(())
    }

    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        let binary = servers::find_binary("etcd", "etcd-server")?.display().to_string();
        let n = params.int("servers") as usize;
        // Two ports per member (clients, peers), all distinct: a port the OS just handed out may
        // come back from the next question once its listener is closed.
        let mut taken = std::collections::BTreeSet::new();
        let mut fresh = || -> Result<u16, String> {
            loop {
                let p = servers::free_port()?;
                if taken.insert(p) {
                    return Ok(p);
                }
            }
        };
        let mut ports = Vec::with_capacity(n);
        for _ in 0..n {
            ports.push((fresh()?, fresh()?));
        }
        let peer_url = |p: u16| format!("http://127.0.0.1:{p}");
        let cluster: Vec<String> =
            ports.iter().enumerate().map(|(i, (_, peer))| format!("server-{i}={}", peer_url(*peer))).collect();
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        // A token of its own, so that no member can join another run's cluster.
        let token = format!("locksim-{}-{since_epoch}", std::process::id());
        // The model's Raft timing; every other setting is etcd 3.4's default.
        let (hb_ms, el_ms) = (params.f64("heartbeat_ms") as u64, params.f64("election_ms") as u64);
        let mut members = Vec::with_capacity(n);
        for (i, (client_port, peer_port)) in ports.iter().enumerate() {
            let node = format!("server-{i}");
            let dir = root.join(&node);
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let client_url = peer_url(*client_port);
            let command: Vec<String> = vec![
                binary.clone(),
                "--name".into(),
                node.clone(),
                "--data-dir".into(),
                dir.join("data").display().to_string(),
                "--listen-client-urls".into(),
                client_url.clone(),
                "--advertise-client-urls".into(),
                client_url,
                "--listen-peer-urls".into(),
                peer_url(*peer_port),
                "--initial-advertise-peer-urls".into(),
                peer_url(*peer_port),
                "--initial-cluster".into(),
                cluster.join(","),
                // Read only at the first start: a member restarted on its data directory rejoins
                // from its write-ahead log.
                "--initial-cluster-state".into(),
                "new".into(),
                "--initial-cluster-token".into(),
                token.clone(),
                "--heartbeat-interval".into(),
                hb_ms.to_string(),
                "--election-timeout".into(),
                el_ms.to_string(),
            ];
            members.push(Server { node, port: *client_port, dir, command, proc: None });
        }
        Ok(members)
    }

    fn versions(&self) -> Vec<(String, String)> {
        let v = servers::find_binary("etcd", "etcd-server")
            .map(|b| servers::version_of(&b, "--version"))
            .unwrap_or_else(|e| e);
        vec![("etcd".to_string(), v)]
    }

    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        client::run_typed(&Etcd, setup, run, spec, |servers, tx| Box::new(EtcdAdapter::new(servers, tx)))
    }

    /// Every member knows the same leader and serves a linearizable read (which needs the
    /// leader to confirm its leadership with a quorum).
    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        let start = Instant::now();
        let mut last = String::from("no member answered");
        while start.elapsed() < READY_LIMIT {
            match cluster_serves(servers) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("the etcd cluster did not serve within {} s: {last}", READY_LIMIT.as_secs()))
    }

    /// The member that says it leads (maintenance status: its own id is the leader's), asked of
    /// the members running now.
    fn leader(&self, servers: &[Server]) -> Option<String> {
        servers.iter().filter(|s| s.proc.is_some()).find_map(|s| {
            let status = blocking_post(&s.addr(), "/v3/maintenance/status", &json!({}), ASK_LIMIT).ok()?;
            let me = status.get("header").map(|h| field(h, "member_id"))?;
            (me != 0 && field(&status, "leader") == me).then(|| s.node.clone())
        })
    }

    fn probe_requests_ms(&self, _: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        // On the leader, so that a write is not forwarded: a serializable range, served by the
        // member itself (the model's service_ms: a member's own processing), and a put, which
        // adds the Raft round to a follower and that follower's WAL fsync (the model's
        // consensus messages, and its fsync_ms).
        let probe = || {
            let addr = self.leader_addr(servers)?;
            let read =
                time_post(&addr, "/v3/kv/range", n, |_| json!({ "key": b64("calibrate"), "serializable": true }))?;
            let write = time_post(
                &addr,
                "/v3/kv/put",
                n,
                |i| json!({ "key": b64("calibrate"), "value": b64(&i.to_string()) }),
            )?;
            Ok(vec![
                Probe { what: "a serializable range", round_trip_ms: read, sets: ProbeSets::Service },
                Probe { what: "a put", round_trip_ms: write, sets: ProbeSets::LogWrite },
            ])
        };
        Some(probe())
    }
    fn boundary(&self) -> &'static str {
        "the model's clientv3 Session and Mutex (keep-alive loop, lock transaction, waitDeletes, recheck, endpoint \
switching) run unchanged; each call is the request clientv3 makes, sent to real etcd members through etcd's gRPC-JSON \
gateway (HTTP/1.1, one connection per call in flight, a watch on its own stream); a member's process dying is seen as \
gRPC sees it, by its connection closing; the members run the model's heartbeat and election timeout; their service \
time is the real one, not service_ms"
    }
}

/// The median round trip of `n` posts to `path` on the member at `addr`, each body made by `body`
/// from the request's number, through a connection thread.
fn time_post(
    addr: &str,
    path: &'static str,
    n: usize,
    body: impl Fn(usize) -> serde_json::Value + Send + 'static,
) -> Result<f64, String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let pool = crate::adapters::etcd::gateway::Pool::new(addr);
    through_a_thread(n, move |i| match rt.block_on(pool.post(path, &body(i))) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("{path}: {} (gRPC code {})", e.message, e.code)),
        Err(f) => Err(format!("{path}: {f}")),
    })
}

/// Whether every member names the same leader and answers a linearizable read; else why not.
fn cluster_serves(servers: &[Server]) -> Result<(), String> {
    let mut leader = None;
    for s in servers {
        let status = blocking_post(&s.addr(), "/v3/maintenance/status", &json!({}), ASK_LIMIT)?;
        let l = field(&status, "leader");
        if l == 0 {
            return Err(format!("{} knows no leader yet", s.node));
        }
        if leader.is_some_and(|x| x != l) {
            return Err(format!("{} names another leader", s.node));
        }
        leader = Some(l);
        blocking_post(&s.addr(), "/v3/kv/range", &json!({"key": b64("locksim-ready")}), ASK_LIMIT)?;
    }
    Ok(())
}
