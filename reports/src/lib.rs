//! locksim's reports: everything between the seeds' measurements and what a person or a script
//! reads. It folds many seeds of one algorithm into totals, judges `[expect]` assertions against
//! them, renders the terminal table and the results JSON of `spec/results-format.md`, writes
//! report directories (charts and an HTML page), and holds `sim sweep`'s machinery (parameter
//! ranges, scenario edits, output files).
//!
//! Module map:
//! - [`wilson`]: 95% Wilson score intervals for "k of n runs", and the bound a clean run rules out
//! - [`num`]: rounding and number formatting shared by the JSON and the table (byte-stable output)
//! - [`aggregate`]: [`AlgorithmTotals`], one results row folded seed by seed in bounded memory
//! - [`exact`]: a row's folded state written to JSON and read back exactly (partial files,
//!   a sweep's progress record)
//! - [`shard`]: `--shard K/N`'s seed split, the partial results file, and the checks and fold
//!   of `sim merge`
//! - [`json`]: the results JSON ([`ResultsJson`]), field for field as the spec shows, plus extras
//! - [`expect`]: evaluating a scenario's `[expect]` block against the totals
//! - [`compare`]: `sim compare`: a row simulated and live, metric by metric, with the simulated interval
//! - [`table`]: the terminal table and the notes under it (failing seeds, replay commands, …)
//! - [`recording`]: the seeds a report needs ([`recording::Wanted`]) and, recorded and checked
//!   by the caller, as it is given them ([`recording::Recording`])
//! - [`explain`]: one violation of one (recorded) seed told as a numbered narrative and a
//!   space-time diagram (`sim explain`, the report's explanations, `sim shrink`'s final narrative)
//! - [`report`]: a report directory (`sim run --report`, `sim report`): the results JSON, every
//!   chart, the timeline of one recorded seed, and `index.html`
//! - [`sweep`]: `sim sweep`'s `--param` values, key-path edits of the scenario, its output files,
//!   its terminal summary and its progress record (`--resume`)
//!
//! Dependencies point one way: this crate reads `locksim-simulator`'s per-seed
//! [`SeedMetrics`](locksim_simulator::checker::SeedMetrics), histories and holder intervals and
//! scenario types, and draws with `locksim-charts`; no model crate, nothing of the command line,
//! no seed runner and no checker: a report says which seeds its explanations and timeline need
//! (`report::wanted`), and the caller (the campaign) records and checks those and hands them
//! over finished ([`recording::Recording`]).

#![warn(missing_docs)]

pub mod aggregate;
pub mod compare;
pub mod exact;
pub mod expect;
pub mod explain;
pub mod json;
pub mod num;
pub mod recording;
pub mod report;
pub mod shard;
pub mod sweep;
pub mod table;
pub mod wilson;

pub use aggregate::{AlgorithmTotals, ClassCount, FailingSeed, MAX_FAILING_SEEDS, MAX_PANICKED_SEEDS};
pub use expect::{evaluate, evaluate_at_fewer_seeds, evaluate_one, Actual, ExpectationResult};
pub use json::{params_json, replay_command, AlgorithmJson, ResultsJson, ServerVersion};
/// Every output file is written whole or not at all (see `locksim_charts::atomic`).
pub use locksim_charts::{resolve_output, write_atomic, OutputTarget};
pub use report::{timeline_note, write_report, ReportError, ReportWritten};
pub use table::{render_live_table, render_table};
pub use wilson::{rule_of_three, rules_out, rules_out_text, wilson95};
