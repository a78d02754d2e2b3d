//! `sim check FILE`: validate a scenario without running it.

use std::path::Path;

use crate::exit::{CliError, OK};

pub fn check(file: &Path) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    let scenario = locksim_simulator::scenario::load_file(file, &models)?;
    let labels: Vec<&str> = scenario.runs.iter().map(|r| r.label.as_str()).collect();
    println!(
        "{}: ok: scenario \"{}\", {} ms, {} seeds, algorithms [{}], {} faults, {} expectations",
        file.display(),
        scenario.name,
        scenario.setup.duration_ms,
        scenario.seeds,
        labels.join(", "),
        scenario.setup.faults.len(),
        scenario.expect.len()
    );
    Ok(OK)
}
