//! One module per `sim` subcommand.

pub mod bench;
pub mod check;
pub mod compare;
pub mod exhaust;
pub mod explain;
pub mod explore;
pub mod list;
pub mod live;
pub mod merge;
pub mod report;
pub mod run;
pub mod shell;
pub mod shrink;
pub mod sweep;
