//! The recordings a simulated report is given ([`Recording`]s of the seeds [`super::wanted`]
//! names), read once in the order they come: each row's explained seed is told as it arrives and
//! its trace (by far the largest part of a recording) dropped at once, so that one trace at a
//! time is held; every history is kept, with its first violations, for the two timelines.

use locksim_simulator::checker::Violation;
use locksim_simulator::history::History;
use locksim_simulator::outcome::SeedOutcome;
use locksim_simulator::scenario::Scenario;

use crate::explain::{explain, ExplainError, Explanation};
use crate::json::ResultsJson;
use crate::recording::{Recording, VIOLATIONS_KEPT};

/// One recorded run, its trace dropped.
pub struct KeptRun {
    /// What it recorded.
    pub history: History,
    /// The first [`VIOLATIONS_KEPT`] violations the caller's check found, in true-time order.
    pub violations: Vec<Violation>,
}

/// What a simulated report was given, once read.
pub struct Given {
    /// Every recording as `(label, seed, run or the message of its panic)`, in the order given.
    runs: Vec<(String, u64, Result<KeptRun, String>)>,
    /// Each row's first violation of its first failing seed, told (or why not), by row, in the
    /// order given.
    pub told: Vec<(String, Result<Explanation, ExplainError>)>,
}

impl Given {
    /// Reads `recordings`, telling the first violation of each row's first failing seed (per
    /// `results`) as its recording comes.
    pub fn read(results: &ResultsJson, scenario: &Scenario, recordings: impl Iterator<Item = Recording>) -> Given {
        let mut given = Given { runs: Vec::new(), told: Vec::new() };
        for recording in recordings {
            let explained = results
                .algorithms
                .iter()
                .any(|a| a.label == recording.label && a.failing_seeds.first() == Some(&recording.seed));
            if explained {
                given.told.push((recording.label.clone(), explain(scenario, &recording, 0)));
            }
            let Recording { label, seed, outcome } = recording;
            let kept = outcome.map(|SeedOutcome { history, mut metrics, .. }| {
                let mut violations = std::mem::take(&mut metrics.violations);
                violations.truncate(VIOLATIONS_KEPT);
                KeptRun { history, violations }
            });
            given.runs.push((label, seed, kept));
        }
        given
    }

    /// `label`'s `seed` as given, if it was.
    pub fn run(&self, label: &str, seed: u64) -> Option<&Result<KeptRun, String>> {
        self.runs.iter().find(|(l, s, _)| l == label && *s == seed).map(|(_, _, run)| run)
    }
}
