//! The results JSON's rows turned into the plain data `locksim-charts` draws from.

use crate::json::{AlgorithmJson, ClassJson};
use locksim_charts::{AlgorithmChartData, Fairness, FencedRate, Interval95};

/// A violation class as a rate with its interval; `None` with no runs. A class no run showed
/// reaches up to what the runs rule out (`rules_out`, the rule of three, as in the table), so the
/// chart and the table state the same bound.
fn interval(c: &ClassJson) -> Option<Interval95> {
    match (c.rate, c.ci95, c.rules_out) {
        (Some(rate), Some(_), Some(bound)) if c.runs == 0 => Some(Interval95::new(rate, 0.0, bound)),
        (Some(rate), Some([lo, hi]), _) => Some(Interval95::new(rate, lo, hi)),
        _ => None,
    }
}

/// Which distribution the CDF chart draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdfSource {
    /// The wait for a critical section (`wait_cdf_ms`), the chart's figure.
    Wait,
    /// The acquire latency (`acquire_latency_cdf_ms`), for results that predate the wait.
    AcquireLatency,
}

impl CdfSource {
    /// Wait, unless no row of `results` has a wait (they predate it) but some has acquire latency.
    pub fn for_rows(rows: &[AlgorithmJson]) -> CdfSource {
        let any_wait = rows.iter().any(|a| !a.wait_cdf_ms.is_empty());
        let any_latency = rows.iter().any(|a| !a.acquire_latency_cdf_ms.is_empty());
        if !any_wait && any_latency {
            CdfSource::AcquireLatency
        } else {
            CdfSource::Wait
        }
    }
}

/// One results row as chart data, its CDF from `cdf`.
pub fn algorithm_chart_data(a: &AlgorithmJson, cdf: CdfSource) -> AlgorithmChartData {
    let mut d = AlgorithmChartData::new(a.label.clone(), a.runs);
    d.throughput_per_s = a.throughput_per_s;
    let points = match cdf {
        CdfSource::Wait => &a.wait_cdf_ms,
        CdfSource::AcquireLatency => &a.acquire_latency_cdf_ms,
    };
    d.latency_cdf_ms = points.iter().map(|[ms, q]| (*ms, *q)).collect();
    d.overlap = interval(&a.overlap);
    d.stale_unfenced = interval(&a.stale_unfenced);
    d.stale_fenced = match &a.stale_fenced {
        None => FencedRate::CannotBeFenced,
        Some(c) => FencedRate::Rate(interval(c)),
    };
    d.messages_per_acquisition = a.messages_per_acquisition;
    d.notifications_per_release = a.notifications_per_release;
    d.outage_ms_mean = a.outage_ms;
    d.outage_ms_max = a.outage_ms_max;
    d.fairness = a.fairness.map(|f| Fairness { mean: f.mean, min: f.min, max: f.max });
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{rules_out_text, ClassCount};

    /// A class as the results JSON records it (the same constructor `sim run --json` uses).
    fn class(runs: u64, n: u64) -> ClassJson {
        ClassJson::new(ClassCount { runs, events: runs }, n)
    }

    /// The CDF chart draws the wait; results from before the wait existed fall back to the acquire
    /// latency they have (the page says so), not to an empty chart.
    #[test]
    fn the_cdf_draws_the_wait_unless_the_results_predate_it() {
        let mut t = crate::AlgorithmTotals::new("db", "db", serde_json::json!({}), true);
        let mut m = locksim_simulator::checker::SeedMetrics::empty(0, 1_000_000_000, true);
        locksim_simulator::checker::metrics::record_ns(&mut m.acquire_latency_us, 1_000_000);
        locksim_simulator::checker::metrics::record_ns(&mut m.wait_us, 2_000_000);
        t.add(&m);
        let mut row = AlgorithmJson::from_totals(&t, "f.toml");
        assert_eq!(CdfSource::for_rows(std::slice::from_ref(&row)), CdfSource::Wait);
        assert_eq!(algorithm_chart_data(&row, CdfSource::Wait).latency_cdf_ms.last(), Some(&(2.0, 1.0)));
        row.wait_cdf_ms.clear();
        assert_eq!(CdfSource::for_rows(std::slice::from_ref(&row)), CdfSource::AcquireLatency);
        assert_eq!(algorithm_chart_data(&row, CdfSource::AcquireLatency).latency_cdf_ms.last(), Some(&(1.0, 1.0)));
    }

    /// The chart's dotted bound for a clean class is the bound the table prints (3/n), not the
    /// two-sided Wilson upper end (about 3.84/n).
    #[test]
    fn a_clean_class_reaches_what_the_table_says_is_ruled_out() {
        let i = interval(&class(0, 200)).unwrap();
        assert_eq!((i.rate, i.lo, i.hi), (0.0, 0.0, 0.015));
        assert_eq!(rules_out_text(200), "< 1.5e-2 at 95%");
        // A class some runs showed keeps its Wilson interval.
        let seen = class(37, 1000);
        let i = interval(&seen).unwrap();
        assert_eq!([i.lo, i.hi], seen.ci95.unwrap());
    }
}
