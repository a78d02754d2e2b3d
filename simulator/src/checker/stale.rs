//! V2, stale writes: a write that reached the resource after its grant had been superseded,
//! that is, another client was granted (non-nested) the same key strictly after the writer's
//! grant and at or before the write's arrival. The unfenced resource accepts every write, so
//! each such write is a `stale_unfenced` event; those the fenced resource also accepted
//! (`fenced_accepted`) are `stale_fenced` events: fencing failed to stop them.

use super::intervals::Timeline;
use super::{ms, token, ViolationSink};
use crate::history::{History, HistoryEvent};

/// Stale-write counts of one run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct StaleCounts {
    pub unfenced: u64,
    pub fenced: u64,
}

pub fn check(history: &History, timeline: &Timeline, violations: &mut ViolationSink) -> StaleCounts {
    let mut counts = StaleCounts::default();
    for e in &history.events {
        let HistoryEvent::ResourceWrite { client, key, grant, token: wtoken, fenced_accepted, .. } = e.event else {
            continue;
        };
        let arrived = e.at_ns;
        // A write quoting a grant the history never recorded cannot be judged; the engine
        // always records the grant before the write, so this only skips malformed input.
        let Some(granted) = timeline.grant_at.get(client, grant) else {
            continue;
        };
        let Some(kt) = timeline.keys.get(&key) else {
            continue;
        };
        // Grants on the key are in start order: skip to the first strictly after the writer's
        // and look for one by another client no later than the arrival. Only the writer's own
        // re-grants are skipped over, so the scan is short.
        let from = kt.intervals.partition_point(|iv| iv.start_ns <= granted);
        let Some(next) =
            kt.intervals[from..].iter().take_while(|iv| iv.start_ns <= arrived).find(|iv| iv.client != client)
        else {
            continue;
        };
        counts.unfenced += 1;
        let detail = || {
            format!(
                "key {key}: write from client {client} (grant {grant}, {}, granted at {}) arrived at {} \
                 after client {} was granted at {} ({}); fenced resource {}",
                token(wtoken),
                ms(granted),
                ms(arrived),
                next.client,
                ms(next.start_ns),
                token(next.token),
                if fenced_accepted { "accepted it" } else { "rejected it" },
            )
        };
        violations.offer(arrived, "stale_unfenced", detail);
        if history.fenced && fenced_accepted {
            counts.fenced += 1;
            violations.offer(arrived, "stale_fenced", detail);
        }
    }
    counts
}
