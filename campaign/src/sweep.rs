//! A sweep's campaigns: one per point, run one after another over the same seeds, each point's
//! rows handed to the caller as it finishes (the `--resume` record), and points finished by an
//! earlier, interrupted sweep taken as recorded instead of run again. A stop ends the sweep after
//! the point it cut, which is kept as a partial point unless none of its seeds finished.

use std::sync::atomic::AtomicBool;

use locksim_reports::exact::TotalsState;
use locksim_reports::shard::{Origin, PartialResults, PointState, Shard};
use locksim_reports::AlgorithmTotals;

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
        let points = self
            .points
            .iter()
            .enumerate()
            .map(|(i, (rows, _))| PointState { point: i, rows: rows.iter().map(TotalsState::of).collect() })
            .collect();
        Some(PartialResults::sweep(origin, shard, points))
    }
}
