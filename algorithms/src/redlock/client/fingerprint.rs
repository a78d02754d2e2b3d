//! [`Fingerprint`] for the Redlock client library: every field destructured (a new one is a
//! compile error here); masters through the renaming, timer ids by the timer they name. Its lock
//! values are random per client: hashed as values (clients holding different ones are not
//! merged).

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{ClientConfig, Instant, Lock, Phase, Purpose, RedlockClient, Round, Volatile};

impl Fingerprint for ClientConfig {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let ClientConfig {
            library,
            elapsed_clock,
            attempts,
            masters,
            ttl_ms,
            drift_ns,
            node_timeout_ns,
            retry_delay_ms,
            requests,
            respect_validity,
            extend_every_ns,
            extend_sets,
        } = self;
        (library, elapsed_clock, attempts, masters, ttl_ms, drift_ns, node_timeout_ns).fingerprint(h, ids);
        h.debug(retry_delay_ms);
        (requests, respect_validity, extend_every_ns, extend_sets).fingerprint(h, ids);
    }
}

impl Fingerprint for Purpose {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(match self {
            Purpose::Acquire => 0,
            Purpose::UnlockAfterFailure => 1,
            Purpose::Release => 2,
            Purpose::Extend => 3,
        });
    }
}

fingerprint_enum!(Phase {
    Between,
    Round(round),
    RetryWait { timer },
    Holding { validity, validity_end_mono_ns, checked, extend_due },
});

fingerprint_struct!(Instant { mono_ns, wall_ns });
// `outstanding`: request id → master index (an index into `master_ids`, not a node id).
fingerprint_struct!(Round { purpose, start, next, outstanding, ok, nil, failed, timer });
fingerprint_struct!(Lock { value, call_start, attempts, last_answers, phase, extend });
fingerprint_struct!(Volatile { locks, pending });
fingerprint_struct!(RedlockClient { cfg, @nodes master_ids, next_request_id, v, reset_keys });
