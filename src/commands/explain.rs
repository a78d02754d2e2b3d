//! `sim explain FILE --algorithm LABEL --seed S [--index I] [--out DIR]`: one violation of one
//! seed told as a numbered narrative (printed) and a space-time diagram (SVG and PNG in DIR).
//! The work is `locksim_campaign::command::explain`; this file is its arguments.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::command::explain::explain;

use crate::exit::{code, CliError};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The algorithm or variant label whose seed to explain.
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithm: String,
    /// The seed (a failing seed, as `sim run` lists them).
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// Which of the seed's violations, in true-time order (0: the first).
    #[arg(long, value_name = "I", default_value_t = 0)]
    pub index: usize,
    /// Where the diagram goes (`explain-LABEL-S-I.svg` and `.png`; created if absent).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
}

pub fn run(args: ExplainArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    Ok(code(explain(&args.file, &args.algorithm, args.seed, args.index, &args.out, &models)?))
}
