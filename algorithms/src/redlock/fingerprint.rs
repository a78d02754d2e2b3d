//! [`Fingerprint`] for Redlock's messages and timers (`protocol`): every field destructured (a
//! new one is a compile error here). The hand-written `Debug` of requests and replies is not what
//! is hashed.

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::{fingerprint_enum, fingerprint_fieldless};

use super::client::{ElapsedClock, RequestMode};
use super::library::Library;
use super::protocol::{ClientTimer, Command, Reply, Request, ServerTimer};

fingerprint_fieldless!(ElapsedClock, RequestMode, Library, ServerTimer);

fingerprint_enum!(Command {
    SetNx { key, @ident value, px_ms },
    Unlock { key, @ident value },
    Touch { key, @ident value, px_ms, set_if_missing },
});

fingerprint_enum!(ClientTimer { NodeTimeout { key }, RetryDelay { key }, Validity { key }, ExtendDue { key } });

impl Fingerprint for Request {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Request { id, cmd } = self;
        request_id(h, ids, *id);
        cmd.fingerprint(h, ids);
    }
}

impl Fingerprint for Reply {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Reply { id, ok } = self;
        request_id(h, ids, *id);
        ok.fingerprint(h, ids);
    }
}

/// A request id, here and in the client's state, as (round, master): every id is drawn in a
/// block of one per master in index order (`1 + masters × round + index`; blocks stay whole in
/// the parallel modes, the only ones whose masters are renamed), so the master index it encodes
/// is hashed as the master it names, through the renaming ([`Renaming::server_index`]): two
/// worlds whose masters are swapped hash their requests' ids swapped with them. With the
/// servers fixed this is a one-to-one function of the id, so nothing merges that did not.
pub(super) fn request_id(h: &mut StableHasher, ids: &Renaming, id: u64) {
    let n = ids.server_count() as u64;
    if n == 0 || id == 0 {
        h.write_u8(0);
        h.write_u64(id);
        return;
    }
    h.write_u8(1);
    h.write_u64((id - 1) / n);
    ids.server_index(h, (id - 1) % n);
}
