//! [`Fingerprint`] for the AWS lock client: every field destructured (a new one is a compile
//! error here); the table's node through the renaming, timer ids by the timer they name. The
//! client's `index` is its `ownerName`, written into the items it puts and only compared for
//! equality by the table: hashed as the client it names (`Renaming::client_index`), so swapped
//! clients hash alike.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{ClientConfig, DynamoClient, Pending, Phase, Volatile};

fingerprint_struct!(ClientConfig {
    lease_ns,
    heartbeat_ns,
    refresh_ns,
    additional_wait_ns,
    request_timeout_ns,
    heartbeat_stops_ns,
    check_expired,
});
fingerprint_struct!(Pending { key, call, timeout });
fingerprint_struct!(Volatile { @node table, next_id, calls, locks, heartbeat, started_ns, heartbeat_ended });
impl Fingerprint for DynamoClient {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let DynamoClient { index, cfg, v } = self;
        ids.client_index(h, u64::from(*index));
        cfg.fingerprint(h, ids);
        v.fingerprint(h, ids);
    }
}

impl Fingerprint for Phase {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Phase::Acquiring { start_ns, wait_ns, watching, extended } => {
                h.write_u8(0);
                (start_ns, wait_ns, watching, extended).fingerprint(h, ids);
            }
            Phase::Held { rvn, lookup_ns } => {
                h.write_u8(1);
                (rvn, lookup_ns).fingerprint(h, ids);
            }
            Phase::Dropped => h.write_u8(2),
            Phase::ReleaseAfterHeartbeat { rvn } => {
                h.write_u8(3);
                rvn.fingerprint(h, ids);
            }
            Phase::Releasing => h.write_u8(4),
        }
    }
}
