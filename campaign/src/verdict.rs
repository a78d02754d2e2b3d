//! A campaign's outcome judged: the scenario's `[expect]` blocks about the rows that ran, and
//! the class of the whole result, which the binary maps to its exit code.

use locksim_reports::num::count;
use locksim_reports::{evaluate_at_fewer_seeds, ExpectationResult};
use locksim_simulator::scenario::Scenario;

use crate::rows::Outcome;

/// What a campaign's result amounts to, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Stopped early: the results cover the seeds finished, and nothing else is claimed.
    Interrupted,
    /// A seed panicked or was stuck, or `--verify` found a seed that ran differently twice.
    ModelFailed,
    /// An expectation did not hold.
    ExpectationFailed,
    /// Every expectation judged held.
    Passed,
}

/// An outcome judged against its scenario's expectations.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// Every expectation judged, in the scenario's order.
    pub expectations: Vec<ExpectationResult>,
    /// Expectations not judged because their rows never started (after a stop).
    pub unstarted: usize,
    /// The result's class.
    pub class: Class,
}

impl Outcome {
    /// Judges `scenario`'s expectations on these totals. Expectations about rows filtered out by
    /// `algorithms` (empty: none filtered) are not judged, nor, after a stop, those about rows
    /// that never started (nothing ran that could hold or break them).
    pub fn judge(&self, scenario: &Scenario, algorithms: &[String]) -> Verdict {
        let started = |label: &str| self.totals.iter().any(|t| t.label == label && t.runs + t.panicked_runs > 0);
        let (judged, unstarted): (Vec<_>, Vec<_>) = scenario
            .expect
            .iter()
            .filter(|e| algorithms.is_empty() || algorithms.contains(&e.label))
            .cloned()
            .partition(|e| !self.interrupted || started(&e.label));
        // Fewer seeds than the file's (a quick look): only what those seeds decide is judged.
        let expectations = evaluate_at_fewer_seeds(&judged, &self.totals, scenario.seeds);
        let class = if self.interrupted {
            Class::Interrupted
        } else if self.panicked() || !self.differences.is_empty() {
            Class::ModelFailed
        } else if expectations.iter().any(|e| !e.ok) {
            Class::ExpectationFailed
        } else {
            Class::Passed
        };
        Verdict { expectations, unstarted: unstarted.len(), class }
    }

    /// The `--verify` verdict as printed: every seed whose two runs differed, with the first
    /// differing trace entry.
    pub fn verify_text(&self) -> String {
        let finished = self.finished;
        if self.differences.is_empty() {
            let all = if finished == 1 {
                "the 1 seed-run gave".to_string()
            } else {
                format!("all {finished} seed-runs gave")
            };
            return format!("\nverify: {all} the same trace twice\n");
        }
        let mut out = format!(
            "\nverify FAILED: {} of {} gave a different trace the second time\n",
            self.differences.len(),
            count(finished, "seed-run")
        );
        for (label, d) in &self.differences {
            out.push_str(&format!(
                "  {label} seed {}: trace hashes {:016x} vs {:016x}; first difference at entry {}:\n    first:  {}\n    second: {}\n",
                d.seed,
                d.first_hash,
                d.second_hash,
                d.index,
                d.first.as_deref().unwrap_or("(trace ended)"),
                d.second.as_deref().unwrap_or("(trace ended)"),
            ));
        }
        out
    }
}
