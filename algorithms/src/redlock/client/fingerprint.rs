//! [`Fingerprint`] for the Redlock client library: every field destructured (a new one is a
//! compile error here); masters through the renaming, timer ids by the timer they name. Its lock
//! values, random per `acquire` call and only compared for equality (the masters' keyspace
//! scripts), are identity values: under client symmetry each hashes as its client
//! (`RedlockClient::identity_values`).

use std::hash::Hasher;

use locksim_simulator::fingerprint::{multiset, Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::super::fingerprint::request_id;
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

impl Fingerprint for Round {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Round { purpose, start, next, outstanding, ok, nil, failed, timer } = self;
        (purpose, start, next).fingerprint(h, ids);
        // Request id → master index (`master_ids[i]` is `server-i`): as a set of (id, master),
        // both through the renaming, so swapped masters give the same set.
        let entries = outstanding.iter().map(|(id, m)| {
            let mut e = StableHasher::default();
            request_id(&mut e, ids, *id);
            ids.server_index(&mut e, *m as u64);
            e.finish()
        });
        multiset(h, entries.collect());
        (ok, nil, failed, timer).fingerprint(h, ids);
    }
}

fingerprint_struct!(Lock { @ident value, call_start, attempts, last_answers, phase, extend });

impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile { locks, pending } = self;
        locks.fingerprint(h, ids);
        // Request id → key, as a set (the ids renamed as the masters they name).
        let entries = pending.iter().map(|(id, key)| {
            let mut e = StableHasher::default();
            request_id(&mut e, ids, *id);
            key.fingerprint(&mut e, ids);
            e.finish()
        });
        multiset(h, entries.collect());
    }
}

// `master_ids` is `server-0 …` in index order once resolved (fixed by the run), so only which
// masters it holds counts: as a set, which swapped masters leave alike.
fingerprint_struct!(RedlockClient { cfg, @node_set master_ids, next_request_id, v, reset_keys });
