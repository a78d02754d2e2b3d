//! Scenario files: the validated form a run uses ([`Scenario`]), and the parser that builds it
//! from TOML with errors that name the file, line, column and key ([`parse`], [`error`]).
//!
//! - [`types`]: the validated scenario (what the engine and reports read)
//! - [`parse`]: TOML text to [`Scenario`]: the top level and the order of the checks
//! - [`error`]: the error type, with file:line:column rendering
//! - [`selector`]: node selectors (`client-3`, `server-*`, `leader`, …)
//! - [`expect`]: `[expect.LABEL]` values (`"none"`, `"< 0.05"`), also usable on their own
//! - [`explore`]: the `[explore]` table, the bounds of `sim explore`'s random fault schedules
//! - [`exhaust`]: the `[exhaust]` table, the bounds of `sim exhaust`'s systematic search
//! - [`file_names`]: row labels as file-name parts (one sanitizer; colliding labels are refused)
//! - [`notes`]: notes on a valid scenario that may surprise (a fault starting after the run ends)
//! - private helpers of the parser: `walk` (key paths and positions), `values` (numbers and
//!   distributions), `params` and `runs` (models, algorithms, variants), `sections` (network,
//!   workload, clocks), `faults`, `nodes` (selectors and node existence), `syntax`
//!   (a best-effort key path for TOML syntax errors), `zero_time` (a scenario whose every time
//!   is 0 would never advance), `read` (a scenario file's text, bounded in size)

pub mod error;
pub mod exhaust;
pub mod expect;
pub mod explore;
mod faults;
pub mod file_names;
mod nodes;
pub mod notes;
mod params;
pub mod parse;
mod read;
mod replay;
mod runs;
mod sections;
mod syntax;
pub mod types;
mod values;
mod walk;
mod zero_time;

pub use crate::setup::selector::{self, Selector};
pub use error::ScenarioError;
pub use parse::{load_file, load_file_with_text, parse_str};
pub use read::{read_scenario_text, MAX_SCENARIO_BYTES};
pub use types::*;
pub use walk::show_number;
