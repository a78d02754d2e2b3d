//! A campaign: a scenario's rows × a seed range → one seed's result each → folded, in seed order,
//! into per-row totals → the `[expect]` verdict. The one owner of that path for `sim run`,
//! `sim run --shard` and `sim merge`, `--verify`, `sim sweep` (one campaign per point) and
//! `sim bench memory`; and each subcommand's work from its parsed options ([`command`]): the
//! binary adds only clap, the Ctrl-C stop flag and the exit codes.
//!
//! Modules, bottom-up:
//! - [`error`]: why a command ended without its work: bad input (exit 2) or a failure (exit 3)
//! - [`stdout`]: `print_out` and `outln!`, the one path to standard output (a closed pipe ends
//!   it quietly)
//! - [`seed_range`]: the `--seed` / `--seeds` options as seed ranges
//! - [`out_file`]: an output file checked writable, and no input, before any work runs
//! - [`out_dir`]: an output directory checked writable before any work runs, and locked
//! - [`pool`]: the worker pool (`--threads`) and its bounds
//! - [`seed`]: one seed recorded by the engine and checked here (the campaign calls the
//!   checkers): its metrics, a `--verify` pair of traces, or a whole replay for the reports
//! - [`seed_metrics`]: every seed's whole-run metrics of one row, unfolded (`sim compare`'s
//!   simulated side)
//! - [`replay`]: the seeds a report names recorded and checked for it and handed over
//!   (explanations, timelines, narratives): the reports run none and call no checker
//! - [`rows`]: [`Campaign`] and its run: rows over seeds on the pool, stoppable, folded in seed
//!   order into [`Outcome`] (totals, `--verify` trace differences, seeds finished, interrupted)
//! - [`progress`]: progress on stderr: a bar on a terminal, lines elsewhere, none with `--quiet`
//! - [`verdict`]: an outcome judged: the expectations, the ones not judged, and the [`Class`]
//!   of the result (passed, an expectation failed, a model failed, interrupted)
//! - [`shard`]: one block of the seeds as a partial results file, and parts merged back into
//!   the outcome one machine would have had
//! - [`finish`]: an outcome judged, rendered and written (the table text, the results JSON,
//!   the report), and the texts of a shard's run and of `--trace`'s seeds
//! - [`sweep`]: a sweep's points, one campaign each, recorded as they finish, resumable
//! - [`shrink`]: `sim shrink`: the smallest scenario that still shows a seed's violation (delta
//!   debugging on the TOML document, each candidate run through the real parser and [`seed`])
//! - [`exhaust`]: `sim exhaust`, a bounded systematic search of one row's schedules (no seeds:
//!   it enumerates the choices a seed would draw), its shortest counterexample or certificate
//! - [`explore`]: `sim explore`: swarm testing, an extra random fault schedule per seed within
//!   the scenario's `[explore]` bounds, the failures found (written, shrunk) and their summary
//! - [`command`]: each `sim` subcommand's work from its parsed options to its text, files and
//!   [`Class`]: the binary is clap and one call each
//!
//! Where it sits (docs/architecture.md): above `locksim-simulator` (which runs one seed and
//! hands seeds out in order) and `locksim-reports` (whose `AlgorithmTotals` a seed folds into and
//! whose `evaluate` judges an expectation), below the binary.

#![deny(clippy::print_stdout)]

#[macro_use]
pub mod stdout;

pub mod command;
pub mod error;
pub mod exhaust;
pub mod explore;
pub mod finish;
pub mod out_dir;
pub mod out_file;
pub mod pool;
pub mod progress;
pub mod replay;
pub mod rows;
pub mod seed;
pub mod seed_metrics;
pub mod seed_range;
pub mod shard;
pub mod shrink;
pub mod sweep;
pub mod verdict;

pub use error::CommandError;
pub use pool::{thread_pool, MAX_THREADS};
pub use rows::{Campaign, Outcome, Progress};
pub use seed::{RunMode, SeedResult};
pub use verdict::{Class, Verdict};
