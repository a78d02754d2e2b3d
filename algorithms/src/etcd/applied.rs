//! Which proposals have been applied: an entry proposed twice (the network duplicated a forwarded
//! proposal) must take effect once. A member applies thousands of entries per run and asks this
//! at every one, so the tags are kept per proposer in a `SmallMap`: a proposer's tags grow (a
//! counter, the incarnation in the high bits) and the log mostly applies them in that order, so
//! nearly every insert is a comparison with the last tag and a push.

use super::protocol::Origin;
use crate::smallmap::SmallMap;

mod fingerprint;

/// The origins of every entry applied so far.
#[derive(Clone, Debug, Default)]
pub struct AppliedOrigins {
    /// Per proposing member (by node id): its applied tags.
    by_server: Vec<SmallMap<u64, ()>>,
}

impl AppliedOrigins {
    /// Records `o` as applied; `false` if it already was (the entry is a duplicate).
    pub fn insert(&mut self, o: Origin) -> bool {
        if self.by_server.len() <= o.server {
            self.by_server.resize_with(o.server + 1, SmallMap::new);
        }
        self.by_server[o.server].insert(o.tag, ()).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The same answers as a set of (server, tag), in and out of order.
    #[test]
    fn answers_as_a_set_would() {
        let mut ours = AppliedOrigins::default();
        let mut set = BTreeSet::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..5_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let server = (x % 3) as usize;
            // Mostly ascending, with repeats and late arrivals of older tags.
            let tag = match x % 10 {
                0 => x % (i + 1),
                1 => i.saturating_sub(1),
                _ => i,
            };
            let o = Origin { server, tag };
            assert_eq!(ours.insert(o), set.insert((server, tag)), "insert {server}/{tag} at step {i}");
        }
    }
}
