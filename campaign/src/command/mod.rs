//! Each `sim` subcommand's work, from its options (which the binary's clap parsed) to its printed
//! text, its files and its end: a [`Class`](crate::Class) the binary maps to the exit code, or a
//! [`CommandError`](crate::error::CommandError). The binary hands every command the models and
//! the Ctrl-C stop flag, so that a test runs a command in process with its own.
//!
//! A search's find is [`Class::ExpectationFailed`](crate::Class) (exit 1), as a failed `[expect]`
//! line is.

pub mod bench;
pub mod check;
pub mod exhaust;
pub mod explain;
pub mod explore;
pub mod merge;
pub mod report;
pub mod run;
pub mod shrink;
pub mod sweep;
