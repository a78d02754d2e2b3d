//! `sim merge`'s work, from its options: the parts read and checked to belong together, then
//! folded into the outcome one machine would have had ([`crate::shard`]) and finished as `sim
//! run`'s ([`super::run::finish`]) or `sim sweep`'s ([`super::sweep::finish`]) are, byte for byte.

use std::path::{Path, PathBuf};

use locksim_reports::shard::{check_parts, read_part, Part, KIND_RUN};
use locksim_reports::sweep::finish::SweepRun;
use locksim_reports::sweep::params_and_points;
use locksim_reports::sweep::path::point_scenarios;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{parse_str, Scenario};

use crate::error::CommandError;
use crate::finish::Outputs;
use crate::shard::{cut_parts_text, merge_run_parts, merge_sweep_parts};
use crate::stdout::print_out;
use crate::verdict::Class;

const AFTER_HELP: &str = "\
Each part is the file one `--shard K/N` wrote: `sim run FILE --shard K/N --json PART` or
`sim sweep FILE … --shard K/N --out DIR` (DIR/shard-K-of-N.json). Shard K runs the K-th of N
contiguous blocks of the seeds (of every point, for a sweep). The parts must come from the same
scenario text, sim version, seeds, --algorithm and --param, and hold every shard 0..N-1 exactly
once; otherwise nothing is written and the exit code is 2, naming the file (a duplicate names
both, a missing shard its K and seeds). Any shard can be re-run alone to replace a lost part.

The outputs are byte-identical to the single-machine run's: `sim run --json/--report` for run
parts, `sim sweep --out DIR` for sweep parts.

A run part cut by Ctrl-C or SIGTERM (`interrupted: true` in the file) holds the first seeds of
its block that each row finished; merged, the results are marked interrupted as a stopped
`sim run`'s are (each row's seeds_finished), the output names the cut shard, the seeds missing
and the command that runs that shard again, and the exit code is 130. Sweep parts are never
cut: a stopped sweep shard writes no part; its finished points stay recorded in DIR and
`--resume` runs the rest.

Exit codes: as `sim run` for run parts (0, 1 an [expect] failed, 3 a seed panicked, 130 a part
was interrupted), as `sim sweep` for sweep parts (0, 3); 2 for parts that do not belong together
or cannot be read.

Examples:
  sim run scenarios/failover.toml --shard 0/2 --json part-0.json      # on machine A
  sim run scenarios/failover.toml --shard 1/2 --json part-1.json      # on machine B
  sim merge part-0.json part-1.json --json results.json --report out/failover";

/// `sim merge`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, Default, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct MergeOptions {
    /// The partial results files, one per shard, in any order.
    #[arg(required = true, value_name = "PARTS")]
    pub parts: Vec<PathBuf>,
    /// Run parts: write the results JSON here (as `sim run --json`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run parts: also write a report directory (as `sim run --report`).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Run parts: the seed the report's timeline shows (default: the first failing seed).
    #[arg(long, value_name = "S", requires = "report")]
    pub timeline_seed: Option<u64>,
    /// Sweep parts: the directory for sweep.csv, sweep.json and the charts (as `sim sweep --out`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sweep parts: keep every point's whole results rows in sweep.json (as `sim sweep --full`).
    #[arg(long, requires = "out")]
    pub full: bool,
}

/// Merges the parts and ends as `sim run` (run parts) or `sim sweep` (sweep parts) would have.
pub fn merge(opts: &MergeOptions, models: &[&'static dyn DynModel]) -> Result<Class, CommandError> {
    // Before reading anything: the results JSON is writable and is none of the parts.
    let inputs: Vec<&Path> = opts.parts.iter().map(PathBuf::as_path).collect();
    crate::out_file::check_all(&[("--json", opts.json.as_deref())], &inputs)?;
    let parts: Vec<Part> =
        opts.parts.iter().map(|p| read_part(p)).collect::<Result<_, _>>().map_err(CommandError::bad_input)?;
    let sorted = check_parts(&parts).map_err(CommandError::bad_input)?;
    let first = &sorted[0].partial;
    let origin = &first.origin;
    let scenario = parse_str(&origin.file, &origin.scenario_text, models)?;

    if first.kind == KIND_RUN {
        if opts.out.is_some() {
            return Err(CommandError::bad_input(
                "--out is for sweep parts; these are `sim run` parts: give --json FILE and/or --report DIR",
            ));
        }
        if opts.json.is_none() && opts.report.is_none() {
            return Err(CommandError::bad_input("nothing to write: give --json FILE and/or --report DIR"));
        }
        let _report_lock = opts
            .report
            .as_deref()
            .map(|dir| crate::out_dir::prepare_locked(dir, "--report"))
            .transpose()
            .map_err(CommandError::bad_input)?;
        let outcome = merge_run_parts(&scenario, &sorted).map_err(CommandError::bad_input)?;
        let labels: Vec<String> = outcome.totals.iter().map(|t| t.label.clone()).collect();
        print_out(&cut_parts_text(&sorted, &labels));
        let outputs =
            Outputs { json: opts.json.as_deref(), report: opts.report.as_deref(), timeline_seed: opts.timeline_seed };
        return super::run::finish(&scenario, origin.scenario_text.clone(), &origin.algorithms, &outcome, &outputs);
    }

    let Some(out) = &opts.out else {
        return Err(CommandError::bad_input(
            "these are `sim sweep` parts: give --out DIR (--json and --report are for run parts)",
        ));
    };
    if opts.json.is_some() || opts.report.is_some() {
        return Err(CommandError::bad_input(
            "--json and --report are for run parts; for sweep parts give --out DIR only",
        ));
    }
    let (params, values) = params_and_points(&origin.params).map_err(CommandError::bad_input)?;
    let points = point_scenarios(&origin.file, &origin.scenario_text, &params, &values, models)
        .map_err(CommandError::bad_input)?;
    let _out_lock = crate::out_dir::prepare_locked(out, "--out").map_err(CommandError::bad_input)?;
    let scenarios: Vec<&Scenario> = points.iter().map(|p| &p.scenario).collect();
    let done = merge_sweep_parts(&scenarios, &sorted).map_err(CommandError::bad_input)?;
    let seeds = origin.seed_range();
    let total: u64 = done
        .iter()
        .map(|(rows, _)| (rows.len() as u64).saturating_mul(seeds.end - seeds.start))
        .fold(0, u64::saturating_add);
    let sweep = SweepRun {
        out,
        name: &scenario.name,
        file: &origin.file,
        seeds,
        params: &params,
        points: &points,
        has_expect: !scenario.expect.is_empty(),
        full: opts.full,
    };
    super::sweep::finish(&sweep, done, false, total, total)
}
