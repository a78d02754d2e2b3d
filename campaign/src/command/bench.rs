//! `sim bench engine`, `sim bench scenario FILE` and `sim bench memory FILE`'s work: speed figures
//! measured in wall time, and the peak memory of a long run. This is the one place a command
//! reads the real clock and the process's own memory figures (outside any run), hence the local
//! allowances.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use locksim_simulator::enginebench::{run_engine_workload, CLIENTS, SERVERS, SIMULATED_S};
use locksim_simulator::history::folding_counted;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::load_file;
use serde_json::json;

use crate::error::CommandError;
use crate::progress::{progress_bar, shown_on};
use crate::rows::Campaign;
use crate::verdict::Class;

/// What to measure, with its options: `sim bench`'s subcommands, from which clap derives their
/// arguments and `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, clap::Subcommand)]
pub enum Bench {
    /// The standard engine workload (5 servers each guarding a lock, 20 clients, 1–10 ms links,
    /// 60 simulated seconds, one seed, one core): messages and events per wall-second. Names the
    /// build measuring (release, profile-guided by scripts/build-pgo, or a slow debug build).
    Engine {
        /// Also write the figures as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Simulated seconds per wall-second for each algorithm of a scenario and for the whole
    /// scenario (the aggregate: all simulated seconds over all wall seconds, one thread), and
    /// seed-runs per second on 1 thread and on all threads (each the best of `--repeat`). Names
    /// the build measuring, as `bench engine` does.
    Scenario {
        /// The scenario file (TOML).
        file: PathBuf,
        /// Seeds per measurement (default 20).
        #[arg(long, default_value_t = 20)]
        seeds: u64,
        /// Measurements per figure; the fastest is reported, which discounts interruptions by
        /// other work on the machine (default 3).
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Also write the figures as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Peak memory (resident set) of running every algorithm of a scenario over many seeds, the
    /// way `sim run` does (each seed folded into the totals as it finishes, then dropped): once
    /// over a tenth of the seeds and once over all of them, so flat memory shows as two close
    /// figures. Linux only (it reads /proc/self/status).
    Memory {
        /// The scenario file (TOML).
        file: PathBuf,
        /// Seeds per algorithm in the full run (default 4000).
        #[arg(long, default_value_t = 4000)]
        seeds: u64,
        /// Worker threads (default: all cores; at most 1024).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Also write the figures as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
}

/// The process's peak resident set so far, in MB (`VmHWM`), where the platform tells it.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// Starts a new peak-memory measurement: Linux resets `VmHWM` to the current resident set when
/// "5" is written to clear_refs. Returns whether it could.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Which build is measuring. Figures from a debug build, a plain release build and a
/// profile-guided one are not comparable, so every bench names its build (in its first line and
/// its JSON). `scripts/build-pgo` sets `LOCKSIM_BUILD` when it compiles the profile-guided one.
fn build_label() -> &'static str {
    match option_env!("LOCKSIM_BUILD") {
        Some(label) => label,
        None if cfg!(debug_assertions) => "debug (assertions on: slow; measure a --release build)",
        None => "release",
    }
}

fn write_json(path: &Option<PathBuf>, value: &serde_json::Value) -> Result<(), CommandError> {
    if let Some(p) = path {
        locksim_reports::write_atomic(p, serde_json::to_string_pretty(value).expect("json") + "\n")
            .map_err(|e| CommandError::bad_input(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(())
}

/// Measures what `bench` names and prints the figures (and writes them with `--json`); ends
/// [`Class::Interrupted`] when `stop` cut a memory run, else [`Class::Passed`].
pub fn bench(bench: Bench, models: &[&'static dyn DynModel], stop: &AtomicBool) -> Result<Class, CommandError> {
    // The figures file checked before measuring: writable, and not the scenario.
    let (json, inputs): (&Option<PathBuf>, Vec<&Path>) = match &bench {
        Bench::Engine { json } => (json, Vec::new()),
        Bench::Scenario { file, json, .. } | Bench::Memory { file, json, .. } => (json, vec![file.as_path()]),
    };
    crate::out_file::check_all(&[("--json", json.as_deref())], &inputs)?;
    match bench {
        Bench::Engine { json } => engine(&json),
        Bench::Scenario { file, seeds, repeat, json } => scenario(&file, seeds, repeat, &json, models),
        Bench::Memory { file, seeds, threads, json } => memory(&file, seeds, threads, &json, models, stop),
    }
}

fn engine(json: &Option<PathBuf>) -> Result<Class, CommandError> {
    // One warm-up run, then the measured one.
    // As a campaign records its seeds (the events only counted are folded).
    let run = |simulated_s| folding_counted(true, || run_engine_workload(1, simulated_s));
    run(5);
    let start = Instant::now();
    let r = run(SIMULATED_S);
    let wall_s = start.elapsed().as_secs_f64();
    let figures = json!({
        "build": build_label(),
        "workload": format!("{SERVERS} servers, {CLIENTS} clients, uniform 1-10 ms links, {SIMULATED_S} simulated s, seed 1"),
        "messages": r.messages,
        "events": r.events,
        "wall_s": wall_s,
        "messages_per_s": (r.messages as f64 / wall_s).round(),
        "events_per_s": (r.events as f64 / wall_s).round(),
        "sim_seconds_per_wall_second": (r.simulated_s as f64 / wall_s).round(),
    });
    outln!(
        "engine workload: {} messages, {} events in {:.3} s wall; build: {}",
        r.messages,
        r.events,
        wall_s,
        build_label()
    );
    outln!("  messages_per_s              {:>14.0}", r.messages as f64 / wall_s);
    outln!("  events_per_s                {:>14.0}", r.events as f64 / wall_s);
    outln!("  sim_seconds_per_wall_second {:>14.0}", r.simulated_s as f64 / wall_s);
    write_json(json, &figures)?;
    Ok(Class::Passed)
}

fn scenario(
    file: &Path,
    seeds: u64,
    repeat: u32,
    json: &Option<PathBuf>,
    models: &[&'static dyn DynModel],
) -> Result<Class, CommandError> {
    if seeds == 0 {
        return Err(CommandError::bad_input("--seeds 0: expected at least 1 seed"));
    }
    if repeat == 0 {
        return Err(CommandError::bad_input("--repeat 0: expected at least 1 measurement"));
    }
    let scenario = load_file(file, models)?;
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let stop = AtomicBool::new(false);
    let mut rows = Vec::new();
    outln!(
        "{}: {} seeds of {} simulated s each, best of {repeat}; build: {}",
        file.display(),
        seeds,
        scenario.setup.duration_ms / 1000.0,
        build_label()
    );
    outln!(
        "{:<16} {:>14} {:>14} {:>14} {:>8}",
        "algorithm",
        "sim s/wall s",
        "runs/s 1 thr",
        format!("runs/s {all} thr"),
        "speedup"
    );
    // The figure a person waiting for the whole scenario feels: every row's simulated
    // seconds over every row's wall seconds on one thread (the harmonic mean of the rows'
    // rates, weighted by their equal simulated time), not the arithmetic mean of rates.
    let mut total_wall_s_1_thread = 0.0;
    for run in &scenario.runs {
        let mut per_threads = Vec::new();
        for threads in [1, all] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let best = (0..repeat)
                .map(|_| {
                    let start = Instant::now();
                    Campaign::new(&scenario, vec![run], 0..seeds).run(&pool, &stop, |_| {});
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min);
            per_threads.push(seeds as f64 / best);
        }
        let sim_per_wall = per_threads[0] * scenario.setup.duration_ms / 1000.0;
        total_wall_s_1_thread += seeds as f64 / per_threads[0];
        outln!(
            "{:<16} {:>14.0} {:>14.2} {:>14.2} {:>8.2}",
            run.label,
            sim_per_wall,
            per_threads[0],
            per_threads[1],
            per_threads[1] / per_threads[0]
        );
        rows.push(json!({
            "label": run.label,
            "sim_seconds_per_wall_second_1_thread": sim_per_wall,
            "runs_per_s_1_thread": per_threads[0],
            "runs_per_s_all_threads": per_threads[1],
            "threads": all,
        }));
    }
    let total_sim_s = scenario.runs.len() as f64 * seeds as f64 * scenario.setup.duration_ms / 1000.0;
    let aggregate = total_sim_s / total_wall_s_1_thread;
    outln!(
        "{:<16} {:>14.0}   (whole scenario, 1 thread: {total_sim_s:.0} simulated s in {total_wall_s_1_thread:.2} wall s)",
        "aggregate",
        aggregate
    );
    write_json(
        json,
        &json!({
            "build": build_label(),
            "file": file.display().to_string(),
            "seeds": seeds,
            "repeat": repeat,
            "algorithms": rows,
            "aggregate_sim_seconds_per_wall_second_1_thread": aggregate,
        }),
    )?;
    Ok(Class::Passed)
}

fn memory(
    file: &Path,
    seeds: u64,
    threads: Option<usize>,
    json: &Option<PathBuf>,
    models: &[&'static dyn DynModel],
    stop: &AtomicBool,
) -> Result<Class, CommandError> {
    if seeds < 10 {
        return Err(CommandError::bad_input(format!(
            "--seeds {seeds}: expected at least 10 (the first measurement runs a tenth of them)"
        )));
    }
    let scenario = load_file(file, models)?;
    let pool = crate::thread_pool(threads).map_err(CommandError::bad_input)?;
    if peak_rss_mb().is_none() {
        return Err(CommandError::bad_input(
            "sim bench memory: this platform does not report peak memory (/proc/self/status has no VmHWM)",
        ));
    }
    let runs: Vec<_> = scenario.runs.iter().collect();
    outln!(
        "{}: {} algorithms, {} simulated s per seed, {} threads",
        file.display(),
        runs.len(),
        scenario.setup.duration_ms / 1000.0,
        pool.current_num_threads()
    );
    outln!("{:>8} {:>12} {:>14}", "seeds", "seed-runs", "peak RSS MB");
    let mut rows = Vec::new();
    let mut interrupted = false;
    for n in [seeds / 10, seeds] {
        // Without a reset the second figure is the peak of both runs, which is still an
        // upper bound on the second; say which one it is.
        let fresh = reset_peak_rss();
        let progress = progress_bar(n * runs.len() as u64);
        let outcome = Campaign::new(&scenario, runs.clone(), 0..n).run(&pool, stop, shown_on(&progress));
        progress.finish_and_clear();
        let peak = peak_rss_mb().unwrap_or(f64::NAN);
        outln!(
            "{n:>8} {:>12} {peak:>14.1}{}",
            outcome.finished,
            if fresh { "" } else { "  (peak of the whole process so far)" }
        );
        rows.push(json!({ "seeds": n, "seed_runs": outcome.finished, "peak_rss_mb": peak, "peak_reset": fresh }));
        if outcome.interrupted {
            eprintln!("interrupted: the figures above cover the seed-runs that finished");
            interrupted = true;
            break;
        }
    }
    write_json(json, &json!({ "file": file.display().to_string(), "runs": rows }))?;
    Ok(if interrupted { Class::Interrupted } else { Class::Passed })
}
