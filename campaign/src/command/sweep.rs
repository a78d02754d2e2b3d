//! `sim sweep`'s work, from its options: the file, every point's scenario and rows, the seeds,
//! the shard and DIR checked before anything runs, then the points run
//! ([`crate::sweep::run_sweep`]: one campaign each, recorded as they finish, resumable) with a
//! progress bar, and the summary printed; and [`finish`], what every sweep ends with, whether its
//! points ran here or were folded from shards by `sim merge`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use locksim_reports::shard::{Origin, Shard};
use locksim_reports::sweep::finish::SweepRun;
use locksim_reports::sweep::params_and_points;
use locksim_reports::sweep::path::point_scenarios;
use locksim_reports::sweep::values::describe_point;
use locksim_reports::AlgorithmTotals;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{load_file, RunSpec};

use crate::command::run::VERSION;
use crate::error::CommandError;
use crate::progress::{progress_bar, shown_on};
use crate::seed_range::parse_seeds;
use crate::stdout::print_out;
use crate::sweep::{run_sweep, SweepPlan};
use crate::verdict::Class;

/// `sim sweep`'s options, as the command line gave them.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// The scenario file.
    pub file: PathBuf,
    /// Each `--param KEY=…`.
    pub params: Vec<String>,
    /// `--seeds N|A..B` (default: the file's `seeds`).
    pub seeds: Option<String>,
    /// `--algorithm` (empty: every row).
    pub algorithms: Vec<String>,
    /// `--threads`.
    pub threads: Option<usize>,
    /// `--out DIR`.
    pub out: PathBuf,
    /// `--shard K/N`.
    pub shard: Option<String>,
    /// `--resume`.
    pub resume: bool,
    /// `--full`.
    pub full: bool,
}

/// Runs the sweep as `opts` say; ends [`Class::Interrupted`], [`Class::ModelFailed`] (a seed
/// panicked at some point) or [`Class::Passed`]: a sweep judges no `[expect]`.
pub fn sweep(opts: &SweepOptions, models: &[&'static dyn DynModel], stop: &AtomicBool) -> Result<Class, CommandError> {
    // The file as written must be valid on its own (its errors keep their real lines).
    let base = load_file(&opts.file, models)?;
    let file = opts.file.display().to_string();
    let (params, values) = params_and_points(&opts.params).map_err(CommandError::bad_input)?;
    let seeds = match &opts.seeds {
        Some(text) => parse_seeds(text)?,
        None => 0..base.seeds,
    };
    let text = locksim_simulator::scenario::read_scenario_text(&opts.file)?;

    // Every point's scenario through the parser, and its rows, before anything runs.
    let points = point_scenarios(&file, &text, &params, &values, models).map_err(CommandError::bad_input)?;
    let mut runs: Vec<Vec<&RunSpec>> = Vec::with_capacity(points.len());
    for point in &points {
        // Every wanted label must exist at every point; the error names the point.
        let rows = point.scenario.rows_labelled(&opts.algorithms).map_err(|mut e| {
            e.file = format!("{} with {}", e.file, describe_point(&params, &point.values));
            e
        })?;
        runs.push(rows);
    }
    let shard = opts.shard.as_deref().map(Shard::parse).transpose().map_err(CommandError::bad_input)?;
    let pool = crate::thread_pool(opts.threads).map_err(CommandError::bad_input)?;
    let _out_lock = crate::out_dir::prepare_locked(&opts.out, "--out").map_err(CommandError::bad_input)?;
    let origin = Origin::new(VERSION, &file, &text, seeds.clone(), &opts.algorithms, &opts.params);
    let plan = SweepPlan {
        run: SweepRun {
            out: &opts.out,
            name: &base.name,
            file: &file,
            seeds,
            params: &params,
            points: &points,
            has_expect: !base.expect.is_empty(),
            full: opts.full,
        },
        rows: runs,
        origin,
        algorithms: &opts.algorithms,
        shard,
        resume: opts.resume,
    };
    let progress = progress_bar(0);
    let end = run_sweep(
        &plan,
        &pool,
        stop,
        |line| eprintln!("{line}"),
        |total| progress.set_length(total),
        shown_on(&progress),
    )
    .map_err(CommandError::bad_input)?;
    progress.finish_and_clear();
    print_out(&end.text);
    Ok(sweep_class(end.interrupted, end.panicked))
}

/// A sweep's class: interrupted, a seed panicked, else passed.
fn sweep_class(interrupted: bool, panicked: bool) -> Class {
    if interrupted {
        Class::Interrupted
    } else if panicked {
        Class::ModelFailed
    } else {
        Class::Passed
    }
}

/// What every sweep ends with, whether its points ran here, were resumed, or were folded from
/// shards by `sim merge`: the files in DIR, the summary printed, the class.
pub fn finish(
    sweep: &SweepRun,
    done: Vec<(Vec<AlgorithmTotals>, bool)>,
    interrupted: bool,
    finished: u64,
    total: u64,
) -> Result<Class, CommandError> {
    let end = locksim_reports::sweep::finish::finish(sweep, &done, interrupted, finished, total)
        .map_err(CommandError::bad_input)?;
    print_out(&end.text);
    Ok(sweep_class(interrupted, end.panicked))
}
