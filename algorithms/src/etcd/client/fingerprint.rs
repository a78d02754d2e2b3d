//! [`Fingerprint`] for the etcd client library: every field destructured (a new one is a compile
//! error here), servers through the renaming, timer ids by the timer they name.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

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

impl Fingerprint for Session {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Session::None => h.write_u8(0),
            Session::Granting => h.write_u8(1),
            Session::Live { lease, gen, next_keepalive_ns, deadline_ns, unanswered_since } => {
                h.write_u8(2);
                (lease, gen, next_keepalive_ns, deadline_ns, unanswered_since).fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for Purpose {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Purpose::Grant => h.write_u8(0),
            Purpose::Txn => h.write_u8(1),
            Purpose::WaitGet => h.write_u8(2),
            Purpose::Recheck => h.write_u8(3),
            Purpose::Unlock => h.write_u8(4),
            Purpose::Cleanup { fail } => {
                h.write_u8(5);
                fail.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for Step {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Step::Session => h.write_u8(0),
            Step::Txn => h.write_u8(1),
            Step::WaitGet => h.write_u8(2),
            Step::Watching { key } => {
                h.write_u8(3);
                key.fingerprint(h, ids);
            }
            Step::Recheck => h.write_u8(4),
            Step::Held => h.write_u8(5),
            Step::Unlocking => h.write_u8(6),
            Step::AfterCleanup => h.write_u8(7),
        }
    }
}

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
