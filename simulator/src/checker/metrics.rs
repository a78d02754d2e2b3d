//! One seed's measurements, computed from its history by the checkers and folded by the reports
//! crate into totals across seeds.

use std::sync::Mutex;

use hdrhistogram::Histogram;

use crate::time::Nanos;

/// Histograms record microseconds (1 µs to ~2.7 h, 3 significant digits).
pub const HIST_MAX_US: u64 = 10_000_000_000;

/// Histograms handed back by dropped [`SeedMetrics`], for the next ones to reuse. Each is 200 KB
/// of counters; allocating (and zeroing) three fresh ones per seed costs page faults on every seed
/// once the allocator has returned the last ones' memory to the system. Reuse changes nothing a
/// histogram records: a reused one is reset to the state of a new one.
static SPARE_HISTOGRAMS: Mutex<Vec<Histogram<u64>>> = Mutex::new(Vec::new());
/// At most this many spares are kept (a few per thread).
const MAX_SPARE_HISTOGRAMS: usize = 32;

/// An empty histogram of the bounds every per-seed and total histogram has.
pub fn new_histogram() -> Histogram<u64> {
    let spare = SPARE_HISTOGRAMS.lock().ok().and_then(|mut spares| spares.pop());
    match spare {
        Some(mut h) => {
            h.reset();
            h
        }
        None => Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("valid histogram bounds"),
    }
}

/// Keeps `h` for a later [`new_histogram`] if it has the standard bounds.
fn recycle_histogram(h: Histogram<u64>) {
    if h.high() != HIST_MAX_US || h.low() != 1 || h.sigfig() != 3 {
        return;
    }
    if let Ok(mut spares) = SPARE_HISTOGRAMS.lock() {
        if spares.len() < MAX_SPARE_HISTOGRAMS {
            spares.push(h);
        }
    }
}

/// Records a duration in nanoseconds into a microsecond histogram (saturating at the bounds).
pub fn record_ns(h: &mut Histogram<u64>, ns: Nanos) {
    let us = (ns / 1_000).clamp(1, HIST_MAX_US);
    h.saturating_record(us);
}

/// One safety violation, for reports and the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// True time at which the violation happened.
    pub at_ns: Nanos,
    /// `overlap`, `stale_unfenced`, `stale_fenced`, `lost_update`, `token_regression`,
    /// `double_execution`; or
    /// `leaked_regrant` for [`SeedMetrics::first_leaked_regrant`], which is not a violation.
    pub kind: &'static str,
    /// What happened, in words: the intervals, grants or writes involved.
    pub detail: String,
}

/// How many violations a seed keeps with their text when not traced (`run_seed` without a
/// trace). The reports show a failing seed's first violation; the counts are always exact.
pub const MAX_STORED_VIOLATIONS: usize = 16;

/// Where the checks put their violations: every one is offered (and counted by its check), and
/// the first `limit` in true-time order are kept, ties in the order offered, exactly the prefix
/// a full list sorted stably by time would start with. A violation's text is only built when it
/// is kept, so a seed with thousands of violations costs no more than one with a few.
pub struct ViolationSink {
    limit: usize,
    /// Kept so far, each with its offer number (the tie-break).
    kept: Vec<(Violation, u64)>,
    offered: u64,
    /// Once `limit` are kept, an offer at or after this time cannot be among the first `limit`.
    cutoff_ns: Option<Nanos>,
}

impl ViolationSink {
    /// Keeps every violation.
    pub fn unlimited() -> Self {
        Self::keeping(usize::MAX)
    }

    /// Keeps the first `limit` violations in true-time order.
    pub fn keeping(limit: usize) -> Self {
        ViolationSink { limit, kept: Vec::new(), offered: 0, cutoff_ns: None }
    }

    /// Offers a violation at `at_ns`; `detail` is called only if it is kept.
    pub fn offer(&mut self, at_ns: Nanos, kind: &'static str, detail: impl FnOnce() -> String) {
        let n = self.offered;
        self.offered += 1;
        if self.limit == 0 || self.cutoff_ns.is_some_and(|c| at_ns >= c) {
            return;
        }
        self.kept.push((Violation { at_ns, kind, detail: detail() }, n));
        if self.kept.len() >= self.limit.saturating_mul(2) {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.kept.sort_by_key(|(v, n)| (v.at_ns, *n));
        if self.kept.len() >= self.limit {
            self.kept.truncate(self.limit);
            self.cutoff_ns = self.kept.last().map(|(v, _)| v.at_ns);
        }
    }

    /// The kept violations in true-time order (ties in the order offered).
    pub fn into_sorted(mut self) -> Vec<Violation> {
        self.trim();
        self.kept.into_iter().map(|(v, _)| v).collect()
    }
}

/// Everything the results report for one seed of one algorithm.
#[derive(Clone, Debug)]
pub struct SeedMetrics {
    /// The seed these are for.
    pub seed: u64,
    /// The run's simulated length.
    pub duration_ns: Nanos,
    /// V1: overlapping pairs of holder intervals on one key, at least one exclusive.
    pub overlap_events: u64,
    /// V2: writes the unfenced resource accepted from a superseded grant.
    pub stale_unfenced_events: u64,
    /// The same writes that the fenced resource also accepted; `None` when the model has no token.
    pub stale_fenced_events: Option<u64>,
    /// Completed read-modify-write sections whose increment is missing from the final counter.
    pub lost_updates: u64,
    /// Grants whose token was below the highest granted earlier on the same key, or equal to it
    /// and not a leaked re-grant.
    pub token_regressions: u64,
    /// Grants of the highest token so far to the client granted it last, nobody else having been
    /// granted the key since: a leaked lock re-entered, not a fencing failure (not a violation).
    pub leaked_regrants: u64,
    /// Scheduled workload: runs of the job beyond the first in one period (see
    /// [`crate::checker::scheduled`]); `None` when the workload is not scheduled.
    pub double_executions: Option<u64>,
    /// Non-nested grants (one per holder interval).
    pub acquisitions: u64,
    /// Acquire calls that gave up (`AcquireFailed`, timeouts included).
    pub failed_acquisitions: u64,
    /// Holder intervals ended by a release (critical sections completed).
    pub completed_sections: u64,
    /// Release calls (non-nested), the denominator of notifications per release.
    pub releases: u64,
    /// Release calls the library answered with an error (`ReleaseFailed`).
    pub failed_releases: u64,
    /// Time from each acquire call to its non-nested grant.
    pub acquire_latency_us: Histogram<u64>,
    /// Time from each section attempt's first acquire call to its grant, failed calls included
    /// (an attempt still waiting at the end of the run counts to the end).
    pub wait_us: Histogram<u64>,
    /// Time from a holder's end to the next grant on the key, counted only when another client
    /// was already waiting at that end.
    pub handoff_us: Histogram<u64>,
    /// Time during which some client waited for a key and none held it, summed over keys.
    pub unavailable_ns: Nanos,
    /// The longest continuous time some client waited for a key and none held it (max over keys).
    pub outage_ns: Nanos,
    /// Jain's index of completed sections per client; `None` when no section completed.
    pub fairness: Option<f64>,
    /// Messages sent on the simulated network (every send, dropped or not).
    pub messages: u64,
    /// Of those, the ones a client sent or was sent (see [`crate::history::History`]).
    pub client_messages: u64,
    /// Watch or pub/sub wake-ups that reached a waiting client.
    pub notifications: u64,
    /// Lock requests refused by a server (failed INSERTs, SET NX on a taken key).
    pub refused_attempts: u64,
    /// The violations found, in true-time order: every one from [`crate::checker::check`] and
    /// from a traced run, the first [`MAX_STORED_VIOLATIONS`] otherwise (the counts above are
    /// always exact).
    pub violations: Vec<Violation>,
    /// The seed's first leaked re-grant in true-time order, described as a violation is (with
    /// kind `leaked_regrant`), so the notes can say where to look; not a violation.
    pub first_leaked_regrant: Option<Violation>,
}

impl Drop for SeedMetrics {
    /// The histograms go back for reuse (see [`new_histogram`]); a tiny one takes their place.
    fn drop(&mut self) {
        for h in [&mut self.acquire_latency_us, &mut self.wait_us, &mut self.handoff_us] {
            let tiny = Histogram::new_with_bounds(1, 2, 1).expect("valid histogram bounds");
            recycle_histogram(std::mem::replace(h, tiny));
        }
    }
}

impl SeedMetrics {
    /// Metrics with every count at 0 and empty histograms; `stale_fenced_events` is `Some(0)`
    /// for a `fenced` model and `None` otherwise.
    pub fn empty(seed: u64, duration_ns: Nanos, fenced: bool) -> Self {
        SeedMetrics {
            seed,
            duration_ns,
            overlap_events: 0,
            stale_unfenced_events: 0,
            stale_fenced_events: if fenced { Some(0) } else { None },
            lost_updates: 0,
            token_regressions: 0,
            leaked_regrants: 0,
            double_executions: None,
            acquisitions: 0,
            failed_acquisitions: 0,
            completed_sections: 0,
            releases: 0,
            failed_releases: 0,
            acquire_latency_us: new_histogram(),
            wait_us: new_histogram(),
            handoff_us: new_histogram(),
            unavailable_ns: 0,
            outage_ns: 0,
            fairness: None,
            messages: 0,
            client_messages: 0,
            notifications: 0,
            refused_attempts: 0,
            violations: Vec::new(),
            first_leaked_regrant: None,
        }
    }

    /// Whether any safety property failed in this seed. A leaked re-grant is not one: the lock
    /// stays with one client, and fencing still tells the writers apart.
    pub fn has_violation(&self) -> bool {
        self.overlap_events > 0
            || self.stale_unfenced_events > 0
            || self.stale_fenced_events.unwrap_or(0) > 0
            || self.lost_updates > 0
            || self.token_regressions > 0
            || self.double_executions.unwrap_or(0) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capped sink keeps exactly the prefix of the full list sorted stably by time.
    #[test]
    fn a_capped_sink_keeps_the_prefix_of_the_full_sorted_list() {
        let mut x: u64 = 3;
        let offers: Vec<(Nanos, String)> = (0..500)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 59) * 10, format!("v{i}"))
            })
            .collect();
        let mut full = ViolationSink::unlimited();
        let mut built = 0;
        let mut capped = ViolationSink::keeping(7);
        for (at, d) in &offers {
            full.offer(*at, "overlap", || d.clone());
            capped.offer(*at, "overlap", || {
                built += 1;
                d.clone()
            });
        }
        let full = full.into_sorted();
        assert_eq!(full.len(), 500);
        assert!(full.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        assert_eq!(capped.into_sorted(), full[..7].to_vec());
        assert!(built < 100, "texts built for {built} of 500 offers");
        assert!(ViolationSink::keeping(0).into_sorted().is_empty());
    }
}
