//! `sim live`'s work, from its options (`sim`'s command line: clap derives it from them) to its
//! printed table, its files and its end: the scenario's rows checked for what live mode can run
//! (before any server starts), the reference harnesses built (`--reference`), every row × seed run
//! live ([`crate::run`]), folded into each row's totals, judged against `[expect]`, printed as the
//! same table a simulated run prints, and written (`--json`, `--history`, `--report`). The binary
//! maps the [`Class`] (or the [`CommandError`]) to its exit code.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_campaign::stdout::print_out;
use locksim_campaign::{Class, CommandError};
use locksim_reports::report::{timeline_note, write_report, RecordedHistory, TimelineSource};
use locksim_reports::{evaluate, params_json, render_live_table, AlgorithmTotals, ResultsJson, ServerVersion};
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::load_file_with_text;

use crate::backends::backend_for;
use crate::reference::{self, BuildError, Prepared, Selection};
use crate::run::{check_row, library_label, run_live_with, Launch, LiveError};

/// `sim live`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, clap::Args)]
pub struct LiveOptions {
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

/// A live run's failure as the command's error: a refusal is the user's side (exit 2), a server
/// or client that failed is ours (exit 3).
impl From<LiveError> for CommandError {
    fn from(e: LiveError) -> Self {
        match e {
            LiveError::Refused(m) => CommandError::BadInput(m),
            LiveError::Failed(m) => CommandError::Failed(m),
        }
    }
}

/// Runs `opts.file`'s rows live over the seeds, prints the table and writes the files; ends
/// [`Class::Interrupted`] after a stop, [`Class::ExpectationFailed`] when an expectation failed,
/// else [`Class::Passed`]. `stop` is called once, just before the first server starts (after
/// every check and harness build): it installs the binary's Ctrl-C handler and gives its flag,
/// so that a Ctrl-C before then ends `sim` at once, as it always has.
pub fn live<'s>(
    opts: &LiveOptions,
    models: &[&'static dyn DynModel],
    stop: impl FnOnce() -> &'s AtomicBool,
) -> Result<Class, CommandError> {
    let (scenario, scenario_text) = load_file_with_text(&opts.file, models)?;
    let seeds = locksim_campaign::seed_range::parse_seeds(&opts.seeds)?;
    // Every output checked before any server starts: writable, not the scenario, not each other.
    locksim_campaign::out_file::check_all(
        &[("--json", opts.json.as_deref()), ("--history", opts.history.as_deref())],
        &[&opts.file],
    )?;
    if let Some(dir) = &opts.keep_dir {
        locksim_campaign::out_dir::prepare(dir, "--keep-dir").map_err(CommandError::bad_input)?;
    }
    let runs = scenario.rows_labelled(&opts.algorithms)?;
    // Everything is checked before any server starts.
    let mut notes: Vec<String> = Vec::new();
    for run in &runs {
        let row_notes =
            check_row(&scenario, run).map_err(|e| CommandError::bad_input(format!("{}: {e}", opts.file.display())))?;
        for n in row_notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    let _report_lock = opts
        .report
        .as_deref()
        .map(|dir| locksim_campaign::out_dir::prepare_locked(dir, "--report"))
        .transpose()
        .map_err(CommandError::bad_input)?;
    let sim =
        std::env::current_exe().map_err(|e| CommandError::bad_input(format!("cannot find the sim binary: {e}")))?;
    // With --reference: each row's real library, its harness built before any server starts;
    // rows without one are named and not run.
    let mut prepared: Vec<Option<Prepared>> = Vec::new();
    let mut runs = runs;
    if let Some(text) = &opts.reference {
        let selection = Selection::parse(text).map_err(CommandError::bad_input)?;
        let mut kept = Vec::new();
        for run in runs {
            match selection.library_for(run, &scenario.setup.workload) {
                Ok(lib) => {
                    let root = reference::repo_root(&sim).map_err(CommandError::bad_input)?;
                    eprintln!("live: building the {} reference client (reference/{})…", lib.name, lib.name);
                    let out_dir = reference::build(lib, &root).map_err(|e| match e {
                        BuildError::Toolchain(m) => CommandError::bad_input(format!("--reference: {m}")),
                        BuildError::Failed(m) => CommandError::Failed(m),
                    })?;
                    // The model's client code does not run: its boundary note would mislead.
                    if let Ok(backend) = backend_for(run.model.name()) {
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
    crate::supervisor::start_servers_through(sim.clone());
    let stop = stop();
    let interrupted = || stop.load(Ordering::SeqCst);
    let mut all_totals = Vec::new();
    let mut versions: Vec<ServerVersion> = Vec::new();
    let mut finished = 0u64;
    // Runs a stop cut short (judged on their history up to it), and how many per row.
    let mut cut: Vec<String> = Vec::new();
    let mut cut_per_row: Vec<u64> = Vec::new();
    let mut histories = String::new();
    // Kept for the report's timeline (a live run cannot be replayed to draw it).
    let mut recorded: Vec<RecordedHistory> = Vec::new();
    let total = locksim_campaign::seed_range::seed_runs(&seeds, runs.len())?;
    for (run, prepared) in runs.iter().zip(&prepared) {
        let launch = prepared.as_ref().map_or(Launch::Model, Launch::Reference);
        let model = run.model;
        let mut totals =
            AlgorithmTotals::new(&run.label, model.name(), params_json(&run.params.values), model.fenced(&run.params))
                .with_limitations(model.limitations(&run.params, &scenario.setup.workload))
                .with_library(library_label(run, &launch));
        let mut row_cut = 0u64;
        for seed in seeds.clone() {
            if interrupted() {
                break;
            }
            eprintln!(
                "live: {} seed {seed} ({} of {total}): {:.1} s of real time…",
                run.label,
                finished + 1,
                scenario.setup.duration_ms / 1000.0
            );
            let label_part = locksim_simulator::scenario::file_names::label_file_part(&run.label);
            let keep = opts.keep_dir.as_ref().map(|d| d.join(format!("{label_part}-{seed}")));
            let outcome = run_live_with(&scenario, run, seed, &sim, stop, keep.as_deref(), &launch)?;
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
            if opts.history.is_some() {
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
            if opts.report.is_some() {
                // The page marks the first violations with their text: more than the row's check kept.
                let kept = locksim_reports::recording::VIOLATIONS_KEPT;
                let checked = &mut locksim_simulator::checker::check_keeping(seed, &outcome.history, kept);
                let violations = std::mem::take(&mut checked.violations);
                recorded.push(RecordedHistory { label: run.label.clone(), seed, history: outcome.history, violations });
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
    let interrupted = interrupted();
    // After a stop, a row with no run at all has nothing to judge: no verdict, it says "not run".
    let not_run: Vec<&str> = if interrupted {
        all_totals.iter().filter(|t| t.runs + t.panicked_runs == 0).map(|t| t.label.as_str()).collect()
    } else {
        Vec::new()
    };
    if let Some(path) = &opts.history {
        locksim_reports::write_atomic(path, histories)
            .map_err(|e| CommandError::bad_input(format!("cannot write the histories to {}: {e}", path.display())))?;
    }
    let judged: Vec<_> = scenario
        .expect
        .iter()
        .filter(|e| opts.algorithms.is_empty() || opts.algorithms.contains(&e.label))
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
    if opts.json.is_some() || opts.report.is_some() {
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
        if let Some(path) = &opts.json {
            locksim_reports::write_atomic(path, json.to_pretty_string()).map_err(|e| {
                CommandError::bad_input(format!("cannot write the results JSON to {}: {e}", path.display()))
            })?;
        }
        if let Some(dir) = &opts.report {
            let written = write_report(dir, &json, TimelineSource::Recorded(&recorded), None)?;
            eprintln!("report: {}{}", written.index.display(), timeline_note(written.timeline_seed));
        }
    }
    Ok(if interrupted {
        Class::Interrupted
    } else if expectations.iter().any(|e| !e.ok) {
        Class::ExpectationFailed
    } else {
        Class::Passed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(file: &str) -> LiveOptions {
        LiveOptions {
            file: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(file),
            seeds: "1".into(),
            algorithms: Vec::new(),
            json: None,
            report: None,
            history: None,
            keep_dir: None,
            reference: None,
        }
    }

    /// Stands for the binary's Ctrl-C flag: asked for only when the servers are about to start.
    fn no_server_may_start() -> &'static AtomicBool {
        panic!("the command got as far as starting servers")
    }

    /// A model without a live backend is refused as bad input, naming the file and the models
    /// the registry gives a backend, before anything starts.
    #[test]
    fn a_row_live_mode_cannot_run_is_refused_before_any_server_starts() {
        let opts = options("scenarios/known/12-kubernetes-paused-leader.toml");
        let err = live(&opts, &locksim_algorithms::registry(), no_server_may_start).unwrap_err();
        let expected = format!(
            "{}: live mode does not run the `kubernetes` model yet (it runs: db, redis, redlock, zookeeper, etcd, postgres)",
            opts.file.display()
        );
        assert!(matches!(&err, CommandError::BadInput(m) if m.starts_with(&expected)), "{err:?}");
    }

    /// The options are checked before the rows: a bad `--seeds` is bad input with its own message.
    #[test]
    fn a_bad_seed_range_is_refused_before_any_server_starts() {
        let opts = LiveOptions { seeds: "3..1".into(), ..options("scenarios/fidelity/redis-no-faults.toml") };
        let err = live(&opts, &locksim_algorithms::registry(), no_server_may_start).unwrap_err();
        assert!(
            matches!(&err, CommandError::BadInput(m) if m.contains("--seeds 3..1: the range is reversed")),
            "{err:?}"
        );
    }
}
