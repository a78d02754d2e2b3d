//! [`Fingerprint`] for the keyspace: every field destructured (a new one is a compile error here).

use locksim_simulator::fingerprint_struct;

use super::Keyspace;

fingerprint_struct!(Keyspace { entries });
