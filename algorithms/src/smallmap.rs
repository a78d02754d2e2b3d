//! A map for a handful of entries (a client's outstanding requests, its armed timers, a server's
//! statements in progress), or for many whose keys arrive in order (an etcd member's applied
//! proposal tags, [`crate::etcd::applied`]): a vector kept sorted by key. It behaves as a
//! `BTreeMap` does (iteration in key order), so it replaces one without changing what a model
//! does, but for the few entries these maps hold it is much cheaper: a `BTreeMap` allocates a
//! node for its first entry and frees it with its last, while this vector keeps its allocation,
//! and the keys these maps see (increasing request ids and tags) are appended at the end.

use std::ops::Index;

mod fingerprint;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SmallMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        SmallMap { entries: Vec::new() }
    }
}

impl<K: Ord, V> SmallMap<K, V> {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// An empty map with room for `n` entries: one allocation for a map whose size is known (a
    /// Redlock round's one request per master), where growing would take two.
    pub(crate) fn with_capacity(n: usize) -> Self {
        SmallMap { entries: Vec::with_capacity(n) }
    }

    /// Where `key` is (Ok) or would go (Err). Keys usually arrive in increasing order, so the
    /// last entry is checked first.
    fn find(&self, key: &K) -> Result<usize, usize> {
        match self.entries.last() {
            None => Err(0),
            Some((last, _)) if key > last => Err(self.entries.len()),
            _ => self.entries.binary_search_by(|(k, _)| k.cmp(key)),
        }
    }

    /// Inserts or replaces; returns the value it replaced.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.find(key).ok()?;
        Some(self.entries.remove(i).1)
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let i = self.find(key).ok()?;
        Some(&mut self.entries[i].1)
    }

    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_ok()
    }

    /// The value under `key`, inserted with `make` first if absent (`entry(key).or_insert_with`).
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Keeps the entries `keep` says yes to, in key order (`BTreeMap::retain`).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Entries in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub(crate) fn into_keys(self) -> impl Iterator<Item = K> {
        self.entries.into_iter().map(|(k, _)| k)
    }
}

impl<K: Ord, V: Default> SmallMap<K, V> {
    /// `entry(key).or_default()`.
    pub(crate) fn get_or_default(&mut self, key: K) -> &mut V {
        self.get_or_insert_with(key, V::default)
    }
}

impl<K: Ord, V> Index<&K> for SmallMap<K, V> {
    type Output = V;
    fn index(&self, key: &K) -> &V {
        self.get(key).expect("key present")
    }
}

impl<K: Ord, V> IntoIterator for SmallMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The same operations on a `BTreeMap` and a `SmallMap` leave the same contents, in order.
    #[test]
    fn behaves_as_a_btree_map() {
        let mut m = SmallMap::new();
        let mut b = BTreeMap::new();
        let mut x: u64 = 5;
        for i in 0..5000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = if x >> 62 == 0 { (x >> 40) % 64 } else { i / 3 };
            match (x >> 32) % 4 {
                0 => assert_eq!(m.remove(&key), b.remove(&key)),
                1 => assert_eq!(m.get(&key), b.get(&key)),
                2 => *m.get_or_default(key) += 1,
                _ => assert_eq!(m.insert(key, i), b.insert(key, i)),
            }
            if (x >> 32) % 4 == 2 {
                *b.entry(key).or_default() += 1;
            }
            assert_eq!(m.len(), b.len());
        }
        assert!(m.iter().map(|(k, v)| (*k, *v)).eq(b.iter().map(|(k, v)| (*k, *v))));
        assert_eq!(m.contains_key(&3), b.contains_key(&3));
        for k in m.clone().into_keys().filter(|k| k % 2 == 1) {
            m.remove(&k);
            b.remove(&k);
        }
        assert!(m.clone().into_keys().eq(b.keys().copied()));
        assert_eq!(m[&m.keys().next().copied().unwrap()], b[b.keys().next().unwrap()]);
        m.clear();
        assert!(m.is_empty());
    }
}
