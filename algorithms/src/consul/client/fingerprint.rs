//! [`Fingerprint`] for the Consul lock client: every field destructured (a new one is a compile
//! error here); the servers it calls through the renaming, timer ids by the timer they name. Its
//! index (the agent it runs beside) is hashed as a number.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Call, ClientConfig, ConsulClient, LockState, Phase, Purpose, TokenKind, Volatile};

fingerprint_enum!(TokenKind { LockIndex, ModifyIndex });
fingerprint_struct!(ClientConfig {
    servers,
    session,
    lock_wait_ns,
    monitor_wait_ns,
    lock_retry_ns,
    rpc_timeout_ns,
    rpc_hold_ns,
    read_mode,
    stop_on_lost,
    token,
});
fingerprint_enum!(Purpose { CreateSession, Wait, Acquire, Monitor, Renew, Release, Destroy });
fingerprint_struct!(Call { key, purpose, op, first_sent_ns, @node server, timeout, retry });
fingerprint_enum!(Phase { Acquiring, Held, Releasing });
fingerprint_struct!(LockState { phase, session, wait_index, retry_timer, renew_timer, last_renew_ns });
fingerprint_struct!(Volatile { @nodes servers, target, next_id, calls, locks });
fingerprint_struct!(ConsulClient { index, cfg, v });
