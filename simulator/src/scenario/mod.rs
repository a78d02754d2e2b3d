//! Scenario files: the validated form a run uses ([`Scenario`]), and the parser that builds it
//! from TOML with errors that name the file, line, column and key ([`parse`], [`error`]).
//!
//! - [`types`]: the validated scenario (what the engine and reports read)
//! - [`parse`]: TOML text to [`Scenario`], every check of the format
//! - [`error`]: the error type, with file:line:column rendering
//! - [`selector`]: node selectors (`client-3`, `server-*`, `leader`, …)

pub mod error;
pub mod parse;
pub mod selector;
pub mod types;

pub use error::ScenarioError;
pub use parse::{load_file, parse_str};
pub use selector::Selector;
pub use types::*;
