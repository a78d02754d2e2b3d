//! One module per `sim` subcommand.

pub mod bench;
pub mod check;
pub mod list;
pub mod run;
