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

/// `sim merge`'s options, as the command line gave them.
#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    /// The partial results files, one per shard, in any order.
    pub parts: Vec<PathBuf>,
    /// Run parts: `--json FILE`.
    pub json: Option<PathBuf>,
    /// Run parts: `--report DIR`.
    pub report: Option<PathBuf>,
    /// Run parts: `--timeline-seed S`.
    pub timeline_seed: Option<u64>,
    /// Sweep parts: `--out DIR`.
    pub out: Option<PathBuf>,
    /// Sweep parts: `--full`.
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
