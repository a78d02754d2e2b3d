//! The `etcd` model's client calls on real etcd members, through etcd's gRPC-JSON gateway
//! ([`gateway`]: HTTP/1.1 on each member's client port, `hyper` on a current-thread tokio runtime
//! in one thread of the client process).
//!
//! Each model call becomes the request clientv3 makes for it (etcd 3.4 `clientv3/lease.go`,
//! `clientv3/concurrency/session.go`, `mutex.go`), and each answer becomes the model's reply,
//! under the model's request id:
//!
//! | model call | gateway call |
//! |---|---|
//! | `LeaseGrant { ttl }` | `lease/grant {TTL}` (whole seconds; the backend refuses others) |
//! | `KeepAlive { lease }` | `lease/keepalive {ID}`: one request on its own stream, one answer |
//! | `MutexTxn` | `kv/txn`: `If(CreateRevision(my_key) = 0) Then(Put(my_key, lease), Get(prefix, first create)) Else(Get(my_key), Get(prefix, first create))` |
//! | `Get { key }` | `kv/range {key}` (linearizable, clientv3's default) |
//! | `LastCreateBelow` | `kv/range` of the prefix, sorted by create revision descending, limit 1, `max_create_revision` |
//! | `Delete { key }` | `kv/deleterange {key}` |
//! | `Watch { key, start_rev }` | `watch {create_request: {key, start_revision}}`, a stream of its own |
//! | `WatchCancel` | the watch's stream closed (its connection dropped) |
//!
//! Transport, where gRPC's HTTP/2 connection is HTTP/1.1 here:
//! - calls in flight to one member run side by side, each on its own connection from the
//!   member's pool (gRPC multiplexes them as streams on one connection: a keep-alive is never
//!   queued behind a proposal that waits for an election); they start in the order the model
//!   sends them;
//! - [`StreamCancel`] (grpc-go's `RST_STREAM` when the client gives up on a call) drops the
//!   call: one not started yet is never sent, one in flight has its connection closed, which
//!   cancels it in etcd's HTTP server and, through the gateway, its gRPC handler;
//! - the model's reset (`on_reset`: the transport closed) comes from a member's connections
//!   failing: a call refused or cut, a watch stream ending, or the one idle TCP connection kept
//!   to each member's client port (standing for gRPC's connection, which learns at once that
//!   the member's process died) reaching its end;
//! - [`WatchAck`] is TCP's acknowledgement in the model, which the real TCP stream does itself;
//!   the adapter numbers each watch's events (`seq`) as the model's member does.
//!
//! What the adapter does not carry: gRPC keepalive [`Ping`](locksim_algorithms::etcd::protocol::Ping)s
//! (HTTP/1.1 has no ping frame; the backend refuses `keepalive_time_ms > 0`).

pub mod gateway;

use std::collections::BTreeMap;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use locksim_algorithms::etcd::protocol::{
    EtcdError, EtcdMsg, KeyInfo, Op, Reply, Request, Response, Revision, WatchCreated, WatchEvent,
};
use locksim_simulator::process::NodeId;
use locksim_simulator::time::NS_PER_SEC;
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::task::AbortHandle;

use self::gateway::{b64, b64_prefix_end, field, unb64, Failure, GrpcError, Pool};
use super::{deliver, reset, Adapter, Inbound};

/// gRPC's status code `NotFound`, which etcd gives `ErrGRPCLeaseNotFound`
/// (`etcdserver/api/v3rpc/rpctypes/error.go`).
const GRPC_NOT_FOUND: u64 = 5;

/// How often the connection standing for gRPC's transport is reopened while its member is down.
const RECONNECT_NS: u64 = 50_000_000;

/// The gateway call for a model call: its path and JSON body (`None` for the watch calls, which
/// are streams of their own).
pub fn request_for(op: &Op) -> Option<(&'static str, Value)> {
    let first_create = |prefix: &str| {
        // clientv3 `WithFirstCreate()`: the prefix, sorted by create revision ascending, limit 1.
        json!({"request_range": {"key": b64(prefix), "range_end": b64_prefix_end(prefix),
            "sort_order": "ASCEND", "sort_target": "CREATE", "limit": 1}})
    };
    Some(match op {
        // etcd TTLs are whole seconds (`LeaseGrantRequest.TTL`).
        Op::LeaseGrant { ttl_ns } => ("/v3/lease/grant", json!({"TTL": ttl_ns.div_ceil(NS_PER_SEC)})),
        Op::KeepAlive { lease } => ("/v3/lease/keepalive", json!({"ID": lease.to_string()})),
        Op::MutexTxn { my_key, prefix, lease } => (
            "/v3/kv/txn",
            json!({
                "compare": [{"target": "CREATE", "key": b64(my_key), "create_revision": "0", "result": "EQUAL"}],
                "success": [{"request_put": {"key": b64(my_key), "value": "", "lease": lease.to_string()}},
                            first_create(prefix)],
                "failure": [{"request_range": {"key": b64(my_key)}}, first_create(prefix)],
            }),
        ),
        Op::Get { key } => ("/v3/kv/range", json!({"key": b64(key)})),
        // clientv3 `WithLastCreate()` and `WithMaxCreateRev(max)`.
        Op::LastCreateBelow { prefix, max_create_rev } => (
            "/v3/kv/range",
            json!({"key": b64(prefix), "range_end": b64_prefix_end(prefix), "sort_order": "DESCEND",
                "sort_target": "CREATE", "limit": 1, "max_create_revision": max_create_rev.to_string()}),
        ),
        Op::Delete { key } => ("/v3/kv/deleterange", json!({"key": b64(key)})),
        Op::Watch { .. } | Op::WatchCancel { .. } => return None,
    })
}

/// A range response's first key, as the model reads it.
fn first_kv(range: &Value) -> Option<KeyInfo> {
    let kv = range.get("kvs")?.as_array()?.first()?;
    Some(KeyInfo {
        key: unb64(kv.get("key")?.as_str()?)?,
        create_rev: field(kv, "create_revision"),
        lease: field(kv, "lease"),
    })
}

/// The model's reply for the gateway's answer to `op`, with the answer's header revision.
pub fn reply_for(op: &Op, answer: &Value) -> Result<(Revision, Reply), String> {
    let header_rev = answer.get("header").map_or(0, |h| field(h, "revision"));
    let reply = match op {
        Op::LeaseGrant { .. } => {
            Reply::LeaseGranted { lease: field(answer, "ID"), ttl_ns: field(answer, "TTL") * NS_PER_SEC }
        }
        Op::KeepAlive { lease } => {
            // TTL 0 (left out): the lease is gone (`LeaseKeepAlive` answers ErrLeaseNotFound so).
            Reply::KeepAlive { lease: *lease, ttl_ns: field(answer, "TTL") * NS_PER_SEC }
        }
        Op::MutexTxn { .. } => {
            let succeeded = answer.get("succeeded").and_then(Value::as_bool).unwrap_or(false);
            let responses = answer.get("responses").and_then(Value::as_array).ok_or("txn: no responses")?;
            let range = |i: usize| responses.get(i).and_then(|r| r.get("response_range"));
            // mutex.go: myRev is the header revision when the put happened, else the existing
            // key's create revision.
            let my_create_rev = if succeeded {
                header_rev
            } else {
                range(0).and_then(first_kv).ok_or("txn: the own key is missing from the failure branch")?.create_rev
            };
            Reply::Txn { succeeded, my_create_rev, owner: range(1).and_then(first_kv) }
        }
        Op::Get { .. } | Op::LastCreateBelow { .. } => Reply::Range { kv: first_kv(answer) },
        Op::Delete { .. } => Reply::Deleted { count: field(answer, "deleted") },
        Op::Watch { .. } | Op::WatchCancel { .. } => return Err("a watch has no unary answer".into()),
    };
    Ok((header_rev, reply))
}

/// The model's error for the server's: a put under a lease the server no longer has is
/// `LeaseNotFound`; every other error (no leader, proposal dropped, timed out waiting for a new
/// leader, …) is a member that could not serve the call, which the model reads as `NoLeader`.
pub fn error_for(e: &GrpcError) -> EtcdError {
    if e.code == GRPC_NOT_FOUND && e.message.contains("lease not found") {
        EtcdError::LeaseNotFound
    } else {
        EtcdError::NoLeader
    }
}

/// The adapter: the model's messages go to the runtime thread, which carries them.
pub struct EtcdAdapter {
    tx: UnboundedSender<(NodeId, EtcdMsg)>,
    sent: u64,
}

impl EtcdAdapter {
    /// Connections to `servers` (node id and `127.0.0.1:port`), answering into `tx`.
    pub fn new(servers: &[(NodeId, String)], tx: &Sender<Inbound<EtcdMsg>>) -> Self {
        let (atx, arx) = unbounded_channel();
        let (servers, out) = (servers.to_vec(), tx.clone());
        std::thread::spawn(move || {
            match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt.block_on(carry(servers, arx, out)),
                // Nothing can be sent: every call goes unanswered and the model times out.
                Err(e) => eprintln!("etcd adapter: cannot start a tokio runtime: {e}"),
            }
        });
        EtcdAdapter { tx: atx, sent: 0 }
    }
}

impl Adapter<EtcdMsg> for EtcdAdapter {
    fn send(&mut self, to: NodeId, msg: EtcdMsg) {
        if matches!(msg, EtcdMsg::Request(_)) {
            self.sent += 1;
        }
        let _ = self.tx.send((to, msg));
    }

    fn sent(&self) -> u64 {
        self.sent
    }
}

/// The runtime's main task: carries each model message until the client ends (the adapter,
/// and with it the channel, is dropped).
async fn carry(
    servers: Vec<(NodeId, String)>,
    mut rx: UnboundedReceiver<(NodeId, EtcdMsg)>,
    out: Sender<Inbound<EtcdMsg>>,
) {
    let mut pools: BTreeMap<NodeId, Arc<Pool>> = BTreeMap::new();
    for (peer, addr) in &servers {
        pools.insert(*peer, Pool::new(addr));
        tokio::spawn(transport(*peer, addr.clone(), out.clone()));
    }
    // Calls and watches in flight by the model's ids (a cancel may reach a member other than the
    // one the call went to: the model addresses it to its current member).
    let mut calls: BTreeMap<u64, AbortHandle> = BTreeMap::new();
    let mut watches: BTreeMap<u64, AbortHandle> = BTreeMap::new();
    while let Some((to, msg)) = rx.recv().await {
        let Some(pool) = pools.get(&to).cloned() else { continue };
        match msg {
            EtcdMsg::Request(Request { op: Op::Watch { watch_id, key, start_rev }, .. }) => {
                // The model resends a watch request until the member confirms it (its stand-in
                // for TCP); the stream already open carries it.
                if watches.contains_key(&watch_id) {
                    continue;
                }
                let task = tokio::spawn(watch(to, pool, watch_id, key.to_string(), start_rev, out.clone()));
                watches.insert(watch_id, task.abort_handle());
            }
            EtcdMsg::Request(Request { op: Op::WatchCancel { watch_id }, .. }) => {
                if let Some(w) = watches.remove(&watch_id) {
                    w.abort();
                }
            }
            EtcdMsg::Request(req) => {
                calls.retain(|_, h| !h.is_finished());
                let id = req.id;
                let task = tokio::spawn(call(to, pool, req, out.clone()));
                calls.insert(id, task.abort_handle());
            }
            EtcdMsg::StreamCancel(c) => {
                if let Some(h) = calls.remove(&c.id) {
                    h.abort();
                }
            }
            // TCP's acknowledgement in the model; the real stream is TCP.
            EtcdMsg::WatchAck(_) => {}
            // gRPC keepalive pings are refused before a live run starts (HTTP/1.1 has none).
            EtcdMsg::Ping(_) => {}
            // Member-to-member and member-to-client messages: a client never sends them.
            EtcdMsg::Consensus(_)
            | EtcdMsg::Peer(_)
            | EtcdMsg::Response(_)
            | EtcdMsg::WatchEvent(_)
            | EtcdMsg::WatchCreated(_)
            | EtcdMsg::Pong(_) => {}
        }
    }
}

/// One unary call (or one keep-alive): the gateway request, and its answer back to the model.
async fn call(peer: NodeId, pool: Arc<Pool>, req: Request, out: Sender<Inbound<EtcdMsg>>) {
    let Some((path, body)) = request_for(&req.op) else { return };
    match pool.post(path, &body).await {
        Ok(Ok(answer)) => match reply_for(&req.op, &answer) {
            Ok((header_rev, reply)) => {
                deliver(&out, peer, EtcdMsg::Response(Response { id: req.id, header_rev, result: Ok(reply) }))
            }
            // Not etcd's answer: left unanswered (the model's deadline applies), and said.
            Err(e) => eprintln!("etcd adapter: {} {path}: {e}: {answer}", pool.addr()),
        },
        Ok(Err(e)) => {
            deliver(&out, peer, EtcdMsg::Response(Response { id: req.id, header_rev: 0, result: Err(error_for(&e)) }))
        }
        Err(Failure::Connection(_)) => reset(&out, peer),
        Err(f @ Failure::Protocol(_)) => eprintln!("etcd adapter: {} {path}: {f}", pool.addr()),
    }
}

/// One watch: its stream's creation and DELETE/PUT events become the model's `WatchCreated` and
/// numbered `WatchEvent`s; the stream's end (the member died) is the model's reset.
async fn watch(
    peer: NodeId,
    pool: Arc<Pool>,
    watch_id: u64,
    key: String,
    start_rev: Revision,
    out: Sender<Inbound<EtcdMsg>>,
) {
    let body = json!({"create_request": {"key": b64(&key), "start_revision": start_rev.to_string()}});
    let mut seq = 0;
    let failure = gateway::stream(pool.addr(), "/v3/watch", &body, |line| {
        let Ok(result) = gateway::unwrap_answer(line) else { return };
        if result.get("created").and_then(Value::as_bool) == Some(true) {
            deliver(&out, peer, EtcdMsg::WatchCreated(WatchCreated { watch_id }));
        }
        for ev in result.get("events").and_then(Value::as_array).into_iter().flatten() {
            let Some(kv) = ev.get("kv") else { continue };
            seq += 1;
            let event = WatchEvent {
                watch_id,
                seq,
                key: kv.get("key").and_then(Value::as_str).and_then(unb64).unwrap_or_default(),
                rev: field(kv, "mod_revision"),
                // A PUT is the enum's default, left out; a DELETE says so.
                deleted: ev.get("type").and_then(Value::as_str) == Some("DELETE"),
            };
            deliver(&out, peer, EtcdMsg::WatchEvent(event));
        }
    })
    .await;
    match failure {
        Failure::Connection(_) => reset(&out, peer),
        f @ Failure::Protocol(_) => eprintln!("etcd adapter: {} watch {key}: {f}", pool.addr()),
    }
}

/// The connection standing for gRPC's transport to one member: an idle TCP connection to its
/// client port, which reaches its end when the member's process dies (the OS closes its
/// sockets), as gRPC's connection would: the model's reset. Reopened once the member is back.
async fn transport(peer: NodeId, addr: String, out: Sender<Inbound<EtcdMsg>>) {
    loop {
        match tokio::net::TcpStream::connect(&addr).await {
            Ok(mut stream) => {
                let mut buf = [0u8; 64];
                // etcd sends nothing on a connection that has sent no request: a read returns only
                // at its end.
                while let Ok(n @ 1..) = stream.read(&mut buf).await {
                    let _ = n;
                }
                reset(&out, peer);
            }
            Err(_) => tokio::time::sleep(Duration::from_nanos(RECONNECT_NS)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_transaction_reads_back_as_mutex_go_does() {
        let op = Op::MutexTxn { my_key: "/lock/0/7".into(), prefix: "/lock/0/".into(), lease: 7 };
        let (path, body) = request_for(&op).unwrap();
        assert_eq!(path, "/v3/kv/txn");
        assert_eq!(body["success"][0]["request_put"]["lease"], "7");
        assert_eq!(body["success"][1]["request_range"]["range_end"], b64("/lock/00"));
        // Taken by this call (etcd 3.4.23's answer, keys re-encoded).
        let k = b64("/lock/0/7");
        let won = json!({"header": {"revision": "2"}, "succeeded": true, "responses": [
            {"response_put": {"header": {"revision": "2"}}},
            {"response_range": {"kvs": [{"key": k, "create_revision": "2", "mod_revision": "2", "lease": "7"}]}}]});
        let (rev, reply) = reply_for(&op, &won).unwrap();
        assert_eq!(rev, 2);
        assert_eq!(
            reply,
            Reply::Txn {
                succeeded: true,
                my_create_rev: 2,
                owner: Some(KeyInfo { key: "/lock/0/7".into(), create_rev: 2, lease: 7 })
            }
        );
        // The own key existed already (`succeeded` left out): its create revision is myRev.
        let other = b64("/lock/0/5");
        let again = json!({"header": {"revision": "9"}, "responses": [
            {"response_range": {"kvs": [{"key": k, "create_revision": "4", "lease": "7"}]}},
            {"response_range": {"kvs": [{"key": other, "create_revision": "3", "lease": "5"}]}}]});
        let (_, reply) = reply_for(&op, &again).unwrap();
        assert!(
            matches!(reply, Reply::Txn { succeeded: false, my_create_rev: 4, owner: Some(ref o) } if o.create_rev == 3)
        );
    }

    #[test]
    fn leases_and_errors_read_back() {
        let grant = Op::LeaseGrant { ttl_ns: 2 * NS_PER_SEC };
        assert_eq!(request_for(&grant).unwrap().1, json!({"TTL": 2}));
        let (_, r) = reply_for(&grant, &json!({"ID": "2344020321652296454", "TTL": "2"})).unwrap();
        assert_eq!(r, Reply::LeaseGranted { lease: 2344020321652296454, ttl_ns: 2 * NS_PER_SEC });
        let ka = Op::KeepAlive { lease: 123 };
        let (_, r) = reply_for(&ka, &json!({"header": {"revision": "2"}, "ID": "123"})).unwrap();
        assert_eq!(r, Reply::KeepAlive { lease: 123, ttl_ns: 0 }, "TTL left out: the lease is gone");
        let not_found = GrpcError { code: 5, message: "etcdserver: requested lease not found".into() };
        assert_eq!(error_for(&not_found), EtcdError::LeaseNotFound);
        let dropped = GrpcError { code: 2, message: "raft proposal dropped".into() };
        assert_eq!(error_for(&dropped), EtcdError::NoLeader);
        let below = Op::LastCreateBelow { prefix: "/lock/3/".into(), max_create_rev: 41 };
        let (_, body) = request_for(&below).unwrap();
        assert_eq!(body["max_create_revision"], "41");
        assert_eq!(body["sort_order"], "DESCEND");
        let (_, r) = reply_for(&below, &json!({"header": {"revision": "50"}})).unwrap();
        assert_eq!(r, Reply::Range { kv: None });
    }

    /// The connection standing for gRPC's transport reports the model's reset when the member's
    /// end closes (here a listener that accepts and drops the connection, as a killed process's
    /// kernel does), and only then.
    #[test]
    fn a_closed_transport_is_the_models_reset() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(transport(4, addr, tx));
        });
        let (conn, _) = listener.accept().unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "an open connection is no reset");
        drop(conn);
        match rx.recv_timeout(Duration::from_secs(2)) {
            Ok(Inbound::Reset { peer }) => assert_eq!(peer, 4),
            other => panic!("expected a reset, got {other:?}"),
        }
        // It reconnects, for the member's next life.
        let _again = listener.accept().unwrap();
    }
}
