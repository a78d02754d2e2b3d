//! `sim compare FILE`: each row simulated over many seeds and run live a few times, side by side.
//! It first measures this machine (the loopback round trip, a real server's service time) and
//! simulates with those figures, so that what differs is the mechanism, not the network.

use std::path::PathBuf;

use clap::Args;
use locksim_live::{calibrate::calibrate, check_row, run_live, LiveError};
use locksim_reports::compare::{compare, render, write_compare_report, ComparedRow};
use locksim_simulator::batch::{run_seed_stoppable, SeedResult};
use locksim_simulator::dist::Dist;
use locksim_simulator::model::ParamValue;
use locksim_simulator::scenario::load_file_with_text;

use crate::exit::{CliError, MODEL_FAILED, OK};
use crate::interrupt::{self, INTERRUPTED};
use crate::runner::{print_out, thread_pool};
use crate::seeds::parse_seeds;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The scenario file (TOML); it must be one `sim live` can run.
    pub file: PathBuf,
    /// Live runs per row: N (seeds 0..N) or A..B. Each lasts the scenario's duration in real time.
    #[arg(long, value_name = "N|A..B", default_value = "2")]
    pub seeds: String,
    /// Simulated seeds per row: N or A..B (default: the file's `seeds`).
    #[arg(long, value_name = "N|A..B")]
    pub sim_seeds: Option<String>,
    /// Compare only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Also write DIR/index.html: each row's table and a chart of the live runs against the
    /// simulated range (compare-LABEL.svg and .png).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Worker threads for the simulated seeds (default: all cores; at most 1024).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

pub fn compare_cmd(args: CompareArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let (scenario, _) = load_file_with_text(&args.file, &models)?;
    let live_seeds = parse_seeds(&args.seeds)?;
    let sim_seeds = match &args.sim_seeds {
        Some(t) => parse_seeds(t)?,
        None => 0..scenario.seeds,
    };
    let runs = scenario.rows_labelled(&args.algorithms)?;
    for run in &runs {
        check_row(&scenario, run).map_err(|e| CliError::bad_input(format!("{}: {e}", args.file.display())))?;
    }
    let _report_lock = args
        .report
        .as_deref()
        .map(|dir| crate::out_dir::prepare_locked(dir, "--report"))
        .transpose()
        .map_err(CliError::bad_input)?;
    let pool = thread_pool(args.threads)?;
    let mut report_rows = Vec::new();
    let sim = std::env::current_exe().map_err(|e| CliError::bad_input(format!("cannot find the sim binary: {e}")))?;
    // Servers are started through `sim live-exec`, so they die with this thread even if `sim` is
    // killed outright.
    locksim_live::supervisor::start_servers_through(sim.clone());
    let stop = interrupt::stop_flag();
    let mut text = String::new();
    let mut disagreements = 0;
    // Live runs a stop cut short: named, never compared (a part of a run is not a run).
    let mut cut: Vec<String> = Vec::new();
    let mut compared_rows = 0;
    for run in &runs {
        eprintln!("compare: {}: measuring this machine (starting its servers once)…", run.label);
        let cal = calibrate(run).map_err(|m| CliError { code: MODEL_FAILED, message: m })?;
        // The simulated side, on this machine's figures.
        let mut simulated = scenario.clone();
        let (lo_ms, hi_ms) = (cal.rtt_ms_p10 / 2.0, cal.rtt_ms_p90.max(cal.rtt_ms_p10 * 1.01) / 2.0);
        // Spread, not a constant: with one fixed latency every waiter woken by the same release
        // would answer at the same instant, and the server's tie order would pick the winner.
        simulated.setup.network.latency_ms = Dist::Uniform(lo_ms, hi_ms);
        let mut sim_run = (*run).clone();
        // What the simulation is given, as the header reports it: only parameters the model has.
        let mut applied = Vec::new();
        for (param, value) in [("service_ms", cal.service_ms), ("fsync_ms", cal.fsync_ms)] {
            if let (Some(ms), true) = (value, sim_run.params.values.contains_key(param)) {
                sim_run.params.values.insert(param.to_string(), ParamValue::Num(ms));
                applied.push((param, ms));
            }
        }
        let header = format!(
            "# {}: loopback round trip {:.3} ms median, {:.3}-{:.3} ms p10-p90; simulated latency uniform {lo_ms:.3}-{hi_ms:.3} ms each way{}",
            run.label,
            cal.rtt_ms,
            cal.rtt_ms_p10,
            cal.rtt_ms_p90,
            calibration_text(&cal, &applied)
        );
        text.push_str(&header);
        text.push('\n');
        eprintln!("compare: {}: simulating {} seeds…", run.label, sim_seeds.end - sim_seeds.start);
        let sim_metrics: Vec<_> = pool.install(|| {
            use rayon::prelude::*;
            sim_seeds
                .clone()
                .into_par_iter()
                .filter_map(|s| match run_seed_stoppable(&simulated, &sim_run, s, stop)? {
                    SeedResult::Done { metrics } => Some(*metrics),
                    SeedResult::Panicked { .. } => None,
                })
                .collect()
        });
        let mut live_metrics = Vec::new();
        for seed in live_seeds.clone() {
            if interrupt::interrupted() {
                break;
            }
            eprintln!("compare: {}: live run, seed {seed}, {:.1} s…", run.label, scenario.setup.duration_ms / 1000.0);
            match run_live(&scenario, run, seed, &sim, stop, None) {
                Ok(o) => match o.cut_short_ns {
                    None => live_metrics.push(o.metrics),
                    Some(ran_ns) => cut.push(format!(
                        "{} live seed {seed} after {:.1} s of {:.1} s",
                        run.label,
                        ran_ns as f64 / 1e9,
                        scenario.setup.duration_ms / 1000.0
                    )),
                },
                Err(LiveError::Refused(m)) => return Err(CliError::bad_input(m)),
                Err(LiveError::Failed(m)) => return Err(CliError { code: MODEL_FAILED, message: m }),
            }
        }
        if interrupt::interrupted() && live_metrics.is_empty() {
            // Nothing whole to compare: the row is named, not judged.
            text.push_str(&format!("{}: not compared (interrupted before a live run finished)\n\n", run.label));
            break;
        }
        compared_rows += 1;
        let rows = compare(&sim_metrics, &live_metrics);
        disagreements += rows.iter().filter(|r| !r.inside()).count();
        text.push_str(&render(&run.label, sim_metrics.len(), live_metrics.len(), &rows));
        text.push('\n');
        report_rows.push(ComparedRow {
            label: run.label.clone(),
            header: header.trim_start_matches("# ").to_string(),
            sim_runs: sim_metrics.len(),
            live_runs: live_metrics.len(),
            metrics: rows,
        });
    }
    if interrupt::interrupted() {
        // A cut comparison claims no agreement: what did not run could disagree.
        text.push_str(&format!(
            "# interrupted: the comparison is incomplete ({compared_rows} of {} rows compared{}); no agreement is claimed. \
{disagreements} live value(s) of the finished runs fall outside the simulated interval.\n",
            runs.len(),
            if cut.is_empty() { String::new() } else { format!("; cut short, not compared: {}", cut.join("; ")) }
        ));
    } else {
        text.push_str(&format!(
            "{disagreements} live value(s) outside the simulated interval. Rates: the live share's Wilson 95% interval must meet the \
simulated one; values: every live run must fall in the middle 95% of the simulated runs.\n"
        ));
    }
    print_out(&text);
    if let Some(dir) = &args.report {
        let index = write_compare_report(dir, &args.file.display().to_string(), &report_rows)
            .map_err(|m| CliError { code: MODEL_FAILED, message: m })?;
        eprintln!("report: {}", index.display());
    }
    Ok(if interrupt::interrupted() { INTERRUPTED } else { OK })
}

/// What the calibration measured per request kind, and the parameters the simulation was given
/// from it (`applied`).
fn calibration_text(cal: &locksim_live::calibrate::Calibration, applied: &[(&str, f64)]) -> String {
    if cal.probes.is_empty() {
        return "; service time not measured for this model (its service_ms default kept)".to_string();
    }
    let kinds: Vec<String> = cal.probes.iter().map(|p| format!("{} {:.3} ms", p.what, p.round_trip_ms)).collect();
    let set: Vec<String> = applied
        .iter()
        .map(|(param, ms)| match *param {
            "fsync_ms" => format!("{param} {ms:.3} (the write less the read and one round trip)"),
            _ => format!("{param} {ms:.3}"),
        })
        .collect();
    format!(
        "; round trips through a live client's connection thread: {}; simulated with {}",
        kinds.join(", "),
        set.join(", ")
    )
}
