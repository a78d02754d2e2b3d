//! [`Fingerprint`] for the applied origins: every field destructured (a new one is a compile
//! error here).

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};

use super::AppliedOrigins;

impl Fingerprint for AppliedOrigins {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        // Indexed by the proposing member's node id: members are servers, never renamed.
        let AppliedOrigins { by_server } = self;
        by_server.fingerprint(h, ids);
    }
}
