//! The `zookeeper` model's client protocol on a real ZooKeeper ensemble, through the
//! `zookeeper-client` crate (kezhuw; pure Rust, async on tokio, the maintained Rust client that
//! speaks the 3.5+ protocol: `create2`, one-shot watches, session re-establishment).
//!
//! Where the boundary lies (also in `docs/live.md`):
//! - **The model's connection layer** (`algorithms/src/zookeeper/connection.rs`) still decides
//!   which server to connect to and when (the shuffled list, the 0–1 s back-off, the spin delay),
//!   its read timeout, its pings' schedule, Curator's SUSPENDED / LOST states and the connection
//!   timeout of queued operations. The recipes above it are untouched.
//! - **The real library owns the session and the wire**: each model connect (`ConnectRequest` to
//!   `server-i`) opens one real connection to that server only, through a real `Client` that
//!   presents the model's session (the real session id and password kept from the connect that
//!   created it) or asks for a new one. The model is answered with the real session id and the
//!   timeout the server negotiated, or `Expired` when the server says the session is gone, or a
//!   reset when the server cannot be reached or does not serve (no quorum). The real library
//!   does the handshake, its own pings (every third of its idle timeout) and the zxid
//!   bookkeeping; the model's `last_zxid` in its connect and the `zxid` of each reply are not
//!   carried (replies say 0: the real client presents its own last zxid).
//! - The real library would reconnect by itself when the connection drops; the adapter does not
//!   let it: at the first `Disconnected` / `Expired` / `Closed` state, or a request failing with
//!   connection loss, the real client is dropped (detached: dropping it does not close the
//!   session) and the model gets a reset, so the model reconnects as it would.
//! - The model's ping is sent as a real round trip on the same connection (`exists /`), so a
//!   paused or dead server leaves it unanswered exactly as a ping would be.
//! - Each reply and watch event is numbered on the model's connection in the order the real
//!   library delivered it (one current-thread runtime, tasks woken in that order).
//!
//! Requests: `create2` EPHEMERAL_SEQUENTIAL `/locks/<key>/_c_<protection>-<name>` (or
//! EPHEMERAL `/naive/<key>`); the created child's sequence and `czxid` come back. The lock's
//! parent is created as Curator's `creatingParentsIfNeeded` does: the create fails with
//! NONODE, the parents are made (persistent), the create is sent again. `getChildren`
//! (a missing parent reads as no children, as the model's implicit parents do), `getData`
//! and `exists` with or without a watch, `delete`.

use std::collections::BTreeMap;
use std::sync::mpsc::Sender;
use std::time::Duration;

use locksim_algorithms::zookeeper::protocol::{
    ChildName, ConnectRequest, ConnectResponse, CreateSpec, ErrCode, EventType, LockName, Op, Outcome, Request,
    Response, SessionId, Stat, WatchEvent, ZPath, ZkMsg,
};
use locksim_simulator::history::LockKey;
use locksim_simulator::process::NodeId;
use tokio::sync::mpsc as amsc;
use zookeeper_client as zk;

use super::{deliver, reset, Adapter, Inbound};

/// A znode path as the real tree spells it (the model's `Debug` is the path).
fn path_of(p: &ZPath) -> String {
    format!("{p:?}")
}

/// The lock's parent.
fn parent_of(key: LockKey) -> String {
    format!("/locks/{key}")
}

/// Parses a child of `/locks/<key>` named as Curator names it: `_c_<protection>-<name><seq>`.
pub fn parse_child(name: &str) -> Option<ChildName> {
    let rest = name.strip_prefix("_c_")?;
    let (prot, rest) = rest.split_once('-')?;
    let protection = u32::from_str_radix(prot, 16).ok()?;
    let (lock, seq) = [LockName::Lock, LockName::Read, LockName::Write]
        .into_iter()
        .find_map(|n| rest.strip_prefix(n.as_str()).map(|s| (n, s)))?;
    Some(ChildName { protection, name: lock, seq: seq.parse().ok()? })
}

fn stat_of(s: &zk::Stat) -> Stat {
    Stat { czxid: s.czxid as u64, owner: s.ephemeral_owner as u64 }
}

/// What a task on the runtime reports to the adapter's loop.
enum Event {
    /// A connect finished.
    Connected { gen: u64, attempt: u64, client: zk::Client },
    /// A connect failed: `expired` when the server said the presented session is gone.
    ConnectFailed { gen: u64, attempt: u64, session: SessionId, expired: bool },
    /// A request's answer.
    Reply { gen: u64, xid: u64, outcome: Outcome },
    /// A one-shot watch fired.
    Watch { gen: u64, path: ZPath, kind: EventType },
    /// The real connection is gone (state change, or a request failed with connection loss).
    Lost { gen: u64 },
}

/// The model's current connection, as the real library holds it.
enum Link {
    Down,
    Connecting { gen: u64, peer: NodeId },
    Up { gen: u64, peer: NodeId, client: zk::Client, seq: u64 },
}

/// The adapter's loop: one per client process, on its own thread and current-thread runtime.
struct Driver {
    addrs: BTreeMap<NodeId, String>,
    tx: Sender<Inbound<ZkMsg>>,
    events_tx: amsc::UnboundedSender<Event>,
    /// Each real session this client opened, to present again on a reconnect.
    sessions: BTreeMap<SessionId, zk::SessionInfo>,
    link: Link,
    gen: u64,
}

impl Driver {
    fn on_model(&mut self, to: NodeId, msg: ZkMsg) {
        match msg {
            ZkMsg::ConnectRequest(c) => self.connect(to, c),
            ZkMsg::Request(r) => self.request(to, r),
            // A client sends nothing else.
            _ => {}
        }
    }

    fn connect(&mut self, to: NodeId, c: ConnectRequest) {
        // The model connects only when its previous connection is gone: drop ours with it.
        self.gen += 1;
        let gen = self.gen;
        self.link = Link::Connecting { gen, peer: to };
        let Some(addr) = self.addrs.get(&to).cloned() else {
            reset(&self.tx, to);
            return;
        };
        let known = if c.session == 0 { None } else { self.sessions.get(&c.session).cloned() };
        let events = self.events_tx.clone();
        let (attempt, session, timeout_ms) = (c.attempt, c.session, c.timeout_ms);
        if session != 0 && known.is_none() {
            let _ = events.send(Event::ConnectFailed { gen, attempt, session, expired: true });
            return;
        }
        tokio::spawn(async move {
            let timeout = Duration::from_millis(timeout_ms.max(1));
            // ClientCnxn's read timeout is 2/3 of the session timeout; the model's is the same.
            let mut connector = zk::Client::connector()
                .with_session_timeout(timeout)
                .with_connection_timeout(timeout * 2 / 3)
                .with_server_version(3, 8, 0)
                .with_detached()
                .with_fail_eagerly();
            if let Some(info) = known {
                connector = connector.with_session(info);
            }
            let ev = match tokio::time::timeout(timeout, connector.connect(&addr)).await {
                Ok(Ok(client)) => Event::Connected { gen, attempt, client },
                Ok(Err(zk::Error::SessionExpired)) => Event::ConnectFailed { gen, attempt, session, expired: true },
                _ => Event::ConnectFailed { gen, attempt, session, expired: false },
            };
            let _ = events.send(ev);
        });
    }

    fn request(&mut self, to: NodeId, r: Request) {
        let Link::Up { gen, peer, ref client, .. } = self.link else { return };
        if peer != to {
            return;
        }
        let client = client.clone();
        let events = self.events_tx.clone();
        tokio::spawn(async move {
            let lost =
                |e: &zk::Error| !matches!(e, zk::Error::NoNode | zk::Error::NodeExists | zk::Error::SessionExpired);
            let err = |e: zk::Error| match e {
                zk::Error::NoNode => Outcome::Err(ErrCode::NoNode),
                zk::Error::NodeExists => Outcome::Err(ErrCode::NodeExists),
                _ => Outcome::Err(ErrCode::SessionExpired),
            };
            let reply = |outcome| Event::Reply { gen, xid: r.xid, outcome };
            let result: Result<Outcome, zk::Error> = match r.op {
                Op::Create(spec) => create(&client, spec).await,
                Op::Delete(path) => client.delete(&path_of(&path), None).await.map(|_| Outcome::Deleted),
                Op::GetChildren(key) => match client.list_children(&parent_of(key)).await {
                    Ok(names) => {
                        let mut children: Vec<ChildName> = names.iter().filter_map(|n| parse_child(n)).collect();
                        // Curator's `fixForSorting`: by the sequence suffix.
                        children.sort_by_key(|c| c.seq);
                        Ok(Outcome::Children(children))
                    }
                    Err(zk::Error::NoNode) => Ok(Outcome::Children(Vec::new())),
                    Err(e) => Err(e),
                },
                Op::GetData { path, watch: false } => {
                    client.get_data(&path_of(&path)).await.map(|(_, s)| Outcome::Stat(Some(stat_of(&s))))
                }
                Op::GetData { path, watch: true } => match client.get_and_watch_data(&path_of(&path)).await {
                    Ok((_, s, watcher)) => {
                        let _ = events.send(reply(Outcome::Stat(Some(stat_of(&s)))));
                        return forward_watch(watcher, path, gen, events).await;
                    }
                    Err(e) => Err(e),
                },
                Op::Exists { path, watch: false } => {
                    client.check_stat(&path_of(&path)).await.map(|s| Outcome::Stat(s.as_ref().map(stat_of)))
                }
                Op::Exists { path, watch: true } => match client.check_and_watch_stat(&path_of(&path)).await {
                    Ok((s, watcher)) => {
                        let _ = events.send(reply(Outcome::Stat(s.as_ref().map(stat_of))));
                        return forward_watch(watcher, path, gen, events).await;
                    }
                    Err(e) => Err(e),
                },
                // The ping as a real round trip on this connection (see the module header).
                Op::Ping => client.check_stat("/").await.map(|_| Outcome::Pong),
            };
            let ev = match result {
                Ok(outcome) => reply(outcome),
                Err(e) if lost(&e) => Event::Lost { gen },
                Err(e) => reply(err(e)),
            };
            let _ = events.send(ev);
        });
    }

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::Connected { gen, attempt, client } => {
                let Link::Connecting { gen: g, peer } = self.link else { return };
                if g != gen {
                    return; // the model gave up on this connect; the detached session just expires
                }
                let session = client.session_id().0 as u64;
                self.sessions.insert(session, client.session().clone());
                let timeout_ms = client.session_timeout().as_millis() as u64;
                let mut watcher = client.state_watcher();
                let events = self.events_tx.clone();
                tokio::spawn(async move {
                    loop {
                        match watcher.changed().await {
                            zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {}
                            _ => {
                                let _ = events.send(Event::Lost { gen });
                                return;
                            }
                        }
                    }
                });
                self.link = Link::Up { gen, peer, client, seq: 0 };
                deliver(
                    &self.tx,
                    peer,
                    ZkMsg::ConnectResponse(ConnectResponse::Connected { session, timeout_ms, attempt }),
                );
            }
            Event::ConnectFailed { gen, attempt, session, expired } => {
                let Link::Connecting { gen: g, peer } = self.link else { return };
                if g != gen {
                    return;
                }
                self.link = Link::Down;
                if expired {
                    self.sessions.remove(&session);
                    deliver(&self.tx, peer, ZkMsg::ConnectResponse(ConnectResponse::Expired { session, attempt }));
                } else {
                    // Refused, reset, or a server that does not serve (no quorum): the TCP
                    // connection failed, as the model's `on_reset` expects.
                    reset(&self.tx, peer);
                }
            }
            Event::Reply { gen, xid, outcome } => {
                if let Link::Up { gen: g, peer, ref mut seq, .. } = self.link {
                    if g == gen {
                        *seq += 1;
                        let r = Response { xid, zxid: 0, seq: *seq, outcome };
                        deliver(&self.tx, peer, ZkMsg::Response(r));
                    }
                }
            }
            Event::Watch { gen, path, kind } => {
                if let Link::Up { gen: g, peer, ref mut seq, .. } = self.link {
                    if g == gen {
                        *seq += 1;
                        deliver(&self.tx, peer, ZkMsg::WatchEvent(WatchEvent { path, kind, seq: *seq }));
                    }
                }
            }
            Event::Lost { gen } => {
                if let Link::Up { gen: g, peer, .. } = self.link {
                    if g == gen {
                        // Dropping the detached client ends its connection without closing the
                        // session; the model reconnects when it decides to.
                        self.link = Link::Down;
                        reset(&self.tx, peer);
                    }
                }
            }
        }
    }
}

/// `create2`, making the lock's parents on NONODE as Curator's `creatingParentsIfNeeded` does.
async fn create(client: &zk::Client, spec: CreateSpec) -> Result<Outcome, zk::Error> {
    let acls = zk::Acls::anyone_all();
    let (path, mode) = match spec {
        CreateSpec::Sequential { key, protection, name } => {
            (format!("/locks/{key}/_c_{protection:08x}-{}", name.as_str()), zk::CreateMode::EphemeralSequential)
        }
        CreateSpec::Naive { key } => (format!("/naive/{key}"), zk::CreateMode::Ephemeral),
    };
    let options = mode.with_acls(acls);
    let made = match client.create(&path, b"", &options).await {
        Err(zk::Error::NoNode) => {
            let parent = &path[..path.rfind('/').expect("an absolute path")];
            client.mkdir(parent, &zk::CreateMode::Persistent.with_acls(acls)).await?;
            client.create(&path, b"", &options).await
        }
        other => other,
    };
    let (stat, sequence) = made?;
    let created = match spec {
        CreateSpec::Sequential { key, protection, name } => {
            ZPath::Child { key, child: ChildName { protection, name, seq: sequence.into_i64() as u32 } }
        }
        CreateSpec::Naive { key } => ZPath::Naive { key },
    };
    Ok(Outcome::Created { path: created, czxid: stat.czxid as u64 })
}

/// Waits for a one-shot watch and reports it as the model's watch event (a session event, sent
/// when the session ends, is the state watcher's business).
async fn forward_watch(watcher: zk::OneshotWatcher, path: ZPath, gen: u64, events: amsc::UnboundedSender<Event>) {
    let e = watcher.changed().await;
    let kind = match e.event_type {
        zk::EventType::NodeCreated => EventType::NodeCreated,
        zk::EventType::NodeDeleted => EventType::NodeDeleted,
        _ => return,
    };
    let _ = events.send(Event::Watch { gen, path, kind });
}

/// The adapter: the model's messages go to the driver's thread.
pub struct ZkAdapter {
    to_driver: amsc::UnboundedSender<(NodeId, ZkMsg)>,
    sent: u64,
}

impl ZkAdapter {
    /// A driver for the ensemble `servers` (node id and `127.0.0.1:port`), answering into `tx`.
    pub fn new(servers: &[(NodeId, String)], tx: &Sender<Inbound<ZkMsg>>) -> Self {
        let (to_driver, mut from_model) = amsc::unbounded_channel::<(NodeId, ZkMsg)>();
        let (events_tx, mut events_rx) = amsc::unbounded_channel();
        let mut driver = Driver {
            addrs: servers.iter().cloned().collect(),
            tx: tx.clone(),
            events_tx,
            sessions: BTreeMap::new(),
            link: Link::Down,
            gen: 0,
        };
        std::thread::spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
                Ok(rt) => rt,
                Err(_) => return,
            };
            rt.block_on(async move {
                loop {
                    tokio::select! {
                        m = from_model.recv() => match m {
                            Some((to, msg)) => driver.on_model(to, msg),
                            None => return,
                        },
                        Some(ev) = events_rx.recv() => driver.on_event(ev),
                    }
                }
            });
        });
        ZkAdapter { to_driver, sent: 0 }
    }
}

impl Adapter<ZkMsg> for ZkAdapter {
    fn send(&mut self, to: NodeId, msg: ZkMsg) {
        self.sent += 1;
        let _ = self.to_driver.send((to, msg));
    }

    fn sent(&self) -> u64 {
        self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_parse_as_curator_names_them() {
        let c = ChildName { protection: 0xdeadbeef, name: LockName::Write, seq: 42 };
        let name = format!("{c:?}");
        assert_eq!(name, "_c_deadbeef-__WRIT__0000000042");
        assert_eq!(parse_child(&name), Some(c));
        assert_eq!(parse_child("_c_00000001-lock-0000000007").map(|c| (c.name, c.seq)), Some((LockName::Lock, 7)));
        assert_eq!(parse_child("foreign"), None);
        assert_eq!(path_of(&ZPath::Naive { key: 3 }), "/naive/3");
    }
}
