//! [`Fingerprint`] for the advisory-lock client library: every field destructured (a new one is
//! a compile error here); hosts through the renaming, timer ids by the timer they name. The
//! client's index and its connection id (index and a random draw) are values, hashed as they are:
//! clients with different ones are not merged.

use locksim_simulator::{fingerprint_enum, fingerprint_struct};

use super::{Conn, Inflight, KeyState, Op, PgClient, Volatile};

fingerprint_enum!(Op { Attempt { key }, Bump { key }, Rollback { key }, Release { key, silent } });
fingerprint_struct!(Inflight { op, id });
fingerprint_struct!(Conn { @node to, conn, established, next_id });
fingerprint_struct!(KeyState { acquiring, cancelled, poll, held, lost });
fingerprint_struct!(Volatile { @nodes hosts, host, refusals, conn, inflight, queue, keys, reconnect });
fingerprint_struct!(PgClient { cfg, index, v });
