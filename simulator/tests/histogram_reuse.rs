//! The spare histograms (checker/metrics.rs: `recycle_histogram`) take back only histograms of
//! the standard bounds. A spare of other bounds handed out by `new_histogram` would record a
//! seed's latencies with the wrong range or precision. In a file of its own: the spares are
//! one process-wide list, and another test running beside this one could take a spare first.

use hdrhistogram::Histogram;
use locksim_simulator::checker::metrics::{new_histogram, HIST_MAX_US};
use locksim_simulator::checker::SeedMetrics;

/// A dropped seed gives its histograms back; one differing from the standard bounds in only its
/// highest value, only its lowest or only its precision is not kept. Kills each `!=` made `==`
/// and each `||` made `&&` in the bounds test.
#[test]
fn only_standard_histograms_are_reused() {
    let mut m = SeedMetrics::empty(0, 0, false);
    m.acquire_latency_us = Histogram::new_with_bounds(1, 1_000, 3).expect("bounds");
    m.wait_us = Histogram::new_with_bounds(2, HIST_MAX_US, 3).expect("bounds");
    m.handoff_us = Histogram::new_with_bounds(1, HIST_MAX_US, 2).expect("bounds");
    drop(m);
    for _ in 0..40 {
        let h = new_histogram();
        assert_eq!((h.low(), h.high(), h.sigfig()), (1, HIST_MAX_US, 3));
        assert!(h.is_empty());
    }
}
