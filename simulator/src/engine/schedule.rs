//! The fault schedule of one seed: every `[[faults]]` entry turned into occurrences (start, length)
//! drawn from the seed's "faults" stream before the run starts, so every algorithm of a scenario
//! meets the same schedule. Role selectors are resolved later, when an occurrence starts.

use rand::Rng;

use crate::rng::ChaCha8Rng;
use crate::setup::{FaultKind, FaultSpec};
use crate::time::{ms_to_ns, Nanos};

/// Recurring faults stop after this many occurrences (a guard against `every_ms` far below the run).
const MAX_OCCURRENCES_PER_FAULT: usize = 100_000;

/// One occurrence of a `[[faults]]` entry, drawn before the run.
#[derive(Clone, Debug)]
pub struct Occurrence {
    /// Index into the scenario's `faults`.
    pub fault: usize,
    /// When it is due to start (true time); a role selector with no member yet puts the actual
    /// start off.
    pub start_ns: Nanos,
    /// None: until the end of the run.
    pub duration_ns: Option<Nanos>,
    /// Draw for a distribution-valued kind parameter (jump size, drift ppm, …), made up front.
    pub value: f64,
}

/// Draws every occurrence that starts before `run_ns`.
pub fn draw(faults: &[FaultSpec], run_ns: Nanos, rng: &mut ChaCha8Rng) -> Vec<Occurrence> {
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate() {
        // Draw every value even for a fault that does not happen, so the probability of one
        // fault never shifts the draws of the next.
        let happens = rng.gen::<f64>() < f.probability || f.probability >= 1.0;
        let mut start_ns = ms_to_ns(f.at_ms.sample_non_negative(rng));
        let mut n = 0;
        loop {
            let duration_ns = f.duration_ms.as_ref().map(|d| ms_to_ns(d.sample_non_negative(rng)));
            let value = match &f.kind {
                FaultKind::ClockJump { by_ms } => by_ms.sample(rng),
                FaultKind::ClockDrift { ppm } => ppm.sample(rng),
                _ => 0.0,
            };
            if happens && start_ns < run_ns {
                out.push(Occurrence { fault: i, start_ns, duration_ns, value });
            }
            n += 1;
            let Some(every) = &f.every_ms else { break };
            let gap_ns = ms_to_ns(every.sample_non_negative(rng)).max(1);
            // Saturating: an occurrence past the end of time is past the run too.
            start_ns = start_ns.saturating_add(gap_ns);
            if start_ns >= run_ns || n >= MAX_OCCURRENCES_PER_FAULT {
                break;
            }
        }
    }
    out
}
