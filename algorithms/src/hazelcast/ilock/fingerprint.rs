//! [`Fingerprint`] for Hazelcast 3.x ILock's messages, timers and replicated lock state: every
//! variant and field listed (a new one is a compile error here). Clients and members are named
//! by index (numbers), as the protocol names them: clients are told apart by it.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{IlockConfig, IlockError, IlockMsg, IlockTimer, LockCall, LockReplica, OwnedLock, Parked};

fingerprint_enum!(LockCall { Lock, Unlock });
fingerprint_enum!(IlockError { NotOwner });
fingerprint_struct!(LockReplica { holder, count, last_uid });
fingerprint_struct!(Parked { client, uid, caller });
fingerprint_enum!(IlockMsg {
    Request { uid, key, call },
    Reply { uid, result },
    Invoke { client, uid, key, call },
    Answer { client, uid, result },
    WrongTarget { client, uid },
    Backup { key, replica },
    Heartbeat,
});
fingerprint_enum!(IlockTimer { Heartbeat, Retry { client, uid }, EndpointRemoval { member } });
fingerprint_struct!(IlockConfig {
    members,
    clients,
    heartbeat_ns,
    max_no_heartbeat_ns,
    endpoint_remove_delay_ns,
    retry_pause_ns,
});
fingerprint_struct!(OwnedLock { replica, parked });
