//! `sim live FILE`: the scenario's rows run against real servers started on this machine, in real
//! time, judged by the same checkers and printed as the same table; and the hidden
//! `sim live-client SPEC`, one client process of a live run (started by `sim live` only).

use std::path::PathBuf;

use clap::Args;
use locksim_live::reference::{self, BuildError, Prepared, Selection};
use locksim_live::run::{library_label, run_live_with, Launch};
use locksim_live::{check_row, LiveError};
use locksim_reports::report::{timeline_note, write_report, RecordedHistory, TimelineSource};
use locksim_reports::{evaluate, params_json, render_live_table, AlgorithmTotals, ResultsJson, ServerVersion};
use locksim_simulator::scenario::load_file_with_text;

use crate::exit::{CliError, EXPECTATION_FAILED, MODEL_FAILED, OK};
use crate::interrupt::{self, INTERRUPTED};
use crate::runner::print_out;
use crate::seeds::parse_seeds;

#[derive(Args, Debug)]
pub struct LiveArgs {
    /// The scenario file (TOML). Its faults must be ones live mode can inject: pause (SIGSTOP /
    /// SIGCONT) of a client or server, and crash mode = "process" (SIGKILL, then a restart on the
    /// same data) of a server.
    pub file: PathBuf,
    /// Live runs per row: N (seeds 0..N) or A..B. Each lasts the scenario's duration_ms in real
    /// time. A seed fixes the workload's draws and the fault schedule, not the servers' timing.
    #[arg(long, value_name = "N|A..B", default_value = "1")]
    pub seeds: String,
    /// Run only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Write the results JSON (with "mode": "live" and the servers' versions) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write a report into DIR (results.json, charts, index.html).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Write each live run's recorded history to FILE, one JSON line per run ({"label", "seed",
    /// "history"}), events stamped with the machine's monotonic clock from the run's start.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Keep the servers' data directories and logs in DIR (default: a temporary directory,
    /// removed at the end).
    #[arg(long, value_name = "DIR")]
    pub keep_dir: Option<PathBuf>,
    /// Run the real lock library (a reference client, reference/PROTOCOL.md) in place of each
    /// row's model client code: redis (plain SET NX PX) -> redis-py, redlock -> node-redlock,
    /// zookeeper -> curator (or kazoo), etcd -> clientv3. LIBS (optional): `default` or a
    /// comma-separated list of library names replacing their model's default (`--reference
    /// kazoo`). Rows with no reference client are listed as such and not run. Each harness is
    /// built on first use into target/reference/; a missing toolchain exits 2 naming its package.
    #[arg(long, value_name = "LIBS", num_args = 0..=1, default_missing_value = "default")]
    pub reference: Option<String>,
}

pub fn live(args: LiveArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let (scenario, scenario_text) = load_file_with_text(&args.file, &models)?;
    let seeds = parse_seeds(&args.seeds)?;
    // Every output checked before any server starts: writable, not the scenario, not each other.
    crate::out_file::check_all(
        &[("--json", args.json.as_deref()), ("--history", args.history.as_deref())],
        &[&args.file],
    )?;
    if let Some(dir) = &args.keep_dir {
        crate::out_dir::prepare(dir, "--keep-dir").map_err(CliError::bad_input)?;
    }
    let runs = scenario.rows_labelled(&args.algorithms)?;
    // Everything is checked before any server starts.
    let mut notes: Vec<String> = Vec::new();
    for run in &runs {
        let row_notes =
            check_row(&scenario, run).map_err(|e| CliError::bad_input(format!("{}: {e}", args.file.display())))?;
        for n in row_notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    let _report_lock = args
        .report
        .as_deref()
        .map(|dir| crate::out_dir::prepare_locked(dir, "--report"))
        .transpose()
        .map_err(CliError::bad_input)?;
    let sim = std::env::current_exe().map_err(|e| CliError::bad_input(format!("cannot find the sim binary: {e}")))?;
    // With --reference: each row's real library, its harness built before any server starts;
    // rows without one are named and not run.
    let mut prepared: Vec<Option<Prepared>> = Vec::new();
    let mut runs = runs;
    if let Some(text) = &args.reference {
        let selection = Selection::parse(text).map_err(CliError::bad_input)?;
        let mut kept = Vec::new();
        for run in runs {
            match selection.library_for(run, &scenario.setup.workload) {
                Ok(lib) => {
                    let root = reference::repo_root(&sim).map_err(CliError::bad_input)?;
                    eprintln!("live: building the {} reference client (reference/{})…", lib.name, lib.name);
                    let out_dir = reference::build(lib, &root).map_err(|e| match e {
                        BuildError::Toolchain(m) => CliError::bad_input(format!("--reference: {m}")),
                        BuildError::Failed(m) => CliError { code: MODEL_FAILED, message: m },
                    })?;
                    // The model's client code does not run: its boundary note would mislead.
                    if let Ok(backend) = locksim_live::backends::backend_for(run.model.name()) {
                        let boundary = format!("{}: {}", run.model.name(), backend.boundary());
                        notes.retain(|n| *n != boundary);
                    }
                    notes.push(format!("reference: {} runs {}: {}", run.label, lib.version, lib.note));
                    prepared.push(Some(Prepared { lib, root, out_dir }));
                    kept.push(run);
                }
                Err(why) => notes.push(format!("no reference client: {} ({}): {why}", run.label, run.model.name())),
            }
        }
        runs = kept;
    } else {
        prepared.extend(runs.iter().map(|_| None));
    }
    // Servers are started through `sim live-exec`, so they die with this thread even if `sim` is
    // killed outright.
    locksim_live::supervisor::start_servers_through(sim.clone());
    let stop = interrupt::stop_flag();
    let mut all_totals = Vec::new();
    let mut versions: Vec<ServerVersion> = Vec::new();
    let mut finished = 0u64;
    // Runs a stop cut short (judged on their history up to it), and how many per row.
    let mut cut: Vec<String> = Vec::new();
    let mut cut_per_row: Vec<u64> = Vec::new();
    let mut histories = String::new();
    // Kept for the report's timeline (a live run cannot be replayed to draw it).
    let mut recorded: Vec<RecordedHistory> = Vec::new();
    let total = crate::seeds::seed_runs(&seeds, runs.len())?;
    for (run, prepared) in runs.iter().zip(&prepared) {
        let launch = prepared.as_ref().map_or(Launch::Model, Launch::Reference);
        let model = run.model;
        let mut totals =
            AlgorithmTotals::new(&run.label, model.name(), params_json(&run.params.values), model.fenced(&run.params))
                .with_limitations(model.limitations(&run.params, &scenario.setup.workload))
                .with_library(library_label(run, &launch));
        let mut row_cut = 0u64;
        for seed in seeds.clone() {
            if interrupt::interrupted() {
                break;
            }
            eprintln!(
                "live: {} seed {seed} ({} of {total}): {:.1} s of real time…",
                run.label,
                finished + 1,
                scenario.setup.duration_ms / 1000.0
            );
            let label_part = locksim_simulator::scenario::file_names::label_file_part(&run.label);
            let keep = args.keep_dir.as_ref().map(|d| d.join(format!("{label_part}-{seed}")));
            let outcome = match run_live_with(&scenario, run, seed, &sim, stop, keep.as_deref(), &launch) {
                Ok(o) => o,
                Err(LiveError::Refused(m)) => return Err(CliError::bad_input(m)),
                Err(LiveError::Failed(m)) => return Err(CliError { code: MODEL_FAILED, message: m }),
            };
            for (program, version) in &outcome.versions {
                let v = ServerVersion { program: program.clone(), version: version.clone() };
                if !versions.contains(&v) {
                    versions.push(v);
                }
            }
            eprintln!(
                "live: {} seed {seed}: {} events recorded; {} processes started, all stopped",
                run.label,
                outcome.history.events.len(),
                outcome.pids.len()
            );
            if args.history.is_some() {
                let line = serde_json::json!({ "label": run.label, "seed": seed, "history": outcome.history });
                histories.push_str(&line.to_string());
                histories.push('\n');
            }
            if prepared.is_some() {
                // What the harnesses said besides history events (errors, connection states).
                for n in outcome.notes.iter().filter(|n| n.starts_with("client-")) {
                    let n = format!("{} seed {seed}: {n}", run.label);
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
            }
            totals.add(&outcome.metrics);
            if args.report.is_some() {
                recorded.push(RecordedHistory { label: run.label.clone(), seed, history: outcome.history });
            }
            match outcome.cut_short_ns {
                Some(ran_ns) => {
                    row_cut += 1;
                    cut.push(format!(
                        "{} seed {seed} after {:.1} s of {:.1} s",
                        run.label,
                        ran_ns as f64 / 1e9,
                        scenario.setup.duration_ms / 1000.0
                    ));
                }
                None => finished += 1,
            }
        }
        all_totals.push(totals);
        cut_per_row.push(row_cut);
    }
    let interrupted = interrupt::interrupted();
    // After a stop, a row with no run at all has nothing to judge: no verdict, it says "not run".
    let not_run: Vec<&str> = if interrupted {
        all_totals.iter().filter(|t| t.runs + t.panicked_runs == 0).map(|t| t.label.as_str()).collect()
    } else {
        Vec::new()
    };
    if let Some(path) = &args.history {
        locksim_reports::write_atomic(path, histories)
            .map_err(|e| CliError::bad_input(format!("cannot write the histories to {}: {e}", path.display())))?;
    }
    let judged: Vec<_> = scenario
        .expect
        .iter()
        .filter(|e| args.algorithms.is_empty() || args.algorithms.contains(&e.label))
        .filter(|e| runs.iter().any(|r| r.label == e.label))
        .filter(|e| !not_run.contains(&e.label.as_str()))
        .cloned()
        .collect();
    let expectations = evaluate(&judged, &all_totals);
    let file = scenario.file.display().to_string();
    let mut text = String::new();
    text.push_str("# live: real servers on this machine (");
    let v: Vec<String> = versions.iter().map(|v| format!("{}: {}", v.program, v.version)).collect();
    text.push_str(&v.join("; "));
    text.push_str(")\n");
    let mut interrupted_notes = Vec::new();
    if interrupted {
        text.push_str(&format!(
            "# interrupted: {finished} of {total} live runs finished; the results below cover those\n"
        ));
        if !cut.is_empty() {
            interrupted_notes.push(format!(
                "interrupted: cut short, judged on the history up to the stop, rates over the time it ran: {}",
                cut.join("; ")
            ));
        }
        if !not_run.is_empty() {
            interrupted_notes.push(format!("interrupted: not run (no verdict): {}", not_run.join(", ")));
        }
        for n in &interrupted_notes {
            text.push_str(&format!("# {n}\n"));
        }
    }
    for n in &notes {
        text.push_str(&format!("# note: {n}\n"));
    }
    text.push_str("# a live run is not replayable: its seed fixes the workload's draws and the fault schedule, not the servers' timing\n");
    text.push_str(&render_live_table(&file, &all_totals, &expectations));
    print_out(&text);
    if args.json.is_some() || args.report.is_some() {
        let mut json = ResultsJson::from_scenario(&scenario, seeds.clone(), &all_totals, expectations.clone())
            .with_scenario_text(scenario_text);
        json.mode = Some("live".to_string());
        json.servers = versions;
        json.live_notes = notes;
        json.live_notes.extend(interrupted_notes);
        json = json.with_interrupted(interrupted);
        // A cut run is judged and counted in `runs`, but it did not finish.
        for (row, cut) in json.algorithms.iter_mut().zip(&cut_per_row) {
            row.seeds_finished = row.seeds_finished.map(|n| n - cut);
        }
        if let Some(path) = &args.json {
            locksim_reports::write_atomic(path, json.to_pretty_string()).map_err(|e| {
                CliError::bad_input(format!("cannot write the results JSON to {}: {e}", path.display()))
            })?;
        }
        if let Some(dir) = &args.report {
            let written = write_report(dir, &json, TimelineSource::Recorded(&recorded), None)?;
            eprintln!("report: {}{}", written.index.display(), timeline_note(written.timeline_seed));
        }
    }
    Ok(if interrupted {
        INTERRUPTED
    } else if expectations.iter().any(|e| !e.ok) {
        EXPECTATION_FAILED
    } else {
        OK
    })
}

/// `sim live-exec -- PROGRAM ARGS…`: becomes PROGRAM, set to die with the `sim` that started it.
/// Returns only when that fails.
pub fn live_exec(command: &[std::ffi::OsString]) -> Result<i32, CliError> {
    let why = locksim_live::supervisor::exec_dying_with_parent(command);
    Err(CliError { code: MODEL_FAILED, message: why })
}

/// `sim live-client SPEC`: one client process of a live run.
pub fn live_client(spec: &str) -> Result<i32, CliError> {
    locksim_live::client_main(spec).map_err(|m| CliError { code: MODEL_FAILED, message: m })?;
    Ok(OK)
}
