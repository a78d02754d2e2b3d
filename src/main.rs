//! `sim`: the locksim command line. Wiring only: the options each command's crate defines (clap
//! derives the arguments and `--help` from them: `locksim_campaign::command`'s, and
//! `locksim_live`'s for `sim live` and `sim compare`), one call per subcommand with the models
//! and the Ctrl-C stop flag, and the exit code.
//!
//! - [`exit`]: the exit codes, from a command's class or error
//! - [`interrupt`]: Ctrl-C or SIGTERM stops a run within a second, the seeds in progress discarded
//! - [`commands`]: what the binary does itself: `sim list`, completions and man pages, and the
//!   hidden processes of a live run
//!
//! docs/architecture.md draws the crates.

#![deny(clippy::print_stdout)]

#[macro_use]
extern crate locksim_campaign; // outln!

mod commands;
mod exit;
mod interrupt;

use clap::{CommandFactory, Parser, Subcommand};

use locksim_campaign::command::{bench, check, exhaust, explain, explore, merge, report, run, shrink, sweep};
use locksim_campaign::{Class, CommandError};
use locksim_live::{command::LiveOptions, compare::CompareOptions};

/// Deterministic simulation testbed for distributed lock algorithms.
///
/// Runs lock models (`sim list` names every one this build has) side by side through the
/// faults a scenario file describes, over many seeds, and reports throughput, latency and safety
/// violations judged on true time. The same binary, scenario and seed give the same bytes;
/// every failing seed comes with the command that replays it.
///
/// Exit codes: 0 ran and every expectation held; 1 an [expect] assertion failed (for `sim
/// explore`: a violation was found); 2 bad command line, scenario, or an output that cannot be
/// written; 3 a model or the simulator panicked in
/// some seed (the others still ran), `--verify` found a seed that ran differently twice, a
/// chart failed to draw, or a live run's server failed to start; 130 interrupted by Ctrl-C or
/// SIGTERM (the seeds in progress stop within a second and are discarded; the finished seeds'
/// results are still printed and written, marked interrupted).
#[derive(Parser, Debug)]
#[command(name = "sim", version, propagate_version = true, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress on stderr (the bar on a terminal, the lines elsewhere).
    #[arg(long, global = true)]
    quiet: bool,
    /// Progress as a line every few seconds on stderr, even on a terminal (the default when
    /// stderr is not one: a script or CI log sees how far a long run is).
    #[arg(long, global = true, conflicts_with = "quiet")]
    progress: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario: every algorithm over its seeds; print the results table.
    Run(run::RunOptions),
    /// Run a scenario at every value of one or more parameters; write CSV, JSON, Parquet and charts.
    Sweep(sweep::SweepOptions),
    /// Fold the partial results of `--shard K/N` runs into the results of one machine's run.
    Merge(merge::MergeOptions),
    /// The smallest scenario that still shows a seed's violation (delta debugging).
    Shrink(shrink::ShrinkOptions),
    /// Swarm testing: an extra random fault schedule per seed; every violation found, shrunk.
    Explore(explore::ExploreOptions),
    /// Every schedule within bounds: the shortest counterexample, or what was covered.
    Exhaust(exhaust::ExhaustOptions),
    /// Run a scenario against real servers started on this machine (Redis, MariaDB, PostgreSQL and PgBouncer, ZooKeeper, etcd).
    Live(LiveOptions),
    /// Simulate a scenario and run it live, and print each metric side by side.
    ///
    /// First it measures this machine: the loopback round trip, and on servers started from each
    /// row's parameters the round trip of each request kind a model parameter stands for
    /// (`service_ms`; for ZooKeeper and etcd also `fsync_ms`, from a write on the leader). The
    /// simulation runs with those figures, which each row's header prints.
    Compare(CompareOptions),
    /// One client process of a live run (started by `sim live`; not for direct use).
    #[command(hide = true)]
    LiveClient {
        /// The client's specification (JSON).
        spec: String,
    },
    /// Starts a live run's server so that it dies with `sim` (started by `sim live`; not for
    /// direct use): PR_SET_PDEATHSIG, then the program replaces this process.
    #[command(hide = true)]
    LiveExec {
        /// The program and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Charts and an HTML page from saved results (`sim run --json FILE`).
    Report(report::ReportOptions),
    /// Explain one violation of one seed: a numbered narrative and a space-time diagram.
    Explain(explain::ExplainOptions),
    /// Validate a scenario file and estimate what running it would cost.
    ///
    /// The estimate comes from a short probe (seed 0 of each row for a bounded simulated time):
    /// seed-runs, simulated seconds, events and wall time on every core, with a warning when the
    /// run would take more than an hour; and the memory the run may hold (a seed keeps its
    /// history to its end), with a warning when that is more than the machine has available.
    /// Exit 0, 2 (bad input) or 3 (the probe panicked).
    Check(check::CheckOptions),
    /// List every model with its parameters, defaults and meaning.
    List {
        /// Only this model.
        model: Option<String>,
    },
    /// Measure speed (the standard engine workload, or a scenario's algorithms) and peak memory.
    #[command(subcommand)]
    Bench(bench::Bench),
    /// Print a shell completion script (e.g. `sim completions bash > /etc/bash_completion.d/sim`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): `sim man > sim.1; man ./sim.1`, or a subcommand's, `sim man run`
    /// (the page `sim-run(1)`), `sim man bench engine`; `--out-dir DIR` writes every page.
    Man {
        /// The subcommand whose page to print (none: `sim`'s own page).
        #[arg(value_name = "SUBCOMMAND")]
        subcommand: Vec<String>,
        /// Write every page (sim.1, sim-run.1, …) into DIR instead of printing one.
        #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
        out_dir: Option<std::path::PathBuf>,
    },
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with success; usage errors with code 2.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    locksim_campaign::progress::set_mode(cli.quiet, cli.progress);
    match dispatch(cli.command) {
        Ok(class) => std::process::exit(exit::code(class)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(exit::error_code(&e));
        }
    }
}

/// The subcommand's one call, with the models and, for a command that can be stopped, the stop
/// flag (asking for it installs the Ctrl-C handler, so a command that takes none is ended by
/// Ctrl-C as any program is).
fn dispatch(command: Command) -> Result<Class, CommandError> {
    let models = locksim_algorithms::registry();
    let stop = interrupt::stop_flag;
    match command {
        Command::Run(opts) => run::run(&opts, &models, stop()),
        Command::Sweep(opts) => sweep::sweep(&opts, &models, stop()),
        Command::Merge(opts) => merge::merge(&opts, &models),
        Command::Shrink(opts) => shrink::shrink(&opts, &models, stop()),
        Command::Explore(opts) => explore::explore(&opts, &models, stop()),
        Command::Exhaust(opts) => {
            exhaust::exhaust(&opts, &models, interrupt::stop_flag_saying(interrupt::SEARCH_STOPPING))
        }
        // The live commands install the handler only once every check has passed.
        Command::Live(opts) => locksim_live::command::live(&opts, &models, stop),
        Command::Compare(opts) => locksim_live::compare::compare(&opts, &models, stop),
        Command::LiveClient { spec } => commands::live_client(&spec),
        Command::LiveExec { command } => commands::live_exec(&command),
        Command::Report(opts) => report::report(&opts, &models),
        Command::Explain(opts) => explain::explain(&opts, &models),
        Command::Check(opts) => check::check(&opts, &models),
        Command::List { model } => commands::list(&models, model.as_deref()),
        Command::Bench(what) => bench::bench(what, &models, stop()),
        Command::Completions { shell } => commands::completions(Cli::command(), shell),
        Command::Man { subcommand, out_dir: None } => commands::man(Cli::command(), &subcommand),
        Command::Man { out_dir: Some(dir), .. } => commands::man_to_dir(Cli::command(), &dir),
    }
}
