//! `sim run FILE`: every algorithm of a scenario over its seeds; the results table, the results
//! JSON, a trace of one seed, and the `[expect]` verdict as the exit code. With `--shard K/N`,
//! one block of the seeds and a partial results file for `sim merge`, whose results go through
//! [`finish`] as this command's do.

use std::path::{Path, PathBuf};

use clap::Args;
use locksim_campaign::finish::{shard_text, traces_text, Outputs};
use locksim_campaign::shard::ShardRun;
use locksim_campaign::{Campaign, Class, Outcome};
use locksim_reports::shard::{Origin, Shard};
use locksim_simulator::scenario::{load_file_with_text, Scenario};

use crate::exit::{CliError, EXPECTATION_FAILED, MODEL_FAILED, OK};
use crate::interrupt::INTERRUPTED;
use crate::runner::{print_out, progress_bar, run_campaign, shown_on, thread_pool};
use crate::seeds::{parse_seeds, single_seed};

/// The `sim` version partial results files and sweep progress records carry: parts or records of
/// another version are refused (its models may fold different numbers).
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Run exactly this seed.
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// Seeds to run: N (seeds 0..N) or A..B (A to B-1). Default: the file's `seeds`.
    #[arg(long, value_name = "N|A..B")]
    pub seeds: Option<String>,
    /// Run only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Judge every expectation on the seeds run, as if they were the file's. Without it, a run of
    /// fewer seeds than the file's judges only what those seeds decide (a "none" broken, a
    /// "some" met, a share settled whatever the other seeds show) and lists the rest as not judged.
    #[arg(long)]
    pub judge_all: bool,
    /// Write the results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Record the event trace of the (single) seed: to stderr, apart from the table on stdout;
    /// with FILE, into FILE (JSON lines when FILE ends in .jsonl; `-`: stdout).
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub trace: Option<Option<PathBuf>>,
    /// Worker threads (default: all cores; at most 1024). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Run every seed twice with its full trace and compare the trace hashes; a difference
    /// (nondeterminism) names the seed and the first differing trace entry, and exits 3. Slow:
    /// every event is rendered as a trace line (about 20 times a plain run on failover.toml).
    #[arg(long)]
    pub verify: bool,
    /// Also write a report into DIR: results.json, charts (SVG and PNG) and index.html.
    /// The directory is created if missing; only the report's own files are replaced; another
    /// sim writing it meanwhile is refused with exit 2.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// The seed the report's timeline shows (default: the first failing seed, else the first).
    #[arg(long, value_name = "S", requires = "report")]
    pub timeline_seed: Option<u64>,
    /// Run only shard K of N (0-based): the K-th of N contiguous blocks of the seeds, and write a
    /// partial results file to --json for `sim merge`, which judges the expectations.
    #[arg(long, value_name = "K/N", requires = "json", conflicts_with_all = ["trace", "verify", "report"])]
    pub shard: Option<String>,
}

pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let (scenario, scenario_text) = load_file_with_text(&args.file, &models)?;
    // On stderr, before the seeds run: the table on stdout stays as it was.
    for note in locksim_simulator::scenario::notes::late_fault_notes(&scenario) {
        eprintln!("note: {note}");
    }
    let seeds = match (&args.seed, &args.seeds) {
        (Some(s), _) => single_seed(*s)?,
        (None, Some(text)) => parse_seeds(text)?,
        (None, None) => 0..scenario.seeds,
    };
    let mut scenario = scenario;
    if args.judge_all {
        // The seeds run stand for the file's: every expectation is judged on them.
        scenario.seeds = scenario.seeds.min(seeds.end - seeds.start);
    }
    let shard = args.shard.as_deref().map(Shard::parse).transpose().map_err(CliError::bad_input)?;
    let pool = thread_pool(args.threads)?;
    let runs = scenario.rows_labelled(&args.algorithms)?;
    // Every output checked before any work: writable, not the scenario, not each other; the
    // report directory held by this run alone.
    let trace_file = args.trace.as_ref().and_then(|t| t.as_deref()).filter(|t| t.as_os_str() != "-");
    crate::out_file::check_all(&[("--json", args.json.as_deref()), ("--trace", trace_file)], &[&args.file])?;
    let _report_lock = args
        .report
        .as_deref()
        .map(|dir| crate::out_dir::prepare_locked(dir, "--report"))
        .transpose()
        .map_err(CliError::bad_input)?;
    let campaign = Campaign::new(&scenario, runs, seeds.clone()).verified(args.verify);
    if let Some(shard) = shard {
        return run_shard(&args, &campaign, &scenario_text, shard, &pool);
    }
    if let Some(target) = &args.trace {
        if seeds.end - seeds.start != 1 {
            return Err(CliError::bad_input(format!(
                "--trace records one seed, but {} seeds were asked for; add --seed S",
                seeds.end - seeds.start
            )));
        }
        write_traces(&campaign, seeds.start, target.as_deref())?;
    }

    let total = crate::seeds::seed_runs(&campaign.seeds, campaign.rows.len())?;
    let progress = progress_bar(total);
    let outcome = run_campaign(&campaign, &pool, &progress);
    progress.finish_and_clear();
    let outputs =
        Outputs { json: args.json.as_deref(), report: args.report.as_deref(), timeline_seed: args.timeline_seed };
    finish(&scenario, scenario_text, &args.algorithms, &outcome, &outputs)
}

/// What every run ends with, whether its seeds ran here or in shards that `sim merge` folded
/// ([`locksim_campaign::finish::finish`]): the table printed, the results written, the exit code.
pub(crate) fn finish(
    scenario: &Scenario,
    scenario_text: String,
    algorithms: &[String],
    outcome: &Outcome,
    outputs: &Outputs,
) -> Result<i32, CliError> {
    let finished = locksim_campaign::finish::finish(scenario, scenario_text, algorithms, outcome, outputs, print_out)?;
    if let Some(line) = finished.report_line {
        eprintln!("{line}");
    }
    Ok(exit_code(finished.class))
}

/// A run's class as the exit code (130, 3, 1, 0).
pub(crate) fn exit_code(class: Class) -> i32 {
    match class {
        Class::Interrupted => INTERRUPTED,
        Class::ModelFailed => MODEL_FAILED,
        Class::ExpectationFailed => EXPECTATION_FAILED,
        Class::Passed => OK,
    }
}

/// `--shard K/N`: runs the shard's block of the seeds, writes its partial results to `--json`
/// and prints its table. Nothing is judged here: `sim merge` judges the whole run. A shard
/// stopped by Ctrl-C or SIGTERM writes the seeds it finished, its part marked interrupted.
fn run_shard(
    args: &RunArgs,
    campaign: &Campaign,
    scenario_text: &str,
    shard: Shard,
    pool: &rayon::ThreadPool,
) -> Result<i32, CliError> {
    let json = args.json.as_deref().expect("clap requires --json with --shard");
    let seeds = campaign.seeds.clone();
    let total = crate::seeds::seed_runs(&shard.seeds(seeds.clone()), campaign.rows.len())?;
    let progress = progress_bar(total);
    let file = campaign.scenario.file.display().to_string();
    let origin = Origin::new(VERSION, &file, scenario_text, seeds.clone(), &args.algorithms, &[]);
    let stop = crate::interrupt::stop_flag();
    let ShardRun { outcome, partial } = campaign.run_shard(shard, origin, pool, stop, shown_on(&progress));
    progress.finish_and_clear();
    locksim_reports::write_atomic(json, partial.to_text())
        .map_err(|e| CliError::bad_input(format!("cannot write the partial results to {}: {e}", json.display())))?;
    print_out(&shard_text(&file, shard, seeds, json, &outcome, total));
    Ok(if outcome.interrupted {
        INTERRUPTED
    } else if outcome.panicked() {
        MODEL_FAILED
    } else {
        OK
    })
}

/// Runs the one seed of each selected row with a trace and writes the traces: to stderr when no
/// FILE was given (tens of thousands of lines must not bury the table on stdout), to stdout for
/// `-`, else into FILE; stderr says where they went.
fn write_traces(campaign: &Campaign, seed: u64, target: Option<&Path>) -> Result<(), CliError> {
    match target {
        None => {
            eprintln!("note: the trace of seed {seed} follows on stderr; the table is on stdout (--trace FILE writes it to FILE)");
            let out = traces_text(campaign, seed, false);
            let mut stderr = std::io::stderr().lock();
            // A closed stderr loses the trace, not the run.
            let _ = std::io::Write::write_all(&mut stderr, out.as_bytes());
            Ok(())
        }
        Some(t) if t.as_os_str() == "-" => {
            print_out(&traces_text(campaign, seed, false));
            Ok(())
        }
        Some(t) => {
            let jsonl = t.extension().is_some_and(|e| e == "jsonl");
            locksim_reports::write_atomic(t, traces_text(campaign, seed, jsonl))
                .map_err(|e| CliError::bad_input(format!("cannot write the trace to {}: {e}", t.display())))?;
            eprintln!("trace of seed {seed}: {}", t.display());
            Ok(())
        }
    }
}
