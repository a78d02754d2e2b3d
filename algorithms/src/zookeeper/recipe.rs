//! The lock recipes' decisions, free of I/O: given the sorted children of `/locks/<key>` and our
//! own node, do we hold the lock, and if not, which node do we watch? Plus Curator's retry
//! policy. The state machines that issue the operations live in [`super::client`].
//!
//! - InterProcessMutex (`StandardLockInternalsDriver.getsTheLock`, `maxLeases = 1`): we hold it
//!   when our node is first; otherwise watch the node just before ours, so one release wakes
//!   exactly one waiter.
//! - InterProcessReadWriteLock: a writer is the standard driver over every child (readers and
//!   writers sort together by sequence); a reader holds it when no writer precedes it, and
//!   otherwise watches the FIRST writer (`readLock` driver: `firstWriteIndex`).
//! - Our node missing from the list (its session expired) is Curator's `NoNodeException` from
//!   `validateOurIndex`: `attemptLock` retries from the create if the retry policy allows.
//!
//! Sources: apache/curator `LockInternals.java`, `StandardLockInternalsDriver.java`,
//! `InterProcessReadWriteLock.java`, `ExponentialBackoffRetry.java`.

use rand::Rng;

use super::protocol::{ChildName, LockName};

/// What the children listing means for us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// We hold the lock.
    Holds,
    /// Wait for this node to go away.
    Watch(ChildName),
    /// Our node is not there (`NoNodeException`).
    Missing,
}

/// The decision for our node `ours` (`children` sorted by sequence).
pub fn decide(children: &[ChildName], ours: ChildName) -> Verdict {
    match ours.name {
        LockName::Lock | LockName::Write => standard(children, ours),
        LockName::Read => read(children, ours),
    }
}

fn standard(children: &[ChildName], ours: ChildName) -> Verdict {
    match children.iter().position(|c| *c == ours) {
        None => Verdict::Missing,
        Some(0) => Verdict::Holds,
        Some(i) => Verdict::Watch(children[i - 1]),
    }
}

fn read(children: &[ChildName], ours: ChildName) -> Verdict {
    let mut first_writer = None;
    for c in children {
        if c.name == LockName::Write {
            first_writer.get_or_insert(*c);
        } else if *c == ours {
            return match first_writer {
                None => Verdict::Holds,
                Some(w) => Verdict::Watch(w),
            };
        }
    }
    Verdict::Missing
}

/// Curator's `ExponentialBackoffRetry(baseSleepTimeMs = 1000, maxRetries = 3)`, the policy of
/// Curator's getting-started example: retry `n` (0-based) is allowed while `n < 3` and sleeps
/// `1000 × max(1, random(0 .. 2^(n+1)))` ms. With `kind = Kazoo` it is kazoo's `KazooRetry`
/// instead (the other two fields unused).
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// `baseSleepTimeMs`.
    pub base_sleep_ms: u64,
    /// `maxRetries`.
    pub max_retries: u32,
    /// Which library's policy (`retry_policy`).
    pub kind: RetryKind,
}

/// Whose retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryKind {
    /// Curator's `ExponentialBackoffRetry(base_sleep_ms, max_retries)`.
    ExponentialBackoff,
    /// kazoo's client retry, `KazooRetry(max_tries=None, delay=0.1, backoff=2, max_jitter=0.4,
    /// max_delay=3600)` (kazoo `client.py:77-82, 322-323`, `retry.py:36-49, 137-162` at 2.10.0):
    /// unlimited retries, retry `n` sleeping `min(100 × 2ⁿ, 3 600 000)` ms times a jitter
    /// uniform in [0.6, 1.4]. kazoo carries the jittered delay into the next doubling; the model
    /// doubles the base and jitters each sleep alone.
    Kazoo,
}

/// `ExponentialBackoffRetry(1000, 3)`, the policy the lock clients use.
pub const CURATOR_RETRY: RetryPolicy =
    RetryPolicy { base_sleep_ms: 1000, max_retries: 3, kind: RetryKind::ExponentialBackoff };

/// kazoo's `max_delay`, ms.
const KAZOO_MAX_DELAY_MS: u64 = 3_600_000;

impl RetryPolicy {
    /// The sleep before retry `retry_count` (0-based), or `None` when no retry is left.
    pub fn sleep_ms<R: Rng + ?Sized>(&self, retry_count: u32, rng: &mut R) -> Option<u64> {
        if self.kind == RetryKind::Kazoo {
            let base = 100u64.saturating_mul(1u64 << retry_count.min(40)).min(KAZOO_MAX_DELAY_MS);
            let jitter: f64 = rng.gen_range(0.6..1.4);
            return Some(((base as f64) * jitter).round() as u64);
        }
        if retry_count >= self.max_retries {
            return None;
        }
        let spread = 1u64 << (retry_count + 1).min(29);
        Some(self.base_sleep_ms * rng.gen_range(0..spread).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::rng::stream;

    fn node(seq: u32, name: LockName) -> ChildName {
        ChildName { protection: seq * 7 + 1, name, seq }
    }

    #[test]
    fn the_mutex_watches_only_its_immediate_predecessor() {
        let kids: Vec<ChildName> = (0..5).map(|s| node(s * 2, LockName::Lock)).collect();
        assert_eq!(decide(&kids, kids[0]), Verdict::Holds);
        for i in 1..5 {
            assert_eq!(decide(&kids, kids[i]), Verdict::Watch(kids[i - 1]));
        }
        assert_eq!(decide(&kids[1..], kids[0]), Verdict::Missing);
    }

    #[test]
    fn readers_share_and_wait_only_for_the_first_earlier_writer() {
        use LockName::{Read as R, Write as W};
        let kids = vec![node(0, R), node(1, R), node(2, W), node(3, R), node(4, W), node(5, R)];
        // Leading readers hold together.
        assert_eq!(decide(&kids, kids[0]), Verdict::Holds);
        assert_eq!(decide(&kids, kids[1]), Verdict::Holds);
        // The writer waits for the reader just before it.
        assert_eq!(decide(&kids, kids[2]), Verdict::Watch(kids[1]));
        // A later reader watches the first writer, not the nearest one.
        assert_eq!(decide(&kids, kids[3]), Verdict::Watch(kids[2]));
        assert_eq!(decide(&kids, kids[5]), Verdict::Watch(kids[2]));
        assert_eq!(decide(&kids, kids[4]), Verdict::Watch(kids[3]));
        // Once the writers are gone, every reader holds.
        let readers: Vec<ChildName> = kids.iter().copied().filter(|c| c.name == R).collect();
        assert!(readers.iter().all(|r| decide(&readers, *r) == Verdict::Holds));
    }

    #[test]
    fn the_retry_policy_allows_three_growing_sleeps() {
        let mut rng = stream(1, "t", "retry");
        for _ in 0..200 {
            assert_eq!(CURATOR_RETRY.sleep_ms(0, &mut rng), Some(1000));
            let s1 = CURATOR_RETRY.sleep_ms(1, &mut rng).unwrap();
            assert!((1000..=3000).contains(&s1));
            let s2 = CURATOR_RETRY.sleep_ms(2, &mut rng).unwrap();
            assert!((1000..=7000).contains(&s2));
            assert_eq!(CURATOR_RETRY.sleep_ms(3, &mut rng), None);
        }
    }

    #[test]
    fn kazoos_policy_never_gives_up_and_doubles_up_to_an_hour() {
        let kazoo = RetryPolicy { kind: RetryKind::Kazoo, ..CURATOR_RETRY };
        let mut rng = stream(1, "t", "retry");
        for _ in 0..200 {
            assert!((60..=140).contains(&kazoo.sleep_ms(0, &mut rng).unwrap()));
            assert!((480..=1120).contains(&kazoo.sleep_ms(3, &mut rng).unwrap()));
            assert!((2_160_000..=5_040_000).contains(&kazoo.sleep_ms(1000, &mut rng).unwrap()));
        }
    }
}
