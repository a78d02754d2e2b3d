//! `sim report RESULTS.json --out DIR`: a report directory (charts and `index.html`) from results
//! saved with `sim run --json`. The timeline re-runs one seed from the scenario text the results
//! recorded (or, failing that, from the scenario file they name).

use std::path::{Path, PathBuf};

use clap::Args;
use locksim_reports::json::ResultsJson;
use locksim_simulator::scenario::{load_file, parse_str, Scenario};

use crate::exit::{CliError, OK};
use crate::report::{timeline_note, write_report};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results file written by `sim run --json` (or `results.json` of a report directory).
    pub results: PathBuf,
    /// The report directory (created if missing; only the report's own files are replaced).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The seed the timeline shows (default: the first failing seed, else the first seed run).
    #[arg(long, value_name = "S")]
    pub timeline_seed: Option<u64>,
}

fn read_results(path: &Path) -> Result<ResultsJson, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::bad_input(format!("cannot read the results file {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::bad_input(format!(
            "{}:{}:{}: not a locksim results file ({e}); expected the JSON `sim run --json FILE` writes",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}

/// The scenario to re-run for the timeline, and why there is none when there isn't.
fn scenario_of(results: &ResultsJson) -> Result<Scenario, String> {
    let models = locksim_algorithms::registry();
    match &results.scenario_text {
        Some(text) => parse_str(&results.file, text, &models)
            .map_err(|e| format!("the scenario recorded in the results no longer parses: {e}")),
        None => load_file(Path::new(&results.file), &models).map_err(|e| e.to_string()),
    }
}

pub fn report(args: ReportArgs) -> Result<i32, CliError> {
    let results = read_results(&args.results)?;
    let scenario = match scenario_of(&results) {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("note: no timeline: {why}");
            None
        }
    };
    let written = write_report(&args.out, &results, scenario.as_ref(), args.timeline_seed)?;
    println!("report: {}{}", written.index.display(), timeline_note(written.timeline_seed));
    Ok(OK)
}
