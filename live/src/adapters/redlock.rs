//! Redlock's commands on each real master, through the `redis` crate: `SET key value NX PX
//! ttl` and the compare-and-delete unlock script (redlock-rb, redsync and node-redlock send
//! these same two), and redsync's extend scripts. One connection per master, run by its own thread, so a slow master delays
//! only its own replies.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use locksim_algorithms::redlock::protocol::{Command, RedlockMsg, Reply, Request};
use locksim_simulator::process::NodeId;
use redis::Value;

use super::redis::lock_key;
use super::{deliver, reset, Adapter, Inbound};

const UNLOCK: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// redsync `touchScript` and `touchWithSetNXScript` (mutex.go:261-277 @v4.12.1).
const TOUCH: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const TOUCH_OR_SET: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) \
     elseif redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 else return 0 end";

fn run(con: &mut redis::Connection, cmd: &Command) -> redis::RedisResult<bool> {
    Ok(match *cmd {
        Command::SetNx { key, value, px_ms } => {
            let v: Value = redis::cmd("SET").arg(lock_key(key)).arg(value).arg("NX").arg("PX").arg(px_ms).query(con)?;
            !matches!(v, Value::Nil)
        }
        Command::Unlock { key, value } => {
            let v: i64 = redis::cmd("EVAL").arg(UNLOCK).arg(1).arg(lock_key(key)).arg(value).query(con)?;
            v == 1
        }
        Command::Touch { key, value, px_ms, set_if_missing } => {
            let script = if set_if_missing { TOUCH_OR_SET } else { TOUCH };
            let v: i64 = redis::cmd("EVAL").arg(script).arg(1).arg(lock_key(key)).arg(value).arg(px_ms).query(con)?;
            v == 1
        }
    })
}

fn link(peer: NodeId, addr: String, rx: Receiver<Request>, tx: Sender<Inbound<RedlockMsg>>) {
    let mut con: Option<redis::Connection> = None;
    for req in rx {
        if con.is_none() {
            let client = redis::Client::open(format!("redis://{addr}/"));
            match client.and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1))) {
                Ok(c) => con = Some(c),
                Err(_) => {
                    reset(&tx, peer);
                    continue;
                }
            }
        }
        match run(con.as_mut().expect("connected above"), &req.cmd) {
            Ok(ok) => deliver(&tx, peer, RedlockMsg::Reply(Reply { id: req.id, ok })),
            Err(_) => {
                con = None;
                reset(&tx, peer);
            }
        }
    }
}

/// The adapter: one connection per master.
pub struct RedlockAdapter {
    links: BTreeMap<NodeId, Sender<Request>>,
    sent: u64,
}

impl RedlockAdapter {
    /// Connections to `servers` (node id and `127.0.0.1:port`), answering into `tx`.
    pub fn new(servers: &[(NodeId, String)], tx: &Sender<Inbound<RedlockMsg>>) -> Self {
        let mut links = BTreeMap::new();
        for (peer, addr) in servers {
            let (ltx, lrx) = mpsc::channel();
            let (p, a, t) = (*peer, addr.clone(), tx.clone());
            std::thread::spawn(move || link(p, a, lrx, t));
            links.insert(*peer, ltx);
        }
        RedlockAdapter { links, sent: 0 }
    }
}

impl Adapter<RedlockMsg> for RedlockAdapter {
    fn send(&mut self, to: NodeId, msg: RedlockMsg) {
        let RedlockMsg::Request(req) = msg else { return };
        self.sent += 1;
        if let Some(l) = self.links.get(&to) {
            let _ = l.send(req);
        }
    }

    fn sent(&self) -> u64 {
        self.sent
    }
}
