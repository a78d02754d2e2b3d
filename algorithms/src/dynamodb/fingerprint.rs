//! [`Fingerprint`] for the dynamodb model's messages and timers (`protocol`): every field
//! destructured (a new one is a compile error here). The hand-written `Debug` of `Call`,
//! `Request` and `Answer` (the trace's short forms, which leave the owner and the lease out) is
//! not what is hashed. An item's `owner` is a client's index (`ownerName`), only compared for
//! equality: hashed as the client it names (`Renaming::client_index`).

use std::hash::Hasher;

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::protocol::{Answer, Call, ClientTimer, ConditionFailed, DynamoMsg, DynamoTimer, Item, Request};

impl Fingerprint for Item {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let Item { owner, rvn, lease_ms, released } = self;
        ids.client_index(h, u64::from(*owner));
        (rvn, lease_ms, released).fingerprint(h, ids);
    }
}
fingerprint_struct!(Request { id, call });
fingerprint_struct!(Answer { id, result });

impl Fingerprint for ConditionFailed {
    fn fingerprint(&self, _: &mut StableHasher, _: &Renaming) {
        let ConditionFailed = self;
    }
}

impl Fingerprint for Call {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Call::Get { key } => {
                h.write_u8(0);
                key.fingerprint(h, ids);
            }
            Call::Put { key, expected, item } => {
                h.write_u8(1);
                (key, expected, item).fingerprint(h, ids);
            }
            Call::Heartbeat { key, expected, rvn, owner } => {
                h.write_u8(2);
                (key, expected, rvn).fingerprint(h, ids);
                ids.client_index(h, u64::from(*owner));
            }
            Call::Delete { key, expected, owner } => {
                h.write_u8(3);
                (key, expected).fingerprint(h, ids);
                ids.client_index(h, u64::from(*owner));
            }
        }
    }
}

impl Fingerprint for ClientTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            ClientTimer::Refresh { key } => {
                h.write_u8(0);
                key.fingerprint(h, ids);
            }
            ClientTimer::Heartbeat => h.write_u8(1),
            ClientTimer::CallTimeout { id } => {
                h.write_u8(2);
                id.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for DynamoMsg {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            DynamoMsg::Request(m) => {
                h.write_u8(0);
                m.fingerprint(h, ids);
            }
            DynamoMsg::Answer(m) => {
                h.write_u8(1);
                m.fingerprint(h, ids);
            }
        }
    }
}

impl Fingerprint for DynamoTimer {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            DynamoTimer::Client(t) => {
                h.write_u8(0);
                t.fingerprint(h, ids);
            }
        }
    }
}
