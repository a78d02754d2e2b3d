//! [`Fingerprint`] for the Hazelcast CP client: every field destructured (a new one is a compile
//! error here); the members it calls through the renaming, timer ids by the timer they name.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Call, ClientConfig, HazelcastClient, Phase, Volatile};

fingerprint_struct!(ClientConfig { servers, heartbeat_ns, invocation_timeout_ns, retry_pause_ns });
fingerprint_struct!(Call { key, op, @node server, timeout, retry });
fingerprint_enum!(Phase { NeedsSession, Locking, Held, Unlocking });
fingerprint_struct!(Volatile { @nodes servers, target, epoch, next, calls, session, creating, heartbeat, locks });
fingerprint_struct!(HazelcastClient { cfg, v });
