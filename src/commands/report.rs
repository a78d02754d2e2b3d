//! `sim report RESULTS.json --out DIR`: a report directory (charts and `index.html`) from results
//! saved with `sim run --json`. The work is `locksim_campaign::command::report`.

use std::path::PathBuf;

use clap::Args;

use crate::exit::{code, CliError};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results file written by `sim run --json` (or `results.json` of a report directory).
    pub results: PathBuf,
    /// The report directory (created if missing; only the report's own files are replaced;
    /// another sim writing it meanwhile is refused with exit 2).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The seed the timeline shows (default: the first failing seed, else the first seed run).
    #[arg(long, value_name = "S")]
    pub timeline_seed: Option<u64>,
}

pub fn report(args: ReportArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    Ok(code(locksim_campaign::command::report::report(&args.results, &args.out, args.timeline_seed, &models)?))
}
