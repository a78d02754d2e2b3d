//! One row of the sweep table, typed: the fields of a `sweep.csv` row after the parameters', read
//! from a point's results JSON row. `sweep.csv`, the summaries in `sweep.json` and the columns of
//! `sweep.parquet` are all written from it, so the three agree by construction.

use serde::Serialize;

use crate::AlgorithmJson;

/// A results row cut down to the table's fields. A field with no data is `None` (an empty CSV
/// cell, `null` in JSON, a null in Parquet), never 0.
/// `Default` is a row with no data, whose [`SummaryRow::numbers`] name and type the columns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SummaryRow {
    /// The algorithm's or variant's label.
    pub label: String,
    /// Runs completed (panicked seeds are not runs).
    pub runs: u64,
    /// Runs with overlapping holders; `None` with no runs.
    pub overlap_runs: Option<u64>,
    /// Fraction of runs with overlapping holders.
    pub overlap_rate: Option<f64>,
    /// Its 95% interval, lower end.
    pub overlap_ci95_lo: Option<f64>,
    /// Its 95% interval, upper end.
    pub overlap_ci95_hi: Option<f64>,
    /// Fraction of runs in which the unfenced resource accepted a stale write.
    pub stale_unfenced_rate: Option<f64>,
    /// Its 95% interval, lower end.
    pub stale_unfenced_ci95_lo: Option<f64>,
    /// Its 95% interval, upper end.
    pub stale_unfenced_ci95_hi: Option<f64>,
    /// Fraction of runs in which the fenced resource accepted a stale write; `None` when the
    /// model cannot be fenced.
    pub stale_fenced_rate: Option<f64>,
    /// Its 95% interval, lower end.
    pub stale_fenced_ci95_lo: Option<f64>,
    /// Its 95% interval, upper end.
    pub stale_fenced_ci95_hi: Option<f64>,
    /// Lost increments over all runs; `None` with no runs.
    pub lost_updates: Option<u64>,
    /// Completed critical sections per simulated second.
    pub throughput_per_s: Option<f64>,
    /// Acquire latency, median, ms.
    pub acquire_latency_ms_p50: Option<f64>,
    /// Acquire latency, 99th percentile, ms.
    pub acquire_latency_ms_p99: Option<f64>,
    /// Mean time per run with a waiter and no holder, ms.
    pub unavailable_ms: Option<f64>,
    /// Messages per successful acquisition.
    pub messages_per_acquisition: Option<f64>,
    /// Wake-ups per release (the herd effect).
    pub notifications_per_release: Option<f64>,
    /// The first failing seeds, in order.
    pub failing_seeds: Vec<u64>,
    // The columns appended after `failing_seeds` (later additions go after it, so the older
    // columns keep their positions). A loop workload has no scheduled job: `None`, left out of
    // sweep.json as the results JSON leaves `double_executions` out.
    /// Runs in which the scheduled job ran more than once in a period (`sim run`'s
    /// `double_executions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub double_executions_runs: Option<u64>,
    /// Their fraction of the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub double_executions_rate: Option<f64>,
    /// Its 95% interval, lower end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub double_executions_ci95_lo: Option<f64>,
    /// Its 95% interval, upper end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub double_executions_ci95_hi: Option<f64>,
}

fn split(c: Option<[f64; 2]>) -> (Option<f64>, Option<f64>) {
    match c {
        Some([lo, hi]) => (Some(lo), Some(hi)),
        None => (None, None),
    }
}

impl SummaryRow {
    /// The table's fields of a results row.
    pub fn of(a: &AlgorithmJson) -> SummaryRow {
        // Counts of a row without runs are "no data", as its rates are.
        let count = |n: u64| (a.runs > 0).then_some(n);
        let (overlap_ci95_lo, overlap_ci95_hi) = split(a.overlap.ci95);
        let (stale_unfenced_ci95_lo, stale_unfenced_ci95_hi) = split(a.stale_unfenced.ci95);
        let fenced = a.stale_fenced.as_ref();
        let (stale_fenced_ci95_lo, stale_fenced_ci95_hi) = split(fenced.and_then(|c| c.ci95));
        let double = a.double_executions.as_ref();
        let (double_executions_ci95_lo, double_executions_ci95_hi) = split(double.and_then(|c| c.ci95));
        SummaryRow {
            label: a.label.clone(),
            runs: a.runs,
            overlap_runs: count(a.overlap.runs),
            overlap_rate: a.overlap.rate,
            overlap_ci95_lo,
            overlap_ci95_hi,
            stale_unfenced_rate: a.stale_unfenced.rate,
            stale_unfenced_ci95_lo,
            stale_unfenced_ci95_hi,
            stale_fenced_rate: fenced.and_then(|c| c.rate),
            stale_fenced_ci95_lo,
            stale_fenced_ci95_hi,
            lost_updates: count(a.lost_updates),
            throughput_per_s: a.throughput_per_s,
            acquire_latency_ms_p50: a.acquire_latency_ms.map(|l| l.p50),
            acquire_latency_ms_p99: a.acquire_latency_ms.map(|l| l.p99),
            unavailable_ms: a.unavailable_ms,
            messages_per_acquisition: a.messages_per_acquisition,
            notifications_per_release: a.notifications_per_release,
            failing_seeds: a.failing_seeds.clone(),
            double_executions_runs: double.and_then(|c| count(c.runs)),
            double_executions_rate: double.and_then(|c| c.rate),
            double_executions_ci95_lo,
            double_executions_ci95_hi,
        }
    }

    /// The failing seeds as one CSV cell (and Parquet string): space-separated, empty with none.
    pub fn failing_seeds_text(&self) -> String {
        self.failing_seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")
    }

    /// The numeric fields in column order (after `label`, before `failing_seeds`), each with its
    /// column name: a count (`Int`) or a measure (`Float`).
    pub fn numbers(&self) -> Vec<(&'static str, Number)> {
        use Number::{Float, Int};
        vec![
            ("runs", Int(Some(self.runs))),
            ("overlap_runs", Int(self.overlap_runs)),
            ("overlap_rate", Float(self.overlap_rate)),
            ("overlap_ci95_lo", Float(self.overlap_ci95_lo)),
            ("overlap_ci95_hi", Float(self.overlap_ci95_hi)),
            ("stale_unfenced_rate", Float(self.stale_unfenced_rate)),
            ("stale_unfenced_ci95_lo", Float(self.stale_unfenced_ci95_lo)),
            ("stale_unfenced_ci95_hi", Float(self.stale_unfenced_ci95_hi)),
            ("stale_fenced_rate", Float(self.stale_fenced_rate)),
            ("stale_fenced_ci95_lo", Float(self.stale_fenced_ci95_lo)),
            ("stale_fenced_ci95_hi", Float(self.stale_fenced_ci95_hi)),
            ("lost_updates", Int(self.lost_updates)),
            ("throughput_per_s", Float(self.throughput_per_s)),
            ("acquire_latency_ms_p50", Float(self.acquire_latency_ms_p50)),
            ("acquire_latency_ms_p99", Float(self.acquire_latency_ms_p99)),
            ("unavailable_ms", Float(self.unavailable_ms)),
            ("messages_per_acquisition", Float(self.messages_per_acquisition)),
            ("notifications_per_release", Float(self.notifications_per_release)),
        ]
    }

    /// The numeric fields after `failing_seeds`, in column order, each with its column name.
    pub fn appended_numbers(&self) -> Vec<(&'static str, Number)> {
        use Number::{Float, Int};
        vec![
            ("double_executions_runs", Int(self.double_executions_runs)),
            ("double_executions_rate", Float(self.double_executions_rate)),
            ("double_executions_ci95_lo", Float(self.double_executions_ci95_lo)),
            ("double_executions_ci95_hi", Float(self.double_executions_ci95_hi)),
        ]
    }
}

/// A numeric field of a [`SummaryRow`], `None` when it has no data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// A count: an integer column.
    Int(Option<u64>),
    /// A rate, interval end or measure: a floating-point column.
    Float(Option<f64>),
}

impl Number {
    /// The CSV cell: the number in Rust's shortest round-trip form, empty with no data.
    pub fn cell(&self) -> String {
        match self {
            Number::Int(n) => n.map(|n| n.to_string()).unwrap_or_default(),
            Number::Float(x) => x.map(|x| format!("{x}")).unwrap_or_default(),
        }
    }
}
