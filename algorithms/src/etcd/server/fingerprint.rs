//! [`Fingerprint`] for an etcd member: every field destructured (a new one is a compile error
//! here); the clients it names (watchers, waiting requests, parked renewals, the connections it
//! has seen) through the renaming, timer ids by the timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{EtcdServer, RenewFor, ServerConfig, Volatile, Watcher};
use crate::smallmap::SmallMap;

impl Fingerprint for ServerConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ServerConfig { service_ms, lease_check_ns, election_ns, min_ttl_ns, req_timeout_ns } = self;
        h.debug(service_ms);
        (lease_check_ns, election_ns, min_ttl_ns, req_timeout_ns).fingerprint(h, ids);
    }
}

fingerprint_struct!(Watcher { @node client, watch_id, key, start_rev, next_seq, unacked });

fingerprint_enum!(RenewFor { Client { @node client, id }, Peer { @node peer, rid } });

/// A map from a tag to (node, value), the node renamed.
fn by_tag<V: Fingerprint>(h: &mut StableHasher, ids: &Renaming, map: &SmallMap<u64, (usize, V)>) {
    h.write_usize(map.len());
    for (tag, (node, value)) in map.iter() {
        (tag, AsNode(*node), value).fingerprint(h, ids);
    }
}

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile {
            next_tag,
            waiting,
            reads,
            indexed_reads,
            peer_reads,
            renewals,
            parked,
            watchers,
            check_timer,
            retransmit_timer,
            inbox,
            dispatch_timer,
        } = self;
        next_tag.fingerprint(h, ids);
        by_tag(h, ids, waiting);
        by_tag(h, ids, reads);
        h.write_usize(indexed_reads.len());
        for (index, node, request) in indexed_reads {
            (index, AsNode(*node), request).fingerprint(h, ids);
        }
        by_tag(h, ids, peer_reads);
        by_tag(h, ids, renewals);
        parked.fingerprint(h, ids);
        // In the order they were made (the order events are sent in).
        watchers.fingerprint(h, ids);
        (check_timer, retransmit_timer).fingerprint(h, ids);
        h.write_usize(inbox.len());
        for (node, request) in inbox {
            (AsNode(*node), request).fingerprint(h, ids);
        }
        dispatch_timer.fingerprint(h, ids);
    }
}

impl Fingerprint for EtcdServer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let EtcdServer {
            cfg,
            me,
            replica,
            store,
            lessor,
            incarnation,
            applied_origins,
            seen,
            next_rid,
            v,
            committed,
            finished_reads,
            ready_reads,
        } = self;
        cfg.fingerprint(h, ids);
        ids.node(h, *me);
        (replica, store, lessor, incarnation, applied_origins).fingerprint(h, ids);
        ids.node_map(h, seen.iter());
        (next_rid, v, committed, finished_reads).fingerprint(h, ids);
        h.write_usize(ready_reads.len());
        for (index, node, request) in ready_reads {
            (index, AsNode(*node), request).fingerprint(h, ids);
        }
    }
}
