//! `sim check FILE`: validate a scenario without running it, then estimate what running it
//! would cost. The work is `locksim_campaign::command::check`; this file is its arguments.

use std::path::PathBuf;

use clap::Args;

use crate::exit::{code, CliError};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Estimate for this many seeds per row, as `sim run --seeds` takes them: N or A..B.
    /// Default: the file's `seeds`.
    #[arg(long, value_name = "N|A..B")]
    pub seeds: Option<String>,
    /// Skip the probe run and the cost estimate: only validate the file.
    #[arg(long)]
    pub no_estimate: bool,
}

pub fn check(args: &CheckArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    Ok(code(locksim_campaign::command::check::check(&args.file, args.seeds.as_deref(), args.no_estimate, &models)?))
}
