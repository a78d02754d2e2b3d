//! [`Fingerprint`] for the MVCC store: every field destructured (a new one is a compile error here).

use locksim_simulator::fingerprint_struct;

use super::{Kv, Store};

fingerprint_struct!(Kv { create_rev, lease });
fingerprint_struct!(Store { rev, keys, history });
