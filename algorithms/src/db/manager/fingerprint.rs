//! [`Fingerprint`] for the failover manager: every field destructured (a new one is a compile
//! error here); servers and clients through the renaming. `primary` and `promoting` hold server
//! indexes (into `servers`), not node ids.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{FailoverManager, Volatile};

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile { servers, clients, last_pong_ns, roles, probe } = self;
        ids.nodes(h, servers.iter());
        // Every client the run has, told about a failover each in turn: a set (a send to each
        // client is its own event in flight, hashed as a multiset).
        ids.node_set(h, clients.iter());
        (last_pong_ns, roles, probe).fingerprint(h, ids);
    }
}

fingerprint_struct!(FailoverManager { cfg, primary, epoch, promoting, v });
