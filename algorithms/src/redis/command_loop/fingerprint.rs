//! [`Fingerprint`] for the command loop: every field destructured (a new one is a compile error here).

use locksim_simulator::fingerprint_struct;

use super::CommandLoop;

fingerprint_struct!(CommandLoop { busy_until_mono_ns });
