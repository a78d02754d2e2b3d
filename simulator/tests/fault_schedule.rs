//! The fault schedule (engine/schedule.rs `draw`), for the rules `cargo mutants` found no test of
//! the simulator crate pinning (docs/testing.md, "Mutation testing"): a fault's probability, the
//! value drawn for a clock fault, the run's end, and repeats. Each test names the mutants it kills.

use locksim_simulator::dist::Dist;
use locksim_simulator::engine::schedule::{draw, Occurrence};
use locksim_simulator::process::CrashKind;
use locksim_simulator::rng::stream;
use locksim_simulator::setup::{FaultKind, FaultSpec, Selector};

const MS: u64 = 1_000_000;

fn crash(at_ms: Dist, probability: f64) -> FaultSpec {
    FaultSpec {
        kind: FaultKind::Crash { mode: CrashKind::Process },
        targets: vec![Selector::Leader],
        at_ms,
        duration_ms: Some(Dist::Const(10.0)),
        every_ms: None,
        probability,
    }
}

/// The occurrences of `faults` in a run of `run_ms`, for `seed`.
fn schedule(faults: &[FaultSpec], run_ms: u64, seed: u64) -> Vec<Occurrence> {
    draw(faults, run_ms * MS, &mut stream(seed, "faults", "schedule"))
}

/// Seeds (of 1 000) in which a fault of `probability` happens.
fn seeds_with(probability: f64) -> usize {
    (0..1000).filter(|&s| !schedule(&[crash(Dist::Const(5.0), probability)], 100, s).is_empty()).count()
}

/// A fault happens in a seed with its probability: never at 0, always at 1, about a fifth of
/// seeds at 0.2. Kills `rng.gen() < probability || probability >= 1.0` with `<` as `==` (never)
/// or `>` (four fifths), `||` as `&&` (never below 1) and `>=` as `<` (always below 1), and
/// `happens && start < run` with `&&` as `||` (a fault that does not happen still scheduled).
#[test]
fn a_fault_happens_with_its_probability() {
    assert_eq!(seeds_with(0.0), 0);
    assert_eq!(seeds_with(1.0), 1000);
    let fifth = seeds_with(0.2);
    assert!((150..250).contains(&fifth), "{fifth} of 1000 seeds at probability 0.2");
}

/// A clock fault's size is drawn with its occurrence: a jump's `by_ms`, a drift's `ppm`. Kills
/// the deletion of either match arm (the value would be 0).
#[test]
fn a_clock_fault_carries_its_drawn_size() {
    let jump = FaultSpec {
        kind: FaultKind::ClockJump { by_ms: Dist::Const(-250.0) },
        duration_ms: None,
        ..crash(Dist::Const(5.0), 1.0)
    };
    let drift = FaultSpec { kind: FaultKind::ClockDrift { ppm: Dist::Const(300.0) }, ..crash(Dist::Const(5.0), 1.0) };
    let occ = schedule(&[jump, drift], 100, 0);
    let values: Vec<f64> = occ.iter().map(|o| o.value).collect();
    assert_eq!(values, vec![-250.0, 300.0]);
}

/// A fault due at or after the run's end never happens. Kills `start_ns < run_ns` made `<=`.
#[test]
fn a_fault_due_at_the_end_of_the_run_is_not_scheduled() {
    assert!(schedule(&[crash(Dist::Const(100.0), 1.0)], 100, 0).is_empty());
    assert_eq!(schedule(&[crash(Dist::Const(99.0), 1.0)], 100, 0).len(), 1);
}

/// `every_ms = 100` from 0 in a 1 s run: ten occurrences, 100 ms apart, the last at 900 ms.
/// Kills the repeat's `start_ns += gap` made `*=` (every one at 0, up to the cap) or `-=` (an
/// overflow), and the end test `start_ns >= run_ns || n >= MAX` with either `>=` made `<` (one
/// occurrence).
#[test]
fn a_repeating_fault_repeats_until_the_run_ends() {
    let every = FaultSpec { every_ms: Some(Dist::Const(100.0)), ..crash(Dist::Const(0.0), 1.0) };
    let starts: Vec<u64> = schedule(&[every], 1000, 0).iter().map(|o| o.start_ns / MS).collect();
    assert_eq!(starts, (0..10).map(|i| i * 100).collect::<Vec<_>>());
}

/// A fault repeating every nanosecond in a 1 ms run stops at the cap of 100 000 occurrences.
/// Kills `n += 1` made `*=` (the count never grows, so only the run's end stops it: a million).
#[test]
fn a_repeat_far_below_the_run_stops_at_the_cap() {
    let every = FaultSpec { every_ms: Some(Dist::Const(0.0)), ..crash(Dist::Const(0.0), 1.0) };
    assert_eq!(draw(&[every], MS, &mut stream(0, "faults", "schedule")).len(), 100_000);
}

/// The draws stop at the run's end: the next fault's start is the same whatever happens to the
/// repeating one after the end (here, the draws are replayed by hand in the order `draw` makes
/// them). Kills `start_ns >= run_ns || n >= MAX` made `&&` (the loop would go on drawing up to
/// the cap, shifting every later fault's draws).
#[test]
fn a_repeating_fault_draws_nothing_after_the_run_ends() {
    let repeating = FaultSpec {
        every_ms: Some(Dist::Const(100.0)),
        duration_ms: Some(Dist::Uniform(1.0, 2.0)),
        ..crash(Dist::Const(0.0), 1.0)
    };
    let later = crash(Dist::Uniform(0.0, 1000.0), 1.0);
    let mut rng = stream(3, "faults", "schedule");
    let mut replay = rng.clone();
    let occ = draw(&[repeating, later], 1000 * MS, &mut rng);
    // By hand: the first fault's "happens" draw, its ten durations, then the second's.
    use rand::Rng;
    let _: f64 = replay.gen();
    for _ in 0..10 {
        Dist::Uniform(1.0, 2.0).sample(&mut replay);
    }
    let _: f64 = replay.gen();
    let expected_ns = locksim_simulator::time::ms_to_ns(Dist::Uniform(0.0, 1000.0).sample_non_negative(&mut replay));
    let last = occ.last().expect("the second fault");
    assert_eq!((last.fault, last.start_ns), (1, expected_ns));
    assert_eq!(occ.len(), 11);
}
