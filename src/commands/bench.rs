//! `sim bench engine`, `sim bench scenario FILE` and `sim bench memory FILE`: speed figures
//! measured in wall time, and the peak memory of a long run. The work is
//! `locksim_campaign::command::bench`; this file is its arguments.

use std::path::PathBuf;

use clap::Subcommand;
use locksim_campaign::command::bench::{bench as measure, Bench};

use crate::exit::{code, CliError};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
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

pub fn bench(cmd: BenchCommand) -> Result<i32, CliError> {
    let bench = match cmd {
        BenchCommand::Engine { json } => Bench::Engine { json },
        BenchCommand::Scenario { file, seeds, repeat, json } => Bench::Scenario { file, seeds, repeat, json },
        BenchCommand::Memory { file, seeds, threads, json } => Bench::Memory { file, seeds, threads, json },
    };
    Ok(code(measure(bench, &locksim_algorithms::registry(), crate::interrupt::stop_flag())?))
}
