//! Each `sim` subcommand's options and work. The options struct (`RunOptions`, …) is the
//! command line, defined once: it derives `clap::Args`, its doc comments are the `--help` text,
//! and the binary parses straight into it. The work goes from those options to the printed text,
//! the files and the end: a [`Class`](crate::Class) the binary maps to the exit code, or a
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
