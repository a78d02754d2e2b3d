//! Token regressions and leaked re-grants: what a non-nested grant's fencing token says against
//! the tokens granted earlier on the same key.
//!
//! A grant is a **regression** when its token is below the highest granted before it, or equal to
//! it unless it is a leaked re-grant (below). A token source that goes backwards (a failover that
//! lost the counter, a revision reused) lets a fenced resource accept a superseded holder's
//! writes: a fencing failure.
//!
//! A grant is a **leaked re-grant** when its token equals the highest so far, the latest grant of
//! that token went to this same client, and no other client was granted the key since: the lock
//! never left the client. Its release never took effect (lost in a crash, or failed), the server
//! still names it the holder, and its next acquisition re-enters its own lock (a reentrant row, a
//! Lease that still names it) with the same token. No other client carries that token, so fencing
//! still tells the writers apart; the damage is a leaked lock the other clients wait on, which
//! `outage_ms` and `fairness` show. It is not a violation.
//!
//! Grants without a token are neither judged nor raise the bar (but a tokenless grant to another
//! client does mean the lock left). Readers granted together may get their tokens in any order
//! (a read-write recipe grants every queued reader at once), so a shared grant is judged only
//! against earlier exclusive grants; an exclusive grant is judged against every earlier grant.

use super::intervals::KeyTimeline;
use super::{ms, Violation, ViolationSink};
use crate::directory::NodeId;
use crate::history::LockMode;
use crate::time::Nanos;

/// What the tokens of one key showed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Grants below the highest earlier token, or equal to it and not a leaked re-grant.
    pub regressions: u64,
    /// Grants equal to the highest earlier token, whose latest grant was this client's own, with
    /// no other client granted the key in between.
    pub leaked_regrants: u64,
}

/// The highest token so far, with the client of its latest grant and when that was.
type Bar = Option<(u64, NodeId, Nanos)>;

/// Judges one key's grants; regressions go to `violations`, and the earliest leaked re-grant seen
/// (over this key and those judged before) is kept in `first_leak` for the notes and replays.
pub fn check_key(kt: &KeyTimeline, violations: &mut ViolationSink, first_leak: &mut Option<Violation>) -> TokenCounts {
    let mut counts = TokenCounts::default();
    // The bar for exclusive grants (every earlier grant) and for shared ones (exclusive only).
    let mut best_any: Bar = None;
    let mut best_exclusive: Bar = None;
    // Who was granted the key last (any grant, token or not).
    let mut previous: Option<NodeId> = None;
    for iv in &kt.intervals {
        let last = previous.replace(iv.client);
        let Some(t) = iv.token else { continue };
        let bar = if iv.mode == LockMode::Shared { best_exclusive } else { best_any };
        match bar {
            // The lock never left this client: nobody else was granted the key since its grant
            // of this very token.
            Some((max, holder, at)) if t == max && holder == iv.client && last == Some(iv.client) => {
                counts.leaked_regrants += 1;
                if first_leak.as_ref().is_none_or(|v| iv.start_ns < v.at_ns) {
                    *first_leak = Some(Violation {
                        at_ns: iv.start_ns,
                        kind: "leaked_regrant",
                        detail: format!(
                            "key {}: client {} granted token {t} at {}, again after its own grant of it at {}, \
                             nobody else granted the key since",
                            iv.key,
                            iv.client,
                            ms(iv.start_ns),
                            ms(at)
                        ),
                    });
                }
            }
            Some((max, holder, at)) if t <= max => {
                counts.regressions += 1;
                violations.offer(iv.start_ns, "token_regression", || {
                    format!(
                        "key {}: client {} granted token {t} at {}, not above token {max} \
                         granted to client {holder} at {}",
                        iv.key,
                        iv.client,
                        ms(iv.start_ns),
                        ms(at)
                    )
                });
                if t < max {
                    continue;
                }
            }
            _ => {}
        }
        // The latest grant of the highest token names the bar's holder: after client B was
        // wrongly granted A's token, A being granted it again is a regression too (B carries
        // it), not A's own leaked lock.
        let raise = |bar: &mut Bar| {
            if bar.is_none_or(|(m, _, _)| t >= m) {
                *bar = Some((t, iv.client, iv.start_ns));
            }
        };
        raise(&mut best_any);
        if iv.mode == LockMode::Exclusive {
            raise(&mut best_exclusive);
        }
    }
    counts
}
