//! `sim report`'s work: a report directory (charts and `index.html`) from results saved with `sim
//! run --json`. The timeline replays one seed from the scenario text the results recorded (or,
//! failing that, from the scenario file they name); a live run's results get none.

use std::path::{Path, PathBuf};

use locksim_reports::json::ResultsJson;
use locksim_reports::report::{timeline_note, write_report, TimelineSource};
use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{load_file, parse_str, Scenario};

use crate::error::CommandError;
use crate::verdict::Class;

fn read_results(path: &Path) -> Result<ResultsJson, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CommandError::bad_input(format!("cannot read the results file {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        CommandError::bad_input(format!(
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
fn scenario_of(
    results: &ResultsJson,
    results_path: &Path,
    models: &[&'static dyn DynModel],
) -> Result<Scenario, String> {
    if let Some(text) = &results.scenario_text {
        return parse_str(&results.file, text, models)
            .map_err(|e| format!("the scenario text recorded in the results no longer parses ({e})"));
    }
    let named = Path::new(&results.file);
    let beside = results_path.parent().map(|dir| dir.join(named.file_name().unwrap_or_default()));
    let found = std::iter::once(named.to_path_buf()).chain(beside).find(|p| p.is_file());
    match found {
        Some(path) => load_file(&path, models).map_err(|e| format!("the scenario file does not parse ({e})")),
        None => Err(format!(
            "the results record no scenario text (they predate it), and the scenario file {} was not found",
            results.file
        )),
    }
}

/// `sim report`'s options: its command line, from which clap derives the arguments and their
/// `--help` (the doc comments below are that help text).
#[derive(Clone, Debug, clap::Args)]
pub struct ReportOptions {
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

/// Writes the report directory `out` from the results file `results_path`, its timeline showing
/// `timeline_seed` (default: the first failing seed) when the scenario can be replayed.
pub fn report(opts: &ReportOptions, models: &[&'static dyn DynModel]) -> Result<Class, CommandError> {
    let (results_path, out, timeline_seed) = (opts.results.as_path(), opts.out.as_path(), opts.timeline_seed);
    let results = read_results(results_path)?;
    let _out_lock = crate::out_dir::prepare_locked(out, "--out").map_err(CommandError::bad_input)?;
    // A live run cannot be replayed: re-simulating its scenario would draw a run that never
    // happened. Its timeline is drawn by `sim live --report`, from the recorded histories.
    let scenario = if results.mode.as_deref() == Some("live") {
        Err("these are a live run's results, which cannot be replayed (sim live --report draws the recorded run)"
            .to_string())
    } else {
        scenario_of(&results, results_path, models)
    };
    if let Err(why) = &scenario {
        eprintln!("note: no timeline: {why}");
    }
    let written = match &scenario {
        Ok(s) => {
            let wanted = locksim_reports::report::wanted(&results, timeline_seed);
            let recordings = crate::replay::recordings(s, wanted, crate::RunMode::default());
            write_report(out, &results, TimelineSource::Recordings(s, recordings), timeline_seed)?
        }
        Err(why) => write_report(out, &results, TimelineSource::Unavailable(why), timeline_seed)?,
    };
    outln!("report: {}{}", written.index.display(), timeline_note(written.timeline_seed));
    Ok(Class::Passed)
}
