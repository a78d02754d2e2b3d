//! Unavailability and outage, per key, from one sweep over the boundaries of waits and holds.
//!
//! The key is *unavailable* while at least one client is waiting for it and no holder interval
//! is open. A client waits from the first acquire call of a section to its grant, failed calls
//! and the pauses before the next call included (a section [`Attempt`]), as `wait_ms` counts it:
//! a client that is refused at once and asks again is kept from the lock as surely as one whose
//! call hangs. `unavailable_ns` sums every such stretch; with one client it is mostly that
//! client's own round trips, so it measures the cost of asking as much as any failure.
//! `outage_ns` is the longest single stretch: what a failover or a leaked lock costs the clients
//! that wait through it.
//!
//! Within one instant the order of boundaries does not matter: only the stretches between
//! distinct instants have length, and a stretch continues across an instant at which the key
//! changed hands and back (a zero-length hold does not end an outage; nothing held it for any
//! time).

#[cfg(doc)]
use super::intervals::Attempt;
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
    // The four kinds of boundary, each in time order. Intervals are listed in the order they
    // began and attempts in the order they ended; the other boundary of each can be out of
    // order only against those open at the same time, so it is nearly sorted and an insertion
    // sort puts it in order in time proportional to its number times the concurrency (where a
    // general sort of all four lists together cost a sixth of a failover run).
    let hold_starts = nearly_sorted(kt.intervals.iter().map(|iv| iv.start_ns).collect());
    let hold_ends = nearly_sorted(kt.intervals.iter().map(|iv| iv.end_ns).collect());
    let wait_starts = nearly_sorted(kt.attempts.iter().map(|a| a.start_ns).collect());
    let wait_ends = nearly_sorted(kt.attempts.iter().map(|a| a.end_ns).collect());
    // (list, change in holders, change in waiters)
    let lists: [(&[Nanos], i64, i64); 4] =
        [(&hold_starts, 1, 0), (&hold_ends, -1, 0), (&wait_starts, 0, 1), (&wait_ends, 0, -1)];
    let mut next = [0usize; 4];

    let (mut holders, mut waiters) = (0i64, 0i64);
    let mut u = Unavailability::default();
    // The current stretch's length so far.
    let mut stretch = 0;
    let mut prev = 0;
    // Within one instant the order of boundaries does not matter (see above), so the next
    // boundary is any list's earliest.
    while let Some((l, at)) =
        (0..4).filter_map(|l| lists[l].0.get(next[l]).map(|&at| (l, at))).min_by_key(|&(_, at)| at)
    {
        next[l] += 1;
        if at > prev {
            if waiters > 0 && holders == 0 {
                u.total_ns = u.total_ns.saturating_add(at - prev);
                stretch += at - prev;
                u.longest_ns = u.longest_ns.max(stretch);
            } else {
                stretch = 0;
            }
        }
        holders += lists[l].1;
        waiters += lists[l].2;
        prev = at;
    }
    u
}

/// `v` sorted by insertion: linear for a sorted list, and proportional to the number of
/// out-of-order pairs otherwise.
fn nearly_sorted(mut v: Vec<Nanos>) -> Vec<Nanos> {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::intervals::{Attempt, Interval};
    use proptest::prelude::*;

    /// The plain definition: every boundary in one list, sorted, swept once.
    fn by_full_sort(kt: &KeyTimeline) -> Unavailability {
        let mut edges: Vec<(Nanos, i64, i64)> = Vec::new();
        for iv in &kt.intervals {
            edges.push((iv.start_ns, 1, 0));
            edges.push((iv.end_ns, -1, 0));
        }
        for w in &kt.attempts {
            edges.push((w.start_ns, 0, 1));
            edges.push((w.end_ns, 0, -1));
        }
        edges.sort_by_key(|e| e.0);
        let (mut holders, mut waiters, mut stretch, mut prev) = (0i64, 0i64, 0, 0);
        let mut u = Unavailability::default();
        for (at, dh, dw) in edges {
            if at > prev {
                if waiters > 0 && holders == 0 {
                    u.total_ns = u.total_ns.saturating_add(at - prev);
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

    fn timeline(holds: &[(Nanos, Nanos)], waits: &[(Nanos, Nanos)]) -> KeyTimeline {
        let mut holds = holds.to_vec();
        let mut waits = waits.to_vec();
        // Listed in start order, as `Timeline` lists them.
        holds.sort_by_key(|h| h.0);
        waits.sort_by_key(|w| w.0);
        KeyTimeline {
            intervals: holds.iter().map(|&(s, len)| Interval::released(1, s, s + len)).collect(),
            waits: Vec::new(),
            attempts: waits.iter().map(|&(s, len)| Attempt { client: 2, start_ns: s, end_ns: s + len }).collect(),
        }
    }

    proptest! {
        /// The merge of four nearly sorted lists gives what sorting every boundary gives.
        #[test]
        fn merge_sweep_equals_the_full_sort(
            holds in proptest::collection::vec((0u64..1_000, 0u64..300), 0..40),
            waits in proptest::collection::vec((0u64..1_000, 0u64..300), 0..40),
        ) {
            let kt = timeline(&holds, &waits);
            prop_assert_eq!(check_key(&kt), by_full_sort(&kt));
        }
    }
}
