//! [`Fingerprint`] for Consul's replicated state (sessions, KV entries, critical agents): every
//! field destructured (a new one is a compile error here). Agents are named by index (numbers).

use locksim_simulator::fingerprint_struct;

use super::State;

fingerprint_struct!(State { sessions, kvs, kvs_index, critical });
