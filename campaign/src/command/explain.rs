//! `sim explain`'s work: one violation of one seed replayed ([`crate::replay::explain`]), told as
//! a numbered narrative (printed) and drawn as a space-time diagram (SVG and PNG in DIR).

use std::path::PathBuf;

use locksim_reports::explain::{file_part, write_diagram, ExplainError};
use locksim_reports::ReportError;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::load_file;

use crate::error::CommandError;
use crate::stdout::print_out;
use crate::verdict::Class;

/// `sim explain`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, clap::Args)]
pub struct ExplainOptions {
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

/// Explains violation `index` of `label`'s `seed` in `file`, the diagram written into `out`; a
/// seed that panicked is a failure, any other refusal bad input.
pub fn explain(opts: &ExplainOptions, models: &[&'static dyn DynModel]) -> Result<Class, CommandError> {
    let (file, label, out) = (opts.file.as_path(), opts.algorithm.as_str(), opts.out.as_path());
    let (seed, index) = (opts.seed, opts.index);
    let scenario = load_file(file, models)?;
    crate::out_dir::prepare(out, "--out").map_err(CommandError::bad_input)?;
    let explained = crate::replay::explain(&scenario, label, seed, index).map_err(|e| match e {
        ExplainError::Panicked { .. } => CommandError::Failed(e.to_string()),
        other => CommandError::bad_input(other.to_string()),
    })?;
    let name = format!("explain-{}-{}-{}", file_part(&explained.label), explained.seed, explained.index);
    let files = write_diagram(out, &name, &explained).map_err(ReportError::from)?;
    let mut text = format!("# {}\n", explained.diagram.title);
    for line in &explained.narrative {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&format!("diagram: {} and {}\n", files.svg.display(), files.png.display()));
    print_out(&text);
    Ok(Class::Passed)
}
