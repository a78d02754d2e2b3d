//! A report directory: the results JSON, every chart as SVG and PNG, and `index.html` showing
//! them all. Written by `sim run --report DIR` and, from saved results, `sim report`. Only the
//! report's own files are written (`index.html`, `results.json`, and `throughput`, `latency-cdf`,
//! `violations`, `cost`, `scorecard`, `timeline` and one `explain-LABEL` per row with a failing seed, as `.svg`
//! and `.png`); anything else already in the directory is left alone.
//!
//! - [`chart_data`]: results rows as chart data
//! - [`given`]: the recordings a simulated report is given ([`wanted`] names them), read once:
//!   each explained seed told as it comes, its trace then dropped
//! - [`explained`]: each row's first violation explained (narrative and space-time diagram)
//! - [`timeline`]: one seed of every row (as the caller recorded it, or as a live run did) turned
//!   into lanes, faults and overlaps
//! - [`html`]: the page
//! - [`page_data`], [`explorer`]: the recorded histories as JSON in the page, and the
//!   interactive timeline and clock plot its inlined script draws from them

pub mod chart_data;
pub mod explained;
pub mod explorer;
pub mod given;
pub mod html;
pub mod page_data;
pub mod timeline;

use std::path::{Path, PathBuf};

use locksim_charts::{ChartError, ChartFiles};
use locksim_simulator::checker::Violation;
use locksim_simulator::history::History;
use locksim_simulator::scenario::Scenario;

use crate::json::ResultsJson;
use crate::recording::{Recording, Wanted};
use chart_data::{algorithm_chart_data, CdfSource};
use given::Given;
use html::{index_html, ChartSection};

/// One run's history as a live run recorded it (live runs cannot be replayed).
pub struct RecordedHistory {
    /// The row's label.
    pub label: String,
    /// The seed (it fixed the workload's draws and the fault schedule).
    pub seed: u64,
    /// What the run recorded.
    pub history: History,
    /// The violations the run's check found in it, in true-time order (the page shows the first
    /// [`crate::recording::VIOLATIONS_KEPT`]).
    pub violations: Vec<Violation>,
}

/// Where the report's timeline (and the explanations of violations) come from.
pub enum TimelineSource<'a> {
    /// Seeds of the scenario the caller recorded and checked for the report: exactly those
    /// [`wanted`] names for these results and timeline seed, handed over one at a time (only one
    /// trace need be held at once). Simulated runs are exact replays, so the timeline and the
    /// explanations are of the very runs the results counted.
    Recordings(&'a Scenario, Box<dyn Iterator<Item = Recording> + 'a>),
    /// The histories a live run recorded: the timeline is drawn from them; violations are not
    /// explained (the narrative reads a replay's trace, which a live run does not have).
    Recorded(&'a [RecordedHistory]),
    /// Neither: the page says why in place of the timeline.
    Unavailable(&'a str),
}

/// Where the report went.
pub struct ReportWritten {
    /// The page, `DIR/index.html`.
    pub index: PathBuf,
    /// The seed the timeline shows, if one was drawn.
    pub timeline_seed: Option<u64>,
}

/// Why a report could not be written, split by whose side the failure is on.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file of the report could not be written or read back (a read-only or full directory):
    /// the user's side. The message names the file.
    #[error("{0}")]
    Io(String),
    /// A chart failed to draw: ours.
    #[error("drawing a chart failed: {0}")]
    Draw(ChartError),
}

impl From<ChartError> for ReportError {
    fn from(e: ChartError) -> Self {
        chart_error(e)
    }
}

fn chart_error(e: ChartError) -> ReportError {
    match e {
        // Writing is the user's side (a read-only or full directory); drawing failing is ours.
        ChartError::CreateDir { .. } | ChartError::Write { .. } => ReportError::Io(e.to_string()),
        other => ReportError::Draw(other),
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), ReportError> {
    locksim_charts::write_atomic(path, text)
        .map_err(|e| ReportError::Io(format!("cannot write {}: {e}", path.display())))
}

/// The seeds a simulated report draws and tells, for `results` and the timeline seed `asked`:
/// each row's first failing seed with its trace (its first violation is explained), then every
/// row at the timeline's seed ([`timeline_seed`]) without one, unless already named; in results
/// row order. The caller records exactly these and hands them over
/// ([`TimelineSource::Recordings`]).
pub fn wanted(results: &ResultsJson, asked: Option<u64>) -> Vec<Wanted> {
    let (seed, _) = timeline_seed(results, asked);
    let mut wanted: Vec<Wanted> = results
        .algorithms
        .iter()
        .filter_map(|a| Some(Wanted { label: a.label.clone(), seed: *a.failing_seeds.first()?, trace: true }))
        .collect();
    for a in &results.algorithms {
        if !wanted.iter().any(|w| w.label == a.label && w.seed == seed) {
            wanted.push(Wanted { label: a.label.clone(), seed, trace: false });
        }
    }
    wanted
}

/// The seed the timeline shows: `asked`, else the smallest first failing seed of any row, else
/// the first seed run.
pub fn timeline_seed(results: &ResultsJson, asked: Option<u64>) -> (u64, String) {
    if let Some(s) = asked {
        return (s, format!("seed {s}, as asked"));
    }
    match results.algorithms.iter().filter_map(|a| a.failing_seeds.first().copied()).min() {
        Some(s) => (s, format!("seed {s}, the first failing seed")),
        None => (results.seeds.from, format!("seed {}: no seed failed, so the first seed run", results.seeds.from)),
    }
}

fn section(files: &ChartFiles, heading: &str, caption: &str) -> Result<ChartSection, ReportError> {
    let svg = std::fs::read_to_string(&files.svg)
        .map_err(|e| ReportError::Io(format!("cannot read back {}: {e}", files.svg.display())))?;
    let png_name = files.png.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(ChartSection { heading: heading.to_string(), caption: caption.to_string(), svg, png_name })
}

/// Writes the whole report into `dir` (which the caller has checked exists and can be written),
/// with the timeline from `source`.
pub fn write_report(
    dir: &Path,
    results: &ResultsJson,
    source: TimelineSource<'_>,
    asked_seed: Option<u64>,
) -> Result<ReportWritten, ReportError> {
    write_file(&dir.join("results.json"), &results.to_pretty_string())?;
    let cdf = CdfSource::for_rows(&results.algorithms);
    let algs: Vec<_> = results.algorithms.iter().map(|a| algorithm_chart_data(a, cdf)).collect();
    let name = &results.scenario;
    let mut sections = Vec::new();
    // The page shows it in its own block under the results table (html.rs picks it out by name).
    let f =
        locksim_charts::scorecard_chart(dir, "scorecard", &format!("{name}: scorecard"), &algs).map_err(chart_error)?;
    sections.push(section(
        &f,
        "Scorecard",
        "Every row on one figure. Safety: runs with each violation, a dot and its 95% Wilson interval \
         on one scale for the three; a row that saw none is a dot at 0 and a dotted line to the rate its \
         runs rule out. Availability: the outage (the longest stretch with a waiter and no holder), mean \
         as a bar and longest as a tick. Cost: messages per successful acquisition. Fairness: Jain's index \
         of sections per client, the mean on its min–max range (1: equal shares).",
    )?);
    let f = locksim_charts::throughput_chart(dir, "throughput", &format!("{name}: throughput"), &algs)
        .map_err(chart_error)?;
    sections.push(section(&f, "Throughput", "Completed critical sections per simulated second, all seeds.")?);
    // The wait, not the acquire latency: a failed call followed by a retry is one long wait for
    // the application, where the latency of the call that finally succeeded looks short.
    match cdf {
        CdfSource::Wait => {
            let f = locksim_charts::wait_cdf_chart(dir, "latency-cdf", &format!("{name}: wait for the lock"), &algs)
                .map_err(chart_error)?;
            sections.push(section(
                &f,
                "Wait for the lock",
                "Fraction of critical sections granted within a given time of their first acquire call, failed \
                 calls included (log scale), all seeds; a section still waiting when its run ended counts up to \
                 the end.",
            )?);
        }
        CdfSource::AcquireLatency => {
            let f = locksim_charts::latency_cdf_chart(dir, "latency-cdf", &format!("{name}: acquire latency"), &algs)
                .map_err(chart_error)?;
            sections.push(section(
                &f,
                "Acquire latency",
                "Fraction of acquisitions that succeeded within a given time (log scale), all seeds. These \
                 results predate the wait for a critical section, so the latency of each successful call is shown.",
            )?);
        }
    }
    let f = locksim_charts::violations_chart(dir, "violations", &format!("{name}: safety violations"), &algs)
        .map_err(chart_error)?;
    sections.push(section(
        &f,
        "Safety violations",
        "Fraction of runs with each violation, with 95% Wilson intervals; a model with no fencing \
         token is marked as such, not as zero.",
    )?);
    let f = locksim_charts::cost_chart(dir, "cost", &format!("{name}: cost"), &algs).map_err(chart_error)?;
    sections.push(section(
        &f,
        "Cost",
        "Messages per successful acquisition, and watch or pub/sub wake-ups per release (the herd effect).",
    )?);
    let mut notes = Vec::new();
    let mut drawn_seed = None;
    let mut explained = Vec::new();
    // Both timelines show the same seed of every row.
    let (seed, why) = timeline_seed(results, asked_seed);
    let labels: Vec<String> = results.algorithms.iter().map(|a| a.label.clone()).collect();
    // The histories the interactive timeline embeds: (label, seed, history, violations, why it
    // is there).
    let mut page_runs: Vec<PageRunSource> = Vec::new();
    let live_source = matches!(source, TimelineSource::Recorded(_));
    let mut given = None;
    match source {
        TimelineSource::Recordings(scenario, recordings) => {
            let mut read = Given::read(results, scenario, recordings);
            let told = std::mem::take(&mut read.told);
            let given = &*given.insert(read);
            let (rows, why_not) = explained::explain_rows(dir, results, scenario, told)?;
            explained = rows;
            notes.extend(why_not);
            // A row's overlaps link to its explanation when that is of the seed drawn.
            let link_of = |label: &str| {
                explained.iter().find(|e| e.label == label && e.seed == seed).map(|e| format!("#{}", e.anchor))
            };
            let chart = timeline::timeline_chart(scenario, &labels, seed, link_of, given);
            let f = locksim_charts::timeline_chart(dir, "timeline", &chart).map_err(chart_error)?;
            sections.push(section(
                &f,
                "Timeline",
                &format!(
                    "One run ({why}) of every algorithm on one time axis: a lane per client, waiting \
                     (light) and holding (solid); faults shaded; overlaps in red on the two clients' lanes \
                     (in a row whose first violation is explained below for this seed, each links there)."
                ),
            )?);
            drawn_seed = Some(seed);
            page_runs = given_runs(scenario, &labels, seed, &explained, given);
        }
        TimelineSource::Recorded(histories) => {
            notes.push(
                "Violations of a live run are not explained: the narrative reads a replayed run's trace, and a \
                 live run cannot be replayed."
                    .to_string(),
            );
            let chart = timeline::recorded_chart(&results.scenario, results.duration_ms, &labels, seed, histories);
            let f = locksim_charts::timeline_chart(dir, "timeline", &chart).map_err(chart_error)?;
            sections.push(section(
                &f,
                "Timeline",
                &format!(
                    "One live run ({why}) of every algorithm against the real servers, as recorded on this \
                     machine's monotonic clock: a lane per client, waiting (light) and holding (solid); faults \
                     shaded; overlaps in red on the two clients' lanes."
                ),
            )?);
            drawn_seed = Some(seed);
            page_runs = recorded_runs(&labels, seed, histories);
        }
        TimelineSource::Unavailable(why) => notes.push(format!("No timeline and no explanations: {why}.")),
    }
    let index = dir.join("index.html");
    let mut page = index_html(results, &sections, &explained, &notes);
    if !page_runs.is_empty() {
        let runs: Vec<(page_data::PageRun, String)> = page_runs
            .iter()
            .map(|(label, seed, history, violations, why)| {
                let explained = explained.iter().find(|e| &e.label == label && e.seed == *seed);
                let explain_command = (!live_source).then(|| {
                    crate::json::replay_command(&results.file, label, *seed)
                        .replacen("sim run ", "sim explain ", 1)
                        .replace(" --trace", " --index {index}")
                });
                let run = page_data::PageRun { label, seed: *seed, history, violations, explained, explain_command };
                (run, why.clone())
            })
            .collect();
        page = explorer::insert(page, &explorer::section(&runs));
    }
    write_file(&index, &page)?;
    Ok(ReportWritten { index, timeline_seed: drawn_seed })
}

/// A run the interactive timeline embeds: (label, seed, history, violations, why it is there).
type PageRunSource<'a> = (String, u64, &'a History, &'a [Violation], String);

/// The runs a simulated report's interactive timeline shows, from the recordings `given`: every
/// row at the timeline's `seed`, then each row's explained failing seed. A row whose seed
/// panicked is left out (the static timeline says so).
fn given_runs<'a>(
    scenario: &Scenario,
    labels: &[String],
    seed: u64,
    explained: &[explained::RowExplanation],
    given: &'a Given,
) -> Vec<PageRunSource<'a>> {
    let mut shown: Vec<(String, u64, String)> =
        labels.iter().map(|l| (l.clone(), seed, "the static timeline's seed".to_string())).collect();
    for e in explained.iter().filter(|e| e.seed != seed) {
        shown.push((e.label.clone(), e.seed, "its first failing seed, explained".to_string()));
    }
    shown
        .into_iter()
        .filter_map(|(label, seed, why)| {
            scenario.runs.iter().find(|r| r.label == label)?;
            let run = given.run(&label, seed)?.as_ref().ok()?;
            Some((label, seed, &run.history, run.violations.as_slice(), why))
        })
        .collect()
}

/// The runs a live report's interactive timeline shows: every history recorded, rows in
/// `labels` order, the timeline's `seed` first.
fn recorded_runs<'a>(labels: &[String], seed: u64, histories: &'a [RecordedHistory]) -> Vec<PageRunSource<'a>> {
    let mut out = Vec::new();
    for label in labels {
        let mut mine: Vec<&RecordedHistory> = histories.iter().filter(|r| &r.label == label).collect();
        mine.sort_by_key(|r| (r.seed != seed, r.seed));
        for r in mine {
            let why = if r.seed == seed { "the static timeline's seed" } else { "recorded" };
            out.push((r.label.clone(), r.seed, &r.history, r.violations.as_slice(), why.to_string()));
        }
    }
    out
}

/// ` (timeline: seed S)` for the line that says where the report went.
pub fn timeline_note(seed: Option<u64>) -> String {
    seed.map_or(String::new(), |s| format!(" (timeline: seed {s})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::tests::{clean, failing};
    use crate::aggregate::AlgorithmTotals;

    fn row(label: &str, failing_seeds: &[u64]) -> AlgorithmTotals {
        let mut totals = AlgorithmTotals::new(label, "db", serde_json::json!({}), true);
        for seed in 0..6 {
            totals.add(&if failing_seeds.contains(&seed) { failing(seed, true) } else { clean(seed, true) });
        }
        totals
    }

    /// What a simulated report asks its caller to record: each row's first failing seed with its
    /// trace (explained), then every row at the timeline's seed without one, each seed once.
    #[test]
    fn a_report_wants_each_rows_first_failing_seed_traced_and_every_row_at_the_timeline_seed() {
        let rows = [row("db", &[3, 5]), row("zk", &[1]), row("etcd", &[])];
        let results = ResultsJson::new("s", "s.toml", 1.0, 0..6, &rows, vec![]);
        let named = |wanted: Vec<Wanted>| -> Vec<(String, u64, bool)> {
            wanted.into_iter().map(|w| (w.label, w.seed, w.trace)).collect()
        };
        let want = |l: &str, s, t| (l.to_string(), s, t);
        // The timeline shows seed 1, zk's first failure: its traced recording serves both.
        assert_eq!(
            named(wanted(&results, None)),
            [want("db", 3, true), want("zk", 1, true), want("db", 1, false), want("etcd", 1, false)]
        );
        assert_eq!(
            named(wanted(&results, Some(3))),
            [want("db", 3, true), want("zk", 1, true), want("zk", 3, false), want("etcd", 3, false)]
        );
        let clean_rows = [row("etcd", &[])];
        let clean_results = ResultsJson::new("s", "s.toml", 1.0, 2..6, &clean_rows, vec![]);
        assert_eq!(named(wanted(&clean_results, None)), [want("etcd", 2, false)], "no failure: the first seed run");
    }
}
