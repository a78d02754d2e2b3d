//! `sim explain FILE --algorithm LABEL --seed S [--index I] [--out DIR]`: one violation of one
//! seed told as a numbered narrative (printed) and a space-time diagram (SVG and PNG in DIR).
//! The seed is replayed by `locksim_campaign::replay`, told by `locksim_reports::explain`; this is
//! the wiring.

use std::path::PathBuf;

use clap::Args;
use locksim_campaign::replay::explain;
use locksim_reports::explain::{file_part, write_diagram, ExplainError};
use locksim_simulator::scenario::load_file;

use crate::exit::{CliError, MODEL_FAILED, OK};
use crate::runner::print_out;

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
    let scenario = load_file(&args.file, &models)?;
    crate::out_dir::prepare(&args.out, "--out").map_err(CliError::bad_input)?;
    let explained = explain(&scenario, &args.algorithm, args.seed, args.index).map_err(|e| match e {
        ExplainError::Panicked { .. } => CliError { code: MODEL_FAILED, message: e.to_string() },
        other => CliError::bad_input(other.to_string()),
    })?;
    let name = format!("explain-{}-{}-{}", file_part(&explained.label), explained.seed, explained.index);
    let files = write_diagram(&args.out, &name, &explained).map_err(locksim_reports::ReportError::from)?;
    let mut text = format!("# {}\n", explained.diagram.title);
    for line in &explained.narrative {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&format!("diagram: {} and {}\n", files.svg.display(), files.png.display()));
    print_out(&text);
    Ok(OK)
}
