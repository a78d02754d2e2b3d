//! A value per directed pair of nodes, stored in memory linear in the node count.
//!
//! The engine keeps state per pair of nodes (open connections, stale connections, the last
//! delivery on an ordered link). A square table of every pair grows with the square of the
//! nodes: 100 000 clients made an 80 GB table. But clients only talk to the service (servers,
//! sentinels) and the resource, never to each other, so the nodes are split into *hubs* (every
//! node that is not a client) and the rest: a pair with a hub at either end has a slot in a
//! dense table of `nodes × hubs` (and `others × hubs` for the way back), and a pair of two
//! non-hubs, which no model uses, lives in an ordered map. A lookup is one more load than a
//! square table's (the node's column), and the hot path never touches the map.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::directory::{Directory, NodeKind};
use crate::process::NodeId;

/// Set on a non-hub's entry in [`PairIndex::column`]; the rest is its index among non-hubs.
const NON_HUB: u32 = 1 << 31;

/// Which nodes are hubs, and each node's column (its index among the hubs or among the others).
#[derive(Clone, Debug)]
pub struct PairIndex {
    /// By node id: a hub's index among the hubs, or `NON_HUB |` a non-hub's index among the others.
    column: Arc<[u32]>,
    hubs: usize,
    others: usize,
}

impl PairIndex {
    /// `nodes` nodes, every one a hub: a square table, for small hand-built worlds.
    pub fn all_hubs(nodes: usize) -> Self {
        PairIndex::new((0..nodes).map(|_| true))
    }

    /// The clients are the non-hubs; every other node (servers, sentinels, the resource) a hub.
    pub fn of_directory(dir: &Directory) -> Self {
        PairIndex::new((0..dir.len()).map(|i| dir.kind_of(i) != NodeKind::Client))
    }

    /// By node id, whether each node is a hub.
    pub fn new(is_hub: impl IntoIterator<Item = bool>) -> Self {
        let (mut hubs, mut others) = (0u32, 0u32);
        let column: Vec<u32> = is_hub
            .into_iter()
            .map(|hub| {
                let (count, flag) = if hub { (&mut hubs, 0) } else { (&mut others, NON_HUB) };
                *count += 1;
                (*count - 1) | flag
            })
            .collect();
        PairIndex { column: column.into(), hubs: hubs as usize, others: others as usize }
    }

    /// How many nodes.
    pub fn nodes(&self) -> usize {
        self.column.len()
    }

    /// The dense slot of the directed pair, or `None` when neither end is a hub.
    #[inline(always)]
    fn slot(&self, from: NodeId, to: NodeId) -> Option<usize> {
        let to_col = self.column[to];
        if to_col & NON_HUB == 0 {
            return Some(from * self.hubs + to_col as usize);
        }
        let from_col = self.column[from];
        if from_col & NON_HUB == 0 {
            let other = (to_col & !NON_HUB) as usize;
            return Some(self.column.len() * self.hubs + other * self.hubs + from_col as usize);
        }
        None
    }
}

impl From<usize> for PairIndex {
    /// A square table of that many nodes (every node a hub).
    fn from(nodes: usize) -> Self {
        PairIndex::all_hubs(nodes)
    }
}

/// A `T` per directed pair of nodes, every one `T::default()` at first.
#[derive(Clone, Debug)]
pub struct PairTable<T> {
    index: PairIndex,
    /// `from * hubs + to's hub column` for a pair into a hub, then `other's column * hubs +
    /// from's hub column` for a pair from a hub into a non-hub.
    dense: Vec<T>,
    /// Pairs of two non-hubs that hold a value other than the default.
    sparse: BTreeMap<(NodeId, NodeId), T>,
}

impl<T: Copy + Default + PartialEq> PairTable<T> {
    /// Every pair at `T::default()`.
    pub fn new(index: PairIndex) -> Self {
        let len = (index.nodes() + index.others) * index.hubs;
        PairTable { dense: vec![T::default(); len], index, sparse: BTreeMap::new() }
    }

    /// The pair's value.
    #[inline(always)]
    pub fn get(&self, from: NodeId, to: NodeId) -> T {
        match self.index.slot(from, to) {
            Some(i) => self.dense[i],
            None => self.sparse.get(&(from, to)).copied().unwrap_or_default(),
        }
    }

    /// Sets the pair's value.
    #[inline(always)]
    pub fn set(&mut self, from: NodeId, to: NodeId, value: T) {
        match self.index.slot(from, to) {
            Some(i) => self.dense[i] = value,
            None => self.set_sparse(from, to, value),
        }
    }

    #[cold]
    fn set_sparse(&mut self, from: NodeId, to: NodeId, value: T) {
        if value == T::default() {
            self.sparse.remove(&(from, to));
        } else {
            self.sparse.insert((from, to), value);
        }
    }

    /// The pair's value, to read and change in place (a pair of two non-hubs is stored from now
    /// on, even if it stays at the default).
    #[inline(always)]
    pub fn get_mut(&mut self, from: NodeId, to: NodeId) -> &mut T {
        match self.index.slot(from, to) {
            Some(i) => &mut self.dense[i],
            None => self.sparse.entry((from, to)).or_default(),
        }
    }

    /// How many nodes the table spans.
    pub fn nodes(&self) -> usize {
        self.index.nodes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every directed pair of a mixed index keeps its own value: no two pairs share a slot.
    #[test]
    fn every_pair_has_its_own_value() {
        let index = PairIndex::new([false, true, false, false, true, false]);
        let n = index.nodes();
        let mut t: PairTable<u64> = PairTable::new(index);
        for from in 0..n {
            for to in 0..n {
                t.set(from, to, (from * 10 + to + 1) as u64);
            }
        }
        for from in 0..n {
            for to in 0..n {
                assert_eq!(t.get(from, to), (from * 10 + to + 1) as u64, "{from} → {to}");
            }
        }
        *t.get_mut(0, 2) += 100;
        assert_eq!(t.get(0, 2), 103);
        assert_eq!(t.get(2, 0), 21);
        t.set(0, 2, 0);
        assert_eq!(t.get(0, 2), 0);
    }

    /// 100 000 clients and a few hubs: memory linear in the nodes, not their square.
    #[test]
    fn many_non_hubs_take_linear_memory() {
        let index = PairIndex::new((0..100_004).map(|i| i < 4));
        let t: PairTable<bool> = PairTable::new(index);
        assert!(t.dense.len() <= 2 * 100_004 * 4, "{}", t.dense.len());
    }
}
