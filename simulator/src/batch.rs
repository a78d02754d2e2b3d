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
    each: impl FnMut(SeedResult),
) -> u64 {
    run_ordered(pool, seeds, stop, |s| run_seed_caught(scenario, run, model, s), each)
}

/// What `--verify` found for one seed: its result from the first run, and where a second run of
/// the same seed differed (if it did).
pub struct VerifiedSeed {
    pub result: SeedResult,
    pub difference: Option<TraceDifference>,
}

/// The first trace entry at which two runs of one seed disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceDifference {
    pub seed: u64,
    /// Index of the first differing entry (0-based).
    pub index: usize,
    /// That entry in each run, as a trace line; `None` where that run's trace had already ended.
    pub first: Option<String>,
    pub second: Option<String>,
    pub first_hash: u64,
    pub second_hash: u64,
}

/// Runs one seed twice with its trace and compares the trace hashes; on a mismatch, finds the
/// first differing entry. A panic in either run is the seed's result.
pub fn verify_seed(scenario: &Scenario, run: &RunSpec, model: &dyn Model, seed: u64) -> VerifiedSeed {
    let traced = RunOptions { trace: true };
    let both = catch_unwind(AssertUnwindSafe(|| {
        let a = run_seed(scenario, run, model, seed, &traced);
        let b = run_seed(scenario, run, model, seed, &traced);
        (a, b)
    }));
    let (a, b) = match both {
        Ok(pair) => pair,
        Err(payload) => {
            let result = SeedResult::Panicked { seed, message: panic_message(payload.as_ref()) };
            return VerifiedSeed { result, difference: None };
        }
    };
    let difference = (a.trace_hash != b.trace_hash).then(|| {
        let ta = &a.trace.as_ref().expect("traced").entries;
        let tb = &b.trace.as_ref().expect("traced").entries;
        let index = ta.iter().zip(tb).position(|(x, y)| x.line() != y.line()).unwrap_or(ta.len().min(tb.len()));
        TraceDifference {
            seed,
            index,
            first: ta.get(index).map(|e| e.line()),
            second: tb.get(index).map(|e| e.line()),
            first_hash: a.trace_hash,
            second_hash: b.trace_hash,
        }
    });
    VerifiedSeed { result: SeedResult::Done { metrics: Box::new(a.metrics) }, difference }
}

/// Runs `work` for every seed on `pool`, one seed per task, and calls `each` with the results in
/// seed order. Stops early (between chunks) when `stop` becomes true; returns how many seeds were
/// handed over, always a prefix of `seeds`.
pub fn run_ordered<T: Send>(
    pool: &rayon::ThreadPool,
    seeds: Range<u64>,
    stop: &AtomicBool,
    work: impl Fn(u64) -> T + Sync,
    mut each: impl FnMut(T),
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
        let results: Vec<T> = pool.install(|| (start..end).into_par_iter().map(&work).collect());
        for r in results {
            each(r);
            done += 1;
        }
        start = end;
    }
    done
}
