//! What a scenario's run would cost, from a short probe (`sim check`): seed 0 of every row runs
//! for a bounded stretch of simulated time, and its events and wall time per simulated second,
//! scaled by the run's duration, seeds and rows, give the run's events and its wall time on a
//! number of threads.
//!
//! The probe's length is chosen from event counts alone (a first probe of one simulated second,
//! then one long enough for about [`EVENT_BUDGET`] events in all), so the probe and the events
//! estimate are the same on every machine; only the wall time, measured by a timer the caller
//! passes (the library reads no real time), varies.
//!
//! Memory is estimated the same way: a seed keeps its history to its end (the checkers read all
//! of it), and the models keep their own state (logs, revisions), both growing with simulated
//! time about in step with the history events recorded; the probe's events per simulated second
//! times [`BYTES_PER_HISTORY_EVENT`] times the duration bounds a seed's memory at its end.

use crate::batch::{run_seed_until, SeedError};
use crate::history::folding_counted;
use crate::outcome::{Halt, RunOptions};
use crate::run::recycle;
use crate::scenario::Scenario;

/// Simulated time of the first probe of each row.
pub const FIRST_PROBE_MS: f64 = 1_000.0;

/// Events the second probe aims for across every row: about a quarter of a second of wall time
/// at the engine's few million events per second, so `sim check` stays well under a second.
pub const EVENT_BUDGET: f64 = 1_000_000.0;

/// A run longer than this (wall seconds) gets a warning.
pub const LONG_RUN_S: f64 = 3_600.0;

/// Memory a seed holds at its end per history event it recorded: the event itself (64 bytes),
/// the checkers' intervals and waits rebuilt from it, and the model's own state that grows with
/// the same traffic. Measured as peak RSS over the events recorded in one seed of a simulated
/// hour of every row of scenarios/baseline.toml (release build, the events only counted folded):
/// 110 to 170 bytes for most rows, etcd 250 (three servers' Raft logs and revision histories),
/// zookeeper-herd 546 (its servers log every refused create, as ZooKeeper logs a failed write).
/// The most measured, rounded up: the estimate is an upper bound for every row measured.
pub const BYTES_PER_HISTORY_EVENT: f64 = 600.0;

/// Memory a seed holds from its start per workload client, whatever its length: the client's
/// node, clock, random streams and library state, and the servers' state for it. Measured at
/// 100 000 clients in a 20 ms seed: redis 3 KB, etcd 5 KB; rounded up, as the per-event figure.
pub const BYTES_PER_CLIENT: f64 = 6_000.0;

/// One row's probe.
#[derive(Clone, Debug, PartialEq)]
pub struct RowProbe {
    /// The row's label.
    pub label: String,
    /// Simulated time the probe ran.
    pub probe_ms: f64,
    /// Events the engine processed in it.
    pub events: u64,
    /// History events it recorded (those only counted and folded left out).
    pub history_events: u64,
    /// Wall time it took, in seconds.
    pub wall_s: f64,
}

/// A row whose probe panicked, or stopped in a zero-time loop: no figure is estimated from it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbePanic {
    /// The row's label.
    pub label: String,
    /// The panic's message (or the zero-time loop's).
    pub message: String,
    /// The probe's simulated time stood still ([`crate::outcome::Halt::Stuck`]): the scenario
    /// cannot run as written, which is the user's to fix, not a model failure.
    pub zero_time: bool,
}

/// The estimate of one run: `seeds` seeds of every row, each for the scenario's duration.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The probes of the rows that ran.
    pub rows: Vec<RowProbe>,
    /// Rows whose probe panicked.
    pub panics: Vec<ProbePanic>,
    /// Seeds per row of the estimated run.
    pub seeds: u64,
    /// Simulated time of one seed-run.
    pub duration_ms: f64,
    /// Threads the run would use.
    pub threads: usize,
    /// Workload clients per seed.
    pub clients: usize,
}

impl Estimate {
    /// Seed-runs: rows × seeds (rows whose probe panicked included), exact: 128 bits hold any
    /// number of rows times any `u64` count of seeds, where 64 would wrap.
    pub fn seed_runs(&self) -> u128 {
        (self.rows.len() + self.panics.len()) as u128 * u128::from(self.seeds)
    }

    /// Simulated seconds of the whole run.
    pub fn simulated_s(&self) -> f64 {
        self.seed_runs() as f64 * self.duration_ms / 1_000.0
    }

    /// Scales a per-probe figure of every row to the whole run.
    fn scaled(&self, per_probe: impl Fn(&RowProbe) -> f64) -> f64 {
        let per_seed: f64 = self.rows.iter().map(|r| per_probe(r) / r.probe_ms * self.duration_ms).sum();
        per_seed * self.seeds as f64
    }

    /// Events the whole run would process.
    pub fn events(&self) -> f64 {
        self.scaled(|r| r.events as f64)
    }

    /// Wall seconds of the whole run on one thread.
    pub fn cpu_s(&self) -> f64 {
        self.scaled(|r| r.wall_s)
    }

    /// Wall seconds of the whole run on `threads` threads (seeds run in parallel, one per thread).
    pub fn wall_s(&self) -> f64 {
        self.cpu_s() / self.threads.max(1) as f64
    }

    /// Whether the run would take more than [`LONG_RUN_S`].
    pub fn is_long(&self) -> bool {
        self.wall_s() > LONG_RUN_S
    }

    /// Bytes one seed-run of the row that records the most holds at its end (see
    /// [`BYTES_PER_HISTORY_EVENT`] and [`BYTES_PER_CLIENT`]).
    pub fn seed_memory_bytes(&self) -> f64 {
        let history = self
            .rows
            .iter()
            .map(|r| r.history_events as f64 / r.probe_ms * self.duration_ms * BYTES_PER_HISTORY_EVENT)
            .fold(0.0, f64::max);
        history + self.clients as f64 * BYTES_PER_CLIENT
    }

    /// Seed-runs in progress at once: one per thread, fewer if the run has fewer.
    pub fn seeds_at_once(&self) -> u64 {
        (self.threads.max(1) as u128).min(self.seed_runs()).max(1) as u64
    }

    /// Bytes the run would hold at its peak: [`Self::seeds_at_once`] seed-runs of the hungriest
    /// row, each at its end.
    pub fn peak_memory_bytes(&self) -> f64 {
        self.seed_memory_bytes() * self.seeds_at_once() as f64
    }

    /// Wall seconds the probe itself took.
    pub fn probe_wall_s(&self) -> f64 {
        self.rows.iter().map(|r| r.wall_s).sum()
    }
}

/// Probes every row of `scenario` (seed 0) and estimates a run of `seeds` seeds per row on
/// `threads` threads. `time` runs the closure it is given and returns the wall seconds it took.
pub fn estimate(
    scenario: &Scenario,
    seeds: u64,
    threads: usize,
    time: &mut dyn FnMut(&mut dyn FnMut()) -> f64,
) -> Estimate {
    let duration_ms = scenario.setup.duration_ms;
    let first_ms = duration_ms.min(FIRST_PROBE_MS);
    let (mut rows, mut panics) = probe(scenario, first_ms, time);
    // Events per simulated ms of every row together; the second probe is as long as the budget
    // allows, capped at the run's duration, and only run when it is much longer than the first.
    let rate: f64 = rows.iter().map(|r| r.events as f64 / r.probe_ms).sum();
    let second_ms = if rate > 0.0 { (EVENT_BUDGET / rate).min(duration_ms) } else { duration_ms };
    if second_ms >= 2.0 * first_ms {
        (rows, panics) = probe(scenario, second_ms.floor(), time);
    }
    Estimate { rows, panics, seeds, duration_ms, threads, clients: scenario.setup.workload.clients }
}

/// Runs seed 0 of every row for `probe_ms` of simulated time.
fn probe(
    scenario: &Scenario,
    probe_ms: f64,
    time: &mut dyn FnMut(&mut dyn FnMut()) -> f64,
) -> (Vec<RowProbe>, Vec<ProbePanic>) {
    let mut short = scenario.clone();
    short.setup.duration_ms = probe_ms;
    let (mut rows, mut panics) = (Vec::new(), Vec::new());
    for run in &short.runs {
        let mut result = None;
        // Folding as a campaign does by default: the memory estimate is of the run `sim run`
        // makes, whose histories count the events only counted instead of keeping them.
        let probe = || folding_counted(true, || run_seed_until(&short, run, 0, &RunOptions::default(), None));
        let wall_s = time(&mut || result = Some(probe()));
        match result.expect("the timer runs the probe") {
            Ok(out) => {
                let history_events = out.history.events.len() as u64;
                rows.push(RowProbe { label: run.label.clone(), probe_ms, events: out.events, history_events, wall_s });
                recycle(out.history);
            }
            Err(e) => panics.push(ProbePanic {
                label: run.label.clone(),
                zero_time: matches!(e, SeedError::Halted(Halt::Stuck(_))),
                message: e.to_string(),
            }),
        }
    }
    (rows, panics)
}

/// Bytes as a person reads them: `900 kB`, `12 MB`, `3.4 GB`, `47.1 TB` (powers of 1000).
pub fn human_bytes(b: f64) -> String {
    if b < 1e6 {
        format!("{:.0} kB", (b / 1e3).max(1.0))
    } else if b < 1e9 {
        format!("{:.0} MB", b / 1e6)
    } else if b < 1e12 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} TB", b / 1e12)
    }
}

/// Seconds as a person reads them: `under 0.1 s`, `0.4 s`, `12 s`, `3 min 20 s`, `2.5 h`, `3.1 days`.
pub fn human_duration(s: f64) -> String {
    if s < 0.1 {
        "under 0.1 s".to_string()
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3_600.0 {
        let whole = s.round();
        let m = (whole / 60.0).floor();
        format!("{m:.0} min {:.0} s", whole - m * 60.0)
    } else if s < 86_400.0 {
        format!("{:.1} h", s / 3_600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(seeds: u64, threads: usize) -> Estimate {
        Estimate {
            rows: vec![
                RowProbe { label: "a".into(), probe_ms: 1_000.0, events: 10_000, history_events: 500, wall_s: 0.01 },
                RowProbe { label: "b".into(), probe_ms: 2_000.0, events: 4_000, history_events: 2_000, wall_s: 0.002 },
            ],
            panics: vec![],
            seeds,
            duration_ms: 60_000.0,
            threads,
            clients: 10,
        }
    }

    #[test]
    fn figures_scale_with_seeds_duration_and_threads() {
        let e = est(100, 2);
        assert_eq!(e.seed_runs(), 200);
        assert_eq!(e.simulated_s(), 12_000.0);
        // a: 10 events per simulated ms, b: 2; 60 000 ms a seed, 100 seeds.
        assert_eq!(e.events(), (10.0 + 2.0) * 60_000.0 * 100.0);
        let cpu = (0.01 / 1_000.0 + 0.002 / 2_000.0) * 60_000.0 * 100.0;
        assert!((e.cpu_s() - cpu).abs() < 1e-9);
        assert!((e.wall_s() - cpu / 2.0).abs() < 1e-9);
        assert_eq!(est(200, 2).events(), 2.0 * e.events());
        assert!(!e.is_long());
        assert!(est(100_000, 1).is_long());
    }

    #[test]
    fn memory_is_the_hungriest_row_times_the_seeds_at_once() {
        // a records 0.5 events per simulated ms, b 1: b's 60 000 events at its end, and 10 clients.
        let per_seed = 60_000.0 * BYTES_PER_HISTORY_EVENT + 10.0 * BYTES_PER_CLIENT;
        assert_eq!(est(100, 2).seed_memory_bytes(), per_seed);
        assert_eq!(est(100, 2).peak_memory_bytes(), 2.0 * per_seed);
        assert_eq!(est(100, 64).peak_memory_bytes(), 64.0 * per_seed);
        // One seed of each of two rows: two seed-runs at most, however many threads.
        assert_eq!(est(1, 64).seeds_at_once(), 2);
        assert_eq!(human_bytes(900_000.0), "900 kB");
        assert_eq!(human_bytes(12_300_000.0), "12 MB");
        assert_eq!(human_bytes(3.44e9), "3.4 GB");
        assert_eq!(human_bytes(4.71e13), "47.1 TB");
    }

    #[test]
    fn durations_read_as_a_person_would() {
        assert_eq!(human_duration(0.01), "under 0.1 s");
        assert_eq!(human_duration(0.42), "0.4 s");
        assert_eq!(human_duration(42.0), "42 s");
        assert_eq!(human_duration(200.0), "3 min 20 s");
        assert_eq!(human_duration(9_000.0), "2.5 h");
        assert_eq!(human_duration(3.0 * 86_400.0), "3.0 days");
    }
}
