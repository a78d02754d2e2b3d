//! [`Fingerprint`] for a Hazelcast CP member: every field destructured (a new one is a compile
//! error here); the clients it answers and its peers through the renaming, timer ids by the
//! timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{multiset, Fingerprint, Renaming, StableHasher};

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
        // (client index, call uid) -> the node to answer, as a set: the index names the client
        // and the uid is an identity value, both renamed with the client; the member only looks
        // entries up (`on_invocation`, `answer`), so their order is not state.
        let entries = pending.iter().map(|((client, uid), node)| {
            let mut e = StableHasher::default();
            ids.client_index(&mut e, u64::from(*client));
            ids.identity_high(&mut e, *uid);
            ids.node(&mut e, *node);
            e.finish()
        });
        multiset(h, entries.collect());
        // Client `i`'s node by index (`client-i`, fixed by the run; the member finds a sender's
        // index by position): as the set of (index as the client it names, node), which a
        // renaming of clients leaves alike.
        let entries = clients.iter().enumerate().map(|(i, node)| {
            let mut e = StableHasher::default();
            ids.client_index(&mut e, i as u64);
            ids.node(&mut e, *node);
            e.finish()
        });
        multiset(h, entries.collect());
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
