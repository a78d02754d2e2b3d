//! V1, overlap: pairs of holder intervals on one key, from different clients, that overlap in
//! time (`a.start < b.end && b.start < a.end`) where at least one is exclusive.
//!
//! A sweep in start order keeps the intervals still open; each new interval is paired only with
//! those. In a sane history a client holds a key at most once at a time, so the open set is no
//! larger than the number of clients and a run with 100k grants costs about 100k × clients steps,
//! not 100k².

use super::intervals::{Interval, KeyTimeline};
use super::{describe, ms, ViolationSink};
use crate::history::LockMode;

/// Calls `f` with every overlapping pair on one key, as (earlier, later), in the order the
/// check counts them: the one definition of an overlap, shared by the checker and the report's
/// timeline.
pub fn for_each_pair<'a>(kt: &'a KeyTimeline, mut f: impl FnMut(&'a Interval, &'a Interval)) {
    // Indices of intervals that started earlier and may still be open, in start order.
    let mut open: Vec<usize> = Vec::new();
    for (bi, b) in kt.intervals.iter().enumerate() {
        // An interval that ended at or before b began cannot overlap it (back-to-back is fine)
        // nor anything that starts later, since starts only grow.
        open.retain(|&ai| kt.intervals[ai].end_ns > b.start_ns);
        for &ai in &open {
            let a = &kt.intervals[ai];
            // Every `a` left has a.start <= b.start < a.end. The other half of the strict test,
            // a.start < b.end, only fails when b is empty (granted and ended in one instant) and
            // began together with a.
            let overlaps = b.end_ns > b.start_ns || a.start_ns < b.start_ns;
            if overlaps && conflicts(a, b) {
                f(a, b);
            }
        }
        open.push(bi);
    }
}

/// Counts overlapping pairs on one key and offers one violation per pair.
pub fn check_key(kt: &KeyTimeline, violations: &mut ViolationSink) -> u64 {
    let mut count = 0;
    for_each_pair(kt, |a, b| {
        count += 1;
        violations.offer(b.start_ns, "overlap", || {
            format!("key {}: {} and {} overlap from {}", b.key, describe(a), describe(b), ms(b.start_ns))
        });
    });
    count
}

/// Two holds conflict if they belong to different clients (a client cannot race itself) and
/// at least one is exclusive (shared holds are meant to coexist).
fn conflicts(a: &Interval, b: &Interval) -> bool {
    a.client != b.client && (a.mode == LockMode::Exclusive || b.mode == LockMode::Exclusive)
}
