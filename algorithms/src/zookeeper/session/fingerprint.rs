//! [`Fingerprint`] for the leader's session tracking: every field destructured (a new one is a
//! compile error here).

use locksim_simulator::fingerprint_struct;

use super::{ExpiryQueue, SessionTracker};

fingerprint_struct!(ExpiryQueue { interval_ns, next_expiration_ns, expiry_of, buckets });
fingerprint_struct!(SessionTracker { queue, timeouts_ms, closing });
