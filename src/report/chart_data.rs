//! The results JSON's rows turned into the plain data `locksim-charts` draws from.

use locksim_charts::{AlgorithmChartData, FencedRate, Interval95};
use locksim_reports::json::{AlgorithmJson, ClassJson};

/// A violation class as a rate with its interval; `None` with no runs.
fn interval(c: &ClassJson) -> Option<Interval95> {
    match (c.rate, c.ci95) {
        (Some(rate), Some([lo, hi])) => Some(Interval95::new(rate, lo, hi)),
        _ => None,
    }
}

/// One results row as chart data.
pub fn algorithm_chart_data(a: &AlgorithmJson) -> AlgorithmChartData {
    let mut d = AlgorithmChartData::new(a.label.clone(), a.runs);
    d.throughput_per_s = a.throughput_per_s;
    d.latency_cdf_ms = a.acquire_latency_cdf_ms.iter().map(|[ms, q]| (*ms, *q)).collect();
    d.overlap = interval(&a.overlap);
    d.stale_unfenced = interval(&a.stale_unfenced);
    d.stale_fenced = match &a.stale_fenced {
        None => FencedRate::CannotBeFenced,
        Some(c) => FencedRate::Rate(interval(c)),
    };
    d.messages_per_acquisition = a.messages_per_acquisition;
    d.notifications_per_release = a.notifications_per_release;
    d
}
