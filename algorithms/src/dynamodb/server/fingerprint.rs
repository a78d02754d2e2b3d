//! [`Fingerprint`] for the DynamoDB table: every field destructured (a new one is a compile
//! error here). It names no node.

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};
use locksim_simulator::fingerprint_struct;

use super::{DynamoTable, Table};

fingerprint_struct!(Table { items });

impl Fingerprint for DynamoTable {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let DynamoTable { service_ms, table } = self;
        // Configuration: a derived `Debug` (complete), no node ids.
        h.debug(service_ms);
        table.fingerprint(h, ids);
    }
}
