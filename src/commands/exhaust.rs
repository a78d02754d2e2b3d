//! `sim exhaust FILE --algorithm LABEL`: a bounded systematic search of one row's schedules,
//! ending with the shortest counterexample (a scenario file `sim run` replays exactly) or a
//! certificate of what was covered. The search is `locksim_campaign::exhaust`; this file reads the
//! arguments, draws the progress line, handles Ctrl-C and writes the file.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use locksim_campaign::exhaust::{bounds::BoundWords, exhaust as search, Incomplete, Stats};
use locksim_simulator::scenario::exhaust::ExhaustSpec;

use crate::exit::{CliError, EXPECTATION_FAILED, OK};
use crate::interrupt::{self, INTERRUPTED};
use crate::runner::print_out;

const AFTER_HELP: &str = "\
Every schedule within the bounds is enumerated, depth first: which of the events due at the same
instant happens first, each message's delay from --delays (at most --slow-messages messages of a
path take one other than the first), and up to --faults faults from the --fault menu, each started
just before an event of its target. The scenario's own [[faults]] are replaced by the menu; its
workload is bounded to --clients clients of --acquisitions acquisitions each. Random draws the
models and the workload still make (hold and think times, retry jitter) come from --seed.

--fault KIND@TARGETS:V,V,...  KIND: pause, crash (process), crash-machine, isolate, clock_jump;
TARGETS: clients, waiters (a client waiting for a grant), servers, leader or a node name; each V a length in ms (a clock_jump: its step),
`end` (until the end of the run; a crash's default), or KEY+MS / KEY-MS with KEY a numeric
parameter of the row (e.g. pause@clients:ttl_ms-1,ttl_ms+1: just under and just over the TTL).
--delays: min and max (the network latency's bounds), numbers of ms, or KEY+MS / KEY-MS.

The scenario's [exhaust] table may give every bound instead (clients, acquisitions, faults,
menu, delays, slow_messages, hold_ms, think_ms, property, max_depth, max_states; see
docs/exhaustive.md); a flag given on the command line overrides its key (--fault replaces the
whole menu). --hold-ms / --think-ms (or hold_ms / think_ms): the hold and think times to search,
each pair in turn with every client the same; the shortest counterexample over all pairs wins.

A violation (--property) is judged by the checkers on the path's history after each step. The
search deepens iteratively (the depth limit doubles from 64 to --max-depth) and reports the
shortest path to a violation, written to --out as a scenario: `sim run OUT` replays it exactly
(the faults at fixed times, the path in its [replay] table) and expects the violation. Without
one it prints a certificate: the bounds, states explored, unique states, the largest depth,
whether the search completed, and wall time: no violation in every schedule within these bounds,
not a proof beyond them (docs/exhaustive.md).

Exit codes: 0 no violation found (complete or not: the certificate says); 1 a counterexample was
found; 2 bad command line or scenario; 130 interrupted (the partial certificate is printed).

Example:
  sim exhaust scenarios/exhaust/redis.toml --algorithm redis --fault pause@clients:ttl_ms-1,ttl_ms+1";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ExhaustArgs {
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
    /// Hold times to search, ms, comma-separated, each in turn with every think time (default:
    /// [exhaust] hold_ms, else the workload's).
    #[arg(long, value_name = "LIST")]
    pub hold_ms: Option<String>,
    /// Think times to search, ms, comma-separated (default: [exhaust] think_ms, else the
    /// workload's).
    #[arg(long, value_name = "LIST")]
    pub think_ms: Option<String>,
    /// overlap, stale-write or fenced-stale-write (default: fenced-stale-write on a fenced row,
    /// else overlap).
    #[arg(long, value_name = "P")]
    pub property: Option<String>,
    /// The longest path searched, in steps (default: [exhaust] max_depth, else 4096).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,
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

pub fn exhaust(args: ExhaustArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let file = args.file.display().to_string();
    let text = locksim_simulator::scenario::read_scenario_text(&args.file)?;
    let scenario = locksim_simulator::scenario::parse_str(&file, &text, &models)?;
    let row = scenario.row_labelled(&args.algorithm)?;
    let words = bound_words(&args, scenario.exhaust.clone().unwrap_or_default())?;
    // A value of the [exhaust] table is already named by its file, line and column.
    let placed = |e: String| if e.starts_with(&file) { e } else { format!("{file}: {e}") };
    let bounds = words
        .resolve(&row.params, row.model.fenced(&row.params), &scenario.setup.network)
        .map_err(|e| CliError::bad_input(placed(e)))?;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("{}.exhaust.toml", row.label)));
    let stop = interrupt::stop_flag();
    let mut progress = progress_line();
    let report = search(&scenario, &text, row, &bounds, stop, &mut progress)
        .map_err(|e| CliError::bad_input(format!("{file}: {e}")))?;
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    let mut printed = report.to_string();
    printed.push('\n');
    if let Some(text) = &report.scenario {
        std::fs::write(&out, text).map_err(|e| CliError::bad_input(format!("--out {}: {e}", out.display())))?;
        let seed = if bounds.seed == 0 { String::new() } else { format!(" --seed {}", bounds.seed) };
        printed.push_str(&format!("  written to {}; replay: sim run {}{seed}\n", out.display(), out.display()));
    }
    print_out(&printed);
    Ok(match (&report.found.counterexample, &report.found.incomplete) {
        (Some(_), _) => EXPECTATION_FAILED,
        (None, Some(Incomplete::Stopped)) => INTERRUPTED,
        (None, _) => OK,
    })
}

/// The bounds' words: each flag given on the command line, else the scenario's `[exhaust]` key,
/// else the default.
fn bound_words(args: &ExhaustArgs, table: ExhaustSpec) -> Result<BoundWords, CliError> {
    let (menu, menu_at) = if args.menu.is_empty() {
        table.menu.into_iter().map(|m| (m.text, Some(m.at))).unzip()
    } else {
        (args.menu.clone(), Vec::new())
    };
    let (delays, delays_at) = match (&args.delays, table.delays) {
        (Some(d), _) => (d.clone(), None),
        (None, Some(d)) => (d.text, Some(d.at)),
        (None, None) => ("min".to_string(), None),
    };
    Ok(BoundWords {
        clients: args.clients.or(table.clients).unwrap_or(2),
        acquisitions: args.acquisitions.or(table.acquisitions).unwrap_or(1),
        faults: args.faults.or(table.faults),
        menu,
        menu_at,
        delays,
        delays_at,
        slow_messages: args.slow_messages.or(table.slow_messages).unwrap_or(1),
        property: args.property.clone().or(table.property.map(str::to_string)),
        max_depth: args.max_depth.or(table.max_depth).unwrap_or(4096),
        max_states: args.max_states.or(table.max_states).unwrap_or(4_000_000),
        seed: args.seed,
        holds_ms: match &args.hold_ms {
            Some(list) => ms_list("--hold-ms", list)?,
            None => table.hold_ms,
        },
        thinks_ms: match &args.think_ms {
            Some(list) => ms_list("--think-ms", list)?,
            None => table.think_ms,
        },
    })
}

/// A comma list of times in ms, each at least 0.
fn ms_list(flag: &str, list: &str) -> Result<Vec<f64>, CliError> {
    let mut out: Vec<f64> = Vec::new();
    for w in list.split(',').map(str::trim) {
        let v = w.replace('_', "").parse::<f64>().ok().filter(|v| (0.0..=1e12).contains(v)).ok_or_else(|| {
            CliError::bad_input(format!("{flag} {list}: expected times in ms (numbers in [0, 1e12]), found `{w}`"))
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
