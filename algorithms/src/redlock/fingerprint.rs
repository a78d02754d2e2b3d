//! [`Fingerprint`] for Redlock's messages and timers (`protocol`): every field destructured (a
//! new one is a compile error here). The hand-written `Debug` of requests and replies is not what
//! is hashed.

use locksim_simulator::{fingerprint_enum, fingerprint_fieldless, fingerprint_struct};

use super::client::{ElapsedClock, RequestMode};
use super::library::Library;
use super::protocol::{ClientTimer, Command, Reply, Request, ServerTimer};

fingerprint_fieldless!(ElapsedClock, RequestMode, Library, ServerTimer);

fingerprint_enum!(Command {
    SetNx { key, value, px_ms },
    Unlock { key, value },
    Touch { key, value, px_ms, set_if_missing },
});

fingerprint_enum!(ClientTimer { NodeTimeout { key }, RetryDelay { key }, Validity { key }, ExtendDue { key } });

fingerprint_struct!(Request { id, cmd });
fingerprint_struct!(Reply { id, ok });
