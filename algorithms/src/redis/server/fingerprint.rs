//! [`Fingerprint`] for a Redis server: every field destructured (a new one is a compile error
//! here); the clients it names (waiting `WAIT`s, subscribers) and its replicas through the
//! renaming, timer ids by the timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{PendingWait, RedisServer, ServerConfig, Volatile};

impl Fingerprint for ServerConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ServerConfig {
            service_ms,
            replication_lag_ms,
            persistence,
            min_replicas_to_write,
            min_replicas_max_lag_s,
            initial_primary,
        } = self;
        h.debug(&(service_ms, replication_lag_ms));
        (persistence, min_replicas_to_write, min_replicas_max_lag_s, initial_primary).fingerprint(h, ids);
    }
}

fingerprint_struct!(PendingWait { n, @node client, request, answer, target_offset, replicas, timer });

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile {
            role,
            epoch,
            data,
            run_id,
            repl_id,
            offset,
            following,
            replicas,
            ack_wall_ns,
            out,
            flush_timer,
            last_due,
            woff,
            waits,
            next_wait,
            subscribers,
            commands,
            save,
        } = self;
        (role, epoch, data, run_id, repl_id, offset, following).fingerprint(h, ids);
        ids.node_map(h, replicas.iter());
        ids.node_map(h, ack_wall_ns.iter());
        (out, flush_timer, last_due).fingerprint(h, ids);
        ids.node_map(h, woff.iter());
        (waits, next_wait).fingerprint(h, ids);
        h.write_usize(subscribers.len());
        for (key, nodes) in subscribers {
            key.fingerprint(h, ids);
            ids.node_set(h, nodes);
        }
        (commands, save).fingerprint(h, ids);
    }
}

fingerprint_struct!(RedisServer { cfg, conf_role, conf_epoch, disk, v });
