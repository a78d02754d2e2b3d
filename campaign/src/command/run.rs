//! `sim run`'s work, from its options: the scenario loaded, the seeds and the rows chosen, every
//! output checked before any work, then the campaign run with a progress bar and finished (the
//! table printed, the results written, the [`Class`]); with `--shard K/N` one block of the seeds
//! and a partial results file for `sim merge`, whose results go through [`finish`] as this
//! command's do; with `--trace` one seed of every row recorded with its trace.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use locksim_reports::shard::{Origin, Shard};
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{load_file_with_text, Scenario};

use crate::error::CommandError;
use crate::finish::{shard_text, traces_text, Outputs};
use crate::progress::{progress_bar, shown_on};
use crate::rows::{Campaign, Outcome};
use crate::seed_range::{parse_seeds, seed_runs, single_seed};
use crate::shard::ShardRun;
use crate::stdout::print_out;
use crate::verdict::Class;

/// The `sim` version partial results files and sweep progress records carry: parts or records of
/// another version are refused (its models may fold different numbers). It is this crate's
/// version, which is the binary's: every crate inherits the one `[workspace.package]` version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `sim run`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RunOptions {
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

/// Runs the scenario as `opts` say and ends in the run's [`Class`].
pub fn run(opts: &RunOptions, models: &[&'static dyn DynModel], stop: &AtomicBool) -> Result<Class, CommandError> {
    let (scenario, scenario_text) = load_file_with_text(&opts.file, models)?;
    // On stderr, before the seeds run: the table on stdout stays as it was.
    for note in locksim_simulator::scenario::notes::late_fault_notes(&scenario) {
        eprintln!("note: {note}");
    }
    let seeds = match (&opts.seed, &opts.seeds) {
        (Some(s), _) => single_seed(*s)?,
        (None, Some(text)) => parse_seeds(text)?,
        (None, None) => 0..scenario.seeds,
    };
    let mut scenario = scenario;
    if opts.judge_all {
        // The seeds run stand for the file's: every expectation is judged on them.
        scenario.seeds = scenario.seeds.min(seeds.end - seeds.start);
    }
    let shard = opts.shard.as_deref().map(Shard::parse).transpose().map_err(CommandError::bad_input)?;
    let pool = crate::thread_pool(opts.threads).map_err(CommandError::bad_input)?;
    let runs = scenario.rows_labelled(&opts.algorithms)?;
    // Every output checked before any work: writable, not the scenario, not each other; the
    // report directory held by this run alone.
    let trace_file = opts.trace.as_ref().and_then(|t| t.as_deref()).filter(|t| t.as_os_str() != "-");
    crate::out_file::check_all(&[("--json", opts.json.as_deref()), ("--trace", trace_file)], &[&opts.file])?;
    let _report_lock = opts
        .report
        .as_deref()
        .map(|dir| crate::out_dir::prepare_locked(dir, "--report"))
        .transpose()
        .map_err(CommandError::bad_input)?;
    let campaign = Campaign::new(&scenario, runs, seeds.clone()).verified(opts.verify);
    if let Some(shard) = shard {
        return run_shard(opts, &campaign, &scenario_text, shard, &pool, stop);
    }
    if let Some(target) = &opts.trace {
        if seeds.end - seeds.start != 1 {
            return Err(CommandError::bad_input(format!(
                "--trace records one seed, but {} seeds were asked for; add --seed S",
                seeds.end - seeds.start
            )));
        }
        write_traces(&campaign, seeds.start, target.as_deref())?;
    }

    let total = seed_runs(&campaign.seeds, campaign.rows.len())?;
    let progress = progress_bar(total);
    let outcome = campaign.run(&pool, stop, shown_on(&progress));
    progress.finish_and_clear();
    let outputs =
        Outputs { json: opts.json.as_deref(), report: opts.report.as_deref(), timeline_seed: opts.timeline_seed };
    finish(&scenario, scenario_text, &opts.algorithms, &outcome, &outputs)
}

/// What every run ends with, whether its seeds ran here or in shards that `sim merge` folded
/// ([`crate::finish::finish`]): the table printed, the results written, the class.
pub fn finish(
    scenario: &Scenario,
    scenario_text: String,
    algorithms: &[String],
    outcome: &Outcome,
    outputs: &Outputs,
) -> Result<Class, CommandError> {
    let finished = crate::finish::finish(scenario, scenario_text, algorithms, outcome, outputs, print_out)?;
    if let Some(line) = finished.report_line {
        eprintln!("{line}");
    }
    Ok(finished.class)
}

/// `--shard K/N`: runs the shard's block of the seeds, writes its partial results to `--json`
/// and prints its table. Nothing is judged here: `sim merge` judges the whole run. A shard
/// stopped by Ctrl-C or SIGTERM writes the seeds it finished, its part marked interrupted.
fn run_shard(
    opts: &RunOptions,
    campaign: &Campaign,
    scenario_text: &str,
    shard: Shard,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
) -> Result<Class, CommandError> {
    let json = opts.json.as_deref().ok_or_else(|| CommandError::bad_input("--shard writes its part to --json FILE"))?;
    let seeds = campaign.seeds.clone();
    let total = seed_runs(&shard.seeds(seeds.clone()), campaign.rows.len())?;
    let progress = progress_bar(total);
    let file = campaign.scenario.file.display().to_string();
    let origin = Origin::new(VERSION, &file, scenario_text, seeds.clone(), &opts.algorithms, &[]);
    let ShardRun { outcome, partial } = campaign.run_shard(shard, origin, pool, stop, shown_on(&progress));
    progress.finish_and_clear();
    locksim_reports::write_atomic(json, partial.to_text())
        .map_err(|e| CommandError::bad_input(format!("cannot write the partial results to {}: {e}", json.display())))?;
    print_out(&shard_text(&file, shard, seeds, json, &outcome, total));
    Ok(if outcome.interrupted {
        Class::Interrupted
    } else if outcome.panicked() {
        Class::ModelFailed
    } else {
        Class::Passed
    })
}

/// Runs the one seed of each selected row with a trace and writes the traces: to stderr when no
/// FILE was given (tens of thousands of lines must not bury the table on stdout), to stdout for
/// `-`, else into FILE; stderr says where they went.
fn write_traces(campaign: &Campaign, seed: u64, target: Option<&Path>) -> Result<(), CommandError> {
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
                .map_err(|e| CommandError::bad_input(format!("cannot write the trace to {}: {e}", t.display())))?;
            eprintln!("trace of seed {seed}: {}", t.display());
            Ok(())
        }
    }
}
