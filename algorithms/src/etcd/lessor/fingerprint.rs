//! [`Fingerprint`] for the lessor: every field destructured (a new one is a compile error here).

use locksim_simulator::fingerprint_struct;

use super::{Lease, Lessor};

fingerprint_struct!(Lease { ttl_ns, expiry_ns, keys, revoke_proposed_ns });
fingerprint_struct!(Lessor { leases, primary });
