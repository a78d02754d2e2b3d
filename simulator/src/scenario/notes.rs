//! Notes about a valid scenario that may not do what its author meant, shown by `sim check` and
//! `sim run` (they do not stop a run): a fault that starts after the run ends never happens.

use crate::dist::Dist;
use crate::scenario::types::Scenario;
use crate::scenario::walk::show_number as num;

/// One note per fault whose start lies at or after the end of the run: always (it never
/// happens), or for a bounded distribution in some seeds, or for one with an unbounded tail
/// usually (its centre is past the end). Key paths are 0-based, as in error messages.
pub fn late_fault_notes(scenario: &Scenario) -> Vec<String> {
    let end_ms = scenario.setup.duration_ms;
    let mut notes = Vec::new();
    for (i, f) in scenario.setup.faults.iter().enumerate() {
        let at = &f.at_ms;
        let what = format!("fault `faults.{i}` ({}, at_ms = {at})", f.kind.name());
        let ends = format!("the run ends at duration_ms = {}", num(end_ms));
        let note = if at.min_value() >= end_ms {
            Some(format!("{what} starts at or after {ends}: it never happens"))
        } else if at.max_value().is_finite() && at.max_value() >= end_ms {
            Some(format!(
                "{what} can draw a start at or after {ends} (up to {}): in those seeds it does not happen",
                num(at.max_value())
            ))
        } else {
            let centre = match at {
                Dist::LogNormal { median, .. } => Some(("median", *median)),
                Dist::Exponential(mean) | Dist::Normal { mean, .. } => Some(("mean", *mean)),
                _ => None,
            };
            centre.filter(|(_, v)| *v >= end_ms).map(|(name, v)| {
                format!(
                    "{what} usually starts after {ends} (its {name} is {}): in most seeds it does not happen",
                    num(v)
                )
            })
        };
        notes.extend(note);
    }
    notes
}
