//! [`Fingerprint`] for an API server and the store: every field destructured (a new one is a
//! compile error here).

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{ApiServer, ServerConfig, Store, Volatile};

impl Fingerprint for ServerConfig {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        let ServerConfig { service_ms } = self;
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(service_ms);
    }
}

fingerprint_struct!(Store { leases, revision });
fingerprint_struct!(Volatile { @opt_node store_node });
fingerprint_struct!(ApiServer { cfg, store, v });
