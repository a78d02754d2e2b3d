//! Session timing, on both sides of the connection.
//!
//! Server side (the leader's `SessionTrackerImpl`): an [`ExpiryQueue`] of fixed `tick_ms`
//! buckets. Touching a session moves it to the bucket `roundToNextInterval(now + timeout)` where
//! `roundToNextInterval(t) = (t / tick + 1) * tick`; the expirer wakes at each bucket boundary
//! and expires the whole bucket. So a session last heard from at `t` expires at the first tick
//! boundary strictly after `t + timeout`, on the leader's monotonic clock (ZooKeeper's
//! `Time.currentElapsedTime`). The negotiated timeout is clamped to `[2, 20] × tick_ms`
//! (ZooKeeper's default `minSessionTimeout` / `maxSessionTimeout`).
//!
//! Client side (ZooKeeper's `ClientCnxn` and Curator's `ConnectionStateManager`): the read
//! timeout is 2/3 of the negotiated timeout (no reply for that long: the connection is lost,
//! Curator says SUSPENDED); a ping goes out after a third of the timeout without sending
//! (docs/models.md; `ClientCnxn` uses half the read timeout minus up to one second); a connect
//! attempt gets `timeout / servers` before the client tries the next server; Curator injects a
//! session expiration (LOST) once SUSPENDED has lasted a whole negotiated timeout.
//!
//! Sources: apache/zookeeper `ExpiryQueue.java`, `SessionTrackerImpl.java`, `ClientCnxn.java`;
//! apache/curator `ConnectionStateManager.checkSessionExpiration`.

use std::collections::{BTreeMap, BTreeSet};

use locksim_simulator::time::{Nanos, NS_PER_MS};

use super::protocol::SessionId;

mod fingerprint;

/// The timeout a server grants: the request clamped to `[2, 20] × tick_ms`.
pub fn negotiate_timeout_ms(requested_ms: u64, tick_ms: u64) -> u64 {
    requested_ms.clamp(2 * tick_ms, 20 * tick_ms)
}

/// `ExpiryQueue.roundToNextInterval`: the first multiple of `interval` strictly after `t`.
pub fn round_to_next_interval(t: Nanos, interval: Nanos) -> Nanos {
    (t / interval + 1) * interval
}

/// ZooKeeper's `ExpiryQueue<Long>` over session ids, in nanoseconds of the leader's clock.
#[derive(Clone, Debug)]
pub struct ExpiryQueue {
    interval_ns: Nanos,
    next_expiration_ns: Nanos,
    expiry_of: BTreeMap<SessionId, Nanos>,
    buckets: BTreeMap<Nanos, BTreeSet<SessionId>>,
}

impl ExpiryQueue {
    /// An empty queue of `interval_ns` buckets; the first boundary is the next one after `now_ns`.
    pub fn new(interval_ns: Nanos, now_ns: Nanos) -> Self {
        ExpiryQueue {
            interval_ns,
            next_expiration_ns: round_to_next_interval(now_ns, interval_ns),
            expiry_of: BTreeMap::new(),
            buckets: BTreeMap::new(),
        }
    }

    /// Moves `session` to the bucket for `now + timeout`; returns that bucket's time.
    pub fn update(&mut self, session: SessionId, timeout_ns: Nanos, now_ns: Nanos) -> Nanos {
        let new_expiry = round_to_next_interval(now_ns + timeout_ns, self.interval_ns);
        if let Some(prev) = self.expiry_of.insert(session, new_expiry) {
            if prev != new_expiry {
                if let Some(set) = self.buckets.get_mut(&prev) {
                    set.remove(&session);
                }
            }
        }
        self.buckets.entry(new_expiry).or_default().insert(session);
        new_expiry
    }

    /// Stops tracking `session`.
    pub fn remove(&mut self, session: SessionId) {
        if let Some(prev) = self.expiry_of.remove(&session) {
            if let Some(set) = self.buckets.get_mut(&prev) {
                set.remove(&session);
            }
        }
    }

    /// When the session is due to expire, if tracked.
    pub fn expiry_of(&self, session: SessionId) -> Option<Nanos> {
        self.expiry_of.get(&session).copied()
    }

    /// The next bucket boundary the expirer wakes at.
    pub fn next_expiration_ns(&self) -> Nanos {
        self.next_expiration_ns
    }

    /// `getWaitTime`: how long until the next boundary (0 if it has passed).
    pub fn wait_ns(&self, now_ns: Nanos) -> Nanos {
        self.next_expiration_ns.saturating_sub(now_ns)
    }

    /// `poll`: if the next boundary has passed, take that bucket and move on one interval.
    pub fn poll(&mut self, now_ns: Nanos) -> Vec<SessionId> {
        if now_ns < self.next_expiration_ns {
            return Vec::new();
        }
        let due = self.next_expiration_ns;
        self.next_expiration_ns += self.interval_ns;
        let set = self.buckets.remove(&due).unwrap_or_default();
        for s in &set {
            self.expiry_of.remove(s);
        }
        set.into_iter().collect()
    }
}

/// The leader's session tracker: the expiry queue plus which sessions are closing (an expiry
/// or close proposed but not yet applied: requests on them are refused as expired).
#[derive(Clone, Debug)]
pub struct SessionTracker {
    queue: ExpiryQueue,
    timeouts_ms: BTreeMap<SessionId, u64>,
    closing: BTreeSet<SessionId>,
}

impl SessionTracker {
    /// An empty tracker with `tick_ms` buckets, starting at `now_ns`.
    pub fn new(tick_ms: u64, now_ns: Nanos) -> Self {
        SessionTracker {
            queue: ExpiryQueue::new(tick_ms * NS_PER_MS, now_ns),
            timeouts_ms: BTreeMap::new(),
            closing: BTreeSet::new(),
        }
    }

    /// Starts tracking a session (a new session, or every open session when a leader takes
    /// over: ZooKeeper's new leader gives each one its full timeout from the moment it leads).
    pub fn add(&mut self, session: SessionId, timeout_ms: u64, now_ns: Nanos) {
        if self.timeouts_ms.insert(session, timeout_ms).is_none() {
            self.queue.update(session, timeout_ms * NS_PER_MS, now_ns);
        }
    }

    /// `touchSession`: false if the session is unknown or closing (the caller then treats it
    /// as expired).
    pub fn touch(&mut self, session: SessionId, now_ns: Nanos) -> bool {
        if self.closing.contains(&session) {
            return false;
        }
        match self.timeouts_ms.get(&session) {
            Some(t) => {
                self.queue.update(session, t * NS_PER_MS, now_ns);
                true
            }
            None => false,
        }
    }

    /// Whether the session is tracked and not closing.
    pub fn is_live(&self, session: SessionId) -> bool {
        self.timeouts_ms.contains_key(&session) && !self.closing.contains(&session)
    }

    /// A close of `session` was proposed: it leaves the expiry queue and a touch no longer
    /// revives it.
    pub fn set_closing(&mut self, session: SessionId) {
        if self.timeouts_ms.contains_key(&session) {
            self.closing.insert(session);
            self.queue.remove(session);
        }
    }

    /// The session's close was applied.
    pub fn remove(&mut self, session: SessionId) {
        self.timeouts_ms.remove(&session);
        self.closing.remove(&session);
        self.queue.remove(session);
    }

    /// When the session is due to expire, if it is tracked and not closing.
    pub fn expiry_of(&self, session: SessionId) -> Option<Nanos> {
        self.queue.expiry_of(session)
    }

    /// How long until the next bucket boundary (0 if it has passed).
    pub fn wait_ns(&self, now_ns: Nanos) -> Nanos {
        self.queue.wait_ns(now_ns)
    }

    /// Polls the due bucket; the sessions in it are now closing and must be expired.
    pub fn expire_due(&mut self, now_ns: Nanos) -> Vec<SessionId> {
        let due = self.queue.poll(now_ns);
        for s in &due {
            self.closing.insert(*s);
        }
        due
    }
}

/// The client's timing, derived from the negotiated timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientTiming {
    /// The session timeout the timing is derived from.
    pub timeout_ns: Nanos,
}

impl ClientTiming {
    /// The timing for a session timeout of `timeout_ms`.
    pub fn new(timeout_ms: u64) -> Self {
        ClientTiming { timeout_ns: timeout_ms * NS_PER_MS }
    }
    /// No reply for this long while connected: the connection is lost (Curator SUSPENDED).
    pub fn read_timeout_ns(&self) -> Nanos {
        self.timeout_ns * 2 / 3
    }
    /// Idle (nothing sent) for this long: send a ping.
    pub fn ping_after_ns(&self) -> Nanos {
        self.timeout_ns / 3
    }
    /// One connect attempt's budget before trying the next server.
    pub fn connect_timeout_ns(&self, servers: usize) -> Nanos {
        self.timeout_ns / servers.max(1) as Nanos
    }
    /// SUSPENDED for this long: Curator posts LOST and starts a new session.
    pub fn lost_after_suspended_ns(&self) -> Nanos {
        self.timeout_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = NS_PER_MS;

    #[test]
    fn negotiated_timeouts_are_clamped_to_two_and_twenty_ticks() {
        assert_eq!(negotiate_timeout_ms(40_000, 2000), 40_000);
        assert_eq!(negotiate_timeout_ms(1000, 2000), 4000);
        assert_eq!(negotiate_timeout_ms(90_000, 2000), 40_000);
    }

    #[test]
    fn a_session_expires_at_the_first_tick_after_last_contact_plus_timeout() {
        // Last contact at 3.1 s, timeout 40 s, tick 2 s: 43.1 s rounds up to the 44 s bucket.
        let mut t = SessionTracker::new(2000, 0);
        t.add(7, 40_000, 0);
        assert!(t.touch(7, 3_100 * MS));
        assert_eq!(t.expiry_of(7), Some(44_000 * MS));
        // A contact exactly on a boundary still moves to the next one: 42 s + 40 s → 84 s.
        let mut b = SessionTracker::new(2000, 0);
        b.add(1, 40_000, 42_000 * MS);
        assert_eq!(b.expiry_of(1), Some(84_000 * MS));
        // The expirer polls one bucket per tick; nothing is due before 44 s.
        let mut now = 0;
        let mut expired_at = None;
        while expired_at.is_none() {
            now += t.wait_ns(now);
            if !t.expire_due(now).is_empty() {
                expired_at = Some(now);
            }
            assert!(now <= 50_000 * MS);
        }
        assert_eq!(expired_at, Some(44_000 * MS));
        assert!(!t.is_live(7) && !t.touch(7, now), "a closing session cannot be revived by a touch");
    }

    #[test]
    fn touches_push_expiry_back_and_removed_sessions_never_expire() {
        let mut t = SessionTracker::new(2000, 0);
        t.add(1, 4000, 0);
        t.add(2, 4000, 0);
        t.touch(1, 5_000 * MS); // → 10 s
        t.remove(2);
        let mut got = Vec::new();
        let mut now = 0;
        while now < 12_000 * MS {
            now += t.wait_ns(now).max(1);
            for s in t.expire_due(now) {
                got.push((s, now / MS));
            }
        }
        assert_eq!(got, vec![(1, 10_000)]);
    }

    #[test]
    fn client_timing_is_a_third_two_thirds_and_a_whole_timeout() {
        let c = ClientTiming::new(40_000);
        assert_eq!(c.ping_after_ns(), 13_333_333_333);
        assert_eq!(c.read_timeout_ns(), 26_666_666_666);
        assert_eq!(c.connect_timeout_ns(3), 13_333_333_333);
        assert_eq!(c.lost_after_suspended_ns(), 40_000 * MS);
    }
}
