//! A sweep's campaigns: one per point, run one after another over the same seeds, each point's
//! rows handed to the caller as it finishes (the `--resume` record), and points finished by an
//! earlier, interrupted sweep taken as recorded instead of run again. A stop ends the sweep after
//! the point it cut, which is kept as a partial point unless none of its seeds finished.
//! [`run_sweep`] is `sim sweep` after its arguments are checked: the resume record, the points,
//! their run, and the outputs (the sweep's files, or a shard's part).

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use locksim_reports::shard::{merge_rows, Origin, PartialResults, PointState, Shard};
use locksim_reports::sweep::finish::{finish, SweepRun};
use locksim_reports::sweep::progress::Progress as RecordFile;
use locksim_reports::AlgorithmTotals;
use locksim_simulator::scenario::RunSpec;

use crate::rows::{Campaign, Progress};

/// One point of a sweep: to run, or already run by an earlier sweep.
pub enum Point<'a> {
    /// Its campaign.
    Run(Campaign<'a>),
    /// Its rows as the progress record holds them.
    Recorded(Vec<AlgorithmTotals>),
}

/// What a sweep's points gave.
pub struct SweepOutcome {
    /// The rows of every point that ran or was recorded, in order, each with whether it is
    /// complete (only the last can be partial, after a stop).
    pub points: Vec<(Vec<AlgorithmTotals>, bool)>,
    /// Seed-runs finished here (recorded points not counted).
    pub finished: u64,
    /// The stop flag ended the sweep early.
    pub interrupted: bool,
}

/// Runs `points` in order on `pool`; `finished_point(i, rows)` is called for every point run to
/// its end, before the next starts (its error ends the sweep).
pub fn run_points<E>(
    points: Vec<Point>,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    mut progress: impl FnMut(Progress),
    mut finished_point: impl FnMut(usize, &[AlgorithmTotals]) -> Result<(), E>,
) -> Result<SweepOutcome, E> {
    let mut out = SweepOutcome { points: Vec::new(), finished: 0, interrupted: false };
    for (i, point) in points.into_iter().enumerate() {
        let campaign = match point {
            Point::Recorded(rows) => {
                out.points.push((rows, true));
                continue;
            }
            Point::Run(campaign) => campaign,
        };
        let outcome = campaign.run(pool, stop, &mut progress);
        out.finished += outcome.finished;
        out.interrupted = outcome.interrupted;
        if outcome.finished == 0 && out.interrupted {
            break;
        }
        if !out.interrupted {
            finished_point(i, &outcome.totals)?;
        }
        out.points.push((outcome.totals, !out.interrupted));
        if out.interrupted {
            break;
        }
    }
    Ok(out)
}

impl SweepOutcome {
    /// Whether a seed of any point panicked or was stuck.
    pub fn panicked(&self) -> bool {
        self.points.iter().any(|(rows, _)| rows.iter().any(|t| t.panicked_runs > 0))
    }

    /// A shard's partial results: every point's rows over the shard's seeds; `None` when the
    /// sweep was interrupted (its finished points are in its progress record; `--resume`
    /// completes it).
    pub fn partial(&self, origin: Origin, shard: Shard) -> Option<PartialResults> {
        if self.interrupted {
            return None;
        }
        let points =
            self.points.iter().enumerate().map(|(i, (rows, _))| PointState { point: i, rows: rows.to_vec() }).collect();
        Some(PartialResults::sweep(origin, shard, points))
    }
}

/// A whole sweep as `sim sweep` runs it, every input already checked: its points over `seeds`
/// (each point's rows picked), the outputs in `run.out`, its progress record there.
pub struct SweepPlan<'a> {
    /// The outputs and what they describe (the points, the seeds asked for, `--full`).
    pub run: SweepRun<'a>,
    /// Each point's rows (the `--algorithm` filter applied), in point order.
    pub rows: Vec<Vec<&'a RunSpec>>,
    /// Identifies the sweep in its progress record and a shard's part.
    pub origin: Origin,
    /// `--algorithm`, for rows taken from a progress record.
    pub algorithms: &'a [String],
    /// `--shard K/N`: the block of the seeds every point runs.
    pub shard: Option<Shard>,
    /// `--resume`: skip the points this same sweep recorded in `run.out`.
    pub resume: bool,
}

/// How a sweep ended: what to print, and its class.
pub struct SweepEnd {
    /// The summary (or, for a shard, where its part went) for the terminal.
    pub text: String,
    /// A seed panicked or was stuck (exit 3), unless interrupted.
    pub panicked: bool,
    /// The stop flag ended the sweep (exit 130).
    pub interrupted: bool,
}

/// Runs `plan`: takes the points an interrupted run of the same sweep recorded (with
/// `--resume`), runs the others one campaign each on `pool`, records each finished point, and
/// writes the outputs (a shard: its part, `DIR/shard-K-of-N.json`; an interrupted shard none).
/// A finished sweep's progress record is removed. `note` hears what `--resume` found and a
/// record that could not be removed (for stderr); `on_total` the seed-runs to run, before any;
/// `progress` every seed folded. Errors: a record or output that cannot be
/// read or written, or more seed-runs than 64 bits count.
pub fn run_sweep(
    plan: &SweepPlan,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    mut note: impl FnMut(&str),
    on_total: impl FnOnce(u64),
    progress: impl FnMut(Progress),
) -> Result<SweepEnd, String> {
    let out = plan.run.out;
    let n_points = plan.run.points.len();
    let resumed = if plan.resume { RecordFile::resume(out, &plan.origin, plan.shard)? } else { None };
    let found = resumed.is_some();
    let (mut record, recorded) = match resumed {
        Some(found) => found,
        None => (RecordFile::start(out, &plan.origin, plan.shard)?, Vec::new()),
    };
    if plan.resume && !found {
        note(&format!(
            "resume: no progress record in {} (the sweep finished, or never started): running every point",
            out.display()
        ));
    } else if plan.resume {
        note(&format!(
            "resume: {} of {n_points} points already finished (recorded in {})",
            recorded.len().min(n_points),
            record.path().display()
        ));
    }
    // A shard runs its block of the seeds at every point.
    let seeds = plan.run.seeds.clone();
    let run_seeds = plan.shard.map_or(seeds.clone(), |s| s.seeds(seeds.clone()));
    let mut total = 0u64;
    let (from, to) = (run_seeds.start, run_seeds.end);
    for rows in plan.rows.iter().skip(recorded.len()) {
        let (per_row, rows) = (to - from, rows.len());
        let point = per_row.checked_mul(rows as u64).ok_or_else(|| {
            format!(
                "--seeds {from}..{to}: {per_row} seeds x {rows} rows = {} seed-runs, more than this machine can \
                 count (or ever run); give fewer seeds (--seeds) or rows (--algorithm)",
                u128::from(per_row) * rows as u128
            )
        })?;
        total = total.checked_add(point).ok_or_else(|| {
            format!(
                "--seeds {from}..{to} at {n_points} points: more seed-runs than this machine can count (or ever run); give fewer seeds"
            )
        })?;
    }
    // Points an interrupted sweep finished are taken from its record, not run again.
    let name = record.path().display().to_string();
    let mut points = Vec::with_capacity(n_points);
    for (i, point) in plan.run.points.iter().enumerate() {
        points.push(match recorded.get(i) {
            Some(state) => Point::Recorded(merge_rows(&point.scenario, plan.algorithms, &[&state.rows], &[&name])?),
            None => Point::Run(Campaign::new(&point.scenario, plan.rows[i].clone(), run_seeds.clone())),
        });
    }
    on_total(total);
    let outcome = run_points(points, pool, stop, progress, |i, totals| {
        record.record(&PointState { point: i, rows: totals.to_vec() })
    })?;
    let end = match plan.shard {
        Some(shard) => shard_end(out, plan.origin.clone(), shard, run_seeds, &outcome, n_points)?,
        None => {
            let SweepOutcome { points: done, finished, interrupted } = outcome;
            let end = finish(&plan.run, &done, interrupted, finished, total)?;
            SweepEnd { text: end.text, panicked: end.panicked, interrupted }
        }
    };
    if !end.interrupted {
        forget_progress(record.path(), &mut note);
    }
    Ok(end)
}

/// Removes a finished sweep's progress record: it exists only so that `--resume` can pick up an
/// interrupted sweep, and it holds every point's exact state (histograms included, about 4.6 KB
/// per row per point), several times the size of the outputs themselves. A `--resume` of a
/// finished sweep then runs it again, to the same files.
fn forget_progress(path: &Path, note: &mut impl FnMut(&str)) {
    if let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            note(&format!("note: could not remove the finished sweep's progress record {}: {e}", path.display()));
        }
    }
}

/// `--shard K/N`: writes the shard's partial results (every point's rows over the shard's
/// seeds) as `DIR/shard-K-of-N.json`. An interrupted shard writes none: its finished points are
/// in its progress record, and `--resume` completes it.
fn shard_end(
    out: &Path,
    origin: Origin,
    shard: Shard,
    run_seeds: Range<u64>,
    outcome: &SweepOutcome,
    n_points: usize,
) -> Result<SweepEnd, String> {
    let file = origin.file.clone();
    let Some(partial) = outcome.partial(origin, shard) else {
        let whole = outcome.points.iter().filter(|(_, complete)| *complete).count();
        let text = format!(
            "# interrupted: shard {shard} finished {whole} of {n_points} points; no partial results written (add --resume to go on)\n"
        );
        return Ok(SweepEnd { text, panicked: false, interrupted: true });
    };
    let path = out.join(format!("shard-{}-of-{}.json", shard.index, shard.count));
    locksim_reports::write_atomic(&path, partial.to_text())
        .map_err(|e| format!("cannot write the partial results to {}: {e}", path.display()))?;
    let text = format!(
        "# shard {shard} of sweep {file}: {n_points} point{} × seeds {}..{}; partial results in {} (merge every shard with `sim merge … --out DIR`)\n",
        if n_points == 1 { "" } else { "s" },
        run_seeds.start,
        run_seeds.end,
        path.display()
    );
    Ok(SweepEnd { text, panicked: outcome.panicked(), interrupted: false })
}
