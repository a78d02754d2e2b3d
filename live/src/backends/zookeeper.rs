//! The `zookeeper` model's live backend: a real ZooKeeper 3.8 ensemble (Debian's `zookeeper`
//! package) of the model's `servers` members on loopback, each a JVM running `QuorumPeerMain`
//! in the foreground as the supervised process (so SIGSTOP and SIGKILL hit the server itself),
//! configured from the model's parameters; the model's client library (Curator's recipes and its
//! connection layer) through [`ZkAdapter`], on the `zookeeper-client` crate.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use locksim_algorithms::zookeeper::ZOOKEEPER;
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::adapters::zookeeper::ZkAdapter;
use crate::backend::Backend;
use crate::client::{self, ClientSpec};
use crate::probe::{through_a_thread, Probe, ProbeSets};
use crate::servers::{self, Server};

/// Debian's server jar; its manifest's `Class-Path` names every dependency under /usr/share/java.
const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// An SLF4J binding so the server's log (elections, sessions) lands in the server's `stdout.log`;
/// without one SLF4J logs nothing.
const SLF4J_SIMPLE_JAR: &str = "/usr/share/java/slf4j-simple.jar";
/// FastLeaderElection's `finalizeWait` (ZooKeeper 3.8 `FastLeaderElection.finalizeWait`, 200 ms):
/// the model's default `election_ms` stands for it.
const FLE_FINALIZE_WAIT_MS: f64 = 200.0;
/// `initLimit` as in `conf/zoo_sample.cfg` (the model does not model the sync phase's limit).
const INIT_LIMIT_TICKS: u64 = 10;
/// Each member is a JVM: more than this would not start in time on a small machine.
const MAX_SERVERS: i64 = 5;
/// How long the ensemble may take to elect a leader after its JVMs start.
const READY_LIMIT: Duration = Duration::from_secs(60);

/// The version the servers reported (`srvr`), read when they first answer.
static VERSION: OnceLock<String> = OnceLock::new();

/// Sends a four-letter word and reads the whole answer (bounded by a 1 s timeout).
pub fn four_letter(addr: &str, word: &str) -> Result<String, String> {
    let sock: std::net::SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    let mut s = TcpStream::connect_timeout(&sock, Duration::from_secs(1)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(1))).map_err(|e| e.to_string())?;
    s.write_all(word.as_bytes()).map_err(|e| e.to_string())?;
    let mut out = String::new();
    s.read_to_string(&mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The `Mode:` line of a `srvr` answer (`leader`, `follower`, `standalone`), if it serves.
fn mode_of(srvr: &str) -> Option<&str> {
    srvr.lines().find_map(|l| l.strip_prefix("Mode: ")).map(str::trim)
}

fn java() -> Result<PathBuf, String> {
    servers::find_binary("java", "default-jre-headless")
}

/// The tick as ZooKeeper's `tickTime` takes it (whole milliseconds), as the model rounds it.
fn tick_ms_of(params: &Params) -> u64 {
    (params.f64("tick_ms").round() as u64).max(1)
}

/// `zoo.cfg` for member `index` of an ensemble whose members' (client, peer, election) ports
/// are `ports`.
fn zoo_cfg(params: &Params, index: usize, ports: &[(u16, u16, u16)], data_dir: &Path) -> String {
    let tick = tick_ms_of(params);
    let mut cfg = format!(
        "# Written by locksim live mode from the zookeeper model's parameters.\n\
tickTime={tick}\n\
initLimit={INIT_LIMIT_TICKS}\n\
syncLimit={sync}\n\
dataDir={data}\n\
clientPort={client}\n\
clientPortAddress=127.0.0.1\n\
# ZooKeeperServer's defaults, 2 and 20 ticks, written out: the model negotiates the same way.\n\
minSessionTimeout={min}\n\
maxSessionTimeout={max}\n\
4lw.commands.whitelist=srvr,ruok,stat\n\
admin.enableServer=false\n\
autopurge.purgeInterval=0\n",
        sync = params.int("sync_limit"),
        data = data_dir.display(),
        client = ports[index].0,
        min = 2 * tick,
        max = 20 * tick,
    );
    if ports.len() > 1 {
        for (i, (_, peer, election)) in ports.iter().enumerate() {
            cfg.push_str(&format!("server.{}=127.0.0.1:{peer}:{election}\n", i + 1));
        }
    }
    cfg
}

/// `zookeeper`: an ensemble of `servers` real ZooKeeper 3.8 servers.
pub struct ZooKeeperBackend;

impl Backend for ZooKeeperBackend {
    fn check(&self, params: &Params) -> Result<(), String> {
        let n = params.int("servers");
        if n > MAX_SERVERS {
            return Err(format!(
                "servers = {n}: each member is a JVM; live mode starts at most {MAX_SERVERS} on this machine"
            ));
        }
        let election_ms = params.f64("election_ms");
        if (election_ms - FLE_FINALIZE_WAIT_MS).abs() > f64::EPSILON {
            return Err(format!(
                "election_ms = {election_ms}: the real ensemble runs FastLeaderElection, whose timing is not a server setting \
(its finalizeWait is {FLE_FINALIZE_WAIT_MS} ms, which the default election_ms stands for); set election_ms = 200"
            ));
        }
        if params.f64("tick_ms").fract() != 0.0 {
            return Err(format!("tick_ms = {}: ZooKeeper's tickTime is whole milliseconds", params.f64("tick_ms")));
        }
        Ok(())
    }

    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        let java = java()?;
        if !Path::new(ZOOKEEPER_JAR).is_file() {
            return Err(format!(
                "{ZOOKEEPER_JAR} is missing: live mode needs the Debian package `zookeeper` (apt-get install zookeeper)"
            ));
        }
        let mut classpath = ZOOKEEPER_JAR.to_string();
        if Path::new(SLF4J_SIMPLE_JAR).is_file() {
            classpath = format!("{classpath}:{SLF4J_SIMPLE_JAR}");
        }
        let n = params.int("servers") as usize;
        let ports: Vec<(u16, u16, u16)> = (0..n)
            .map(|_| Ok((servers::free_port()?, servers::free_port()?, servers::free_port()?)))
            .collect::<Result<_, String>>()?;
        (0..n)
            .map(|i| {
                let node = format!("server-{i}");
                let dir = root.join(&node);
                let data = dir.join("data");
                std::fs::create_dir_all(&data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
                std::fs::write(data.join("myid"), format!("{}\n", i + 1)).map_err(|e| e.to_string())?;
                let cfg = dir.join("zoo.cfg");
                std::fs::write(&cfg, zoo_cfg(params, i, &ports, &data)).map_err(|e| e.to_string())?;
                let command = vec![
                    java.display().to_string(),
                    "-Xmx256m".into(),
                    // One GC thread: three JVMs share two cores here.
                    "-XX:+UseSerialGC".into(),
                    "-Dorg.slf4j.simpleLogger.showDateTime=true".into(),
                    "-cp".into(),
                    classpath.clone(),
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain".into(),
                    cfg.display().to_string(),
                ];
                Ok(Server { node, port: ports[i].0, dir, command, proc: None })
            })
            .collect()
    }

    fn versions(&self) -> Vec<(String, String)> {
        let v = VERSION.get().cloned().unwrap_or_else(|| "unknown (no server answered srvr)".to_string());
        vec![("zookeeper".to_string(), v)]
    }

    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        client::run_typed(&ZOOKEEPER, setup, run, spec, |servers, tx| Box::new(ZkAdapter::new(servers, tx)))
    }

    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let modes: Vec<Option<String>> = servers
                .iter()
                .map(|s| {
                    let out = four_letter(&s.addr(), "srvr").ok()?;
                    if let Some(v) = out.lines().find_map(|l| l.strip_prefix("Zookeeper version: ")) {
                        let _ = VERSION.set(v.trim().to_string());
                    }
                    mode_of(&out).map(str::to_string)
                })
                .collect();
            if modes.iter().all(|m| matches!(m.as_deref(), Some("leader" | "follower" | "standalone"))) {
                return Ok(());
            }
            if start.elapsed() > READY_LIMIT {
                let seen: Vec<String> = servers
                    .iter()
                    .zip(&modes)
                    .map(|(s, m)| format!("{}: {}", s.node, m.as_deref().unwrap_or("not serving")))
                    .collect();
                return Err(format!(
                    "the ZooKeeper ensemble did not elect a leader within {} s ({})",
                    READY_LIMIT.as_secs(),
                    seen.join(", ")
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn leader(&self, servers: &[Server]) -> Option<String> {
        servers.iter().find_map(|s| {
            let out = four_letter(&s.addr(), "srvr").ok()?;
            matches!(mode_of(&out), Some("leader" | "standalone")).then(|| s.node.clone())
        })
    }

    fn probe_requests_ms(&self, _: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        // On the leader, so that a write is not forwarded: `exists /`, served by the server
        // itself (the model's service_ms), and a `setData`, which adds the proposal's round to a
        // follower and that follower's txn-log sync (the model's ZAB messages, and its fsync_ms).
        let probe = || {
            let addr = self.leader_addr(servers)?;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            let client = rt.block_on(zookeeper_client::Client::connect(&addr)).map_err(|e| e.to_string())?;
            let acls = zookeeper_client::Acls::anyone_all();
            match rt.block_on(client.create(
                "/calibrate",
                b"",
                &zookeeper_client::CreateMode::Persistent.with_acls(acls),
            )) {
                Ok(_) | Err(zookeeper_client::Error::NodeExists) => {}
                Err(e) => return Err(format!("create /calibrate: {e}")),
            }
            let rt = std::sync::Arc::new(rt);
            let (read_rt, read_client) = (rt.clone(), client.clone());
            let read = through_a_thread(n, move |_| {
                read_rt.block_on(read_client.check_stat("/")).map(|_| ()).map_err(|e| e.to_string())
            })?;
            let write = through_a_thread(n, move |i| {
                rt.block_on(client.set_data("/calibrate", i.to_string().as_bytes(), None))
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })?;
            Ok(vec![
                Probe { what: "an exists /", round_trip_ms: read, sets: ProbeSets::Service },
                Probe { what: "a setData", round_trip_ms: write, sets: ProbeSets::LogWrite },
            ])
        };
        Some(probe())
    }
    fn boundary(&self) -> &'static str {
        "the model's Curator recipes and its connection layer (server choice, back-off, read timeout, ping schedule, \
SUSPENDED/LOST) run unchanged; the session belongs to the real ensemble and the zookeeper-client crate: each model connect \
opens a real connection to the server the model chose, presenting the real session (or asking for one), and is answered with \
the real session id and negotiated timeout or the server's expiry; the real library pings on its own too; its disconnects \
and expiry reach the model as a reset; the model's ping is a real `exists /` round trip; replies carry no zxid (the real \
client keeps it); lock parents are persistent nodes made on the first NONODE; the election is the real FastLeaderElection \
and ZAB (election_ms must be 200, standing for finalizeWait), initLimit is zoo_sample.cfg's 10 ticks"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srvr_modes_are_read() {
        let out = "Zookeeper version: 3.8.0-debian\nLatency min/avg/max: 0/0.0/0\nMode: follower\nNode count: 5\n";
        assert_eq!(mode_of(out), Some("follower"));
        assert_eq!(mode_of("This ZooKeeper instance is not currently serving requests\n"), None);
    }
}
