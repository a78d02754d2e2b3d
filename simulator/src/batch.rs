//! Running seeds: one seed inside the panic boundary ([`record_seed`]: a panic inside a model is
//! caught per seed, and so is a seed stuck in a zero-time loop or cut by a stop), and many seeds
//! in parallel across seeds (rayon), one seed per thread, results handed to the caller strictly
//! in seed order so totals and output never depend on the thread count ([`run_ordered_until`]).
//! A bounded window of seeds is in flight at once (a new seed starts as soon as the oldest is
//! handed over, so no thread idles between batches). A stop (Ctrl-C) cuts the seeds in progress
//! within a few thousand events each: they are discarded, never half-counted.
//!
//! What a seed's recording is checked for, folded into and judged against is the campaign's
//! (`locksim-campaign`); [`run_seed`] records and checks one seed for tests and tools.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::outcome::{Halt, Recorded, RunOptions, SeedOutcome};
use crate::scenario::{RunSpec, Scenario};

/// Why a seed gave no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeedError {
    /// The model (or the simulator) panicked; the panic's message.
    Panicked(String),
    /// The engine stopped the seed: a stop flag, or a zero-time loop.
    Halted(Halt),
}

impl fmt::Display for SeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeedError::Panicked(message) => f.write_str(message),
            SeedError::Halted(halt) => halt.fmt(f),
        }
    }
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

/// Records one seed of a row (with its trace when `opts` asks) and hands the recording to
/// `then` (the caller's checkers), both inside the panic boundary: the one place that catches a
/// model's panic (or a checker's), so every caller (a campaign's seeds, `--verify`, a replay, a
/// report's timeline) goes through here. A seed stuck in a zero-time loop is an error too, its
/// message the stuck seed's; so is one cut by `stop` ([`Halt::Stopped`]: no result).
pub fn record_seed<T>(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    opts: &RunOptions,
    stop: Option<&AtomicBool>,
    then: impl FnOnce(Recorded) -> T,
) -> Result<T, SeedError> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        #[cfg(debug_assertions)]
        test_panic(seed);
        run.model.record_seed(&scenario.setup, &run.params, seed, opts, stop).map(then)
    }));
    match result {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(halt)) => Err(SeedError::Halted(halt)),
        Err(payload) => Err(SeedError::Panicked(panic_message(payload.as_ref()))),
    }
}

/// Runs one seed of a row and checks it ([`SeedOutcome::checked`]), with or without its trace:
/// for tests and tools that want one seed's metrics outside a campaign. A panic or a zero-time
/// loop is the error's message.
pub fn run_seed(scenario: &Scenario, run: &RunSpec, seed: u64, opts: &RunOptions) -> Result<SeedOutcome, String> {
    run_seed_until(scenario, run, seed, opts, None).map_err(|e| e.to_string())
}

/// As [`run_seed`], with the error kept apart by kind; the seed stops early (no result) when
/// `stop` becomes true.
pub fn run_seed_until(
    scenario: &Scenario,
    run: &RunSpec,
    seed: u64,
    opts: &RunOptions,
    stop: Option<&AtomicBool>,
) -> Result<SeedOutcome, SeedError> {
    record_seed(scenario, run, seed, opts, stop, SeedOutcome::checked)
}

/// The variable naming seeds that panic on purpose (debug builds only; see [`test_panic`]).
pub const TEST_PANIC_SEEDS_VAR: &str = "LOCKSIM_TEST_PANIC_SEEDS";

/// A test hook, compiled into debug (and test) builds only: `LOCKSIM_TEST_PANIC_SEEDS=3,7` makes
/// seeds 3 and 7 of every row panic inside the panic boundary, as a model that panics would, so
/// the command line's handling of a panic (exit 3, `panicked_seeds` in the results, the other
/// seeds still finishing) can be tested end to end without a model that really panics. Release
/// builds never read the variable.
#[cfg(debug_assertions)]
fn test_panic(seed: u64) {
    static SEEDS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let seeds = SEEDS.get_or_init(|| {
        let list = std::env::var(TEST_PANIC_SEEDS_VAR).unwrap_or_default();
        list.split(',').filter_map(|s| s.trim().parse().ok()).collect()
    });
    if seeds.contains(&seed) {
        panic!("{TEST_PANIC_SEEDS_VAR}: seed {seed} panics on purpose");
    }
}

/// How many seeds per thread may be started and not yet handed over: enough that every thread
/// always has a seed queued while the caller folds results in, few enough that memory stays small
/// (a finished seed waiting for a slower, earlier one holds only its metrics).
const WINDOW_PER_THREAD: u64 = 4;

/// Runs `work` for every seed on `pool`, one seed per task, and calls `each` with the results in
/// seed order. Seeds are started in order, a new one as soon as the oldest is handed over, so no
/// thread waits for the others between batches; at most `WINDOW_PER_THREAD` × threads seeds are
/// started and not yet handed over, and results that finish early wait in a reorder buffer.
/// `each` runs on the calling thread. When `stop` becomes true no further seed starts (a queued
/// one is skipped); the seeds already running finish, and every seed before the first skipped one
/// is handed over, so the seeds handed over are always a prefix of `seeds`; returns how many.
pub fn run_ordered<T: Send>(
    pool: &rayon::ThreadPool,
    seeds: Range<u64>,
    stop: &AtomicBool,
    work: impl Fn(u64) -> T + Sync,
    each: impl FnMut(T),
) -> u64 {
    run_ordered_until(pool, seeds, stop, |s| Some(work(s)), each)
}

/// As [`run_ordered`], for work that can itself give up when `stop` is raised: `work` returning
/// `None` means the seed was cut short, and it counts as skipped (neither it nor any later seed
/// is handed over), so a stop need not wait for the seeds in progress.
pub fn run_ordered_until<T: Send>(
    pool: &rayon::ThreadPool,
    seeds: Range<u64>,
    stop: &AtomicBool,
    work: impl Fn(u64) -> Option<T> + Sync,
    mut each: impl FnMut(T),
) -> u64 {
    let window = (pool.current_num_threads() as u64).max(1) * WINDOW_PER_THREAD;
    let work = &work;
    // Each task reports (seed, None) when it was skipped after a stop, else its result (`None`
    // when the work gave up on a stop) or panic.
    type Report<T> = (u64, Option<std::thread::Result<Option<T>>>);
    let (tx, rx) = mpsc::channel::<Report<T>>();
    let mut handed = 0;
    pool.in_place_scope(|scope| {
        // Seeds below `next` have been started, seeds below `expected` handed over; nothing at or
        // after `cut` (the first seed skipped) is.
        let (mut next, mut expected, mut cut) = (seeds.start, seeds.start, seeds.end);
        let mut in_flight = 0u64;
        let mut ready: BTreeMap<u64, T> = BTreeMap::new();
        loop {
            while next < seeds.end && next - expected < window && !stop.load(Ordering::Relaxed) {
                let (tx, seed) = (tx.clone(), next);
                scope.spawn(move |_| {
                    let result = (!stop.load(Ordering::Relaxed)).then(|| catch_unwind(AssertUnwindSafe(|| work(seed))));
                    let _ = tx.send((seed, result));
                });
                next += 1;
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            let (seed, result) = rx.recv().expect("every started seed reports");
            in_flight -= 1;
            match result {
                Some(Ok(Some(r))) => {
                    ready.insert(seed, r);
                }
                // Raised here, on the caller's thread, once the scope's other tasks are done.
                Some(Err(payload)) => resume_unwind(payload),
                Some(Ok(None)) | None => cut = cut.min(seed),
            }
            while expected < cut {
                let Some(r) = ready.remove(&expected) else { break };
                each(r);
                expected += 1;
                handed += 1;
            }
        }
    });
    handed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool")
    }

    /// Uneven work (later seeds finish first) still comes back in seed order, on any pool size.
    #[test]
    fn results_come_in_seed_order_whatever_the_threads() {
        for threads in [1, 2, 3] {
            let stop = AtomicBool::new(false);
            let mut got = Vec::new();
            let n = run_ordered(
                &pool(threads),
                5..45,
                &stop,
                |s| {
                    // Spin a little, more for low seeds, so completions arrive out of order.
                    let mut x = s;
                    for _ in 0..(50 - s) * 2000 {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                    (s, x)
                },
                |(s, _)| got.push(s),
            );
            assert_eq!(n, 40);
            assert_eq!(got, (5..45).collect::<Vec<_>>());
        }
    }

    /// A stop hands over exactly the seeds started: a prefix, with nothing started after it.
    #[test]
    fn a_stop_hands_over_a_prefix() {
        let stop = AtomicBool::new(false);
        let mut got = Vec::new();
        let n = run_ordered(
            &pool(2),
            0..1000,
            &stop,
            |s| s,
            |s| {
                got.push(s);
                if s == 10 {
                    stop.store(true, Ordering::Relaxed);
                }
            },
        );
        assert_eq!(n as usize, got.len());
        assert_eq!(got, (0..n).collect::<Vec<_>>());
        assert!(n > 10 && n <= 11 + 2 * WINDOW_PER_THREAD, "stopped after {n}");
        stop.store(true, Ordering::Relaxed);
        assert_eq!(run_ordered(&pool(2), 0..10, &stop, |s| s, |_| {}), 0);
    }

    #[test]
    fn a_panic_in_work_reaches_the_caller() {
        let stop = AtomicBool::new(false);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run_ordered(&pool(2), 0..20, &stop, |s| assert_ne!(s, 7, "seed 7 fails"), |_| {})
        }));
        assert!(panic_message(r.expect_err("panics").as_ref()).contains("seed 7 fails"));
    }
}
