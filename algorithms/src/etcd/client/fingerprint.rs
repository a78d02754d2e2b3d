//! [`Fingerprint`] for the etcd client library: every field destructured (a new one is a compile
//! error here), servers through the renaming, timer ids by the timer they name.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Call, ClientConfig, EtcdClient, Mutex, PendingDone, Purpose, Session, Step, Volatile, Watch};

impl Fingerprint for ClientConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ClientConfig {
            servers,
            lease_ttl_ns,
            recheck_after_wait,
            request_timeout_ns,
            client_deadline,
            round_robin,
            keepalive_time_ns,
            keepalive_timeout_ns,
            keepalive_fraction,
            stop_on_session_lost,
            rw_recipe,
            session_done,
        } = self;
        (servers, lease_ttl_ns, recheck_after_wait, request_timeout_ns, client_deadline, round_robin)
            .fingerprint(h, ids);
        (keepalive_time_ns, keepalive_timeout_ns, keepalive_fraction, stop_on_session_lost, rw_recipe)
            .fingerprint(h, ids);
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(session_done);
    }
}

fingerprint_enum!(Session { None, Granting, Live { lease, gen, next_keepalive_ns, deadline_ns, unanswered_since } });

fingerprint_enum!(Purpose { Grant, Txn, WaitGet, Recheck, Unlock, Cleanup { fail } });

fingerprint_enum!(Step { Session, Txn, WaitGet, Watching { key }, Recheck, Held, Unlocking, AfterCleanup });

fingerprint_struct!(Call { id, purpose, op, retries, member, sent, timer });
fingerprint_struct!(Mutex { key, prefix, my_key, my_rev, step, rw });
fingerprint_struct!(Watch { id, key, start_rev, created, last_seq });
fingerprint_struct!(PendingDone { gen, at_ns, timer, key, my_rev });
fingerprint_struct!(Volatile {
    endpoint,
    session,
    call,
    mutex,
    watch,
    conn_incarnation,
    ping_since,
    next_pick,
    not_ready_until,
    deadline_tick_ns,
    done,
});
impl Fingerprint for EtcdClient {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let EtcdClient { cfg, index, servers, next_id, session_gen, ping_seq, v } = self;
        cfg.fingerprint(h, ids);
        // The client's number is read only as `index % servers` (the first endpoint, at start
        // and restart), so that is what tells two clients apart: clients that start on the same
        // member are interchangeable. Hash the number itself if it comes to be read otherwise.
        // `cfg.servers`, not `servers.len()`: the list is empty until the client starts.
        (index % cfg.servers.max(1)).fingerprint(h, ids);
        ids.nodes(h, servers);
        (next_id, session_gen, ping_seq, v).fingerprint(h, ids);
    }
}
