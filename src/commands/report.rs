//! `sim report RESULTS.json --out DIR`: a report directory (charts and `index.html`) from results
//! saved with `sim run --json`. The timeline re-runs one seed from the scenario text the results
//! recorded (or, failing that, from the scenario file they name).

use std::path::{Path, PathBuf};

use clap::Args;
use locksim_reports::json::ResultsJson;
use locksim_reports::report::{timeline_note, write_report, TimelineSource};
use locksim_simulator::scenario::{load_file, parse_str, Scenario};

use crate::exit::{CliError, OK};

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
/// Without recorded text, the file the results name is looked for as written (relative to the
/// current directory, as `sim run` saw it), then beside the results file.
fn scenario_of(results: &ResultsJson, results_path: &Path) -> Result<Scenario, String> {
    let models = locksim_algorithms::registry();
    if let Some(text) = &results.scenario_text {
        return parse_str(&results.file, text, &models)
            .map_err(|e| format!("the scenario text recorded in the results no longer parses ({e})"));
    }
    let named = Path::new(&results.file);
    let beside = results_path.parent().map(|dir| dir.join(named.file_name().unwrap_or_default()));
    let found = std::iter::once(named.to_path_buf()).chain(beside).find(|p| p.is_file());
    match found {
        Some(path) => load_file(&path, &models).map_err(|e| format!("the scenario file does not parse ({e})")),
        None => Err(format!(
            "the results record no scenario text (they predate it), and the scenario file {} was not found",
            results.file
        )),
    }
}

pub fn report(args: ReportArgs) -> Result<i32, CliError> {
    let results = read_results(&args.results)?;
    let _out_lock = crate::out_dir::prepare_locked(&args.out, "--out").map_err(CliError::bad_input)?;
    // A live run cannot be replayed: re-simulating its scenario would draw a run that never
    // happened. Its timeline is drawn by `sim live --report`, from the recorded histories.
    let scenario = if results.mode.as_deref() == Some("live") {
        Err("these are a live run's results, which cannot be replayed (sim live --report draws the recorded run)"
            .to_string())
    } else {
        scenario_of(&results, &args.results)
    };
    if let Err(why) = &scenario {
        eprintln!("note: no timeline: {why}");
    }
    let written = match &scenario {
        Ok(s) => {
            let replay = locksim_campaign::replay::replayer(s, locksim_campaign::RunMode::default());
            write_report(&args.out, &results, TimelineSource::Replay(s, &replay), args.timeline_seed)?
        }
        Err(why) => write_report(&args.out, &results, TimelineSource::Unavailable(why), args.timeline_seed)?,
    };
    outln!("report: {}{}", written.index.display(), timeline_note(written.timeline_seed));
    Ok(OK)
}
