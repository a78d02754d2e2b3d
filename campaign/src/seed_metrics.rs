//! Every seed's whole-run metrics of one row, unfolded: what `sim compare` sets live runs
//! against (each live run falls inside or outside the spread of the simulated ones), so the
//! seeds are kept apart instead of folded into totals.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use locksim_simulator::checker::SeedMetrics;
use locksim_simulator::scenario::{RunSpec, Scenario};

use crate::seed::{run_seed_stoppable, RunMode, SeedResult};

/// `row`'s metrics for each of `seeds` run on `pool`, in seed order; a seed that panicked, or
/// that `stop` cut, is left out.
pub fn seed_metrics(
    scenario: &Scenario,
    row: &RunSpec,
    seeds: Range<u64>,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
) -> Vec<SeedMetrics> {
    pool.install(|| {
        use rayon::prelude::*;
        seeds
            .into_par_iter()
            .filter_map(|s| match run_seed_stoppable(scenario, row, s, stop, RunMode::default())? {
                SeedResult::Done { metrics } => Some(*metrics),
                SeedResult::Panicked { .. } => None,
            })
            .collect()
    })
}
