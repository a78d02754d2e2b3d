//! [`Fingerprint`] for [`SmallMap`]: its entries in key order (keys that are not node ids; a map
//! keyed by node ids goes through `Renaming::node_map`).

use locksim_simulator::fingerprint::{Fingerprint, Renaming, StableHasher};

use super::SmallMap;

impl<K: Fingerprint + Ord, V: Fingerprint> Fingerprint for SmallMap<K, V> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        let SmallMap { entries } = self;
        entries.fingerprint(h, ids);
    }
}
