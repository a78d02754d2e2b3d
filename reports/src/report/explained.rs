//! Each row's first violation explained for the report page: the row's first failing seed as the
//! caller recorded it with its trace ([`super::given`] tells it), its first violation told as a
//! narrative, and its space-time diagram written beside the charts as `explain-LABEL.svg` and
//! `.png`.

use std::path::Path;

use locksim_charts::SpaceMessage;
use locksim_simulator::scenario::Scenario;

use crate::explain::{file_part, write_diagram, ExplainError, Explanation};
use crate::json::ResultsJson;

use super::ReportError;

/// One row's explained violation, ready for the page.
pub struct RowExplanation {
    /// The row.
    pub label: String,
    /// The page anchor (`explain-LABEL`), which the timeline's overlaps link to.
    pub anchor: String,
    /// The seed explained.
    pub seed: u64,
    /// The diagram's title (row, seed, violation, time).
    pub title: String,
    /// The narrative, one sentence per entry, numbers dropped (the page numbers them).
    pub sentences: Vec<String>,
    /// The diagram's SVG text.
    pub svg: String,
    /// The diagram's PNG (a file name in the report directory).
    pub png_name: String,
    /// The violation told: its kind and true time, so the page's interactive timeline can open
    /// this narrative beside the overlap or stale write it is about.
    pub violation: (String, u64),
    /// The messages the diagram draws (from its replay's trace), for the interactive timeline.
    pub messages: Vec<SpaceMessage>,
    /// The diagram's lane names, which `messages` index.
    pub lanes: Vec<String>,
}

/// The page anchor of a row's explanation.
pub fn anchor(label: &str) -> String {
    format!("explain-{}", file_part(label))
}

/// The first violation of every row with a failing seed, `told` (by row label, from the
/// recordings given), with its diagram written into `dir`. A row that cannot be explained (the
/// scenario no longer has it, its seed no longer fails, or panics) gets a note saying why instead.
pub fn explain_rows(
    dir: &Path,
    results: &ResultsJson,
    scenario: &Scenario,
    mut told: Vec<(String, Result<Explanation, ExplainError>)>,
) -> Result<(Vec<RowExplanation>, Vec<String>), ReportError> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for a in &results.algorithms {
        let Some(&seed) = a.failing_seeds.first() else { continue };
        let explanation = match told.iter().position(|(label, _)| *label == a.label).map(|at| told.swap_remove(at).1) {
            Some(Ok(e)) => Ok(e),
            Some(Err(why)) => Err(why.to_string()),
            // Not given: the scenario no longer has the row (or its caller left the seed out).
            None => Err(scenario.row_labelled(&a.label).map_or_else(
                |unknown| unknown.to_string(),
                |_| format!("seed {seed} was not recorded for the report"),
            )),
        };
        let e = match explanation {
            Ok(e) => e,
            Err(why) => {
                notes.push(format!("No explanation for {}: {why}.", a.label));
                continue;
            }
        };
        let anchor = anchor(&a.label);
        let files = write_diagram(dir, &anchor, &e)?;
        let svg = std::fs::read_to_string(&files.svg)
            .map_err(|err| ReportError::Io(format!("cannot read back {}: {err}", files.svg.display())))?;
        let sentences =
            e.narrative.iter().map(|s| s.split_once(". ").map_or(s.as_str(), |(_, rest)| rest).to_string()).collect();
        rows.push(RowExplanation {
            label: a.label.clone(),
            anchor: anchor.clone(),
            seed,
            title: e.diagram.title.clone(),
            sentences,
            svg,
            png_name: format!("{anchor}.png"),
            violation: (e.incident.violation.kind.to_string(), e.incident.violation.at_ns),
            messages: e.diagram.messages.clone(),
            lanes: e.diagram.lanes.clone(),
        });
    }
    Ok((rows, notes))
}
