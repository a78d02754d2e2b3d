//! The `redis` model's commands on a real `redis-server`, through the `redis` crate (the most
//! used Rust Redis client; its synchronous connection keeps each server's commands in order on
//! one TCP connection, as Redisson's and the plain clients' do).
//!
//! Each command is sent as the real library sends it: `SET key value NX PX ttl`, or `SETNX` and a
//! separate `PEXPIRE`; the redis.io compare-and-delete script, or `GET` and a separate `DEL`; Redisson 3.x's lock, renewal and unlock scripts
//! (`RedissonLock.tryLockInnerAsync`, `RedissonBaseLock.renewExpirationAsync`,
//! `RedissonLock.unlockInnerAsync`) and `forceUnlock`; `WAIT` pipelined after the command when
//! the model asks for it; `SUBSCRIBE` on a separate pub/sub connection, as Redisson keeps one.
//! The fenced variants add an `INCR` of the lock's token key inside the same script.
//!
//! With replicas, the library's questions to a Sentinel (`GetMasterAddr`) are asked of the real
//! `redis-sentinel` (`SENTINEL get-master-addr-by-name` and its configuration epoch), and each
//! Sentinel's `+switch-master`, `+sdown` and `-sdown` events (its pub/sub channels) reach the
//! library as the model's `SentinelEvent`s from that Sentinel. A replica's `-sdown` counts only
//! once `SENTINEL REPLICAS` shows it replicating the current primary, as Redisson's
//! `SentinelConnectionManager.checkSlavesChange` decides (an old primary back from a crash
//! answers again while it still claims the primary role).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::Duration;

use locksim_algorithms::redis::keyspace::Reply;
use locksim_algorithms::redis::protocol::{
    Answer, Command, MasterAddr, RedisMsg, Request, Response, SentinelEvent, UnlockMessage,
};
use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;
use redis::Value;

use super::{deliver, reset, Adapter, Inbound};

/// The lock's key.
pub fn lock_key(key: LockKey) -> String {
    format!("lock:{key}")
}

/// The lock's fencing token counter.
fn token_key(key: LockKey) -> String {
    format!("lock:{key}:token")
}

/// Redisson's unlock channel for the lock (`RedissonLock.getChannelName`).
fn channel(key: LockKey) -> String {
    format!("redisson_lock__channel:{{{}}}", lock_key(key))
}

/// The fenced `SET NX PX`: set, and on success `INCR` the token in the same script.
const SET_NX_FENCED: &str = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
return redis.call('incr', KEYS[2]) end return false";

/// The fenced `SETNX`: set with no expiry, and on success `INCR` the token in the same script
/// (the `PEXPIRE` that follows is a separate command, as in the two-command lock).
const SETNX_FENCED: &str =
    "if redis.call('setnx', KEYS[1], ARGV[1]) == 1 then return redis.call('incr', KEYS[2]) end return false";

/// redis.io's unlock script.
const DEL_IF_EQUALS: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// Redisson `forceUnlock`: delete and publish the unlock message.
const FORCE_UNLOCK: &str = "if (redis.call('del', KEYS[1]) == 1) then \
redis.call('publish', KEYS[2], ARGV[1]); return 1 else return 0 end";

/// Redisson `tryLockInnerAsync` (3.x): nil when taken by this call, else the holder's PTTL.
const HLOCK: &str = "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then \
redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; \
return redis.call('pttl', KEYS[1]);";

/// RedissonFencedLock's lock script: as above, and the token `INCR`ed on every acquisition.
/// Answers `{1, token}` when taken by this call, `{0, pttl}` when held by another.
const HLOCK_FENCED: &str =
    "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then \
local t = redis.call('incr', KEYS[2]); redis.call('hincrby', KEYS[1], ARGV[2], 1); \
redis.call('pexpire', KEYS[1], ARGV[1]); return {1, t}; end; return {0, redis.call('pttl', KEYS[1])};";

/// Redisson `renewExpirationAsync`.
const HRENEW: &str = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then \
redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; return 0;";

/// Redisson `unlockInnerAsync` (3.x): nil when not ours, 0 while still held, 1 when freed.
const HUNLOCK: &str = "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; \
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); \
if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; \
else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;";

/// Redisson's `UNLOCK_MESSAGE`.
const UNLOCK_MESSAGE: i64 = 0;

fn eval(script: &str, keys: &[String], args: &[String]) -> redis::Cmd {
    let mut c = redis::cmd("EVAL");
    c.arg(script).arg(keys.len());
    for k in keys {
        c.arg(k);
    }
    for a in args {
        c.arg(a);
    }
    c
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

/// The real command for a model command, and how to read its reply.
fn run(con: &mut redis::Connection, cmd: &Command) -> redis::RedisResult<Reply> {
    Ok(match *cmd {
        Command::SetNxPx { key, value, px_ms, fence: false } => {
            let v: Value = redis::cmd("SET").arg(lock_key(key)).arg(value).arg("NX").arg("PX").arg(px_ms).query(con)?;
            if matches!(v, Value::Nil) {
                Reply::Taken { pttl_ms: None }
            } else {
                Reply::Acquired { token: None }
            }
        }
        Command::SetNxPx { key, value, px_ms, fence: true } => {
            let v: Value =
                eval(SET_NX_FENCED, &[lock_key(key), token_key(key)], &[value.to_string(), px_ms.to_string()])
                    .query(con)?;
            match int(&v) {
                Some(t) => Reply::Acquired { token: Some(t as u64) },
                None => Reply::Taken { pttl_ms: None },
            }
        }
        Command::SetNx { key, value, fence: false } => {
            let set: i64 = redis::cmd("SETNX").arg(lock_key(key)).arg(value).query(con)?;
            if set == 1 {
                Reply::Acquired { token: None }
            } else {
                Reply::Taken { pttl_ms: None }
            }
        }
        Command::SetNx { key, value, fence: true } => {
            let v: Value = eval(SETNX_FENCED, &[lock_key(key), token_key(key)], &[value.to_string()]).query(con)?;
            match int(&v) {
                Some(t) => Reply::Acquired { token: Some(t as u64) },
                None => Reply::Taken { pttl_ms: None },
            }
        }
        Command::PExpire { key, ttl_ms } => {
            Reply::Int(redis::cmd("PEXPIRE").arg(lock_key(key)).arg(ttl_ms).query(con)?)
        }
        Command::Get { key } => {
            let v: Option<u64> = redis::cmd("GET").arg(lock_key(key)).query(con)?;
            v.map_or(Reply::Nil, Reply::Value)
        }
        Command::DelIfEquals { key, value } => {
            let v: Value = eval(DEL_IF_EQUALS, &[lock_key(key)], &[value.to_string()]).query(con)?;
            Reply::Int(int(&v).unwrap_or(0))
        }
        Command::Del { key, publish: false } => Reply::Int(redis::cmd("DEL").arg(lock_key(key)).query(con)?),
        Command::Del { key, publish: true } => {
            let v: Value =
                eval(FORCE_UNLOCK, &[lock_key(key), channel(key)], &[UNLOCK_MESSAGE.to_string()]).query(con)?;
            Reply::Int(int(&v).unwrap_or(0))
        }
        Command::HLock { key, owner, lease_ms, fence: false } => {
            let v: Value = eval(HLOCK, &[lock_key(key)], &[lease_ms.to_string(), owner.to_string()]).query(con)?;
            match int(&v) {
                Some(pttl) => Reply::Taken { pttl_ms: Some(pttl) },
                None => Reply::Acquired { token: None },
            }
        }
        Command::HLock { key, owner, lease_ms, fence: true } => {
            let v: Value =
                eval(HLOCK_FENCED, &[lock_key(key), token_key(key)], &[lease_ms.to_string(), owner.to_string()])
                    .query(con)?;
            match v {
                Value::Array(ref a) if a.len() == 2 && int(&a[0]) == Some(1) => {
                    Reply::Acquired { token: int(&a[1]).map(|t| t as u64) }
                }
                Value::Array(ref a) if a.len() == 2 => Reply::Taken { pttl_ms: int(&a[1]) },
                other => return Err(unexpected(&other)),
            }
        }
        Command::HRenew { key, owner, lease_ms } => {
            let v: Value = eval(HRENEW, &[lock_key(key)], &[lease_ms.to_string(), owner.to_string()]).query(con)?;
            Reply::Int(int(&v).unwrap_or(0))
        }
        Command::HUnlock { key, owner, lease_ms } => {
            let v: Value = eval(
                HUNLOCK,
                &[lock_key(key), channel(key)],
                &[UNLOCK_MESSAGE.to_string(), lease_ms.to_string(), owner.to_string()],
            )
            .query(con)?;
            match int(&v) {
                Some(i) => Reply::Int(i),
                None => Reply::Nil,
            }
        }
        Command::Subscribe { .. } | Command::Unsubscribe { .. } => Reply::Nil,
        // `connected_slaves` of `INFO replication` (the redis model's `replica_count = "info_…"`).
        Command::InfoReplication => {
            let info: String = redis::cmd("INFO").arg("replication").query(con)?;
            let n = info
                .lines()
                .find_map(|l| l.strip_prefix("connected_slaves:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            Reply::Int(n)
        }
    })
}

fn unexpected(v: &Value) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::UnexpectedReturnType, "unexpected reply", format!("{v:?}")))
}

fn connect(addr: &str) -> redis::RedisResult<redis::Connection> {
    let client = redis::Client::open(format!("redis://{addr}/"))?;
    client.get_connection_with_timeout(Duration::from_secs(1))
}

/// The model's answer for a server error reply, or `None` when the error is the connection's.
fn answer_for_error(e: &redis::RedisError) -> Option<Answer> {
    match e.code() {
        Some("READONLY") => Some(Answer::ReadOnly),
        Some("NOREPLICAS") => Some(Answer::NoReplicas),
        _ => None,
    }
}

/// One server's command connection, run by its own thread.
fn command_link(peer: NodeId, addr: String, rx: Receiver<Request>, tx: Sender<Inbound<RedisMsg>>) {
    let mut con: Option<redis::Connection> = None;
    for req in rx {
        if con.is_none() {
            match connect(&addr) {
                Ok(c) => con = Some(c),
                Err(_) => {
                    // Connection refused: the request is answered by a reset, as a closed port does.
                    reset(&tx, peer);
                    continue;
                }
            }
        }
        let c = con.as_mut().expect("connected above");
        let answer = match run(c, &req.cmd) {
            Ok(reply) => Answer::Reply(reply),
            Err(e) => match answer_for_error(&e) {
                Some(a) => a,
                None => {
                    con = None;
                    reset(&tx, peer);
                    continue;
                }
            },
        };
        let synced = match req.wait {
            Some(w) if matches!(answer, Answer::Reply(_)) => {
                match redis::cmd("WAIT").arg(w.replicas).arg(w.timeout_ms).query::<i64>(c) {
                    Ok(n) => Some(n as u32),
                    Err(_) => {
                        con = None;
                        reset(&tx, peer);
                        continue;
                    }
                }
            }
            _ => None,
        };
        deliver(&tx, peer, RedisMsg::Response(Response { id: req.id, answer, synced }));
    }
}

/// What the pub/sub thread is asked to do.
enum PubSubOp {
    Subscribe(Request, LockKey),
    Unsubscribe(Request, LockKey),
}

/// One server's pub/sub connection, run by its own thread: (un)subscribes as asked and turns
/// every unlock message into the model's `UnlockMessage`.
fn pubsub_link(peer: NodeId, addr: String, rx: Receiver<PubSubOp>, tx: Sender<Inbound<RedisMsg>>) {
    // Like Redisson's pub/sub connection, it reconnects after a failure; the library, told of the
    // reset, subscribes again on its next wait.
    loop {
        let mut con = loop {
            match connect(&addr) {
                Ok(c) => break c,
                Err(_) => match rx.recv() {
                    // Nothing to do until asked; a request while the server is down is refused.
                    Ok(_) => reset(&tx, peer),
                    Err(_) => return,
                },
            }
        };
        match serve_pubsub(peer, &mut con, &rx, &tx) {
            PubSubEnd::Failed => reset(&tx, peer),
            PubSubEnd::Closed => return,
        }
    }
}

/// Why [`serve_pubsub`] stopped.
enum PubSubEnd {
    /// The connection failed: reconnect.
    Failed,
    /// The client is ending.
    Closed,
}

/// Serves one pub/sub connection until it fails or the client ends.
fn serve_pubsub(
    peer: NodeId,
    con: &mut redis::Connection,
    rx: &Receiver<PubSubOp>,
    tx: &Sender<Inbound<RedisMsg>>,
) -> PubSubEnd {
    let mut ps = con.as_pubsub();
    // The connection is read with a 1 ms timeout between checks for (un)subscribe requests: the
    // `redis` crate's pub/sub connection cannot be written while another thread reads it, and a
    // longer timeout would delay every SUBSCRIBE (Redisson subscribes at each wait) by up to it.
    if ps.set_read_timeout(Some(Duration::from_millis(1))).is_err() {
        return PubSubEnd::Failed;
    }
    loop {
        let (req, result) = match rx.try_recv() {
            Ok(PubSubOp::Subscribe(req, key)) => (req, ps.subscribe(channel(key))),
            Ok(PubSubOp::Unsubscribe(req, key)) => (req, ps.unsubscribe(channel(key))),
            Err(TryRecvError::Disconnected) => return PubSubEnd::Closed,
            Err(TryRecvError::Empty) => {
                match ps.get_message() {
                    Ok(m) => {
                        let name = m.get_channel_name().to_string();
                        if let Some(key) = name
                            .strip_prefix("redisson_lock__channel:{lock:")
                            .and_then(|s| s.strip_suffix('}'))
                            .and_then(|s| s.parse::<LockKey>().ok())
                        {
                            deliver(tx, peer, RedisMsg::UnlockMessage(UnlockMessage { key }));
                        }
                    }
                    Err(e) if e.is_timeout() => {}
                    Err(_) => return PubSubEnd::Failed,
                }
                continue;
            }
        };
        if result.is_err() {
            return PubSubEnd::Failed;
        }
        deliver(tx, peer, RedisMsg::Response(Response { id: req.id, answer: Answer::Subscribed, synced: None }));
    }
}

/// The name the Sentinels monitor the primary under.
pub const MASTER_NAME: &str = "mymaster";

/// What a Sentinel says of the primary it monitors (`SENTINEL master mymaster`).
#[derive(Clone, Debug)]
pub struct SentinelView {
    /// The primary's port.
    pub primary_port: u16,
    /// The configuration epoch of the Sentinel's view.
    pub config_epoch: u64,
    /// The replicas it knows.
    pub replicas: usize,
    /// The other Sentinels it knows.
    pub other_sentinels: usize,
}

/// Asks the Sentinel at `addr` about the primary.
pub fn sentinel_master(addr: &str) -> Result<SentinelView, String> {
    master_view(&mut sentinel_connection(addr)?)
}

/// A command connection to the Sentinel at `addr`, answering within a second.
fn sentinel_connection(addr: &str) -> Result<redis::Connection, String> {
    let con = connect(addr).map_err(|e| e.to_string())?;
    let _ = con.set_read_timeout(Some(Duration::from_secs(1)));
    Ok(con)
}

/// `SENTINEL master` on a Sentinel connection.
fn master_view(con: &mut redis::Connection) -> Result<SentinelView, String> {
    let fields: Vec<String> =
        redis::cmd("SENTINEL").arg("master").arg(MASTER_NAME).query(con).map_err(|e| e.to_string())?;
    let get = |name: &str| -> Result<u64, String> {
        sentinel_field(&fields, name).and_then(|v| v.parse().ok()).ok_or_else(|| format!("SENTINEL master: no {name}"))
    };
    Ok(SentinelView {
        primary_port: get("port")? as u16,
        config_epoch: get("config-epoch")?,
        replicas: get("num-slaves")? as usize,
        other_sentinels: get("num-other-sentinels")? as usize,
    })
}

/// A field of a Sentinel reply given as a flat list of names and values.
fn sentinel_field<'a>(fields: &'a [String], name: &str) -> Option<&'a str> {
    fields.chunks(2).find(|kv| kv[0] == name).and_then(|kv| kv.get(1)).map(String::as_str)
}

/// The port of a `127.0.0.1:port` address.
fn port_of(addr: &str) -> Option<u16> {
    addr.rsplit(':').next().and_then(|p| p.parse().ok())
}

/// One Sentinel's command connection: answers the library's `GetMasterAddr` with the primary the
/// real Sentinel names (and its configuration epoch).
fn sentinel_link(peer: NodeId, addr: String, rx: Receiver<()>, tx: Sender<Inbound<RedisMsg>>, ports: PortMap) {
    for () in rx {
        // A Sentinel that does not answer (killed, paused) leaves the question unanswered, as a
        // real one does; the library asks every Sentinel.
        let Ok(view) = sentinel_master(&addr) else { continue };
        if let Some(&primary) = ports.get(&view.primary_port) {
            deliver(&tx, peer, RedisMsg::MasterAddr(MasterAddr { config_epoch: view.config_epoch, primary }));
        }
    }
}

/// Server ports to node ids.
type PortMap = BTreeMap<u16, NodeId>;

/// The replicas this Sentinel counts usable for the current primary, as Redisson's
/// `SentinelConnectionManager.checkSlavesChange` reads them from `SENTINEL REPLICAS`: not flagged
/// `s_down` or `disconnected`, and replicating the primary the Sentinel names (`isUseSameMaster`;
/// an old primary back from a crash reports no master, `?`, until the Sentinels convert it).
fn usable_replicas(addr: &str) -> Result<BTreeSet<u16>, String> {
    let mut con = sentinel_connection(addr)?;
    let primary = master_view(&mut con)?.primary_port;
    let replicas: Vec<Vec<String>> =
        redis::cmd("SENTINEL").arg("replicas").arg(MASTER_NAME).query(&mut con).map_err(|e| e.to_string())?;
    Ok(replicas
        .iter()
        .filter(|r| {
            let flags = sentinel_field(r, "flags").unwrap_or_default();
            !flags.contains("s_down")
                && !flags.contains("disconnected")
                && sentinel_field(r, "master-port").and_then(|p| p.parse::<u16>().ok()) == Some(primary)
        })
        .filter_map(|r| sentinel_field(r, "port").and_then(|p| p.parse().ok()))
        .collect())
}

/// One Sentinel's events: subscribes to `+switch-master`, `+sdown` and `-sdown` and turns each
/// into the model's `SentinelEvent` from that Sentinel; reconnects when the Sentinel goes away.
/// A replica is announced up (`-sdown`) only once it replicates the current primary, checked
/// every second (Redisson's `scanInterval`) as Redisson checks it: an old primary back from a
/// crash answers pings (`-sdown`) while it still claims the primary role, and Redisson does not
/// count it until it follows the new primary.
fn sentinel_events(peer: NodeId, addr: String, tx: Sender<Inbound<RedisMsg>>, ports: PortMap) -> ! {
    // Replicas the Sentinel reported up again that do not replicate the primary yet.
    let mut pending_up: BTreeSet<u16> = BTreeSet::new();
    let mut last_check = std::time::Instant::now();
    loop {
        if let Ok(mut con) = connect(&addr) {
            let mut ps = con.as_pubsub();
            let subscribed = ps.subscribe(&["+switch-master", "+sdown", "-sdown"]).is_ok()
                && ps.set_read_timeout(Some(Duration::from_millis(200))).is_ok();
            if !subscribed {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            // Until the connection fails (then reconnect below).
            loop {
                if !pending_up.is_empty() && last_check.elapsed() >= Duration::from_secs(1) {
                    last_check = std::time::Instant::now();
                    if let Ok(usable) = usable_replicas(&addr) {
                        for port in pending_up.intersection(&usable).copied().collect::<Vec<_>>() {
                            pending_up.remove(&port);
                            if let Some(&node) = ports.get(&port) {
                                deliver(&tx, peer, RedisMsg::SentinelEvent(SentinelEvent::ReplicaUp { node }));
                            }
                        }
                    }
                }
                let m = match ps.get_message() {
                    Ok(m) => m,
                    Err(e) if e.is_timeout() => continue,
                    Err(_) => break,
                };
                let channel = m.get_channel_name().to_string();
                let text: String = m.get_payload().unwrap_or_default();
                let words: Vec<&str> = text.split(' ').collect();
                let event = match channel.as_str() {
                    // `mymaster <old ip> <old port> <new ip> <new port>`
                    "+switch-master" => {
                        words.get(4).and_then(|p| p.parse().ok()).and_then(|p| ports.get(&p)).map(|&primary| {
                            let config_epoch = sentinel_master(&addr).map(|v| v.config_epoch).unwrap_or(0);
                            SentinelEvent::SwitchMaster { config_epoch, primary }
                        })
                    }
                    // `slave <ip:port> <ip> <port> @ mymaster <ip> <port>`
                    "+sdown" if words.first() == Some(&"slave") => {
                        words.get(3).and_then(|p| p.parse::<u16>().ok()).and_then(|p| {
                            pending_up.remove(&p);
                            ports.get(&p).map(|&node| SentinelEvent::ReplicaDown { node })
                        })
                    }
                    "-sdown" if words.first() == Some(&"slave") => {
                        if let Some(p) = words.get(3).and_then(|p| p.parse::<u16>().ok()) {
                            pending_up.insert(p);
                            // Checked at once, then every second until it qualifies.
                            last_check = std::time::Instant::now() - Duration::from_secs(1);
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(e) = event {
                    deliver(&tx, peer, RedisMsg::SentinelEvent(e));
                }
            }
        }
        // Gone (killed, restarting): listen again shortly. The thread ends with the client
        // process.
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The adapter: one command connection and one pub/sub connection per server; per Sentinel, a
/// command connection for the library's questions and one listening to its events.
pub struct RedisAdapter {
    commands: BTreeMap<NodeId, Sender<Request>>,
    pubsub: BTreeMap<NodeId, Sender<PubSubOp>>,
    sentinels: BTreeMap<NodeId, Sender<()>>,
    sent: u64,
}

impl RedisAdapter {
    /// Connections to `servers` (node id and `127.0.0.1:port`; those in `sentinels` are
    /// Sentinels), answering into `tx`.
    pub fn new(servers: &[(NodeId, String)], sentinels: &[NodeId], tx: &Sender<Inbound<RedisMsg>>) -> Self {
        let mut commands = BTreeMap::new();
        let mut pubsub = BTreeMap::new();
        let mut sentinel_links = BTreeMap::new();
        let ports: PortMap = servers
            .iter()
            .filter(|(id, _)| !sentinels.contains(id))
            .filter_map(|(id, addr)| port_of(addr).map(|p| (p, *id)))
            .collect();
        for (peer, addr) in servers {
            if sentinels.contains(peer) {
                let (stx, srx) = mpsc::channel();
                let (p, a, t, m) = (*peer, addr.clone(), tx.clone(), ports.clone());
                std::thread::spawn(move || sentinel_link(p, a, srx, t, m));
                let (p, a, t, m) = (*peer, addr.clone(), tx.clone(), ports.clone());
                std::thread::spawn(move || sentinel_events(p, a, t, m));
                sentinel_links.insert(*peer, stx);
                continue;
            }
            let (ctx, crx) = mpsc::channel();
            let (ptx, prx) = mpsc::channel();
            let (p, a, t) = (*peer, addr.clone(), tx.clone());
            std::thread::spawn(move || command_link(p, a, crx, t));
            let (p, a, t) = (*peer, addr.clone(), tx.clone());
            std::thread::spawn(move || pubsub_link(p, a, prx, t));
            commands.insert(*peer, ctx);
            pubsub.insert(*peer, ptx);
        }
        RedisAdapter { commands, pubsub, sentinels: sentinel_links, sent: 0 }
    }
}

impl Adapter<RedisMsg> for RedisAdapter {
    fn send(&mut self, to: NodeId, msg: RedisMsg) {
        let req = match msg {
            RedisMsg::Request(req) => req,
            RedisMsg::GetMasterAddr(_) => {
                if let Some(s) = self.sentinels.get(&to) {
                    self.sent += 1;
                    let _ = s.send(());
                }
                return;
            }
            // A client sends nothing else.
            _ => return,
        };
        self.sent += 1;
        match req.cmd {
            Command::Subscribe { key } => {
                if let Some(p) = self.pubsub.get(&to) {
                    let _ = p.send(PubSubOp::Subscribe(req, key));
                }
            }
            Command::Unsubscribe { key } => {
                if let Some(p) = self.pubsub.get(&to) {
                    let _ = p.send(PubSubOp::Unsubscribe(req, key));
                }
            }
            _ => {
                if let Some(c) = self.commands.get(&to) {
                    let _ = c.send(req);
                }
            }
        }
    }

    fn sent(&self) -> u64 {
        self.sent
    }
}
