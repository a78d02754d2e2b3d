//! locksim's reports: everything between the seeds' measurements and what a person or a script
//! reads. It folds many seeds of one algorithm into totals, judges `[expect]` assertions against
//! them, and renders the terminal table and the results JSON of `spec/results-format.md`.
//!
//! Module map:
//! - [`wilson`]: 95% Wilson score intervals for "k of n runs", and the bound a clean run rules out
//! - [`num`]: rounding and number formatting shared by the JSON and the table (byte-stable output)
//! - [`aggregate`]: [`AlgorithmTotals`], one results row folded seed by seed in bounded memory
//! - [`json`]: the results JSON ([`ResultsJson`]), field for field as the spec shows, plus extras
//! - [`expect`]: evaluating a scenario's `[expect]` block against the totals
//! - [`table`]: the terminal table and the notes under it (failing seeds, replay commands, …)
//!
//! Dependencies point one way: this crate reads `locksim-simulator`'s per-seed
//! [`SeedMetrics`](locksim_simulator::checker::SeedMetrics) and scenario types and nothing else.

pub mod aggregate;
pub mod expect;
pub mod json;
pub mod num;
pub mod table;
pub mod wilson;

pub use aggregate::{AlgorithmTotals, ClassCount, FailingSeed, MAX_FAILING_SEEDS, MAX_PANICKED_SEEDS};
pub use expect::{evaluate, evaluate_one, Actual, ExpectationResult};
pub use json::{params_json, replay_command, AlgorithmJson, ResultsJson};
pub use table::render_table;
pub use wilson::{rule_of_three, rules_out, rules_out_text, wilson95};
