//! [`Fingerprint`] for a Consul server: every field destructured (a new one is a compile error
//! here); the clients it answers and its peers through the renaming, timer ids by the timer they
//! name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{Blocked, ConsulServer, Member, ServerConfig, Volatile};

impl Fingerprint for ServerConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ServerConfig { service_ms, clients, probe_interval_ns, probe_timeout_ns, suspicion_ns } = self;
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(service_ms);
        (clients, probe_interval_ns, probe_timeout_ns, suspicion_ns).fingerprint(h, ids);
    }
}

fingerprint_struct!(Member { probe_sent_ns, suspect_since_ns, proposed });
fingerprint_struct!(Blocked { @node client, id, key, wait_index, mode, timer });

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile {
            waiting,
            reads,
            indexed_reads,
            blocked,
            lock_delay,
            ttl_timers,
            members,
            agents,
            probe_timer,
            leading,
            next_tag,
            next_seq,
            next_qid,
        } = self;
        h.write_usize(waiting.len());
        for (tag, (client, id)) in waiting {
            (tag, AsNode(*client), id).fingerprint(h, ids);
        }
        h.write_usize(reads.len());
        for (tag, (client, id, key)) in reads {
            (tag, AsNode(*client), id, key).fingerprint(h, ids);
        }
        h.write_usize(indexed_reads.len());
        for (index, client, id, key) in indexed_reads {
            (index, AsNode(*client), id, key).fingerprint(h, ids);
        }
        (blocked, lock_delay, ttl_timers, members).fingerprint(h, ids);
        // By agent (client) index, as the server reads it.
        ids.nodes(h, agents);
        (probe_timer, leading, next_tag, next_seq, next_qid).fingerprint(h, ids);
    }
}

impl Fingerprint for ConsulServer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ConsulServer { cfg, me, replica, state, incarnation, v, committed, finished_reads } = self;
        cfg.fingerprint(h, ids);
        ids.node(h, *me);
        (replica, state, incarnation, v, committed, finished_reads).fingerprint(h, ids);
    }
}
