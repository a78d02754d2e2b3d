//! Running many seeds: in parallel across seeds (rayon), one seed per thread, results handed to
//! the caller strictly in seed order so totals and output never depend on the thread count.
//! Seeds run in chunks, and each seed's history is dropped as soon as it is checked, so memory
//! stays flat however many seeds run. A panic inside a model is caught per seed.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::checker::SeedMetrics;
use crate::model::Model;
use crate::run::{run_seed, RunOptions};
use crate::scenario::{RunSpec, Scenario};

/// One seed's result: its metrics, or the panic it ended in.
pub enum SeedResult {
    Done { metrics: Box<SeedMetrics> },
    Panicked { seed: u64, message: String },
}

/// Turns a panic payload into its message.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

/// Runs one seed, catching a panic.
pub fn run_seed_caught(scenario: &Scenario, run: &RunSpec, model: &dyn Model, seed: u64) -> SeedResult {
    match catch_unwind(AssertUnwindSafe(|| run_seed(scenario, run, model, seed, &RunOptions::default()))) {
        Ok(out) => SeedResult::Done { metrics: Box::new(out.metrics) },
        Err(payload) => SeedResult::Panicked { seed, message: panic_message(payload.as_ref()) },
    }
}

/// Runs `seeds` of one algorithm on `pool`, calling `each` with every result in seed order.
/// Stops early (between chunks) when `stop` becomes true; returns how many seeds were handed over.
pub fn run_seeds(
    pool: &rayon::ThreadPool,
    scenario: &Scenario,
    run: &RunSpec,
    model: &dyn Model,
    seeds: Range<u64>,
    stop: &AtomicBool,
    mut each: impl FnMut(SeedResult),
) -> u64 {
    // Enough seeds per chunk to keep every thread busy, few enough that memory stays small.
    let chunk = (pool.current_num_threads() as u64 * 4).max(1);
    let mut done = 0;
    let mut start = seeds.start;
    while start < seeds.end {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let end = (start + chunk).min(seeds.end);
        let results: Vec<SeedResult> =
            pool.install(|| (start..end).into_par_iter().map(|s| run_seed_caught(scenario, run, model, s)).collect());
        for r in results {
            each(r);
            done += 1;
        }
        start = end;
    }
    done
}
