//! [`Fingerprint`] for the Hazelcast CP client: every field destructured (a new one is a compile
//! error here); the members it calls through the renaming, timer ids by the timer they name,
//! its epoch and its calls' uids as identity values.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Call, ClientConfig, HazelcastClient, Phase, Volatile};

fingerprint_struct!(ClientConfig { servers, heartbeat_ns, invocation_timeout_ns, retry_pause_ns });
fingerprint_struct!(Call { key, op, @node server, timeout, retry });
fingerprint_enum!(Phase { NeedsSession, Locking, Held, Unlocking });
impl Fingerprint for Volatile {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Volatile { servers, target, epoch, next, calls, session, creating, heartbeat, locks } = self;
        ids.nodes(h, servers);
        target.fingerprint(h, ids);
        // `epoch`, drawn at start, is an identity value (`HazelcastClient::identity_values`), and
        // so is the high half of every call's uid (`epoch << 32 | next`).
        ids.identity_value(h, epoch);
        next.fingerprint(h, ids);
        // Calls by uid: (uid, call) pairs in the map's order, which for one epoch is `next`'s.
        h.write_usize(calls.len());
        for (uid, call) in calls {
            ids.identity_high(h, *uid);
            call.fingerprint(h, ids);
        }
        (session, creating, heartbeat, locks).fingerprint(h, ids);
    }
}
fingerprint_struct!(HazelcastClient { cfg, v });
