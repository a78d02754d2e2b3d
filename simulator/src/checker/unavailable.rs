//! Unavailability: per key, the time during which at least one client was waiting for it and
//! no holder interval was open, summed over keys. Computed as a sweep over the boundaries of
//! waits and holds; within one instant the order of boundaries does not matter, because only
//! the stretches between distinct instants have length.

use super::intervals::KeyTimeline;
use crate::time::Nanos;

pub fn check_key(kt: &KeyTimeline) -> Nanos {
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

    let (mut holders, mut waiters, mut total) = (0i64, 0i64, 0);
    let mut prev = 0;
    for (at, dh, dw) in edges {
        if waiters > 0 && holders == 0 {
            total += at - prev;
        }
        holders += dh;
        waiters += dw;
        prev = at;
    }
    total
}
