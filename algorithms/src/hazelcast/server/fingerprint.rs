//! [`Fingerprint`] for a Hazelcast CP member: every field destructured (a new one is a compile
//! error here); the clients it answers and its peers through the renaming, timer ids by the
//! timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};

use super::{HazelcastServer, ServerConfig, Volatile};

impl Fingerprint for ServerConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ServerConfig { service_ms, clients, session_ttl_ns, heartbeat_ns, acquire_limit } = self;
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(service_ms);
        (clients, session_ttl_ns, heartbeat_ns, acquire_limit).fingerprint(h, ids);
    }
}

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile { pending, clients, check_timer, leading } = self;
        // (client index, call uid) -> the node to answer.
        h.write_usize(pending.len());
        for (call, node) in pending {
            (call, AsNode(*node)).fingerprint(h, ids);
        }
        // By client index, as the member reads it.
        ids.nodes(h, clients);
        (check_timer, leading).fingerprint(h, ids);
    }
}

impl Fingerprint for HazelcastServer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let HazelcastServer { cfg, me, replica, state, v, committed } = self;
        cfg.fingerprint(h, ids);
        ids.node(h, *me);
        (replica, state, v, committed).fingerprint(h, ids);
    }
}
