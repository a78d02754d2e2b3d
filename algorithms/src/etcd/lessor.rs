//! Leases as etcd's `server/lease/lessor.go` keeps them. The set of leases, their TTLs and the
//! keys attached are part of the replicated state (granted and revoked through the log, stored in
//! the backend); expiry times are not: only the primary lessor (the leader's, after it applied
//! its first entry) tracks them, on its own clock, and a follower's leases never expire.
//!
//! - `promote(extend)`: a new leader refreshes every lease to now + TTL + `extend` (the election
//!   timeout), so leader changes delay expiry, never hasten it.
//! - `demote()`: leases live forever again.
//! - `renew`: only the primary renews (now + TTL); an expired lease is not renewed: the request
//!   waits for the revocation to apply and then reports the lease gone.
//! - `expired`: the leases the primary should revoke now (checked every `lease_check_ms`); one
//!   already proposed is proposed again only after `expiredLeaseRetryInterval` (3 s).

use std::collections::{BTreeMap, BTreeSet};

use locksim_simulator::time::Nanos;

use super::protocol::LeaseId;

mod fingerprint;

/// etcd's `expiredLeaseRetryInterval`.
pub const REVOKE_RETRY_NS: Nanos = 3_000_000_000;

/// One lease: its TTL, its expiry on the primary lessor's clock, and the keys attached to it.
#[derive(Clone, Debug)]
pub struct Lease {
    /// The TTL it was granted with.
    pub ttl_ns: Nanos,
    /// `None`: forever (not primary).
    pub expiry_ns: Option<Nanos>,
    /// The keys attached (revoking the lease deletes them).
    pub keys: BTreeSet<String>,
    revoke_proposed_ns: Option<Nanos>,
}

/// What a renewal finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Renewed: the lease's TTL.
    Renewed(Nanos),
    /// Not the primary lessor (the caller forwards or drops it).
    NotPrimary,
    /// No such lease (answer TTL 0).
    NotFound,
    /// Expired, revocation pending: wait for it.
    Expired,
}

/// A member's leases; when primary (the leader's), it also tracks their expiry.
#[derive(Clone, Debug, Default)]
pub struct Lessor {
    leases: BTreeMap<LeaseId, Lease>,
    primary: bool,
}

impl Lessor {
    /// Whether this is the primary lessor (the only one that renews and expires leases).
    pub fn is_primary(&self) -> bool {
        self.primary
    }

    /// Lease `id`, if it was granted and not revoked.
    pub fn get(&self, id: LeaseId) -> Option<&Lease> {
        self.leases.get(&id)
    }

    /// The number of leases.
    pub fn len(&self) -> usize {
        self.leases.len()
    }

    /// Whether there are no leases.
    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }

    /// Applies a grant: a primary starts the clock, a follower keeps it forever.
    pub fn grant(&mut self, id: LeaseId, ttl_ns: Nanos, now: Nanos) {
        let expiry_ns = if self.primary { Some(now + ttl_ns) } else { None };
        self.leases.insert(id, Lease { ttl_ns, expiry_ns, keys: BTreeSet::new(), revoke_proposed_ns: None });
    }

    /// Applies a revocation: the lease and the keys attached to it (to be deleted by the caller).
    pub fn revoke(&mut self, id: LeaseId) -> Option<Lease> {
        self.leases.remove(&id)
    }

    /// Attaches `key` to lease `id`; false when there is no such lease.
    pub fn attach(&mut self, id: LeaseId, key: &str) -> bool {
        match self.leases.get_mut(&id) {
            Some(l) => {
                l.keys.insert(key.to_string());
                true
            }
            None => false,
        }
    }

    /// Detaches `key` from lease `id` (nothing if the lease is gone).
    pub fn detach(&mut self, id: LeaseId, key: &str) {
        if let Some(l) = self.leases.get_mut(&id) {
            l.keys.remove(key);
        }
    }

    /// Becomes primary: every lease now expires at `now` + its TTL + `extend_ns`.
    pub fn promote(&mut self, now: Nanos, extend_ns: Nanos) {
        self.primary = true;
        for l in self.leases.values_mut() {
            l.expiry_ns = Some(now + extend_ns + l.ttl_ns);
            l.revoke_proposed_ns = None;
        }
    }

    /// No longer primary: the leases live forever again.
    pub fn demote(&mut self) {
        self.primary = false;
        for l in self.leases.values_mut() {
            l.expiry_ns = None;
            l.revoke_proposed_ns = None;
        }
    }

    /// A keep-alive of lease `id` at `now`: the primary renews a live lease for its TTL.
    pub fn renew(&mut self, id: LeaseId, now: Nanos) -> Renewal {
        if !self.primary {
            return Renewal::NotPrimary;
        }
        let Some(l) = self.leases.get_mut(&id) else { return Renewal::NotFound };
        if l.expiry_ns.is_some_and(|e| e <= now) {
            return Renewal::Expired;
        }
        l.expiry_ns = Some(now + l.ttl_ns);
        Renewal::Renewed(l.ttl_ns)
    }

    /// Leases the primary should propose to revoke at `now`, marked as proposed.
    pub fn expired(&mut self, now: Nanos) -> Vec<LeaseId> {
        if !self.primary {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (id, l) in self.leases.iter_mut() {
            let due = l.expiry_ns.is_some_and(|e| e <= now);
            let retry = l.revoke_proposed_ns.is_none_or(|t| now >= t + REVOKE_RETRY_NS);
            if due && retry {
                l.revoke_proposed_ns = Some(now);
                out.push(*id);
            }
        }
        out
    }

    /// What a crash keeps: the leases and their keys (the backend), without their expiry.
    pub fn into_disk(self) -> BTreeMap<LeaseId, (Nanos, BTreeSet<String>)> {
        self.leases.into_iter().map(|(id, l)| (id, (l.ttl_ns, l.keys))).collect()
    }

    /// The lessor as a restart finds it: the leases on disk, not primary, so no expiry runs (a
    /// promotion starts their clocks again).
    pub fn from_disk(leases: BTreeMap<LeaseId, (Nanos, BTreeSet<String>)>) -> Lessor {
        let leases = leases
            .into_iter()
            .map(|(id, (ttl_ns, keys))| (id, Lease { ttl_ns, expiry_ns: None, keys, revoke_proposed_ns: None }))
            .collect();
        Lessor { leases, primary: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: Nanos = 1_000_000_000;

    #[test]
    fn only_the_primary_expires_and_promotion_extends() {
        let mut l = Lessor::default();
        l.grant(5, 60 * S, 0);
        assert_eq!(l.get(5).unwrap().expiry_ns, None);
        assert_eq!(l.renew(5, 0), Renewal::NotPrimary);
        assert!(l.expired(1000 * S).is_empty());
        l.promote(10 * S, S);
        assert_eq!(l.get(5).unwrap().expiry_ns, Some(71 * S));
        assert_eq!(l.renew(5, 20 * S), Renewal::Renewed(60 * S));
        assert!(l.expired(79 * S).is_empty());
        assert_eq!(l.expired(80 * S), vec![5]);
        assert_eq!(l.renew(5, 80 * S), Renewal::Expired);
        // Proposed once; again only after the retry interval.
        assert!(l.expired(81 * S).is_empty());
        assert_eq!(l.expired(83 * S), vec![5]);
        l.demote();
        assert!(l.expired(1000 * S).is_empty());
        assert!(l.revoke(5).is_some());
        assert_eq!(l.renew(5, 0), Renewal::NotPrimary);
        l.promote(0, 0);
        assert_eq!(l.renew(5, 0), Renewal::NotFound);
    }
}
