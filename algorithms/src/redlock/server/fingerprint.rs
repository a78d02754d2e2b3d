//! [`Fingerprint`] for a Redlock master: every field destructured (a new one is a compile error
//! here).

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{MasterConfig, RedisMaster, Volatile};

impl Fingerprint for MasterConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let MasterConfig { persistence, restart_delay_ns, service_ms } = self;
        (persistence, restart_delay_ns).fingerprint(h, ids);
        h.debug(service_ms);
    }
}

fingerprint_struct!(Volatile { keyspace, commands, silent_until_mono_ns });
fingerprint_struct!(RedisMaster { cfg, disk, crashed_at_mono_ns, v });
