//! Explaining a violation (`sim explain`, the report's per-row explanation, `sim shrink`'s
//! final scenario): one seed of one row as the campaign recorded it with its trace (this crate
//! runs no seed: it is given the recorded, checked seed, a [`Recording`]), the violation found again
//! in the history with its two parties, and told two ways: a numbered narrative of plain
//! sentences and a space-time diagram. Every number in either comes from the recorded history or
//! trace.
//!
//! - `fmt`: how times are written (`42 001.394 ms`)
//! - [`incident`]: a checker violation as structured facts (the two holds or writes involved)
//! - `recorded`: the trace read back as typed facts (messages, notes, resumes, clock readings)
//! - [`story`]: the facts told, in time order, each with its sentence and its diagram label
//! - `diagram`: the space-time diagram's lanes, shown and elided stretches, arrows and marks

mod diagram;
mod fmt;
pub mod incident;
mod recorded;
pub mod story;

use std::path::Path;

use locksim_charts::{ChartError, ChartFiles, SpacetimeChart};
use locksim_simulator::checker::{Timeline, Violation};
use locksim_simulator::history::History;
use locksim_simulator::scenario::{Scenario, UnknownLabel};
use locksim_simulator::trace::Trace;

use crate::recording::Recording;

pub use fmt::{fmt_ms, ms_number};
pub use incident::{Incident, Parties};
pub use story::{Fact, FactKind};

/// Why a violation cannot be explained.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The scenario has no row with this label.
    #[error(transparent)]
    NoSuchLabel(#[from] UnknownLabel),
    /// The seed ran clean: nothing to explain.
    #[error(
        "{label} seed {seed} of {file} has no violation to explain; `sim run {file} --algorithm {label}` lists the \
         failing seeds"
    )]
    NoViolation {
        /// The row.
        label: String,
        /// The seed.
        seed: u64,
        /// The scenario file.
        file: String,
    },
    /// `--index` is past the seed's violations.
    #[error("--index {index}: {label} seed {seed} has {count} violation(s); valid indexes: 0 to {last}")]
    NoSuchIndex {
        /// The index asked for.
        index: usize,
        /// The row.
        label: String,
        /// The seed.
        seed: u64,
        /// How many violations the seed has.
        count: usize,
        /// The last valid index.
        last: usize,
    },
    /// The model panicked in that seed.
    #[error("{label} seed {seed} panicked: {message}")]
    Panicked {
        /// The row.
        label: String,
        /// The seed.
        seed: u64,
        /// The panic message.
        message: String,
    },
}

/// A violation explained.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The row.
    pub label: String,
    /// The seed.
    pub seed: u64,
    /// Which of the seed's violations (0: the first in true time).
    pub index: usize,
    /// How many violations the seed has.
    pub count: usize,
    /// The violation and its parties.
    pub incident: Incident,
    /// What is told, in time order.
    pub facts: Vec<Fact>,
    /// The narrative: numbered sentences.
    pub narrative: Vec<String>,
    /// The space-time diagram's data.
    pub diagram: SpacetimeChart,
}

/// Explains violation `index` (0: the first) of the seed `recording` holds, a seed of a row of
/// `scenario` recorded with its trace (every violation kept) by the caller.
pub fn explain(scenario: &Scenario, recording: &Recording, index: usize) -> Result<Explanation, ExplainError> {
    let Recording { label, seed, outcome } = recording;
    let outcome = outcome.as_ref().map_err(|message| ExplainError::Panicked {
        label: label.clone(),
        seed: *seed,
        message: message.clone(),
    })?;
    let untraced = Trace::default();
    let trace = outcome.trace.as_ref().unwrap_or(&untraced);
    explain_outcome(label, *seed, index, &outcome.history, trace, &outcome.metrics.violations).map_err(|e| match e {
        ExplainError::NoViolation { label, seed, .. } => {
            ExplainError::NoViolation { label, seed, file: scenario.file.display().to_string() }
        }
        other => other,
    })
}

/// Explains violation `index` of a run already made with its trace (`violations` as the checker
/// listed them, in true-time order).
pub fn explain_outcome(
    label: &str,
    seed: u64,
    index: usize,
    history: &History,
    trace: &Trace,
    violations: &[Violation],
) -> Result<Explanation, ExplainError> {
    let count = violations.len();
    if count == 0 {
        return Err(ExplainError::NoViolation { label: label.to_string(), seed, file: String::new() });
    }
    let Some(incident) = incident::locate(history, violations, index) else {
        return Err(ExplainError::NoSuchIndex { index, label: label.to_string(), seed, count, last: count - 1 });
    };
    let start_ns = incident.start_ns(&Timeline::from_history(history));
    let facts = story::StoryInput { history, trace, incident: &incident, start_ns }.facts();
    let narrative = story::sentences(&facts);
    let parties: Vec<String> = incident.clients().iter().map(|&c| history.client_name(c)).collect();
    let title = format!(
        "{label}, seed {seed}: {} at {} (violation {} of {count})",
        incident.violation.kind,
        fmt_ms(incident.violation.at_ns),
        index + 1
    );
    let diagram = diagram::build(title, history, trace, &facts, &parties);
    Ok(Explanation { label: label.to_string(), seed, index, count, incident, facts, narrative, diagram })
}

/// A row label as a file-name and anchor part: anything but ASCII letters, digits, `-` and `_`
/// becomes `_` (the scenario parser refuses two labels that give one part).
pub fn file_part(label: &str) -> String {
    locksim_simulator::scenario::file_names::label_file_part(label)
}

/// Writes the explanation's diagram to `DIR/NAME.svg` and `DIR/NAME.png`.
pub fn write_diagram(dir: &Path, name: &str, e: &Explanation) -> Result<ChartFiles, ChartError> {
    locksim_charts::spacetime_chart(dir, name, &e.diagram)
}
