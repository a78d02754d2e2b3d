//! `sim explain`'s work: one violation of one seed replayed ([`crate::replay::explain`]), told as
//! a numbered narrative (printed) and drawn as a space-time diagram (SVG and PNG in DIR).

use std::path::Path;

use locksim_reports::explain::{file_part, write_diagram, ExplainError};
use locksim_reports::ReportError;
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::load_file;

use crate::error::CommandError;
use crate::stdout::print_out;
use crate::verdict::Class;

/// Explains violation `index` of `label`'s `seed` in `file`, the diagram written into `out`; a
/// seed that panicked is a failure, any other refusal bad input.
pub fn explain(
    file: &Path,
    label: &str,
    seed: u64,
    index: usize,
    out: &Path,
    models: &[&'static dyn DynModel],
) -> Result<Class, CommandError> {
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
