//! [`Fingerprint`] for a ZooKeeper server: every field destructured (a new one is a compile
//! error here); the clients it names (connections, session tickets) and the peers through the
//! renaming, timer ids by the timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Conn, Queued, ServerConfig, Ticket, Volatile, ZkServer};

impl Fingerprint for ServerConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ServerConfig { index, members, tick_ms, election_ms, sync_limit, service_ms, fsync_ms } = self;
        (index, members, tick_ms, election_ms, sync_limit).fingerprint(h, ids);
        h.debug(&(service_ms, fsync_ms));
    }
}

fingerprint_struct!(Conn { @node client, timeout_ms, recv_seq, send_seq });

impl Fingerprint for Queued {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Queued::Write { ticket, xid, outcome } => {
                h.write_u8(0);
                (ticket, xid, outcome).fingerprint(h, ids);
            }
            Queued::Read { xid, op } => {
                h.write_u8(1);
                (xid, op).fingerprint(h, ids);
            }
        }
    }
}

fingerprint_enum!(Ticket {
    NewSession { @node client, attempt },
    Revalidating { @node client, attempt, session, timeout_ms },
    Write { session },
});

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile {
            incarnation,
            next_ticket,
            tickets,
            serving,
            conns,
            queues,
            data_watches,
            exist_watches,
            tracker,
            touches,
            leader_gen,
            expiry_timer,
            peers,
            fwd_stream,
            fwd_seq,
            fwd_in,
            committed,
        } = self;
        (incarnation, next_ticket, tickets).fingerprint(h, ids);
        serving.map(|(term, leader)| (term, AsNode(leader))).fingerprint(h, ids);
        (conns, queues, data_watches, exist_watches, tracker, touches, leader_gen, expiry_timer).fingerprint(h, ids);
        ids.nodes(h, peers);
        (fwd_stream, fwd_seq).fingerprint(h, ids);
        ids.node_map(h, fwd_in.iter());
        committed.fingerprint(h, ids);
    }
}

fingerprint_struct!(ZkServer { cfg, replica, tree, v });
