//! [`Fingerprint`] for a PostgreSQL server: every field destructured (a new one is a compile
//! error here); its sessions' clients and its peer through the renaming, timer ids by the timer
//! they name.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{PgServer, Role, Session, Volatile};

fingerprint_enum!(Role { Primary, Standby, Retired });
fingerprint_struct!(Session {
    @node client,
    last_id,
    in_txn,
    pending,
    blocked,
    last_heard_ns,
    probes,
    keepalive,
    idle,
});
fingerprint_struct!(Volatile {
    @opt_node peer,
    sessions,
    locks,
    ship_queue,
    ship_timer,
    beat,
    primary_heard_ns,
    probing,
});
fingerprint_struct!(PgServer { cfg, index, role, timeline, wal, generations, v });
