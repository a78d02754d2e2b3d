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

const AFTER_HELP: &str = "\
Every schedule within the bounds is enumerated, depth first: which of the events due at the same
instant happens first, each message's delay from --delays (at most --slow-messages messages of a
path take one other than the first), and up to --faults faults from the --fault menu, each started
just before an event of its target. The scenario's own [[faults]] are replaced by the menu; its
workload is bounded to --clients clients of --acquisitions acquisitions each. Random draws the
models and the workload still make (hold and think times not given as sets, retry jitter) come
from --seed.

--fault KIND@TARGETS:V,V,...  KIND: pause, crash (process), crash-machine, isolate, clock_jump;
TARGETS: clients, waiters (a client waiting for a grant), blocked (a waiter blocked on the service's
notification, e.g. etcd's watch of the key before its own, no call in flight), holders (a client
holding a grant it has learned), servers, leader or a node name; each V a length in ms (a clock_jump: its step),
`end` (until the end of the run; a crash's default), or KEY+MS / KEY-MS with KEY a numeric
parameter of the row (e.g. pause@clients:ttl_ms-1,ttl_ms+1: just under and just over the TTL).
--delays: min and max (the network latency's bounds), numbers of ms, or KEY+MS / KEY-MS.

The scenario's [exhaust] table may give every bound instead (clients, acquisitions, faults,
distinct_faults, symmetry, menu, delays, slow_messages, hold_ms, think_ms, property, max_depth,
start_depth, max_states; see
docs/exhaustive.md); a flag given on the command line overrides its key (--fault replaces the
whole menu). --hold-ms / --think-ms (or hold_ms / think_ms): the hold and think times to choose
from at each acquisition (client-0 may hold the first value, then the second); a set of one value
is every acquisition's time.

A violation (--property) is judged by the checkers on the path's history after each step. The
search deepens iteratively (the depth limit doubles from --start-depth, 64, to --max-depth; a
violation lowers it, so starting at --max-depth, one round, finds the same) and reports the
shortest path to a violation, written to --out as a scenario: `sim run OUT` replays it exactly
(the faults at fixed times, the path in its [replay] table) and expects the violation. Without
one it prints a certificate: the bounds, states explored, unique states, the largest depth,
whether the search completed, and wall time: no violation in every schedule within these bounds,
not a proof beyond them (docs/exhaustive.md).

A panic inside the model during the search stops it: the report gives the panic's message and
the path to it, written to --out as a scenario whose run (`sim run OUT`) panics the same way. A
panic while the first world is built (before the search's first step) is reported with its
message too; there is no path, so nothing is written.

Exit codes: 0 no violation found (complete or not: the certificate says); 1 a counterexample was
found; 2 bad command line or scenario; 3 the model panicked (its path is written to --out, unless
it panicked building the first world); 130 interrupted (the partial certificate is printed).

Example:
  sim exhaust scenarios/exhaust/redis.toml --algorithm redis --fault pause@clients:ttl_ms-1,ttl_ms+1";

/// `sim exhaust`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, Default, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ExhaustOptions {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The algorithm or variant label to search.
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithm: String,
    /// Clients (N; default: [exhaust] clients, else 2).
    #[arg(long, value_name = "N")]
    pub clients: Option<usize>,
    /// Acquisitions per client (A; default: [exhaust] acquisitions, else 1).
    #[arg(long, value_name = "A")]
    pub acquisitions: Option<u64>,
    /// Faults a path may take from the menu (K; default: [exhaust] faults, else 1 with a menu,
    /// 0 without).
    #[arg(long, value_name = "K")]
    pub faults: Option<u32>,
    /// Each menu entry at most once a path (default: [exhaust] distinct_faults, else off);
    /// `--distinct-faults=false` turns the table's off.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub distinct_faults: Option<bool>,
    /// Merge states that differ only by a renaming of interchangeable clients (and of
    /// interchangeable servers: Redlock's masters under parallel requests) (default: [exhaust]
    /// symmetry, else off); applied where the model's state is typed (the report says).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub symmetry: Option<bool>,
    /// One fault of the menu: KIND@TARGETS:LENGTHS (repeatable; see below). Replaces the
    /// [exhaust] menu when given.
    #[arg(long = "fault", value_name = "SPEC")]
    pub menu: Vec<String>,
    /// The delays a message may take, comma-separated; the first is every message's default
    /// (default: [exhaust] delays, else min).
    #[arg(long, value_name = "LIST")]
    pub delays: Option<String>,
    /// Messages of a path that may take a delay other than the first (default: [exhaust]
    /// slow_messages, else 1).
    #[arg(long, value_name = "D")]
    pub slow_messages: Option<u32>,
    /// Hold times, ms, comma-separated: each grant's hold is chosen from them (default: [exhaust]
    /// hold_ms, else the workload's).
    #[arg(long, value_name = "LIST")]
    pub hold_ms: Option<String>,
    /// Think times, ms, comma-separated: each think is chosen from them (default: [exhaust]
    /// think_ms, else the workload's).
    #[arg(long, value_name = "LIST")]
    pub think_ms: Option<String>,
    /// overlap, stale-write, fenced-stale-write or token-regression (a grant whose fencing token
    /// is not above an earlier grant's: what a fenced resource rests on; the last two need a
    /// fenced row). Default: fenced-stale-write on a fenced row, else overlap.
    #[arg(long, value_name = "P")]
    pub property: Option<String>,
    /// The longest path searched, in steps (default: [exhaust] max_depth, else 4096).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,
    /// The first round's depth limit, in steps, doubled each round up to --max-depth (default:
    /// [exhaust] start_depth, else 64). The --max-depth value: one round, which skips the
    /// shallow rounds of a search expected to end with a certificate.
    #[arg(long, value_name = "N")]
    pub start_depth: Option<u32>,
    /// The visited set's bound, in states; reaching it ends the search, incomplete (default:
    /// [exhaust] max_states, else 4000000).
    #[arg(long, value_name = "N")]
    pub max_states: Option<usize>,
    /// The seed of the draws the models and the workload still make.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Where a counterexample is written (default: LABEL.exhaust.toml).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Searches, prints the report (and where the counterexample went) and ends:
/// [`Class::ModelFailed`] when the model panicked (its path written like a counterexample),
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
        .and_then(|b| b.with_start_depth(opts.start_depth.or(scenario.exhaust.as_ref().and_then(|t| t.start_depth))))
        .map_err(|e| CommandError::bad_input(placed(table_named(opts, e))))?;
    let out = opts.out.clone().unwrap_or_else(|| PathBuf::from(format!("{}.exhaust.toml", row.label)));
    let mut progress = progress_line();
    let report = search(&scenario, &text, row, &bounds, stop, &mut progress)
        .map_err(|e| CommandError::bad_input(placed(menu_placed(&words, e))))?;
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
        _ if report.found.panicked.is_some() => Class::ModelFailed,
        (Some(_), _) => Class::ExpectationFailed,
        (None, Some(Incomplete::Stopped)) => Class::Interrupted,
        (None, _) => Class::Passed,
    })
}

/// `e`, about the menu entry `--fault TEXT`, named by that entry's place in the `[exhaust]`
/// table when it came from there (as [`BoundWords::resolve`] names its own errors).
fn menu_placed(words: &BoundWords, e: String) -> String {
    for (text, at) in words.menu.iter().zip(&words.menu_at) {
        if let (Some(at), Some(rest)) = (at, e.strip_prefix(&format!("--fault {text}:"))) {
            return format!("{at}: {text}:{rest}");
        }
    }
    e
}

/// `e`, about `--faults` or `--start-depth` when the value came from the `[exhaust]` table's
/// key (no flag given), naming that key instead of a flag the user did not write.
fn table_named(opts: &ExhaustOptions, e: String) -> String {
    let from_table = [
        ("--faults ", opts.faults.is_none(), "[exhaust] faults = "),
        ("--start-depth ", opts.start_depth.is_none(), "[exhaust] start_depth = "),
    ];
    for (flag, not_given, key) in from_table {
        if let Some(rest) = e.strip_prefix(flag).filter(|_| not_given) {
            return format!("{key}{rest}");
        }
    }
    e
}

/// The largest value each numeric flag takes: the `[exhaust]` table's own bound for its key
/// (simulator/src/scenario/exhaust.rs), so a flag cannot ask for what the table refuses (100000
/// clients built a world for minutes, deaf to Ctrl-C, before the search began).
const MOST_CLIENTS: u64 = 1_000;
const MOST_ACQUISITIONS: u64 = 1_000_000;
const MOST_FAULTS: u64 = 16;
const MOST_SLOW_MESSAGES: u64 = 1_000;
const MOST_DEPTH: u64 = 100_000_000;
const MOST_STATES: u64 = 1_000_000_000;

/// `Err` when `flag`'s `value` is above `most` (`what`: its unit, plural).
fn at_most(flag: &str, value: Option<u64>, most: u64, what: &str) -> Result<(), CommandError> {
    match value {
        Some(v) if v > most => Err(CommandError::bad_input(format!(
            "{flag} {v}: expected at most {most} {what} (the [exhaust] table's bound too)"
        ))),
        _ => Ok(()),
    }
}

/// The bounds' words: each flag given on the command line, else the scenario's `[exhaust]` key,
/// else the default.
fn bound_words(opts: &ExhaustOptions, table: ExhaustSpec) -> Result<BoundWords, CommandError> {
    at_most("--clients", opts.clients.map(|v| v as u64), MOST_CLIENTS, "clients")?;
    at_most("--acquisitions", opts.acquisitions, MOST_ACQUISITIONS, "acquisitions per client")?;
    at_most("--faults", opts.faults.map(u64::from), MOST_FAULTS, "faults")?;
    at_most("--slow-messages", opts.slow_messages.map(u64::from), MOST_SLOW_MESSAGES, "messages")?;
    at_most("--max-depth", opts.max_depth.map(u64::from), MOST_DEPTH, "steps")?;
    at_most("--start-depth", opts.start_depth.map(u64::from), MOST_DEPTH, "steps")?;
    at_most("--max-states", opts.max_states.map(|v| v as u64), MOST_STATES, "states")?;
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
