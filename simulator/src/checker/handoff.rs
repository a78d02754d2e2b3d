//! Handoff: from one holder's end to the next grant on the same key, when someone was waiting.
//!
//! For each non-nested grant at `g`: if every interval that began before `g` has ended by `g`
//! (the key was free just before the grant; a release at the grant's own instant counts as
//! before it, a zero handoff), let `r` be the latest of those ends and the ender its client. If
//! at `r` some other client was already waiting on the key (its wait began at or before `r` and
//! had not ended before `r`), record `g - r`. Holds that began at `g` itself (shared grants
//! together) are not "before", so each of them is a handoff from the same release. A grant onto
//! a never-held key, or after a gap nobody was waiting through, is not a handoff: that time is
//! idleness, not hand-over cost.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::intervals::KeyTimeline;
use super::metrics::record_ns;
use crate::directory::NodeId;
use crate::time::Nanos;
use hdrhistogram::Histogram;

pub fn check_key(kt: &KeyTimeline, hist: &mut Histogram<u64>) {
    let ivs = &kt.intervals;
    let waits = &kt.waits;
    // Latest end among intervals that began before the current grant, and whose it was.
    let mut latest: Option<(Nanos, NodeId)> = None;
    // intervals[..before] began before the current grant.
    let mut before = 0;
    // Waits that began at or before the last `r` asked about and had not ended before it, as a
    // min-heap on end. `r` never decreases (it is a running maximum), so both only move forward.
    let mut waiting: BinaryHeap<Reverse<(Nanos, usize)>> = BinaryHeap::new();
    let mut next_wait = 0;

    for iv in ivs {
        let g = iv.start_ns;
        while before < ivs.len() && ivs[before].start_ns < g {
            let p = &ivs[before];
            if latest.is_none_or(|(end, _)| p.end_ns >= end) {
                latest = Some((p.end_ns, p.client));
            }
            before += 1;
        }
        let Some((r, ender)) = latest else { continue };
        if r > g {
            continue; // someone still held the key when this grant came
        }
        while next_wait < waits.len() && waits[next_wait].start_ns <= r {
            // A wait already over by `r` would be popped at once, and `r` only grows: it never
            // counts, so it never enters the heap (most of them, where failed calls retry fast).
            if waits[next_wait].end_ns >= r {
                waiting.push(Reverse((waits[next_wait].end_ns, next_wait)));
            }
            next_wait += 1;
        }
        while waiting.peek().is_some_and(|Reverse((end, _))| *end < r) {
            waiting.pop();
        }
        // What is left was waiting at `r`; at most one wait per client, so this is short.
        if waiting.iter().any(|Reverse((_, i))| waits[*i].client != ender) {
            record_ns(hist, g - r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::intervals::{Interval, Wait, WaitOutcome};
    use crate::checker::metrics::new_histogram;
    use proptest::prelude::*;

    /// The module's definition read literally, every interval and wait looked at for each grant.
    fn by_definition(kt: &KeyTimeline) -> Vec<Nanos> {
        let mut out = Vec::new();
        for iv in &kt.intervals {
            let g = iv.start_ns;
            let before: Vec<&Interval> = kt.intervals.iter().filter(|p| p.start_ns < g).collect();
            if before.is_empty() || before.iter().any(|p| p.end_ns > g) {
                continue;
            }
            let r = before.iter().map(|p| p.end_ns).max().expect("not empty");
            // The ender: the last listed of those ending at r.
            let ender = before.iter().rev().find(|p| p.end_ns == r).expect("one ends at r").client;
            if kt.waits.iter().any(|w| w.start_ns <= r && w.end_ns >= r && w.client != ender) {
                out.push(g - r);
            }
        }
        out
    }

    /// Intervals and waits listed in start order, as `Timeline` lists them; clients 0-3. Times
    /// are given in whole milliseconds, so that ends and starts often coincide (the edges).
    fn timeline(holds: &[(Nanos, Nanos, usize)], waits: &[(Nanos, Nanos, usize)]) -> KeyTimeline {
        let ms = |v: &[(Nanos, Nanos, usize)]| {
            v.iter().map(|&(s, l, c)| (s * 1_000_000, l * 1_000_000, c)).collect::<Vec<_>>()
        };
        let mut holds = ms(holds);
        let mut waits = ms(waits);
        holds.sort_by_key(|h| h.0);
        waits.sort_by_key(|w| w.0);
        KeyTimeline {
            intervals: holds.iter().map(|&(s, len, client)| Interval::released(client, s, s + len)).collect(),
            waits: waits
                .iter()
                .map(|&(s, len, client)| Wait {
                    client,
                    key: 0,
                    start_ns: s,
                    end_ns: s + len,
                    outcome: WaitOutcome::Failed,
                })
                .collect(),
            attempts: Vec::new(),
        }
    }

    proptest! {
        /// The sweep (waits that ended before a release never enter its heap) records exactly
        /// the handoffs the definition names, in microseconds.
        #[test]
        fn the_sweep_records_what_the_definition_names(
            holds in proptest::collection::vec((0u64..200, 0u64..30, 0usize..4), 0..30),
            waits in proptest::collection::vec((0u64..200, 0u64..30, 0usize..4), 0..60),
        ) {
            let kt = timeline(&holds, &waits);
            let mut swept = new_histogram();
            check_key(&kt, &mut swept);
            let mut defined = new_histogram();
            for ns in by_definition(&kt) {
                record_ns(&mut defined, ns);
            }
            prop_assert_eq!(swept.len(), defined.len());
            let as_list = |h: &Histogram<u64>| {
                h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect::<Vec<_>>()
            };
            prop_assert_eq!(as_list(&swept), as_list(&defined));
        }
    }
}
