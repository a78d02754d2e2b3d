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

const AFTER_HELP: &str = "\
KEY is a dotted path into the scenario file, as written: table keys by name, [[faults]],
[[variants]] and [[network.links]] blocks and array elements by index from 0:
  duration_ms                 the top-level key
  workload.clients            a key of [workload]; likewise network.latency_ms, clocks.drift_ppm
  models.redlock.ttl_ms       a model parameter ([models.redlock] and the key are added if absent)
  variants.1.ttl_ms           a parameter of the second [[variants]] block
  faults.0.duration_ms        the first [[faults]] block (added to it if absent)
  workload.hold_ms.uniform.1  the upper end of hold_ms = { uniform = [a, b] }
The edited file is checked by the scenario parser like any file: an unknown key, a value out of
range, or a block that does not exist (faults.7 with 2 faults) is refused with the parser's
explanation and exit code 2, before anything runs. `seeds` and [expect] cannot be swept.

Values:
  KEY=FROM..TO:STEP  FROM, FROM+STEP, ... up to TO (included when a step lands on it); integers
                     when all three are integers, else numbers: 0.5..2.0:0.5 is 0.5, 1, 1.5, 2
  KEY=a,b,c          a list: numbers, true/false, or strings (models.redis.persistence=none,always)
At most 10000 points in all.

Outputs in DIR (created if absent; only these files are replaced, nothing else is removed;
another sim writing DIR meanwhile is refused with exit 2):
  sweep.csv          one row per point and algorithm: the parameter values (columns named by
                     their keys), label, runs, overlap and stale-write rates with 95% intervals,
                     lost updates, throughput, acquire latency p50/p99, unavailability,
                     messages per acquisition, wake-ups per release, first failing seeds, then
                     double executions (runs, rate, 95% interval: a scheduled workload only); an
                     empty cell means no data (never 0)
  sweep.json         scenario, file, seeds, params [{key, values}], and per point its values and
                     `rows`: per algorithm the CSV's fields (label, runs, rates, ...); with
                     --full, `results` instead: the whole rows of the results JSON (`sim run
                     --json`) for that point, CDFs included (about 85 KB a point)
  sweep.parquet      the CSV's rows with typed columns (parameters as INT64/DOUBLE/BOOLEAN/
                     string, counts INT64, rates and measures DOUBLE, null for no data), for
                     pandas, polars or DuckDB
  NAME.svg, NAME.png charts against the first parameter, one line per algorithm (and combination
                     of the other parameters), with the 95% band where the metric has one:
                     overlap_rate, stale_unfenced_rate, stale_fenced_rate, throughput_per_s,
                     acquire_latency_ms_p99, messages_per_acquisition, notifications_per_release
  points/point-N.toml  the scenario of point N (0-based, as in sweep.json) when it has failing
                     seeds: the replay commands run it

The terminal gets one summary line per point and algorithm. The scenario's [expect] blocks are
not judged in a sweep.

Several machines and interruptions:
  --shard K/N        run the K-th of N contiguous blocks of the seeds at every point and write
                     only DIR/shard-K-of-N.json; `sim merge` folds the N files into the files
                     above, byte-identical to a sweep on one machine
  --resume           every finished point is recorded in DIR/sweep-progress.jsonl as it
                     completes (DIR/shard-K-of-N.progress.jsonl for a shard; removed when the
                     sweep finishes); --resume skips
                     the points recorded there by the same sweep (same scenario text, --param,
                     --seeds, --algorithm, --shard; another is refused with exit 2) and gives
                     exactly the files of an uninterrupted sweep

Exit codes: 0 ran; 2 bad command line or scenario (nothing ran); 3 a seed panicked in some point
(reported; the outputs are still written); 130 interrupted by Ctrl-C (the finished points, and
the finished seeds of the point in progress, are written).

Examples:
  sim sweep scenarios/failover.toml --param models.redis.ttl_ms=5000..30000:5000 --out out/ttl
  sim sweep FILE --param faults.0.duration_ms=0..2000:500 --param workload.clients=2,10 --out DIR";

/// `sim sweep`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, Default, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct SweepOptions {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// A parameter to sweep: KEY=FROM..TO:STEP or KEY=a,b,c (see below). Repeatable: several
    /// give every combination, the first varying slowest.
    #[arg(long = "param", value_name = "KEY=FROM..TO:STEP", required = true)]
    pub params: Vec<String>,
    /// Seeds to run at every point: N (seeds 0..N) or A..B (A to B-1). Default: the file's `seeds`.
    #[arg(long, value_name = "N|A..B")]
    pub seeds: Option<String>,
    /// Run only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Worker threads (default: all cores; at most 1024). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// The directory to write sweep.csv, sweep.json, sweep.parquet and the charts to (created if
    /// absent).
    #[arg(long, value_name = "DIR", required = true)]
    pub out: PathBuf,
    /// Run only shard K of N (0-based) of the seeds at every point; write DIR/shard-K-of-N.json
    /// for `sim merge` instead of the sweep's files.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Skip the points this same sweep already finished in DIR (its progress record) and run
    /// the rest; the files come out as an uninterrupted sweep's.
    #[arg(long)]
    pub resume: bool,
    /// Keep every point's whole results JSON rows in sweep.json (latency and wait CDFs, first
    /// violations, ...; about 85 KB a point) instead of one summary per row. A shard writes no
    /// sweep.json: give --full to `sim merge`.
    #[arg(long, conflicts_with = "shard")]
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
