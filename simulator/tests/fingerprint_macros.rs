//! The generated `Fingerprint` impls: `fingerprint_enum!` and `wrapper_enum!`'s `: Fingerprint`
//! hash a variant's number and then its fields, node ids through the renaming, so the same
//! fields under another variant, a one-field difference and another client all differ, and two
//! clients swapped by the renaming hash alike.

use locksim_simulator::fingerprint::{hash_of, Renaming};
use locksim_simulator::{fingerprint_enum, fingerprint_struct, wrapper_enum};

#[derive(Clone, Debug)]
pub enum Ask {
    Acquire { key: u32, attempt: u32 },
    Release { key: u32, attempt: u32 },
    Grant(usize, u64),
    Ping,
}
fingerprint_enum!(Ask { Acquire { key, attempt }, Release { key, attempt }, Grant(@node to, token), Ping });

#[derive(Clone, Debug)]
pub struct Relay {
    pub client: usize,
    pub seq: u64,
}
fingerprint_struct!(Relay { @node client, seq });

wrapper_enum! {
    #[derive(Clone)]
    pub enum ToyMsg: Fingerprint {
        Ask(Ask),
        Relay(Relay),
    }
}

/// Nodes 0 (a server), 1 and 2 (clients).
fn same() -> Renaming {
    Renaming::identity(3)
}

/// Clients 1 and 2 swapped.
fn swapped() -> Renaming {
    Renaming::from_permutation(&[0, 2, 1])
}

#[test]
fn an_enum_hashes_its_variant_then_its_fields() {
    let ids = same();
    let acquire = Ask::Acquire { key: 1, attempt: 2 };
    // The same fields under another variant.
    assert_ne!(hash_of(&acquire, &ids), hash_of(&Ask::Release { key: 1, attempt: 2 }, &ids));
    // A one-field difference.
    assert_ne!(hash_of(&acquire, &ids), hash_of(&Ask::Acquire { key: 1, attempt: 3 }, &ids));
    assert_ne!(hash_of(&Ask::Ping, &ids), hash_of(&acquire, &ids));
    // The variant's number, a byte, then the fields in order: what a hand-written match wrote.
    let mut by_hand = locksim_simulator::fingerprint::StableHasher::default();
    std::hash::Hasher::write_u8(&mut by_hand, 0);
    std::hash::Hasher::write_u32(&mut by_hand, 1);
    std::hash::Hasher::write_u32(&mut by_hand, 2);
    assert_eq!(hash_of(&acquire, &ids), std::hash::Hasher::finish(&by_hand));
}

#[test]
fn a_node_field_of_a_variant_follows_the_renaming() {
    let (ids, swap) = (same(), swapped());
    assert_ne!(hash_of(&Ask::Grant(1, 7), &ids), hash_of(&Ask::Grant(2, 7), &ids), "another client");
    assert_eq!(hash_of(&Ask::Grant(1, 7), &swap), hash_of(&Ask::Grant(2, 7), &ids), "clients swapped");
    assert_ne!(hash_of(&Ask::Grant(1, 7), &ids), hash_of(&Ask::Grant(1, 8), &ids), "one field");
}

#[test]
fn a_wrapper_enum_hashes_its_variant_then_the_inner_value() {
    let (ids, swap) = (same(), swapped());
    let relay = |client, seq| ToyMsg::from(Relay { client, seq });
    assert_eq!(hash_of(&relay(1, 4), &swap), hash_of(&relay(2, 4), &ids), "clients swapped");
    assert_ne!(hash_of(&relay(1, 4), &ids), hash_of(&relay(2, 4), &ids), "another client");
    assert_ne!(hash_of(&relay(1, 4), &ids), hash_of(&relay(1, 5), &ids), "one field");
    // The variant's place counts: the inner value alone hashes otherwise.
    let inner = Relay { client: 1, seq: 4 };
    assert_ne!(hash_of(&relay(1, 4), &ids), hash_of(&inner, &ids));
    assert_ne!(hash_of(&ToyMsg::from(Ask::Ping), &ids), hash_of(&Ask::Ping, &ids));
}
