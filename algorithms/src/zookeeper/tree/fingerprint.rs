//! [`Fingerprint`] for the data tree: every field destructured (a new one is a compile error here).

use locksim_simulator::fingerprint_struct;

use super::{DataTree, Parent, SessionEntry};

fingerprint_struct!(Parent { cversion, children });
fingerprint_struct!(SessionEntry { timeout_ms, ephemerals });
fingerprint_struct!(DataTree { parents, naive, sessions, last_zxid });
