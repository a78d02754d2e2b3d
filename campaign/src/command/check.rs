//! `sim check`'s work: the scenario validated without running it, then what running it would
//! cost estimated from a short probe (`locksim_simulator::estimate`; skipped with
//! `--no-estimate`). The probe's wall time is the one real-time reading here, outside any run,
//! hence the local allowance.

use std::path::PathBuf;

use locksim_simulator::estimate::{estimate, human_bytes, human_duration, Estimate};
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::notes::late_fault_notes;

use crate::error::CommandError;
use crate::seed_range::parse_seeds;
use crate::verdict::Class;

/// `sim check`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct CheckOptions {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Estimate for this many seeds per row, as `sim run --seeds` takes them: N or A..B.
    /// Default: the file's `seeds`.
    #[arg(long, value_name = "N|A..B")]
    pub seeds: Option<String>,
    /// Skip the probe run and the cost estimate: only validate the file.
    #[arg(long)]
    pub no_estimate: bool,
}

/// Validates `file`, prints what it holds and its notes, then (unless `no_estimate`) the cost of
/// running it over `seeds` (default: the file's); a probe stuck in a zero-time loop is bad input,
/// one that panicked a failure.
pub fn check(opts: &CheckOptions, models: &[&'static dyn DynModel]) -> Result<Class, CommandError> {
    let (file, seeds, no_estimate) = (opts.file.as_path(), opts.seeds.as_deref(), opts.no_estimate);
    let seeds = seeds.map(parse_seeds).transpose()?;
    let scenario = locksim_simulator::scenario::load_file(file, models)?;
    let labels: Vec<&str> = scenario.runs.iter().map(|r| r.label.as_str()).collect();
    outln!(
        "{}: ok: scenario \"{}\", {} ms, {}, algorithms [{}], {}, {}",
        file.display(),
        scenario.name,
        scenario.setup.duration_ms,
        counted(scenario.seeds.into(), "seed"),
        labels.join(", "),
        counted(scenario.setup.faults.len() as u128, "fault"),
        counted(scenario.expect.len() as u128, "expectation")
    );
    for note in tcp_notes(&scenario).into_iter().chain(late_fault_notes(&scenario)) {
        outln!("note: {note}");
    }
    if no_estimate {
        return Ok(Class::Passed);
    }
    let seeds = seeds.map_or(scenario.seeds, |r| r.end - r.start);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    #[allow(clippy::disallowed_methods)] // the probe's wall time, measured outside the runs
    let mut timer = |work: &mut dyn FnMut()| {
        let start = std::time::Instant::now();
        work();
        start.elapsed().as_secs_f64()
    };
    let est = estimate(&scenario, seeds, threads, &mut timer);
    for line in estimate_lines(&est).into_iter().chain(memory_lines(&est, available_memory_bytes())) {
        outln!("{line}");
    }
    // A zero-time loop is the scenario's (every time it draws is 0): exit 2, as bad input is.
    if let Some(stuck) = est.panics.iter().find(|p| p.zero_time) {
        return Err(CommandError::bad_input(format!(
            "{}: the probe of `{}` (seed 0) stopped: {}",
            file.display(),
            stuck.label,
            stuck.message
        )));
    }
    if est.panics.is_empty() {
        Ok(Class::Passed)
    } else {
        let rows: Vec<String> = est.panics.iter().map(|p| format!("{} ({})", p.label, p.message)).collect();
        Err(CommandError::Failed(format!(
            "the probe of seed 0 panicked in row{} {}; replay: sim run {} --algorithm LABEL --seed 0",
            if rows.len() == 1 { "" } else { "s" },
            rows.join(", "),
            file.display()
        )))
    }
}

/// `n` and the noun, plural unless `n` is 1: "1 seed-run", "12 seed-runs", "0 rows".
fn counted(n: u128, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The estimate as printed: one `estimate:` line, and a warning when the run would be long.
fn estimate_lines(e: &Estimate) -> Vec<String> {
    let probe_s = e.rows.first().map_or(0.0, |r| r.probe_ms / 1_000.0);
    let mut lines = vec![format!(
        "estimate: {} x {} = {} of {} s simulated ({} simulated s in all), \
         about {:.2e} events, about {} of wall time on {} \
         (probe: seed 0 of each row for {} s simulated, {:.2} s of wall)",
        counted((e.rows.len() + e.panics.len()) as u128, "row"),
        counted(e.seeds.into(), "seed"),
        counted(e.seed_runs(), "seed-run"),
        e.duration_ms / 1_000.0,
        e.simulated_s(),
        e.events(),
        human_duration(e.wall_s()),
        counted(e.threads as u128, "thread"),
        probe_s,
        e.probe_wall_s(),
    )];
    if e.is_long() {
        lines.push(format!(
            "warning: this run would take more than an hour (about {} on {}): \
             fewer seeds (--seeds), a shorter duration_ms or fewer rows (--algorithm) shorten it",
            human_duration(e.wall_s()),
            counted(e.threads as u128, "thread")
        ));
    }
    lines
}

/// The memory estimate as printed: one `memory:` line, and a warning when the run would hold more
/// than the machine has available (`available_bytes`; `None`: unknown, no warning).
fn memory_lines(e: &Estimate, available_bytes: Option<f64>) -> Vec<String> {
    if e.rows.is_empty() {
        return Vec::new();
    }
    let at_once = e.seeds_at_once();
    let mut lines = vec![format!(
        "memory: up to about {} per seed-run at its end, {} with {at_once} seed-run{} at once{}",
        human_bytes(e.seed_memory_bytes()),
        human_bytes(e.peak_memory_bytes()),
        if at_once == 1 { "" } else { "s" },
        available_bytes.map_or(String::new(), |b| format!(" ({} available)", human_bytes(b))),
    )];
    if let Some(available) = available_bytes.filter(|&b| e.peak_memory_bytes() > b) {
        lines.push(format!(
            "warning: this run may hold up to about {} at once, more than the {} available: the kernel \
             would kill it; fewer threads (`sim run --threads N`) or a shorter duration_ms need \
             less (a seed keeps its history to its end)",
            human_bytes(e.peak_memory_bytes()),
            human_bytes(available)
        ));
    }
    lines
}

/// Memory the kernel says is available for new work (`MemAvailable` in /proc/meminfo); `None`
/// where there is no such file.
fn available_memory_bytes() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// What the scenario's network settings mean for rows whose links are TCP connections: a
/// duplicate segment is discarded and a lost one is retransmitted, so `duplicate` changes nothing
/// and `loss` is a delay.
fn tcp_notes(scenario: &locksim_simulator::scenario::Scenario) -> Vec<String> {
    let net = &scenario.setup.network;
    let duplicate = net.duplicate > 0.0 || net.links.iter().any(|l| l.duplicate.is_some_and(|d| d > 0.0));
    let loss = net.loss > 0.0 || net.links.iter().any(|l| l.loss.is_some_and(|d| d > 0.0));
    let tcp: Vec<&str> =
        scenario.runs.iter().filter(|r| r.model.topology(&r.params).ordered_links).map(|r| r.label.as_str()).collect();
    let mut notes = Vec::new();
    if tcp.is_empty() {
        return notes;
    }
    let rows =
        if tcp.len() == scenario.runs.len() { "every row".to_string() } else { format!("rows [{}]", tcp.join(", ")) };
    if duplicate {
        notes.push(format!(
            "`duplicate` has no effect on {rows}: their links are TCP connections, and TCP discards duplicate segments"
        ));
    }
    if loss {
        notes.push(format!(
            "`loss` delays messages on {rows} instead of dropping them: TCP retransmits a lost segment after \
             Linux's back-off (200 ms plus a round trip, doubling), and later messages wait behind it"
        ));
    }
    notes
}
