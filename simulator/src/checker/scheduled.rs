//! The scheduled-job workload's "at most once per period" check (`double_executions`).
//!
//! In a scheduled workload every grant is one run of the job (the workload maps an execution to a
//! holder interval, so "never two executions at once" is the overlap check itself). This check
//! asks the other question: did the job run more than once in one period? Periods are laid on
//! true time, centred on the times a node with a correct clock fires: period k is
//! `[k·P − P/2, k·P + P/2)`. A run starts a few milliseconds after its fire (the lock's round
//! trips), well inside its period; two runs in one period mean the job ran twice for one tick of
//! the schedule, whichever nodes ran them and whether or not they overlapped (a short job that
//! finished before a node with a later clock fired is the case ShedLock's `lockAtLeastFor`
//! exists for). Every run beyond the first in a period is one double execution.

use super::intervals::Timeline;
use super::{describe, ms, ViolationSink};
use crate::history::History;
use crate::time::Nanos;

/// The period index of a run starting at `start_ns` (true time).
fn period_of(start_ns: Nanos, period_ns: Nanos) -> u64 {
    start_ns.saturating_add(period_ns / 2) / period_ns
}

/// Counts the runs beyond the first in each period and offers one violation for each; `None` when
/// the workload is not scheduled (the metric does not apply).
pub fn check(history: &History, timeline: &Timeline, violations: &mut ViolationSink) -> Option<u64> {
    let period_ns = history.schedule_period_ns?.max(1);
    let mut runs: Vec<_> = timeline.keys.values().flat_map(|kt| kt.intervals.iter()).collect();
    // Start order; ties by client so the output does not depend on the keys' order.
    runs.sort_by_key(|iv| (iv.start_ns, iv.client, iv.grant));
    let mut count = 0;
    let mut first_in_period: Option<(u64, usize)> = None;
    for (i, run) in runs.iter().enumerate() {
        let k = period_of(run.start_ns, period_ns);
        match first_in_period {
            Some((period, first)) if period == k => {
                count += 1;
                let first = runs[first];
                violations.offer(run.start_ns, "double_execution", || {
                    let from = k.saturating_mul(period_ns).saturating_sub(period_ns / 2);
                    format!(
                        "the job ran again in period {k} (from {}): {} after {}",
                        ms(from),
                        describe(run),
                        describe(first)
                    )
                });
            }
            _ => first_in_period = Some((k, i)),
        }
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::intervals::{Interval, KeyTimeline};
    use crate::time::NS_PER_MS;

    fn timeline(runs: &[(usize, u64)]) -> Timeline {
        let mut kt = KeyTimeline::default();
        for &(client, start_ms) in runs {
            kt.intervals.push(Interval::released(client, start_ms * NS_PER_MS, start_ms * NS_PER_MS + 5 * NS_PER_MS));
        }
        let mut t = Timeline::default();
        t.keys.insert(0, kt);
        t
    }

    fn doubles(runs: &[(usize, u64)], period_ms: Option<u64>) -> Option<u64> {
        let history = History { schedule_period_ns: period_ms.map(|p| p * NS_PER_MS), ..History::default() };
        check(&history, &timeline(runs), &mut ViolationSink::unlimited())
    }

    #[test]
    fn runs_beyond_the_first_in_a_period_are_counted() {
        // One run per period, a few ms after each tick: none.
        assert_eq!(doubles(&[(1, 1_002), (2, 2_003), (1, 3_002)], Some(1_000)), Some(0));
        // Two nodes 300 ms apart both ran tick 2, three ran tick 3.
        assert_eq!(
            doubles(&[(1, 1_002), (1, 2_002), (2, 2_302), (1, 3_002), (2, 2_700), (3, 3_400)], Some(1_000)),
            Some(3)
        );
        // The period's edges are half a period either side of the tick.
        assert_eq!(doubles(&[(1, 1_499), (2, 1_500)], Some(1_000)), Some(0));
        assert_eq!(doubles(&[(1, 500), (2, 1_499)], Some(1_000)), Some(1));
        // Not scheduled: the metric does not apply.
        assert_eq!(doubles(&[(1, 1_002), (2, 1_003)], None), None);
    }
}
