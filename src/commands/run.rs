//! `sim run FILE`: every algorithm of a scenario over its seeds; the results table, the results
//! JSON, a trace of one seed, and the `[expect]` verdict as the exit code.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use locksim_reports::{evaluate, params_json, render_table, AlgorithmTotals, ResultsJson};
use locksim_simulator::batch::{run_seeds, SeedResult};
use locksim_simulator::model::Model;
use locksim_simulator::model::WorkloadFacts;
use locksim_simulator::run::{run_seed, RunOptions};
use locksim_simulator::scenario::{load_file, RunSpec, Scenario};

use crate::exit::{CliError, EXPECTATION_FAILED, MODEL_FAILED, OK};
use crate::seeds::parse_seeds;

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
    /// Write the results JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print the event trace of the (single) seed; with FILE, write it there
    /// (JSON lines when FILE ends in .jsonl).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub trace: Option<PathBuf>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// The rows to run, after `--algorithm` filtering.
fn select_runs<'a>(scenario: &'a Scenario, wanted: &[String]) -> Result<Vec<&'a RunSpec>, CliError> {
    let labels: Vec<&str> = scenario.runs.iter().map(|r| r.label.as_str()).collect();
    for w in wanted {
        if !labels.contains(&w.as_str()) {
            return Err(CliError::bad_input(format!(
                "--algorithm {w}: no such algorithm or variant in {}; valid labels: {}",
                scenario.file.display(),
                labels.join(", ")
            )));
        }
    }
    Ok(scenario.runs.iter().filter(|r| wanted.is_empty() || wanted.contains(&r.label)).collect())
}

fn model_of(run: &RunSpec) -> &'static dyn Model {
    locksim_algorithms::find(&run.model).expect("the parser only accepts registered models")
}

pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let scenario = load_file(&args.file, &models)?;
    let seeds = match (&args.seed, &args.seeds) {
        (Some(s), _) => *s..s.saturating_add(1),
        (None, Some(text)) => parse_seeds(text)?,
        (None, None) => 0..scenario.seeds,
    };
    if args.threads == Some(0) {
        return Err(CliError::bad_input("--threads 0: expected at least 1 thread (default: all cores)"));
    }
    let runs = select_runs(&scenario, &args.algorithms)?;
    if let Some(target) = &args.trace {
        if seeds.end - seeds.start != 1 {
            return Err(CliError::bad_input(format!(
                "--trace records one seed, but {} seeds were asked for; add --seed S",
                seeds.end - seeds.start
            )));
        }
        write_traces(&scenario, &runs, seeds.start, target)?;
    }

    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::bad_input(format!("cannot start {threads} threads: {e}")))?;
    let total = (seeds.end - seeds.start) * runs.len() as u64;
    let progress = progress_bar(total);
    let stop = AtomicBool::new(false);
    let mut all_totals = Vec::new();
    for run in &runs {
        let model = model_of(run);
        let facts = WorkloadFacts {
            read_fraction: scenario.workload.read_fraction,
            reentry: scenario.workload.reentry,
            clients: scenario.workload.clients,
        };
        let mut totals =
            AlgorithmTotals::new(&run.label, &run.model, params_json(&run.params.values), model.fenced(&run.params))
                .with_limitations(model.limitations(&run.params, &facts));
        progress.set_message(run.label.clone());
        run_seeds(&pool, &scenario, run, model, seeds.clone(), &stop, |r| {
            match r {
                SeedResult::Done { metrics } => totals.add(&metrics),
                SeedResult::Panicked { seed, message } => totals.add_panic(seed, message),
            }
            progress.inc(1);
        });
        all_totals.push(totals);
    }
    progress.finish_and_clear();

    let expectations = if args.algorithms.is_empty() {
        evaluate(&scenario.expect, &all_totals)
    } else {
        // Expectations about rows that were filtered out are not judged.
        let kept: Vec<_> = scenario.expect.iter().filter(|e| args.algorithms.contains(&e.label)).cloned().collect();
        evaluate(&kept, &all_totals)
    };
    let file = scenario.file.display().to_string();
    print_out(&render_table(&file, &all_totals, &expectations));
    if let Some(path) = &args.json {
        let json = ResultsJson::from_scenario(&scenario, seeds.clone(), &all_totals, expectations.clone());
        std::fs::write(path, json.to_pretty_string())
            .map_err(|e| CliError::bad_input(format!("cannot write the results JSON to {}: {e}", path.display())))?;
    }
    let panicked = all_totals.iter().any(|t| t.panicked_runs > 0);
    let failed = expectations.iter().any(|e| !e.ok);
    Ok(if panicked {
        MODEL_FAILED
    } else if failed {
        EXPECTATION_FAILED
    } else {
        OK
    })
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} seeds  {per_sec}  eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// Runs the one seed of each selected row with a trace and writes the traces.
fn write_traces(scenario: &Scenario, runs: &[&RunSpec], seed: u64, target: &PathBuf) -> Result<(), CliError> {
    let to_stdout = target.as_os_str() == "-";
    let jsonl = target.extension().is_some_and(|e| e == "jsonl");
    let mut out = String::new();
    for run in runs {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_seed(scenario, run, model_of(run), seed, &RunOptions { trace: true })
        }));
        let Ok(outcome) = outcome else {
            out.push_str(&format!("# {}: seed {seed} panicked; see the results below\n", run.label));
            continue;
        };
        let trace = outcome.trace.expect("trace requested");
        if jsonl {
            for e in &trace.entries {
                let mut v = serde_json::to_value(e).expect("trace entry serialises");
                v["algorithm"] = serde_json::Value::from(run.label.clone());
                out.push_str(&v.to_string());
                out.push('\n');
            }
        } else {
            out.push_str(&format!(
                "# trace: {} seed {seed} ({} events, hash {:016x})\n",
                run.label,
                trace.entries.len(),
                outcome.trace_hash
            ));
            out.push_str(&trace.render_text());
            out.push('\n');
        }
    }
    if to_stdout {
        print_out(&out);
        Ok(())
    } else {
        std::fs::write(target, out)
            .map_err(|e| CliError::bad_input(format!("cannot write the trace to {}: {e}", target.display())))
    }
}

/// Writes to stdout; a closed pipe (`sim run … | head`) ends the output quietly instead of panicking.
fn print_out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()).is_err() {
        std::process::exit(OK);
    }
}
