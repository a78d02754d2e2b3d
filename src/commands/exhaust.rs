//! `sim exhaust FILE --algorithm LABEL`: a bounded systematic search of one row's schedules,
//! ending with the shortest counterexample (a scenario file `sim run` replays exactly) or a
//! certificate of what was covered. The work is `locksim_campaign::command::exhaust`; this file
//! is its arguments.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::command::exhaust::{exhaust as search, ExhaustOptions};

use crate::exit::{code, CliError};

const AFTER_HELP: &str = "\
Every schedule within the bounds is enumerated, depth first: which of the events due at the same
instant happens first, each message's delay from --delays (at most --slow-messages messages of a
path take one other than the first), and up to --faults faults from the --fault menu, each started
just before an event of its target. The scenario's own [[faults]] are replaced by the menu; its
workload is bounded to --clients clients of --acquisitions acquisitions each. Random draws the
models and the workload still make (hold and think times, retry jitter) come from --seed.

--fault KIND@TARGETS:V,V,...  KIND: pause, crash (process), crash-machine, isolate, clock_jump;
TARGETS: clients, waiters (a client waiting for a grant), blocked (a waiter blocked on the service's
notification, e.g. etcd's watch of the key before its own, no call in flight), servers, leader or
a node name; each V a length in ms (a clock_jump: its step),
`end` (until the end of the run; a crash's default), or KEY+MS / KEY-MS with KEY a numeric
parameter of the row (e.g. pause@clients:ttl_ms-1,ttl_ms+1: just under and just over the TTL).
--delays: min and max (the network latency's bounds), numbers of ms, or KEY+MS / KEY-MS.

The scenario's [exhaust] table may give every bound instead (clients, acquisitions, faults,
distinct_faults, symmetry, menu, delays, slow_messages, hold_ms, think_ms, property, max_depth,
max_states; see
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
    /// Each menu entry at most once a path (default: [exhaust] distinct_faults, else off);
    /// `--distinct-faults=false` turns the table's off.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub distinct_faults: Option<bool>,
    /// Merge states that differ only by a renaming of interchangeable clients (default:
    /// [exhaust] symmetry, else off); applied where the model's state is typed (the report says).
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
    let opts = ExhaustOptions {
        file: args.file,
        algorithm: args.algorithm,
        clients: args.clients,
        acquisitions: args.acquisitions,
        faults: args.faults,
        distinct_faults: args.distinct_faults,
        symmetry: args.symmetry,
        menu: args.menu,
        delays: args.delays,
        slow_messages: args.slow_messages,
        hold_ms: args.hold_ms,
        think_ms: args.think_ms,
        property: args.property,
        max_depth: args.max_depth,
        max_states: args.max_states,
        seed: args.seed,
        out: args.out,
    };
    Ok(code(search(
        &opts,
        &locksim_algorithms::registry(),
        crate::interrupt::stop_flag_saying(crate::interrupt::SEARCH_STOPPING),
    )?))
}
