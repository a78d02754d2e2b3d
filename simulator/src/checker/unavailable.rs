//! Unavailability and outage, per key, from one sweep over the boundaries of waits and holds.
//!
//! The key is *unavailable* while at least one client is waiting for it (an acquire call is
//! outstanding) and no holder interval is open. `unavailable_ns` sums every such stretch; with
//! one client it is mostly that client's own round trips, so it measures the cost of asking as
//! much as any failure. `outage_ns` is the longest single stretch: what a failover or a leaked
//! lock costs the clients that wait through it.
//!
//! Within one instant the order of boundaries does not matter: only the stretches between
//! distinct instants have length, and a stretch continues across an instant at which the key
//! changed hands and back (a zero-length hold does not end an outage; nothing held it for any
//! time).

use super::intervals::KeyTimeline;
use crate::time::Nanos;

/// One key's unavailability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unavailability {
    /// Time with a waiter and no holder, summed.
    pub total_ns: Nanos,
    /// The longest continuous stretch with a waiter and no holder.
    pub longest_ns: Nanos,
}

pub fn check_key(kt: &KeyTimeline) -> Unavailability {
    // (time, change in holders, change in waiters)
    let mut edges: Vec<(Nanos, i64, i64)> = Vec::with_capacity(2 * (kt.intervals.len() + kt.waits.len()));
    for iv in &kt.intervals {
        edges.push((iv.start_ns, 1, 0));
        edges.push((iv.end_ns, -1, 0));
    }
    for w in &kt.waits {
        edges.push((w.start_ns, 0, 1));
        edges.push((w.end_ns, 0, -1));
    }
    // Each quarter is sorted (starts) or nearly so (ends): a stable sort merges such runs in
    // about linear time, where an unstable one sorts from scratch. The order within an instant
    // does not matter (see above).
    edges.sort_by_key(|e| e.0);

    let (mut holders, mut waiters) = (0i64, 0i64);
    let mut u = Unavailability::default();
    // The current stretch's length so far.
    let mut stretch = 0;
    let mut prev = 0;
    for (at, dh, dw) in edges {
        if at > prev {
            if waiters > 0 && holders == 0 {
                u.total_ns += at - prev;
                stretch += at - prev;
                u.longest_ns = u.longest_ns.max(stretch);
            } else {
                stretch = 0;
            }
        }
        holders += dh;
        waiters += dw;
        prev = at;
    }
    u
}
