//! The revisioned key space (etcd `mvcc`): one main revision for the whole store, bumped once per
//! write transaction; every key keeps its create revision; a history of puts and deletes per key
//! lets a watch start from a past revision. No compaction (a run is short).

use std::collections::BTreeMap;
use std::ops::Bound;

use super::protocol::{KeyInfo, LeaseId, Revision};

mod fingerprint;

#[derive(Clone, Debug)]
struct Kv {
    create_rev: Revision,
    lease: LeaseId,
}

/// The key space of one member (the same on every member once applied to the same index).
#[derive(Clone, Debug)]
pub struct Store {
    rev: Revision,
    keys: BTreeMap<String, Kv>,
    /// Per key: (revision, deleted) for every put and delete.
    history: BTreeMap<String, Vec<(Revision, bool)>>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

impl Store {
    /// An empty store at revision 1 (etcd's first revision).
    pub fn new() -> Store {
        Store { rev: 1, keys: BTreeMap::new(), history: BTreeMap::new() }
    }

    /// The current revision (the response header's).
    pub fn rev(&self) -> Revision {
        self.rev
    }

    /// `Get(key)`: the key with its create revision and lease, if it exists.
    pub fn get(&self, key: &str) -> Option<KeyInfo> {
        self.keys.get(key).map(|kv| KeyInfo { key: key.to_string(), create_rev: kv.create_rev, lease: kv.lease })
    }

    /// The create revision of `key`, if it exists (a `Get` that allocates nothing).
    pub fn create_rev(&self, key: &str) -> Option<Revision> {
        self.keys.get(key).map(|kv| kv.create_rev)
    }

    /// Puts `key` under `lease` in a transaction of its own: the revision goes up by one. A new
    /// key's create revision is that revision.
    pub fn put(&mut self, key: &str, lease: LeaseId) -> Revision {
        self.rev += 1;
        let rev = self.rev;
        // Look up before inserting, so an existing key costs no allocation.
        match self.keys.get_mut(key) {
            Some(kv) => kv.lease = lease,
            None => {
                self.keys.insert(key.to_string(), Kv { create_rev: rev, lease });
            }
        }
        self.push_history(key, (rev, false));
        rev
    }

    fn push_history(&mut self, key: &str, event: (Revision, bool)) {
        match self.history.get_mut(key) {
            Some(h) => h.push(event),
            None => {
                self.history.insert(key.to_string(), vec![event]);
            }
        }
    }

    /// Deletes these keys in one transaction: one new revision if any existed, none otherwise.
    /// Returns the keys deleted and the revision of the deletion.
    /// (The keys are distinct: a lease's key set, or one key.)
    pub fn delete<K: AsRef<str>>(&mut self, keys: &[K]) -> (Vec<KeyInfo>, Revision) {
        if !keys.iter().any(|k| self.keys.contains_key(k.as_ref())) {
            return (Vec::new(), self.rev);
        }
        self.rev += 1;
        let rev = self.rev;
        let mut gone = Vec::with_capacity(keys.len());
        for k in keys {
            // The store's own copy of the key goes into the answer: no new string.
            if let Some((key, kv)) = self.keys.remove_entry(k.as_ref()) {
                self.push_history(&key, (rev, true));
                gone.push(KeyInfo { key, create_rev: kv.create_rev, lease: kv.lease });
            }
        }
        (gone, rev)
    }

    fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a String, &'a Kv)> + 'a {
        self.keys
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix))
    }

    /// `Get(prefix, WithFirstCreate())`: the key with the lowest create revision.
    pub fn first_create(&self, prefix: &str) -> Option<KeyInfo> {
        self.under(prefix).min_by_key(|(_, kv)| kv.create_rev).map(|(k, kv)| KeyInfo {
            key: k.clone(),
            create_rev: kv.create_rev,
            lease: kv.lease,
        })
    }

    /// `Get(prefix, WithLastCreate(), WithMaxCreateRev(max))`.
    pub fn last_create_below(&self, prefix: &str, max_create_rev: Revision) -> Option<KeyInfo> {
        self.under(prefix)
            .filter(|(_, kv)| kv.create_rev <= max_create_rev)
            .max_by_key(|(_, kv)| kv.create_rev)
            .map(|(k, kv)| KeyInfo { key: k.clone(), create_rev: kv.create_rev, lease: kv.lease })
    }

    /// Events on `key` at or after `start_rev`: (revision, deleted).
    pub fn events_since(&self, key: &str, start_rev: Revision) -> Vec<(Revision, bool)> {
        // A key's history is in revision order (the store's revision only grows): the events
        // from `start_rev` on are a tail, found by a search instead of a scan of all of them.
        self.history.get(key).map(|h| h[h.partition_point(|(r, _)| *r < start_rev)..].to_vec()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_and_create_order() {
        let mut s = Store::new();
        let a = s.put("/l/a", 7);
        let b = s.put("/l/b", 8);
        let c = s.put("/l/0", 9);
        assert_eq!((a, b, c), (2, 3, 4));
        // Ordered by create revision, not by key name.
        assert_eq!(s.first_create("/l/").unwrap().key, "/l/a");
        assert_eq!(s.last_create_below("/l/", c - 1).unwrap().key, "/l/b");
        assert_eq!(s.last_create_below("/l/", a - 1), None);
        // Deleting nothing keeps the revision; deleting two keys takes one revision.
        assert_eq!(s.delete(&["/l/x"]).1, 4);
        let (gone, rev) = s.delete(&["/l/a", "/l/b"]);
        assert_eq!((gone.len(), rev), (2, 5));
        assert_eq!(s.events_since("/l/a", 3), vec![(5, true)]);
        assert_eq!(s.events_since("/l/a", 2), vec![(2, false), (5, true)]);
        // A re-created key gets a new create revision.
        assert_eq!(s.put("/l/a", 7), 6);
        assert_eq!(s.get("/l/a").unwrap().create_rev, 6);
        assert_eq!((s.create_rev("/l/a"), s.create_rev("/l/b")), (Some(6), None));
        assert!(s.first_create("/m/").is_none());
    }
}
