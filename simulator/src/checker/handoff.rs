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
            waiting.push(Reverse((waits[next_wait].end_ns, next_wait)));
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
