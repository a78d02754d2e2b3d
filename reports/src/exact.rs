//! A results row's folded state ([`AlgorithmTotals`]) written to JSON and read back exactly, for
//! the files that carry unfinished work between processes: a shard's partial results
//! ([`crate::shard`]) and a sweep's record of finished points ([`crate::sweep::progress`]).
//!
//! Exact means that reading the state back and folding more seeds in, or merging it with other
//! states ([`AlgorithmTotals::absorb`]), gives the same bytes as one process folding every seed:
//! integers are written as integers (`u128` as decimal strings, which JSON readers keep whole),
//! floats as their IEEE-754 bits, and each histogram as hdrhistogram's V2 serialisation in
//! base64, which holds every count. The row's identity (model, parameters, fencing, limitations)
//! is not stored: the reader rebuilds it from the scenario text, so nothing is parsed back from a
//! rounded decimal.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use locksim_simulator::checker::metrics::new_histogram;
use locksim_simulator::checker::Violation;
use serde::{Deserialize, Serialize};

use crate::aggregate::{AlgorithmTotals, ClassCount, FailingSeed};

/// The violation kinds the checkers report (and `leaked_regrant`); a state naming another kind
/// comes from a different build and is refused.
const KINDS: &[&str] = &[
    "overlap",
    "stale_unfenced",
    "stale_fenced",
    "lost_update",
    "token_regression",
    "leaked_regrant",
    "double_execution",
];

/// A violation class: `[runs, events]`.
type ClassState = [u64; 2];

/// A seed kept in a row's list of failing (or leaked, or panicked) seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedNote {
    /// The seed.
    pub seed: u64,
    /// Its first violation's true time, ns (absent when the checkers kept no detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<u64>,
    /// Its first violation's kind, or `panic` for a panicked seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The violation's detail, or the panic's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Everything [`AlgorithmTotals`] folds, exactly; see the module documentation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TotalsState {
    /// The row's label, checked against the scenario's row when read back.
    pub label: String,
    /// Runs completed.
    pub runs: u64,
    /// Runs with a safety violation.
    pub failing_runs: u64,
    /// Simulated time over the runs, ns (decimal).
    pub duration_ns: String,
    /// `[runs, events]` of overlap, stale unfenced, stale fenced, lost updates, token regressions
    /// and leaked re-grants, in that order.
    pub classes: [ClassState; 6],
    /// Successful acquisitions.
    pub acquisitions: u64,
    /// Acquire calls that gave up.
    pub failed_acquisitions: u64,
    /// Critical sections completed.
    pub completed_sections: u64,
    /// Release calls.
    pub releases: u64,
    /// Release calls that failed.
    pub failed_releases: u64,
    /// Messages sent.
    pub messages: u64,
    /// Wake-ups.
    pub notifications: u64,
    /// Refused lock requests.
    pub refused_attempts: u64,
    /// Unavailable time, ns (decimal).
    pub unavailable_ns: String,
    /// Sum of each run's longest outage, ns (decimal).
    pub outage_ns_sum: String,
    /// The longest outage, ns.
    pub outage_ns_max: u64,
    /// Fairness sum in units of [`crate::aggregate::FAIRNESS_UNIT`] (decimal).
    pub fairness_sum_units: String,
    /// Runs with a fairness index.
    pub fairness_runs: u64,
    /// Lowest and highest fairness index as `f64` bits.
    pub fairness_range_bits: Option<[u64; 2]>,
    /// Acquire latency histogram (µs): V2, base64.
    pub acquire_latency_us: String,
    /// Wait histogram (µs): V2, base64.
    pub wait_us: String,
    /// Handoff histogram (µs): V2, base64.
    pub handoff_us: String,
    /// The first failing seeds with their first violation.
    pub failing_seeds: Vec<SeedNote>,
    /// The first seeds with a leaked re-grant.
    pub leaked_seeds: Vec<SeedNote>,
    /// Seeds that panicked.
    pub panicked_runs: u64,
    /// The first panicked seeds with their message.
    pub panicked: Vec<SeedNote>,
    /// Scheduled workload: `[runs, events]` of double executions; absent for the loop (and in
    /// states written before the field), read as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub double_executions: Option<ClassState>,
}

fn class(c: ClassCount) -> ClassState {
    [c.runs, c.events]
}

fn unclass(c: ClassState) -> ClassCount {
    ClassCount { runs: c[0], events: c[1] }
}

fn histogram_text(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(h, &mut bytes).expect("a histogram serialises into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn histogram(text: &str, what: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram `{what}`: not base64: {e}"))?;
    let read: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram `{what}`: not an hdrhistogram V2 serialisation: {e:?}"))?;
    // Into a histogram with the bounds every seed uses, so later merges take the same path.
    let mut h = new_histogram();
    h.add(&read).map_err(|e| format!("histogram `{what}`: outside the simulator's bounds: {e:?}"))?;
    Ok(h)
}

fn int(text: &str, what: &str) -> Result<u128, String> {
    text.parse().map_err(|_| format!("`{what}`: expected a whole number as a string, found {text:?}"))
}

fn note(f: &FailingSeed) -> SeedNote {
    match &f.first_violation {
        Some(v) => SeedNote {
            seed: f.seed,
            at_ns: Some(v.at_ns),
            kind: Some(v.kind.to_string()),
            detail: Some(v.detail.clone()),
        },
        None => SeedNote { seed: f.seed, at_ns: None, kind: None, detail: None },
    }
}

fn unnote(n: &SeedNote) -> Result<FailingSeed, String> {
    let first_violation = match (&n.kind, n.at_ns) {
        (Some(kind), Some(at_ns)) => {
            let kind = KINDS.iter().find(|k| *k == kind).ok_or_else(|| {
                format!("seed {}: unknown violation kind {kind:?}; this build knows {}", n.seed, KINDS.join(", "))
            })?;
            Some(Violation { at_ns, kind, detail: n.detail.clone().unwrap_or_default() })
        }
        _ => None,
    };
    Ok(FailingSeed { seed: n.seed, first_violation })
}

impl TotalsState {
    /// The state of `t`.
    pub fn of(t: &AlgorithmTotals) -> Self {
        TotalsState {
            label: t.label.clone(),
            runs: t.runs,
            failing_runs: t.failing_runs,
            duration_ns: t.duration_ns.to_string(),
            classes: [
                class(t.overlap),
                class(t.stale_unfenced),
                class(t.stale_fenced),
                class(t.lost_updates),
                class(t.token_regressions),
                class(t.leaked_regrants),
            ],
            acquisitions: t.acquisitions,
            failed_acquisitions: t.failed_acquisitions,
            completed_sections: t.completed_sections,
            releases: t.releases,
            failed_releases: t.failed_releases,
            messages: t.messages,
            notifications: t.notifications,
            refused_attempts: t.refused_attempts,
            unavailable_ns: t.unavailable_ns.to_string(),
            outage_ns_sum: t.outage_ns_sum.to_string(),
            outage_ns_max: t.outage_ns_max,
            fairness_sum_units: t.fairness_sum_units.to_string(),
            fairness_runs: t.fairness_runs,
            fairness_range_bits: t.fairness_range.map(|(lo, hi)| [lo.to_bits(), hi.to_bits()]),
            acquire_latency_us: histogram_text(&t.acquire_latency_us),
            wait_us: histogram_text(&t.wait_us),
            handoff_us: histogram_text(&t.handoff_us),
            failing_seeds: t.failing_seeds.iter().map(note).collect(),
            leaked_seeds: t.leaked_seeds.iter().map(note).collect(),
            panicked_runs: t.panicked_runs,
            panicked: t
                .panicked
                .iter()
                .map(|(seed, message)| SeedNote {
                    seed: *seed,
                    at_ns: None,
                    kind: Some("panic".into()),
                    detail: Some(message.clone()),
                })
                .collect(),
            double_executions: t.scheduled.then(|| class(t.double_executions)),
        }
    }

    /// Folds this state into `row` (a row of the same label, holding the seeds before this
    /// state's), as [`AlgorithmTotals::absorb`] does. Fails, naming the field, on a state that
    /// does not read back (another label, a bad number or histogram, an unknown kind).
    pub fn absorb_into(&self, row: &mut AlgorithmTotals) -> Result<(), String> {
        if self.label != row.label {
            return Err(format!("holds row `{}` where the scenario has `{}`", self.label, row.label));
        }
        let mut t = AlgorithmTotals::new(row.label.clone(), row.model.clone(), serde_json::Value::Null, row.fenced);
        t.runs = self.runs;
        t.failing_runs = self.failing_runs;
        t.duration_ns = int(&self.duration_ns, "duration_ns")?;
        let [overlap, stale_unfenced, stale_fenced, lost_updates, token_regressions, leaked_regrants] = self.classes;
        t.overlap = unclass(overlap);
        t.stale_unfenced = unclass(stale_unfenced);
        t.stale_fenced = unclass(stale_fenced);
        t.lost_updates = unclass(lost_updates);
        t.token_regressions = unclass(token_regressions);
        t.leaked_regrants = unclass(leaked_regrants);
        t.acquisitions = self.acquisitions;
        t.failed_acquisitions = self.failed_acquisitions;
        t.completed_sections = self.completed_sections;
        t.releases = self.releases;
        t.failed_releases = self.failed_releases;
        t.messages = self.messages;
        t.notifications = self.notifications;
        t.refused_attempts = self.refused_attempts;
        t.unavailable_ns = int(&self.unavailable_ns, "unavailable_ns")?;
        t.outage_ns_sum = int(&self.outage_ns_sum, "outage_ns_sum")?;
        t.outage_ns_max = self.outage_ns_max;
        t.fairness_sum_units = int(&self.fairness_sum_units, "fairness_sum_units")?;
        t.fairness_runs = self.fairness_runs;
        t.fairness_range = self.fairness_range_bits.map(|[lo, hi]| (f64::from_bits(lo), f64::from_bits(hi)));
        t.acquire_latency_us = histogram(&self.acquire_latency_us, "acquire_latency_us")?;
        t.wait_us = histogram(&self.wait_us, "wait_us")?;
        t.handoff_us = histogram(&self.handoff_us, "handoff_us")?;
        t.failing_seeds = self.failing_seeds.iter().map(unnote).collect::<Result<_, _>>()?;
        t.leaked_seeds = self.leaked_seeds.iter().map(unnote).collect::<Result<_, _>>()?;
        t.panicked_runs = self.panicked_runs;
        t.panicked = self.panicked.iter().map(|n| (n.seed, n.detail.clone().unwrap_or_default())).collect();
        if let Some(c) = self.double_executions {
            t.scheduled = true;
            t.double_executions = unclass(c);
        }
        row.absorb(&t);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::{clean, failing};
    use crate::json::AlgorithmJson;

    fn row() -> AlgorithmTotals {
        AlgorithmTotals::new("redis", "redis", serde_json::json!({"ttl_ms": 1000}), true)
    }

    /// Every field the results JSON shows, and every folded field, as one string.
    fn everything(t: &AlgorithmTotals) -> String {
        let json = serde_json::to_string(&AlgorithmJson::from_totals(t, "f.toml")).unwrap();
        format!("{json}\n{}", serde_json::to_string(&TotalsState::of(t)).unwrap())
    }

    fn seed(s: u64) -> locksim_simulator::checker::SeedMetrics {
        let mut m = if s % 3 == 1 { failing(s, true) } else { clean(s, true) };
        // Fairness values whose float sum depends on the order they are added in.
        m.fairness = Some(0.1 + (s as f64) * 0.013_7);
        m.outage_ns += s * 1_000_003;
        m
    }

    /// Folding seeds 0..40 in one row equals folding any split of them into consecutive parts,
    /// writing each part's state to JSON, reading it back and absorbing the parts in order.
    #[test]
    fn split_fold_serialise_merge_equals_one_fold() {
        let mut whole = row();
        for s in 0..40 {
            whole.add(&seed(s));
        }
        for cuts in [vec![0, 40], vec![0, 20, 40], vec![0, 1, 13, 14, 39, 40], vec![0, 0, 40, 40]] {
            let mut merged = row();
            for w in cuts.windows(2) {
                let mut part = row();
                for s in w[0]..w[1] {
                    part.add(&seed(s));
                }
                let text = serde_json::to_string(&TotalsState::of(&part)).unwrap();
                let back: TotalsState = serde_json::from_str(&text).unwrap();
                back.absorb_into(&mut merged).unwrap();
            }
            assert_eq!(everything(&merged), everything(&whole), "cuts {cuts:?}");
        }
        // The capped list kept the first failing seeds across part boundaries.
        assert_eq!(whole.failing_seeds.len(), crate::MAX_FAILING_SEEDS);
        assert_eq!(whole.failing_seeds[0].seed, 1);
    }

    /// `double_executions` exists only for a scheduled workload: in the JSON, the table and the
    /// exact state, and it folds, serialises and merges like the other classes.
    #[test]
    fn double_executions_show_only_for_a_scheduled_workload_and_merge_exactly() {
        let scheduled = |s: u64| {
            let mut m = seed(s);
            m.double_executions = Some(s % 2);
            m
        };
        let mut whole = row();
        for s in 0..10 {
            whole.add(&scheduled(s));
        }
        assert!(whole.scheduled);
        assert_eq!(whole.double_executions, ClassCount { runs: 5, events: 5 });
        let mut merged = row();
        for part in [0..4, 4..10] {
            let mut t = row();
            part.for_each(|s| t.add(&scheduled(s)));
            let state: TotalsState =
                serde_json::from_str(&serde_json::to_string(&TotalsState::of(&t)).unwrap()).unwrap();
            state.absorb_into(&mut merged).unwrap();
        }
        assert_eq!(everything(&merged), everything(&whole));
        let json = serde_json::to_value(AlgorithmJson::from_totals(&whole, "f.toml")).unwrap();
        assert_eq!(json["double_executions"]["runs"], 5);
        let table = crate::table::render_table("f.toml", std::slice::from_ref(&whole), &[]);
        assert!(table.contains("executions"), "{table}");
        // The loop: no field, no column, no state.
        let mut looped = row();
        looped.add(&seed(1));
        let json = serde_json::to_value(AlgorithmJson::from_totals(&looped, "f.toml")).unwrap();
        assert!(json.get("double_executions").is_none(), "{json}");
        assert!(!serde_json::to_string(&TotalsState::of(&looped)).unwrap().contains("double"));
        let table = crate::table::render_table("f.toml", std::slice::from_ref(&looped), &[]);
        assert!(!table.contains("executions"), "{table}");
    }

    #[test]
    fn a_foreign_state_is_refused_naming_what() {
        let mut t = row();
        t.add(&failing(0, true));
        let mut state = TotalsState::of(&t);
        let mut other = AlgorithmTotals::new("db", "db", serde_json::Value::Null, true);
        assert!(state.absorb_into(&mut other).unwrap_err().contains("`redis`"));
        state.failing_seeds[0].kind = Some("martian".into());
        assert!(state.absorb_into(&mut row()).unwrap_err().contains("martian"));
        state.wait_us = "!!".into();
        assert!(state.absorb_into(&mut row()).unwrap_err().contains("wait_us"));
    }
}
