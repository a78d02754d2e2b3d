//! The wire adapters: a model's protocol messages turned into real requests on a real client
//! library's connection, and the real replies turned back into the model's messages. An adapter
//! holds no lock logic: the recipe (what to send, when, and what a reply means) is the model's
//! client library, run unchanged by [`crate::client`].
//!
//! - [`db`]: the `db` model's statements as SQL on a MariaDB table, on the `mysql` crate
//! - [`redis`]: the `redis` model's commands and Redisson's scripts, on the `redis` crate
//! - [`redlock`]: Redlock's `SET NX PX` and unlock script on each master, on the `redis` crate
//! - [`zookeeper`]: the model's session requests and recipe operations, on the `zookeeper-client` crate
//! - [`etcd`]: clientv3's calls for the Session and Mutex, on etcd's gRPC-JSON gateway (`hyper`)
//! - [`postgres`]: the `postgres` model's advisory-lock statements, on the `postgres` crate
//! - [`postgres_db`]: the `db` model's Spring JDBC and ShedLock statements on PostgreSQL (`database = "postgres"`)

pub mod db;
pub mod etcd;
pub mod postgres;
pub mod postgres_db;
pub mod redis;
pub mod redlock;
pub mod zookeeper;

use std::sync::mpsc::Sender;

use locksim_simulator::process::NodeId;
use locksim_simulator::wire::Wire;

/// What reaches a client's event loop from its connections.
#[derive(Debug)]
pub enum Inbound<M> {
    /// A message from node `from` (a server's reply or push, or the resource's answer).
    Message {
        /// The sending node.
        from: NodeId,
        /// The message, as the model (or the workload) reads it.
        msg: Wire<M>,
    },
    /// The connection to `peer` failed (refused, reset, closed): the library's `on_reset`.
    Reset {
        /// The server whose connection failed.
        peer: NodeId,
    },
}

/// Sends a model message to the event loop (a closed loop means the client is ending: ignore).
pub fn deliver<M>(tx: &Sender<Inbound<M>>, from: NodeId, msg: M) {
    let _ = tx.send(Inbound::Message { from, msg: Wire::Model(msg) });
}

/// Reports a failed connection to the event loop.
pub fn reset<M>(tx: &Sender<Inbound<M>>, peer: NodeId) {
    let _ = tx.send(Inbound::Reset { peer });
}

/// What an adapter does with the model's outgoing messages.
pub trait Adapter<M>: Send {
    /// Sends `msg` to server `to` (queued on that server's connection; the answer comes back as
    /// an [`Inbound`]).
    fn send(&mut self, to: NodeId, msg: M);
    /// Requests sent to the servers so far.
    fn sent(&self) -> u64;
}
