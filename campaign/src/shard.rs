//! Campaigns over several machines: shard K of N runs the K-th of N contiguous blocks of the
//! seeds and keeps its rows as a partial results file; the parts, checked to belong together,
//! merge back into the [`Outcome`] one machine would have had, so they are judged and written by
//! the same code as a whole run.

use std::sync::atomic::AtomicBool;

use locksim_reports::shard::{merge_rows, Origin, Part, PartialResults, Shard};
use locksim_reports::AlgorithmTotals;
use locksim_simulator::scenario::Scenario;

use crate::rows::{Campaign, Outcome, Progress};

/// A shard's run: its outcome, and its partial results unless it was stopped (a part must hold
/// its whole block; an interrupted shard is run again).
pub struct ShardRun {
    /// The shard's block of seeds, folded.
    pub outcome: Outcome,
    /// The partial results to write; `None` when interrupted.
    pub partial: Option<PartialResults>,
}

impl Campaign<'_> {
    /// Runs shard `shard` of this campaign's seeds; `origin` identifies the whole run in the part.
    pub fn run_shard(
        &self,
        shard: Shard,
        origin: Origin,
        pool: &rayon::ThreadPool,
        stop: &AtomicBool,
        progress: impl FnMut(Progress),
    ) -> ShardRun {
        let outcome = self.over(shard.seeds(self.seeds.clone())).run(pool, stop, progress);
        let partial = (!outcome.interrupted).then(|| PartialResults::run(origin, shard, &outcome.totals));
        ShardRun { outcome, partial }
    }
}

/// Run parts (sorted by shard, checked to belong together) of `scenario` merged into the outcome
/// of the whole seed range. The error names the part that does not fit.
pub fn merge_run_parts(scenario: &Scenario, parts: &[&Part]) -> Result<Outcome, String> {
    let origin = &parts.first().ok_or("no parts to merge")?.partial.origin;
    let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    let states: Vec<&[_]> = parts.iter().map(|p| p.partial.rows.as_slice()).collect();
    let totals = merge_rows(scenario, &origin.algorithms, &states, &names)?;
    let seeds = origin.seed_range();
    // The parts ran these seed-runs, so the count fits; saturating all the same.
    let total = (seeds.end - seeds.start).saturating_mul(totals.len() as u64);
    Ok(Outcome { seeds, totals, verified: false, differences: Vec::new(), total, finished: total, interrupted: false })
}

/// Sweep parts (sorted by shard, checked to belong together) merged point by point: the rows of
/// each of `points` (each point's scenario, in order) over the whole seed range, every point
/// complete. The error names the part that does not fit.
pub fn merge_sweep_parts(points: &[&Scenario], parts: &[&Part]) -> Result<Vec<(Vec<AlgorithmTotals>, bool)>, String> {
    let origin = &parts.first().ok_or("no parts to merge")?.partial.origin;
    let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    if let Some(part) = parts.iter().find(|p| p.partial.points.len() != points.len()) {
        return Err(format!(
            "{}: holds {} points, but the sweep has {}; a damaged partial file",
            part.name,
            part.partial.points.len(),
            points.len()
        ));
    }
    let mut done = Vec::with_capacity(points.len());
    for (i, point) in points.iter().enumerate() {
        let mut states = Vec::with_capacity(parts.len());
        for part in parts {
            let state = part
                .partial
                .points
                .get(i)
                .filter(|p| p.point == i)
                .ok_or_else(|| format!("{}: holds no results for point {i}; a damaged partial file", part.name))?;
            states.push(state.rows.as_slice());
        }
        done.push((merge_rows(point, &origin.algorithms, &states, &names)?, true));
    }
    Ok(done)
}
