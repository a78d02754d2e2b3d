//! `sim exhaust`'s work, from its options: the bounds resolved (each flag, else the scenario's
//! `[exhaust]` key, else the default), the search run ([`crate::exhaust`]) with its progress line
//! on stderr, the counterexample written, and the report printed.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::exhaust::ExhaustSpec;

use crate::error::CommandError;
use crate::exhaust::{bounds::BoundWords, exhaust as search, Incomplete, Stats};
use crate::stdout::print_out;
use crate::verdict::Class;

/// `sim exhaust`'s options, as the command line gave them (`None`: not given).
#[derive(Clone, Debug, Default)]
pub struct ExhaustOptions {
    /// The scenario file.
    pub file: PathBuf,
    /// The row to search.
    pub algorithm: String,
    /// `--clients`.
    pub clients: Option<usize>,
    /// `--acquisitions`.
    pub acquisitions: Option<u64>,
    /// `--faults`.
    pub faults: Option<u32>,
    /// `--distinct-faults` (`Some(false)`: `--distinct-faults=false`).
    pub distinct_faults: Option<bool>,
    /// `--symmetry`.
    pub symmetry: Option<bool>,
    /// Each `--fault` (replaces the `[exhaust]` menu when not empty).
    pub menu: Vec<String>,
    /// `--delays`.
    pub delays: Option<String>,
    /// `--slow-messages`.
    pub slow_messages: Option<u32>,
    /// `--hold-ms`.
    pub hold_ms: Option<String>,
    /// `--think-ms`.
    pub think_ms: Option<String>,
    /// `--property`.
    pub property: Option<String>,
    /// `--max-depth`.
    pub max_depth: Option<u32>,
    /// `--max-states`.
    pub max_states: Option<usize>,
    /// `--seed`.
    pub seed: u64,
    /// `--out` (default: LABEL.exhaust.toml).
    pub out: Option<PathBuf>,
}

/// Searches, prints the report (and where the counterexample went) and ends:
/// [`Class::ExpectationFailed`] when a counterexample was found, [`Class::Interrupted`] when
/// `stop` cut the search without one, else [`Class::Passed`] (complete or not: the report says).
pub fn exhaust(
    opts: &ExhaustOptions,
    models: &[&'static dyn DynModel],
    stop: &AtomicBool,
) -> Result<Class, CommandError> {
    let file = opts.file.display().to_string();
    let text = locksim_simulator::scenario::read_scenario_text(&opts.file)?;
    let scenario = locksim_simulator::scenario::parse_str(&file, &text, models)?;
    let row = scenario.row_labelled(&opts.algorithm)?;
    let words = bound_words(opts, scenario.exhaust.clone().unwrap_or_default())?;
    // A value of the [exhaust] table is already named by its file, line and column.
    let placed = |e: String| if e.starts_with(&file) { e } else { format!("{file}: {e}") };
    let bounds = words
        .resolve(&row.params, row.model.fenced(&row.params), &scenario.setup.network)
        .map_err(|e| CommandError::bad_input(placed(e)))?;
    let out = opts.out.clone().unwrap_or_else(|| PathBuf::from(format!("{}.exhaust.toml", row.label)));
    let mut progress = progress_line();
    let report = search(&scenario, &text, row, &bounds, stop, &mut progress)
        .map_err(|e| CommandError::bad_input(format!("{file}: {e}")))?;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    let mut printed = report.to_string();
    printed.push('\n');
    if let Some(text) = &report.scenario {
        std::fs::write(&out, text).map_err(|e| CommandError::bad_input(format!("--out {}: {e}", out.display())))?;
        let seed = if bounds.seed == 0 { String::new() } else { format!(" --seed {}", bounds.seed) };
        printed.push_str(&format!("  written to {}; replay: sim run {}{seed}\n", out.display(), out.display()));
    }
    print_out(&printed);
    Ok(match (&report.found.counterexample, &report.found.incomplete) {
        (Some(_), _) => Class::ExpectationFailed,
        (None, Some(Incomplete::Stopped)) => Class::Interrupted,
        (None, _) => Class::Passed,
    })
}

/// The bounds' words: each flag given on the command line, else the scenario's `[exhaust]` key,
/// else the default.
fn bound_words(opts: &ExhaustOptions, table: ExhaustSpec) -> Result<BoundWords, CommandError> {
    let (menu, menu_at) = if opts.menu.is_empty() {
        table.menu.into_iter().map(|m| (m.text, Some(m.at))).unzip()
    } else {
        (opts.menu.clone(), Vec::new())
    };
    let (delays, delays_at) = match (&opts.delays, table.delays) {
        (Some(d), _) => (d.clone(), None),
        (None, Some(d)) => (d.text, Some(d.at)),
        (None, None) => ("min".to_string(), None),
    };
    Ok(BoundWords {
        clients: opts.clients.or(table.clients).unwrap_or(2),
        acquisitions: opts.acquisitions.or(table.acquisitions).unwrap_or(1),
        faults: opts.faults.or(table.faults),
        distinct_faults: opts.distinct_faults.or(table.distinct_faults).unwrap_or(false),
        symmetry: opts.symmetry.or(table.symmetry).unwrap_or(false),
        menu,
        menu_at,
        delays,
        delays_at,
        slow_messages: opts.slow_messages.or(table.slow_messages).unwrap_or(1),
        property: opts.property.clone().or(table.property.map(str::to_string)),
        max_depth: opts.max_depth.or(table.max_depth).unwrap_or(4096),
        max_states: opts.max_states.or(table.max_states).unwrap_or(4_000_000),
        seed: opts.seed,
        holds_ms: match &opts.hold_ms {
            Some(list) => ms_list("--hold-ms", list)?,
            None => table.hold_ms,
        },
        thinks_ms: match &opts.think_ms {
            Some(list) => ms_list("--think-ms", list)?,
            None => table.think_ms,
        },
    })
}

/// A comma list of times in ms, each at least 0.
fn ms_list(flag: &str, list: &str) -> Result<Vec<f64>, CommandError> {
    let mut out: Vec<f64> = Vec::new();
    for w in list.split(',').map(str::trim) {
        let v = w.replace('_', "").parse::<f64>().ok().filter(|v| (0.0..=1e12).contains(v)).ok_or_else(|| {
            CommandError::bad_input(format!("{flag} {list}: expected times in ms (numbers in [0, 1e12]), found `{w}`"))
        })?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// The progress line on stderr (states, unique, depth, rate): redrawn once a second on a
/// terminal, else a line every ten seconds.
fn progress_line() -> impl FnMut(&Stats) {
    #[allow(clippy::disallowed_methods)] // the command's own wall clock, for the rate shown
    let started = std::time::Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let every_s = if terminal { 1.0 } else { 10.0 };
    let mut shown = 0.0f64;
    move |s: &Stats| {
        let t = started.elapsed().as_secs_f64();
        if t - shown < every_s {
            return;
        }
        shown = t;
        let line = format!(
            "exhaust: {} states, {} unique, depth {} (limit {}), {:.0} states/s",
            s.states,
            s.unique,
            s.max_depth,
            s.limit,
            s.states as f64 / t.max(1e-9)
        );
        if terminal {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_list_drops_repeats_and_refuses_a_negative() {
        assert_eq!(ms_list("--hold-ms", "5, 1_000,5").unwrap(), vec![5.0, 1000.0]);
        let err = ms_list("--think-ms", "3,-1").unwrap_err();
        assert_eq!(
            err,
            CommandError::bad_input("--think-ms 3,-1: expected times in ms (numbers in [0, 1e12]), found `-1`")
        );
    }

    #[test]
    fn a_flag_overrides_its_table_key_and_the_defaults_fill_the_rest() {
        let table = ExhaustSpec { clients: Some(3), max_depth: Some(100), ..ExhaustSpec::default() };
        let opts = ExhaustOptions { clients: Some(4), ..ExhaustOptions::default() };
        let words = bound_words(&opts, table).unwrap();
        assert_eq!((words.clients, words.max_depth, words.acquisitions), (4, 100, 1));
        assert_eq!((words.delays.as_str(), words.slow_messages, words.max_states), ("min", 1, 4_000_000));
    }
}
