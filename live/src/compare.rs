//! `sim compare`'s work, from its options (`sim`'s command line: clap derives it from them) to its
//! printed tables, its report and its end: each row simulated over many seeds and run live a few
//! times, side by side. It first measures this machine ([`crate::calibrate`]: the loopback round
//! trip, a real server's service time) and simulates with those figures, so that what differs is
//! the mechanism, not the network. With `--reference` a third column runs the real library (a
//! reference client) live, and the simulation runs with that library's `client` preset. The
//! simulated side is `locksim_campaign::seed_metrics`, the texts `locksim_reports::compare`; the
//! binary maps the [`Class`] (or the [`CommandError`]) to its exit code.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_campaign::seed_metrics::seed_metrics;
use locksim_campaign::seed_range::parse_seeds;
use locksim_campaign::stdout::print_out;
use locksim_campaign::{Class, CommandError};
use locksim_reports::compare::{
    closing_line, compare as compare_rows, render, render_reference, row_header, write_compare_report, Agreement,
    ComparedRow, ReferenceRow, RowCalibration,
};
use locksim_simulator::checker::SeedMetrics;
use locksim_simulator::dist::Dist;
use locksim_simulator::model::{DynModel, ParamValue};
use locksim_simulator::scenario::{load_file_with_text, RunSpec, Scenario};

use crate::calibrate::calibrate;
use crate::reference::{self, BuildError, Prepared, Selection};
use crate::run::{check_row, run_live_with, Launch};

/// `sim compare`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, clap::Args)]
#[command(
    after_help = "Agreement, per metric: a rate (overlap, stale_unfenced, token_regressions, and double_executions for a scheduled \
workload: the verdicts) agrees when \
the live share's Wilson 95% interval meets the simulated one; a value (throughput, outage, waits, latencies, messages) \
agrees when every live run falls in the middle 95% of the simulated runs.\n\n\
Exit codes: 0 every verdict agrees (values outside the simulated range are printed as NO but do not fail: a live run's \
timings are this machine's); 1 a verdict differs in some live column; 2 bad input, a missing toolchain for \
--reference, or no row of the file has a reference client; 3 a server, client or the simulation failed; \
130 interrupted (no agreement claimed)."
)]
pub struct CompareOptions {
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
    /// Add a third column: the real lock library live (a reference client, as `sim live
    /// --reference`), and simulate each row with that library's `client` preset (unless the
    /// scenario sets `client` itself): redis-py 5.2.1 -> "redis-py-5", node-redlock ->
    /// "node-redlock", Curator 5.4.0 -> "curator-5.4", kazoo 2.10.0 -> "kazoo-2.10", clientv3
    /// 3.4.23 -> "clientv3-3.4". The recipe live column runs the row as written. LIBS: `default`
    /// or a comma-separated list of library names (`--reference kazoo`). Rows with no reference
    /// client are named and not compared.
    #[arg(long, value_name = "LIBS", num_args = 0..=1, default_missing_value = "default")]
    pub reference: Option<String>,
}

/// A row with its real library, for `--reference`.
struct WithLibrary {
    /// The built harness.
    prepared: Prepared,
    /// The row with the library's preset (or the scenario's own `client`), as simulated and as
    /// the harness's settings are read.
    preset_run: RunSpec,
    /// The `client` the simulation ran with.
    client: String,
    /// Whether the scenario set `client` itself (then its value is kept).
    scenario_client: bool,
}

/// The row `run` with `client = preset`, unless the scenario set `client` itself; refused (exit
/// 2) when the model has no `client` parameter or the preset's values do not fit the row.
fn with_preset(scenario: &Scenario, run: &RunSpec, preset: &str) -> Result<(RunSpec, bool), CommandError> {
    let mut preset_run = run.clone();
    let explicit = run.params.is_explicit("client");
    if !run.params.values.contains_key("client") {
        return Err(CommandError::bad_input(format!(
            "{}: --reference: the {} model has no `client` parameter to set the preset {preset}",
            run.label,
            run.model.name()
        )));
    }
    if !explicit {
        preset_run.params.values.insert("client".to_string(), ParamValue::Str(preset.to_string()));
    }
    let problems = run.model.validate(&preset_run.params, &scenario.setup.workload);
    if let Some(p) = problems.first() {
        return Err(CommandError::bad_input(format!(
            "{}: --reference: with client = \"{}\" the row is refused: {}: {}",
            run.label,
            preset_run.params.str("client"),
            p.key,
            p.message
        )));
    }
    Ok((preset_run, explicit))
}

/// Where a row's live runs go and who plays them: the `sim` binary (servers and clients are its
/// subcommands), the stop flag, the launch (the model's recipe or a real library) and `side`,
/// their name in the progress lines ("live", "redis-py live").
struct LiveSide<'a> {
    sim: &'a Path,
    stop: &'a AtomicBool,
    launch: &'a Launch<'a>,
    side: &'a str,
}

/// `run`'s live runs over `seeds`: the whole runs' metrics; a run a stop cut short is named in
/// `cut`, not kept.
fn live_runs(
    scenario: &Scenario,
    run: &RunSpec,
    seeds: Range<u64>,
    on: &LiveSide,
    cut: &mut Vec<String>,
) -> Result<Vec<SeedMetrics>, CommandError> {
    let LiveSide { sim, stop, launch, side } = on;
    let mut metrics = Vec::new();
    for seed in seeds {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        eprintln!("compare: {}: {side} run, seed {seed}, {:.1} s…", run.label, scenario.setup.duration_ms / 1000.0);
        let o = run_live_with(scenario, run, seed, sim, stop, None, launch)?;
        match o.cut_short_ns {
            None => metrics.push(o.metrics),
            Some(ran_ns) => cut.push(format!(
                "{} {side} seed {seed} after {:.1} s of {:.1} s",
                run.label,
                ran_ns as f64 / 1e9,
                scenario.setup.duration_ms / 1000.0
            )),
        }
    }
    Ok(metrics)
}

/// Compares `opts.file`'s rows, simulated and live, prints the tables and writes the report; ends
/// [`Class::Interrupted`] after a stop (no agreement claimed), [`Class::ExpectationFailed`] when
/// a verdict differs between the simulation and a live column, else [`Class::Passed`]. `stop` is
/// called once, just before the first server starts (after every check and harness build): it
/// installs the binary's Ctrl-C handler and gives its flag.
pub fn compare<'s>(
    opts: &CompareOptions,
    models: &[&'static dyn DynModel],
    stop: impl FnOnce() -> &'s AtomicBool,
) -> Result<Class, CommandError> {
    let (scenario, _) = load_file_with_text(&opts.file, models)?;
    let live_seeds = parse_seeds(&opts.seeds)?;
    let sim_seeds = match &opts.sim_seeds {
        Some(t) => parse_seeds(t)?,
        None => 0..scenario.seeds,
    };
    let runs = scenario.rows_labelled(&opts.algorithms)?;
    for run in &runs {
        check_row(&scenario, run).map_err(|e| CommandError::bad_input(format!("{}: {e}", opts.file.display())))?;
    }
    let sim =
        std::env::current_exe().map_err(|e| CommandError::bad_input(format!("cannot find the sim binary: {e}")))?;
    let mut text = String::new();
    // With --reference: each row's real library, its harness built before any server starts;
    // rows without one are named and not compared.
    let mut libraries: Vec<Option<WithLibrary>> = Vec::new();
    let mut runs = runs;
    if let Some(selection_text) = &opts.reference {
        let selection = Selection::parse(selection_text).map_err(CommandError::bad_input)?;
        let mut kept = Vec::new();
        let mut without = Vec::new();
        for run in runs {
            match selection.library_for(run, &scenario.setup.workload) {
                Ok(lib) => {
                    let (preset_run, scenario_client) = with_preset(&scenario, run, lib.preset)?;
                    let root = reference::repo_root(&sim).map_err(CommandError::bad_input)?;
                    eprintln!("compare: building the {} reference client (reference/{})…", lib.name, lib.name);
                    let out_dir = reference::build(lib, &root).map_err(|e| match e {
                        BuildError::Toolchain(m) => CommandError::bad_input(format!("--reference: {m}")),
                        BuildError::Failed(m) => CommandError::Failed(m),
                    })?;
                    let client = preset_run.params.str("client").to_string();
                    libraries.push(Some(WithLibrary {
                        prepared: Prepared { lib, root, out_dir },
                        preset_run,
                        client,
                        scenario_client,
                    }));
                    kept.push(run);
                }
                Err(why) => without.push(format!("no reference client: {} ({}): {why}", run.label, run.model.name())),
            }
        }
        if kept.is_empty() {
            return Err(CommandError::bad_input(format!(
                "{}: --reference: no row to compare; {}",
                opts.file.display(),
                without.join("; ")
            )));
        }
        for line in without {
            text.push_str(&format!("# {line}\n"));
        }
        runs = kept;
    } else {
        libraries.extend(runs.iter().map(|_| None));
    }
    let _report_lock = opts
        .report
        .as_deref()
        .map(|dir| locksim_campaign::out_dir::prepare_locked(dir, "--report"))
        .transpose()
        .map_err(CommandError::bad_input)?;
    let pool = locksim_campaign::thread_pool(opts.threads).map_err(CommandError::bad_input)?;
    let mut report_rows = Vec::new();
    // Servers are started through `sim live-exec`, so they die with this thread even if `sim` is
    // killed outright.
    crate::supervisor::start_servers_through(sim.clone());
    let stop = stop();
    let interrupted = || stop.load(Ordering::SeqCst);
    let mut agreement = Agreement::default();
    // Live runs a stop cut short: named, never compared (a part of a run is not a run).
    let mut cut: Vec<String> = Vec::new();
    let mut compared_rows = 0;
    for (run, library) in runs.iter().zip(&libraries) {
        eprintln!("compare: {}: measuring this machine (starting its servers once)…", run.label);
        let cal = calibrate(run).map_err(CommandError::Failed)?;
        // The simulated side, on this machine's figures; with a library, under its preset.
        let mut simulated = scenario.clone();
        let (lo_ms, hi_ms) = (cal.rtt_ms_p10 / 2.0, cal.rtt_ms_p90.max(cal.rtt_ms_p10 * 1.01) / 2.0);
        // Spread, not a constant: with one fixed latency every waiter woken by the same release
        // would answer at the same instant, and the server's tie order would pick the winner.
        simulated.setup.network.latency_ms = Dist::Uniform(lo_ms, hi_ms);
        // The row as written (the recipe live runs it), and with a library the row under its
        // preset (the library live is judged against that one).
        let mut sim_run = (*run).clone();
        let mut preset_sim_run = library.as_ref().filter(|l| !l.scenario_client).map(|l| l.preset_run.clone());
        // What the simulation is given, as the header reports it: only parameters the model has.
        let mut applied = Vec::new();
        for (param, value) in [("service_ms", cal.service_ms), ("fsync_ms", cal.fsync_ms)] {
            if let (Some(ms), true) = (value, sim_run.params.values.contains_key(param)) {
                for r in std::iter::once(&mut sim_run).chain(preset_sim_run.as_mut()) {
                    r.params.values.insert(param.to_string(), ParamValue::Num(ms));
                }
                applied.push((param, ms));
            }
        }
        let header = row_header(&RowCalibration {
            label: &run.label,
            library: library.as_ref().map(|l| (l.prepared.lib.version, l.client.as_str(), l.scenario_client)),
            rtt_ms: [cal.rtt_ms, cal.rtt_ms_p10, cal.rtt_ms_p90],
            latency_ms: (lo_ms, hi_ms),
            probes: cal.probes.iter().map(|p| (p.what, p.round_trip_ms)).collect(),
            applied,
        });
        text.push_str(&header);
        text.push('\n');
        eprintln!("compare: {}: simulating {} seeds…", run.label, sim_seeds.end - sim_seeds.start);
        let simulate = |row: &RunSpec| seed_metrics(&simulated, row, sim_seeds.clone(), &pool, stop);
        let sim_metrics = simulate(&sim_run);
        let preset_metrics = preset_sim_run.as_ref().map(simulate);
        let recipe = LiveSide { sim: &sim, stop, launch: &Launch::Model, side: "live" };
        let live_metrics = live_runs(&scenario, run, live_seeds.clone(), &recipe, &mut cut)?;
        let library_metrics = match library {
            Some(l) => {
                let side = format!("{} live", l.prepared.lib.name);
                let real = LiveSide { sim: &sim, stop, launch: &Launch::Reference(&l.prepared), side: &side };
                live_runs(&scenario, &l.preset_run, live_seeds.clone(), &real, &mut cut)?
            }
            None => Vec::new(),
        };
        if interrupted() && (live_metrics.is_empty() || (library.is_some() && library_metrics.is_empty())) {
            // Nothing whole to compare: the row is named, not judged.
            text.push_str(&format!("{}: not compared (interrupted before a live run finished)\n\n", run.label));
            break;
        }
        compared_rows += 1;
        let rows = compare_rows(&sim_metrics, &live_metrics);
        agreement.add(&rows);
        let header_line = header.trim_start_matches("# ").to_string();
        match library {
            None => text.push_str(&render(&run.label, sim_metrics.len(), live_metrics.len(), &rows)),
            Some(l) => {
                // The library against the preset's simulation (the row's own when the scenario
                // set `client`).
                let preset_sim = preset_metrics.as_deref().unwrap_or(&sim_metrics);
                let library_rows = compare_rows(preset_sim, &library_metrics);
                agreement.add_reference(&library_rows);
                text.push_str(&render_reference(&ReferenceRow {
                    label: &run.label,
                    library: l.prepared.lib.version,
                    preset: &l.client,
                    sim_runs: preset_sim.len(),
                    recipe_runs: live_metrics.len(),
                    library_runs: library_metrics.len(),
                    recipe: &rows,
                    library_side: &library_rows,
                    recipe_sim_differs: preset_metrics.is_some(),
                }));
                report_rows.push(ComparedRow {
                    label: format!("{} ({})", run.label, l.prepared.lib.name),
                    header: header_line.clone(),
                    sim_runs: preset_sim.len(),
                    live_runs: library_metrics.len(),
                    metrics: library_rows,
                });
            }
        }
        text.push('\n');
        report_rows.push(ComparedRow {
            label: run.label.clone(),
            header: header_line,
            sim_runs: sim_metrics.len(),
            live_runs: live_metrics.len(),
            metrics: rows,
        });
    }
    let interrupted_part = interrupted().then_some((compared_rows, runs.len(), cut.as_slice()));
    text.push_str(&closing_line(&agreement, interrupted_part));
    print_out(&text);
    if let Some(dir) = &opts.report {
        let index =
            write_compare_report(dir, &opts.file.display().to_string(), &report_rows).map_err(CommandError::Failed)?;
        eprintln!("report: {}", index.display());
    }
    Ok(if interrupted() {
        Class::Interrupted
    } else if !agreement.verdicts_agree() {
        Class::ExpectationFailed
    } else {
        Class::Passed
    })
}
