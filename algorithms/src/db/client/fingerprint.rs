//! [`Fingerprint`] for the db lock client library: every field destructured (a new one is a
//! compile error here); servers and the manager through the renaming, timer ids by the timer they
//! name. The client's index, its owner id and its connection ids (index and a random draw) are
//! values, hashed as they are: clients with different ones are not merged.

use locksim_simulator::fingerprint::{AsNode, Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Closing, DbClient, Inflight, KeyState, Op, Volatile};

fingerprint_enum!(Op { Attempt { key }, Release { key, silent, owner, retries_left }, Heartbeat { key } });
fingerprint_struct!(Inflight { op, stmt, id, @node to, first, rto_ns, retx, timeout });
fingerprint_struct!(KeyState {
    acquiring,
    cancelled,
    poll,
    held,
    beat,
    beat_queued,
    lost,
    owner,
    created_ns,
    row_known,
});
fingerprint_struct!(Closing { @node server, retries_left, rto_ns, timer });

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile {
            manager,
            owner,
            primary,
            epoch,
            conn,
            established,
            next_id,
            inflight,
            queue,
            keys,
            who,
            open_conn,
            closing,
        } = self;
        ids.opt_node(h, *manager);
        owner.fingerprint(h, ids);
        ids.opt_node(h, *primary);
        (epoch, conn, established, next_id, inflight, queue, keys, who).fingerprint(h, ids);
        // The server the open connection is to, and the connection.
        open_conn.map(|(server, conn)| (AsNode(server), conn)).fingerprint(h, ids);
        closing.fingerprint(h, ids);
    }
}

fingerprint_struct!(DbClient { cfg, index, v });
