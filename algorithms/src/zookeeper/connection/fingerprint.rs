//! [`Fingerprint`] for a client's connection: every field destructured (a new one is a compile
//! error here), servers through the renaming, timer ids by the timer they name.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_enum;

use super::{Connection, Link};

fingerprint_enum!(Link { Down, Connecting { server }, Up { server } });

impl Fingerprint for Connection {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Connection {
            server_names,
            servers,
            requested_timeout_ms,
            connection_timeout_ms,
            timing,
            cur,
            tried,
            link,
            session,
            last_zxid,
            attempt,
            last_send_ns,
            last_recv_ns,
            next_xid,
            send_seq,
            recv_seq,
            inflight,
            queued,
            next_serial,
            curator,
            suspended_gen,
            conn_timer,
            cleanup_sleep_ms,
        } = self;
        // The shuffled server list, in its order (an index into it is what `cur` and `link` hold).
        server_names.fingerprint(h, ids);
        ids.nodes(h, servers);
        (requested_timeout_ms, connection_timeout_ms, timing, cur, tried, link, session, last_zxid).fingerprint(h, ids);
        (attempt, last_send_ns, last_recv_ns, next_xid, send_seq, recv_seq, inflight, queued).fingerprint(h, ids);
        (next_serial, curator, suspended_gen, conn_timer, cleanup_sleep_ms).fingerprint(h, ids);
    }
}
