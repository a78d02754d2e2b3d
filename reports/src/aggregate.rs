//! One results row folded across seeds: [`AlgorithmTotals`].
//!
//! Seeds are added one at a time, in seed order, and memory stays bounded whatever the number of
//! seeds: counters, three merged hdrhistograms of fixed size, and capped lists (the first
//! [`MAX_FAILING_SEEDS`] failing seeds with their first violation, the first
//! [`MAX_PANICKED_SEEDS`] panicked seeds with their message). Derived values (throughput,
//! percentiles, ratios) are computed on demand, rounded as the results JSON reports them, and are
//! `None` where the denominator is zero (no runs, no acquisitions, no releases, an empty
//! histogram), so "no data" never reads as 0.

use hdrhistogram::Histogram;
use locksim_simulator::checker::metrics::new_histogram;
use locksim_simulator::checker::{SeedMetrics, Violation};
use locksim_simulator::time::{NS_PER_MS, NS_PER_SEC};
use serde::{Deserialize, Serialize};

use crate::num::json_dp;

/// How many failing seeds a row keeps (the first ones added).
pub const MAX_FAILING_SEEDS: usize = 10;
/// How many panicked seeds a row keeps with their message (the first ones added).
pub const MAX_PANICKED_SEEDS: usize = 10;

/// The resolution of the fairness sum: 2^-64. A Jain index lies in (0, 1], so one run adds at
/// most 2^64 units and a u128 holds 2^64 runs; an index at or above 2^-11 (at most 2048 clients)
/// is represented exactly.
pub const FAIRNESS_UNIT: u128 = 1 << 64;

/// A fairness index in units of [`FAIRNESS_UNIT`] (clamped to [0, 1]; NaN counts as 0).
fn fairness_units(j: f64) -> u128 {
    // `as` saturates, and the product of a value in [0, 1] and 2^64 is exact or rounds once.
    (j.clamp(0.0, 1.0) * FAIRNESS_UNIT as f64) as u128
}

/// One violation class across runs: runs showing it at least once, and events in all runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassCount {
    /// Runs that showed the class at least once.
    pub runs: u64,
    /// Events of the class over all runs.
    pub events: u64,
}

impl ClassCount {
    fn add(&mut self, events: u64) {
        if events > 0 {
            self.runs += 1;
            self.events += events;
        }
    }
}

/// A seed with at least one safety violation, and the first violation it recorded (in true-time
/// order, as the checkers list them; `None` if the checkers counted without detail).
#[derive(Clone, Debug, PartialEq)]
pub struct FailingSeed {
    /// The seed.
    pub seed: u64,
    /// Its first violation; `None` when the checkers kept no detail.
    pub first_violation: Option<Violation>,
}

/// Acquire latency in milliseconds (hdrhistogram over every acquisition of every run). Percentiles
/// and `max` are hdrhistogram's highest equivalent value at 3 significant digits (at most 0.1%
/// above the recorded value), in whole microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    /// The median, ms.
    pub p50: f64,
    /// The 90th percentile, ms.
    pub p90: f64,
    /// The 99th percentile, ms.
    pub p99: f64,
    /// The 99.9th percentile, ms.
    pub p999: f64,
    /// The longest, ms.
    pub max: f64,
    /// The mean of the histogram's values, ms.
    pub mean: f64,
}

/// Handoff time in milliseconds: from a holder's end to the next grant on the key, when another
/// client was waiting (hdrhistogram over every handoff of every run, as for [`LatencyMs`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandoffMs {
    /// The median, ms.
    pub p50: f64,
    /// The 99th percentile, ms.
    pub p99: f64,
    /// The longest, ms.
    pub max: f64,
}

/// Wait for a critical section in milliseconds: from a section attempt's first acquire call to
/// its grant, failed calls included (hdrhistogram over every attempt of every run, as for
/// [`LatencyMs`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitMs {
    /// The median, ms.
    pub p50: f64,
    /// The 90th percentile, ms.
    pub p90: f64,
    /// The 99th percentile, ms.
    pub p99: f64,
    /// The longest, ms.
    pub max: f64,
}

/// Jain's fairness index over the runs that have one: its mean, and the lowest and highest run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Mean over runs.
    pub mean: f64,
    /// The least fair run.
    pub min: f64,
    /// The fairest run.
    pub max: f64,
}

/// Totals for one results row (an algorithm or a variant) over every seed added.
#[derive(Clone, Debug)]
pub struct AlgorithmTotals {
    /// The row label (model name or variant name).
    pub label: String,
    /// The model's name (`redis`, `redlock`, …).
    pub model: String,
    /// The lock library preset the row runs (`redis-py-8`, `clientv3-3.5`, …; the model's
    /// `client`, resolved), `None` for a model without presets.
    pub library: Option<String>,
    /// The parameters that differ from the model's defaults, as JSON (see
    /// [`crate::json::params_json`]).
    pub params: serde_json::Value,
    /// Whether grants carry a fencing token; `false` reports `stale_fenced` as "cannot be fenced".
    pub fenced: bool,
    /// Notes on what this configuration does not model, shown under the table and in the JSON.
    pub limitations: Vec<String>,

    /// Runs completed (panicked seeds are not runs; see `panicked_runs`).
    pub runs: u64,
    /// Runs with any safety violation.
    pub failing_runs: u64,
    /// Simulated time summed over the runs, ns.
    pub duration_ns: u128,
    /// Overlapping holds of one key, at least one exclusive (V1): runs and pairs.
    pub overlap: ClassCount,
    /// Writes the unfenced resource accepted from a superseded grant (V2): runs and writes.
    pub stale_unfenced: ClassCount,
    /// The same writes that the fenced resource also accepted. Meaningful only when `fenced`.
    pub stale_fenced: ClassCount,
    /// Completed sections whose increment is missing from the final counter: runs and increments.
    pub lost_updates: ClassCount,
    /// Grants whose token was below the highest earlier on the same key, or equal to it and not a
    /// leaked re-grant: runs and grants.
    pub token_regressions: ClassCount,
    /// Grants of the highest token so far to the client granted it last, nobody else granted the
    /// key since (a leaked lock re-entered): runs and grants. Not a violation.
    pub leaked_regrants: ClassCount,
    /// Scheduled workload: runs of the job beyond the first in one period: runs and events.
    /// Stays at 0 for the loop (`scheduled` false).
    pub double_executions: ClassCount,
    /// Whether the rows' seeds ran a scheduled workload (`double_executions` applies); the
    /// outputs show the metric only then, so a loop's outputs are unchanged.
    pub scheduled: bool,
    /// Successful (non-nested) acquisitions over all runs.
    pub acquisitions: u64,
    /// Acquire calls that gave up over all runs.
    pub failed_acquisitions: u64,
    /// Holds ended by a release (critical sections completed) over all runs.
    pub completed_sections: u64,
    /// Non-nested release calls over all runs.
    pub releases: u64,
    /// Release calls that returned an error over all runs.
    pub failed_releases: u64,
    /// Messages sent on the simulated network, dropped ones included, over all runs.
    pub messages: u64,
    /// Watch or pub/sub wake-ups that reached a waiting client over all runs.
    pub notifications: u64,
    /// Lock requests a server refused (a failed INSERT, a SET NX on a taken key) over all runs.
    pub refused_attempts: u64,
    /// Time some client waited for a key and none held it, summed over keys and runs, ns.
    pub unavailable_ns: u128,
    /// Each run's longest stretch with a waiter and no holder, summed over runs, ns.
    pub outage_ns_sum: u128,
    /// The longest such stretch of any run, ns.
    pub outage_ns_max: u64,
    /// Jain's fairness index summed over the runs that have one, in units of
    /// [`FAIRNESS_UNIT`] (each run's index rounded to one, then summed as an integer): integer
    /// addition does not depend on the order, so totals folded on several machines and merged
    /// ([`AlgorithmTotals::absorb`]) give the same bytes as one machine's.
    pub fairness_sum_units: u128,
    /// Runs that have a fairness index (some section completed).
    pub fairness_runs: u64,
    /// The lowest and highest fairness index of any run (`None` before the first).
    pub fairness_range: Option<(f64, f64)>,
    /// Every acquisition's latency, from the acquire call to its grant, µs.
    pub acquire_latency_us: Histogram<u64>,
    /// Every section attempt's wait, from its first acquire call to its grant, µs.
    pub wait_us: Histogram<u64>,
    /// Every handoff's time (see [`HandoffMs`]), µs.
    pub handoff_us: Histogram<u64>,
    /// The first [`MAX_FAILING_SEEDS`] failing seeds, in the order added.
    pub failing_seeds: Vec<FailingSeed>,
    /// The first [`MAX_FAILING_SEEDS`] seeds with a leaked re-grant, each with its first one
    /// (kind `leaked_regrant`), in the order added.
    pub leaked_seeds: Vec<FailingSeed>,
    /// Seeds whose run panicked.
    pub panicked_runs: u64,
    /// The first [`MAX_PANICKED_SEEDS`] panicked seeds with their panic message, in the order added.
    pub panicked: Vec<(u64, String)>,
}

impl AlgorithmTotals {
    /// A row with no seed added yet. `params_json` holds the parameters that differ from the
    /// model's defaults ([`crate::json::params_json`]); `fenced` says whether grants carry a
    /// fencing token.
    pub fn new(
        label: impl Into<String>,
        model: impl Into<String>,
        params_json: serde_json::Value,
        fenced: bool,
    ) -> Self {
        AlgorithmTotals {
            label: label.into(),
            model: model.into(),
            library: None,
            params: params_json,
            fenced,
            limitations: Vec::new(),
            runs: 0,
            failing_runs: 0,
            duration_ns: 0,
            overlap: ClassCount::default(),
            stale_unfenced: ClassCount::default(),
            stale_fenced: ClassCount::default(),
            lost_updates: ClassCount::default(),
            token_regressions: ClassCount::default(),
            leaked_regrants: ClassCount::default(),
            double_executions: ClassCount::default(),
            scheduled: false,
            acquisitions: 0,
            failed_acquisitions: 0,
            completed_sections: 0,
            releases: 0,
            failed_releases: 0,
            messages: 0,
            notifications: 0,
            refused_attempts: 0,
            unavailable_ns: 0,
            outage_ns_sum: 0,
            outage_ns_max: 0,
            fairness_sum_units: 0,
            fairness_runs: 0,
            fairness_range: None,
            acquire_latency_us: new_histogram(),
            wait_us: new_histogram(),
            handoff_us: new_histogram(),
            failing_seeds: Vec::new(),
            leaked_seeds: Vec::new(),
            panicked_runs: 0,
            panicked: Vec::new(),
        }
    }

    /// Sets the library preset the row runs (builder style).
    pub fn with_library(mut self, library: Option<String>) -> Self {
        self.library = library;
        self
    }

    /// Sets the limitation notes (builder style).
    pub fn with_limitations(mut self, limitations: Vec<String>) -> Self {
        self.limitations = limitations;
        self
    }

    /// Folds one seed's measurements in. Call in seed order.
    pub fn add(&mut self, m: &SeedMetrics) {
        self.runs += 1;
        self.duration_ns += m.duration_ns as u128;
        self.overlap.add(m.overlap_events);
        self.stale_unfenced.add(m.stale_unfenced_events);
        if self.fenced {
            self.stale_fenced.add(m.stale_fenced_events.unwrap_or(0));
        }
        self.lost_updates.add(m.lost_updates);
        self.token_regressions.add(m.token_regressions);
        self.leaked_regrants.add(m.leaked_regrants);
        if let Some(d) = m.double_executions {
            self.scheduled = true;
            self.double_executions.add(d);
        }
        self.acquisitions += m.acquisitions;
        self.failed_acquisitions += m.failed_acquisitions;
        self.completed_sections += m.completed_sections;
        self.releases += m.releases;
        self.failed_releases += m.failed_releases;
        self.messages += m.messages;
        self.notifications += m.notifications;
        self.refused_attempts += m.refused_attempts;
        self.unavailable_ns += m.unavailable_ns as u128;
        self.outage_ns_sum += m.outage_ns as u128;
        self.outage_ns_max = self.outage_ns_max.max(m.outage_ns);
        if let Some(j) = m.fairness {
            self.fairness_sum_units += fairness_units(j);
            self.fairness_runs += 1;
            self.fairness_range = Some(self.fairness_range.map_or((j, j), |(lo, hi)| (lo.min(j), hi.max(j))));
        }
        merge(&mut self.acquire_latency_us, &m.acquire_latency_us);
        merge(&mut self.wait_us, &m.wait_us);
        merge(&mut self.handoff_us, &m.handoff_us);
        if m.leaked_regrants > 0 && self.leaked_seeds.len() < MAX_FAILING_SEEDS {
            self.leaked_seeds.push(FailingSeed { seed: m.seed, first_violation: m.first_leaked_regrant.clone() });
        }
        if m.has_violation() {
            self.failing_runs += 1;
            if self.failing_seeds.len() < MAX_FAILING_SEEDS {
                self.failing_seeds.push(FailingSeed { seed: m.seed, first_violation: m.violations.first().cloned() });
            }
        }
    }

    /// Folds in `later`, the totals of the same row over the seeds that come right after this
    /// one's (a later shard, a later chunk), as if those seeds had been added here one by one:
    /// counters and histograms add, extremes combine, and the capped lists keep their first
    /// entries in seed order. The result is identical, field for field, to adding every seed to
    /// one row. The row's identity (label, model, params, fencing, limitations) stays this one's.
    pub fn absorb(&mut self, later: &AlgorithmTotals) {
        self.runs += later.runs;
        self.failing_runs += later.failing_runs;
        self.duration_ns += later.duration_ns;
        for (mine, theirs) in [
            (&mut self.overlap, later.overlap),
            (&mut self.stale_unfenced, later.stale_unfenced),
            (&mut self.stale_fenced, later.stale_fenced),
            (&mut self.lost_updates, later.lost_updates),
            (&mut self.token_regressions, later.token_regressions),
            (&mut self.leaked_regrants, later.leaked_regrants),
            (&mut self.double_executions, later.double_executions),
        ] {
            mine.runs += theirs.runs;
            mine.events += theirs.events;
        }
        self.scheduled |= later.scheduled;
        self.acquisitions += later.acquisitions;
        self.failed_acquisitions += later.failed_acquisitions;
        self.completed_sections += later.completed_sections;
        self.releases += later.releases;
        self.failed_releases += later.failed_releases;
        self.messages += later.messages;
        self.notifications += later.notifications;
        self.refused_attempts += later.refused_attempts;
        self.unavailable_ns += later.unavailable_ns;
        self.outage_ns_sum += later.outage_ns_sum;
        self.outage_ns_max = self.outage_ns_max.max(later.outage_ns_max);
        self.fairness_sum_units += later.fairness_sum_units;
        self.fairness_runs += later.fairness_runs;
        self.fairness_range = match (self.fairness_range, later.fairness_range) {
            (Some((lo, hi)), Some((l, h))) => Some((lo.min(l), hi.max(h))),
            (a, b) => a.or(b),
        };
        merge(&mut self.acquire_latency_us, &later.acquire_latency_us);
        merge(&mut self.wait_us, &later.wait_us);
        merge(&mut self.handoff_us, &later.handoff_us);
        let room = MAX_FAILING_SEEDS.saturating_sub(self.failing_seeds.len());
        self.failing_seeds.extend(later.failing_seeds.iter().take(room).cloned());
        let room = MAX_FAILING_SEEDS.saturating_sub(self.leaked_seeds.len());
        self.leaked_seeds.extend(later.leaked_seeds.iter().take(room).cloned());
        self.panicked_runs += later.panicked_runs;
        let room = MAX_PANICKED_SEEDS.saturating_sub(self.panicked.len());
        self.panicked.extend(later.panicked.iter().take(room).cloned());
    }

    /// Records a seed whose run panicked (it counts in `panicked_runs`, not in `runs`).
    pub fn add_panic(&mut self, seed: u64, message: impl Into<String>) {
        self.panicked_runs += 1;
        if self.panicked.len() < MAX_PANICKED_SEEDS {
            self.panicked.push((seed, message.into()));
        }
    }

    /// The first failing seed, the one the replay command names.
    pub fn first_failing_seed(&self) -> Option<u64> {
        self.failing_seeds.first().map(|f| f.seed)
    }

    /// Simulated seconds over every run.
    pub fn simulated_s(&self) -> f64 {
        self.duration_ns as f64 / NS_PER_SEC as f64
    }

    fn per_s(&self, count: u64) -> Option<f64> {
        if self.duration_ns == 0 {
            None
        } else {
            Some(json_dp(count as f64 / self.simulated_s()))
        }
    }

    /// Completed critical sections per simulated second (over the sum of the runs' durations).
    pub fn throughput_per_s(&self) -> Option<f64> {
        self.per_s(self.completed_sections)
    }

    /// Lock requests refused by a server per simulated second.
    pub fn refused_attempts_per_s(&self) -> Option<f64> {
        self.per_s(self.refused_attempts)
    }

    /// Acquire latency percentiles in ms; `None` with no acquisition recorded.
    pub fn acquire_latency_ms(&self) -> Option<LatencyMs> {
        let h = &self.acquire_latency_us;
        if h.is_empty() {
            return None;
        }
        Some(LatencyMs {
            p50: q_ms(h, 0.5),
            p90: q_ms(h, 0.9),
            p99: q_ms(h, 0.99),
            p999: q_ms(h, 0.999),
            max: us_ms(h.max()),
            mean: json_dp(h.mean() / 1000.0),
        })
    }

    /// The acquire-latency distribution as (ms, fraction of acquisitions at or below it) points at
    /// fixed quantiles (0.1%, 1%, 2% … 99%, 99.5%, 99.9%, 99.99%, 100%), for CDF charts; repeated
    /// points are dropped. Empty with no acquisition recorded.
    pub fn acquire_latency_cdf_ms(&self) -> Vec<[f64; 2]> {
        cdf_ms(&self.acquire_latency_us)
    }

    /// Wait percentiles in ms; `None` with no section attempt recorded.
    pub fn wait_ms(&self) -> Option<WaitMs> {
        let h = &self.wait_us;
        if h.is_empty() {
            return None;
        }
        Some(WaitMs { p50: q_ms(h, 0.5), p90: q_ms(h, 0.9), p99: q_ms(h, 0.99), max: us_ms(h.max()) })
    }

    /// The wait distribution as CDF points, at the quantiles of [`Self::acquire_latency_cdf_ms`].
    pub fn wait_cdf_ms(&self) -> Vec<[f64; 2]> {
        cdf_ms(&self.wait_us)
    }

    /// Handoff percentiles in ms; `None` with no handoff recorded.
    pub fn handoff_ms(&self) -> Option<HandoffMs> {
        let h = &self.handoff_us;
        if h.is_empty() {
            return None;
        }
        Some(HandoffMs { p50: q_ms(h, 0.5), p99: q_ms(h, 0.99), max: us_ms(h.max()) })
    }

    /// Mean unavailability per run in ms.
    pub fn unavailable_ms(&self) -> Option<f64> {
        if self.runs == 0 {
            None
        } else {
            Some(json_dp(self.unavailable_ns as f64 / NS_PER_MS as f64 / self.runs as f64))
        }
    }

    /// Mean over runs of each run's longest stretch with a waiter and no holder, ms.
    pub fn outage_ms(&self) -> Option<f64> {
        if self.runs == 0 {
            None
        } else {
            Some(json_dp(self.outage_ns_sum as f64 / NS_PER_MS as f64 / self.runs as f64))
        }
    }

    /// The longest stretch with a waiter and no holder in any run, ms.
    pub fn outage_ms_max(&self) -> Option<f64> {
        (self.runs > 0).then(|| json_dp(self.outage_ns_max as f64 / NS_PER_MS as f64))
    }

    /// Jain's fairness index: mean, min and max over the runs that have one; `None` with none.
    pub fn fairness(&self) -> Option<Fairness> {
        let (min, max) = self.fairness_range?;
        Some(Fairness {
            mean: json_dp(self.fairness_sum_units as f64 / FAIRNESS_UNIT as f64 / self.fairness_runs as f64),
            min: json_dp(min),
            max: json_dp(max),
        })
    }

    /// Messages sent per successful acquisition.
    pub fn messages_per_acquisition(&self) -> Option<f64> {
        ratio(self.messages, self.acquisitions)
    }

    /// Watch or pub/sub wake-ups per release (the herd effect).
    pub fn notifications_per_release(&self) -> Option<f64> {
        ratio(self.notifications, self.releases)
    }
}

/// A distribution as (ms, fraction at or below it) points at fixed quantiles (0.1%, 1%, 2% …
/// 99%, 99.5%, 99.9%, 99.99%, 100%); repeated points are dropped. Empty for an empty histogram.
fn cdf_ms(h: &Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut quantiles = vec![0.001];
    quantiles.extend((1..100).map(|p| p as f64 / 100.0));
    quantiles.extend([0.995, 0.999, 0.9999, 1.0]);
    let mut points: Vec<[f64; 2]> = Vec::with_capacity(quantiles.len());
    for q in quantiles {
        let point = [q_ms(h, q), q];
        match points.last_mut() {
            // Same value: keep the higher fraction only, so the curve has one point per step.
            Some(last) if last[0] == point[0] => last[1] = q,
            _ => points.push(point),
        }
    }
    points
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    if den == 0 {
        None
    } else {
        Some(json_dp(num as f64 / den as f64))
    }
}

fn us_ms(us: u64) -> f64 {
    json_dp(us as f64 / 1000.0)
}

fn q_ms(h: &Histogram<u64>, q: f64) -> f64 {
    us_ms(h.value_at_quantile(q))
}

/// Merges `src` into `dst`; histograms from [`new_histogram`] share bounds so `add` succeeds, and
/// anything else is re-recorded value by value, saturating at the bounds.
fn merge(dst: &mut Histogram<u64>, src: &Histogram<u64>) {
    if src.is_empty() {
        return;
    }
    if dst.add(src).is_err() {
        for v in src.iter_recorded() {
            dst.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use locksim_simulator::checker::metrics::record_ns;

    const S: u64 = NS_PER_SEC;
    const MS: u64 = NS_PER_MS;

    /// A clean 10 s seed: 100 acquisitions of 1 ms, 90 sections, 2 handoffs of 2 ms (both exact
    /// in the histogram: values below 2048 µs are recorded at 1 µs resolution).
    pub(crate) fn clean(seed: u64, fenced: bool) -> SeedMetrics {
        let mut m = SeedMetrics::empty(seed, 10 * S, fenced);
        m.acquisitions = 100;
        m.failed_acquisitions = 1;
        m.completed_sections = 90;
        m.releases = 90;
        m.messages = 1000;
        m.notifications = 45;
        m.refused_attempts = 20;
        m.unavailable_ns = 50 * MS;
        for _ in 0..100 {
            record_ns(&mut m.acquire_latency_us, MS);
        }
        record_ns(&mut m.handoff_us, 2 * MS);
        record_ns(&mut m.handoff_us, 2 * MS);
        // Waits of 1 ms (the 100 sections) and one of 2 ms (a failed call, then a retry).
        for _ in 0..100 {
            record_ns(&mut m.wait_us, MS);
        }
        record_ns(&mut m.wait_us, 2 * MS);
        m.failed_releases = 2;
        m.outage_ns = 40 * MS;
        m.fairness = Some(0.9);
        m
    }

    /// A clean seed plus one overlap, one stale write (both resources) and a lost update.
    pub(crate) fn failing(seed: u64, fenced: bool) -> SeedMetrics {
        let mut m = clean(seed, fenced);
        m.overlap_events = 2;
        m.stale_unfenced_events = 1;
        if fenced {
            m.stale_fenced_events = Some(1);
        }
        m.lost_updates = 3;
        m.leaked_regrants = 2;
        m.first_leaked_regrant = Some(Violation {
            at_ns: 2_000 * MS,
            kind: "leaked_regrant",
            detail: format!("client-3 granted token 7 again (seed {seed})"),
        });
        m.outage_ns = 400 * MS;
        m.fairness = Some(0.5);
        m.violations.push(Violation {
            at_ns: 1_500 * MS,
            kind: "overlap",
            detail: format!("client-1 and client-2 both held lock-0 (seed {seed})"),
        });
        record_ns(&mut m.acquire_latency_us, 400 * MS);
        m
    }

    #[test]
    fn folds_counters_and_histograms() {
        let mut t = AlgorithmTotals::new("redis", "redis", serde_json::json!({}), true);
        t.add(&clean(0, true));
        t.add(&failing(1, true));
        t.add(&clean(2, true));
        t.add(&failing(3, true));
        assert_eq!(t.runs, 4);
        assert_eq!(t.failing_runs, 2);
        assert_eq!(t.overlap, ClassCount { runs: 2, events: 4 });
        assert_eq!(t.stale_unfenced, ClassCount { runs: 2, events: 2 });
        assert_eq!(t.stale_fenced, ClassCount { runs: 2, events: 2 });
        assert_eq!(t.lost_updates, ClassCount { runs: 2, events: 6 });
        assert_eq!(t.token_regressions, ClassCount::default());
        assert_eq!(t.acquisitions, 400);
        assert_eq!(t.failed_acquisitions, 4);
        // 360 sections over 40 simulated seconds.
        assert_eq!(t.throughput_per_s(), Some(9.0));
        assert_eq!(t.refused_attempts_per_s(), Some(2.0));
        assert_eq!(t.unavailable_ms(), Some(50.0));
        assert_eq!(t.messages_per_acquisition(), Some(10.0));
        assert_eq!(t.notifications_per_release(), Some(0.5));
        let l = t.acquire_latency_ms().unwrap();
        assert_eq!(t.acquire_latency_us.len(), 402);
        assert_eq!(l.p50, 1.0);
        assert_eq!(l.p99, 1.0);
        assert!((l.max - 400.0).abs() < 0.5, "{l:?}");
        assert!((l.mean - (400.0 + 800.0) / 402.0).abs() < 0.01, "{l:?}");
        let h = t.handoff_ms().unwrap();
        assert_eq!((h.p50, h.p99, h.max), (2.0, 2.0, 2.0));
        // Above 2048 µs values share buckets: a percentile reports the highest equivalent value
        // (hdrhistogram's convention), within 0.1%.
        let mut t2 = AlgorithmTotals::new("x", "x", serde_json::json!({}), true);
        let mut m = SeedMetrics::empty(0, S, true);
        record_ns(&mut m.handoff_us, 5 * MS);
        t2.add(&m);
        assert_eq!(t2.handoff_ms().unwrap().p50, 5.003);
        assert_eq!(t.first_failing_seed(), Some(1));
        assert_eq!(t.failing_seeds.iter().map(|f| f.seed).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(t.failing_seeds[1].first_violation.as_ref().unwrap().kind, "overlap");
    }

    /// The verdict and liveness additions: leaked re-grants in runs (not failing ones), failed
    /// releases, the outage as a mean and a max over runs, fairness as mean, min and max, and the
    /// wait's percentiles.
    #[test]
    fn folds_leaks_outage_fairness_and_waits() {
        let mut t = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        t.add(&clean(0, true));
        let mut leaky = clean(1, true);
        leaky.leaked_regrants = 5;
        leaky.outage_ns = 20_000 * MS;
        leaky.fairness = Some(0.1);
        t.add(&leaky);
        let mut idle = clean(2, true);
        idle.fairness = None;
        t.add(&idle);
        assert_eq!(t.leaked_regrants, ClassCount { runs: 1, events: 5 });
        assert_eq!(t.leaked_seeds.iter().map(|f| f.seed).collect::<Vec<_>>(), vec![1]);
        assert_eq!(t.failing_runs, 0, "a leaked re-grant is not a violation");
        assert_eq!(t.failed_releases, 6);
        // (40 + 20000 + 40) / 3 ms, and the longest.
        assert_eq!(t.outage_ms(), Some(6693.333));
        assert_eq!(t.outage_ms_max(), Some(20000.0));
        // Over the two runs with an index: (0.9 + 0.1) / 2.
        assert_eq!(t.fairness(), Some(Fairness { mean: 0.5, min: 0.1, max: 0.9 }));
        let w = t.wait_ms().unwrap();
        assert_eq!((w.p50, w.p90, w.p99), (1.0, 1.0, 1.0));
        assert_eq!(w.max, 2.0);
        let cdf = t.wait_cdf_ms();
        assert_eq!(cdf.last().unwrap(), &[2.0, 1.0]);
    }

    #[test]
    fn capped_lists_and_panics() {
        let mut t = AlgorithmTotals::new("redlock", "redlock", serde_json::json!({}), false);
        for seed in 0..50 {
            t.add(&failing(seed, false));
            t.add_panic(1000 + seed, format!("boom {seed}"));
        }
        assert_eq!(t.runs, 50);
        assert_eq!(t.failing_runs, 50);
        assert_eq!(t.failing_seeds.len(), MAX_FAILING_SEEDS);
        assert_eq!(t.failing_seeds.last().unwrap().seed, 9);
        assert_eq!(t.panicked_runs, 50);
        assert_eq!(t.panicked.len(), MAX_PANICKED_SEEDS);
        assert_eq!(t.panicked[0], (1000, "boom 0".to_string()));
        // Unfenced: the fenced class is never counted.
        assert_eq!(t.stale_fenced, ClassCount::default());
    }

    #[test]
    fn empty_totals_have_no_derived_values() {
        let t = AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        assert_eq!(t.throughput_per_s(), None);
        assert_eq!(t.acquire_latency_ms(), None);
        assert_eq!(t.handoff_ms(), None);
        assert_eq!(t.unavailable_ms(), None);
        assert_eq!(t.messages_per_acquisition(), None);
        assert_eq!(t.notifications_per_release(), None);
        assert_eq!(t.wait_ms(), None);
        assert_eq!(t.outage_ms(), None);
        assert_eq!(t.outage_ms_max(), None);
        assert_eq!(t.fairness(), None);
        assert_eq!(t.first_failing_seed(), None);
    }
}
