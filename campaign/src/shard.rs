//! Campaigns over several machines: shard K of N runs the K-th of N contiguous blocks of the
//! seeds and keeps its rows as a partial results file; the parts, checked to belong together,
//! merge back into the [`Outcome`] one machine would have had, so they are judged and written by
//! the same code as a whole run.

use std::sync::atomic::AtomicBool;

use locksim_reports::shard::{merge_rows, Origin, Part, PartialResults, Shard};
use locksim_reports::AlgorithmTotals;
use locksim_simulator::scenario::Scenario;

use crate::rows::{Campaign, Outcome, Progress};

/// A shard's run: its outcome and its partial results. A stopped shard's part holds the seeds
/// each row finished (a prefix of the block, as [`Campaign::run`] folds them) and says so, so a
/// SIGTERM under Slurm or Kubernetes keeps the work done; `sim merge` marks the merged run cut.
pub struct ShardRun {
    /// The shard's block of seeds, folded.
    pub outcome: Outcome,
    /// The partial results to write (marked `interrupted` when stopped).
    pub partial: PartialResults,
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
        let partial = if outcome.interrupted {
            PartialResults::run_interrupted(origin, shard, &outcome.totals)
        } else {
            PartialResults::run(origin, shard, &outcome.totals)
        };
        ShardRun { outcome, partial }
    }
}

/// Run parts (sorted by shard, checked to belong together) of `scenario` merged into the outcome
/// of the whole seed range. When a part was interrupted the outcome is too, and holds the seeds
/// every part finished. The error names the part that does not fit.
pub fn merge_run_parts(scenario: &Scenario, parts: &[&Part]) -> Result<Outcome, String> {
    let origin = &parts.first().ok_or("no parts to merge")?.partial.origin;
    let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
    let states: Vec<&[_]> = parts.iter().map(|p| p.partial.rows.as_slice()).collect();
    let totals = merge_rows(scenario, &origin.algorithms, &states, &names)?;
    for part in parts.iter().filter(|p| p.partial.interrupted) {
        check_cut_part(part)?;
    }
    let seeds = origin.seed_range();
    // The parts ran these seed-runs, so the count fits; saturating all the same.
    let total = (seeds.end - seeds.start).saturating_mul(totals.len() as u64);
    let finished = totals.iter().map(|t| t.runs + t.panicked_runs).fold(0, u64::saturating_add);
    let interrupted = parts.iter().any(|p| p.partial.interrupted);
    Ok(Outcome { seeds, totals, verified: false, differences: Vec::new(), total, finished, interrupted })
}

/// An interrupted part's counts agree with its rows: one count per row, each the seeds the
/// row's state holds and within the block (else the file was damaged or edited).
fn check_cut_part(part: &Part) -> Result<(), String> {
    let p = &part.partial;
    let block = p.shard_seeds.to - p.shard_seeds.from;
    if p.seeds_finished.len() != p.rows.len() {
        return Err(format!(
            "{}: interrupted, with {} seeds_finished counts for {} rows; a damaged partial file",
            part.name,
            p.seeds_finished.len(),
            p.rows.len()
        ));
    }
    if let Some(n) = p.seeds_finished.iter().find(|&&n| n > block) {
        return Err(format!("{}: a row finished {n} seeds of a block of {block}; a damaged partial file", part.name));
    }
    Ok(())
}

/// What `sim merge` says of the interrupted parts: per cut part and row, the seeds missing, and
/// the command that runs the shard again (its part then replaces the cut one). Empty when no part
/// was cut.
pub fn cut_parts_text(parts: &[&Part], labels: &[String]) -> String {
    let mut text = String::new();
    for part in parts.iter().filter(|p| p.partial.interrupted) {
        let p = &part.partial;
        let missing: Vec<String> = labels
            .iter()
            .enumerate()
            .filter_map(|(row, label)| {
                let m = p.missing_seeds(row);
                (!m.is_empty()).then(|| format!("{label} seeds {}..{}", m.start, m.end))
            })
            .collect();
        let algorithms: String = p.origin.algorithms.iter().map(|a| format!(" --algorithm {a}")).collect();
        text.push_str(&format!(
            "# shard {} ({}) was interrupted: missing {}; run it again with `sim run {} --seeds {}..{}{algorithms} --shard {} --json PART` and merge that part instead\n",
            p.shard,
            part.name,
            if missing.is_empty() { "nothing".to_string() } else { missing.join(", ") },
            p.origin.file,
            p.origin.seeds.from,
            p.origin.seeds.to,
            p.shard,
        ));
    }
    text
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
