//! What a shrunk scenario says about itself: a comment block at the top (where it came from,
//! the reduction in one line, the replay command, every edit kept, the witness's violation) and
//! the one-line summary (`clients 10 → 2, faults 3 → 1, duration 60 s → 6 s`).

use locksim_simulator::scenario::Scenario;

use crate::shrink::trial::{Target, Witness};
use crate::shrink::Request;

/// The sizes the summary line compares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    /// Rows (algorithms and variants).
    pub rows: usize,
    /// `[workload] clients`.
    pub clients: usize,
    /// `[[faults]]` entries.
    pub faults: usize,
    /// `duration_ms`.
    pub duration_ms: f64,
}

impl Size {
    /// The sizes of a parsed scenario.
    pub fn of(s: &Scenario) -> Self {
        Size {
            rows: s.runs.len(),
            clients: s.setup.workload.clients,
            faults: s.setup.faults.len(),
            duration_ms: s.setup.duration_ms,
        }
    }
}

/// A duration as people write it: `6 s`, `1.5 s`, `500 ms`.
pub fn human_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", trim(ms / 1000.0))
    } else {
        format!("{} ms", trim(ms))
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `clients 10 → 2, faults 3 → 1, duration 60 s → 6 s` (and `rows 3 → 1` when rows went).
pub fn summary(before: &Size, after: &Size) -> String {
    let mut parts = Vec::new();
    if before.rows != after.rows {
        parts.push(format!("rows {} → {}", before.rows, after.rows));
    }
    parts.push(format!("clients {} → {}", before.clients, after.clients));
    parts.push(format!("faults {} → {}", before.faults, after.faults));
    parts.push(format!("duration {} → {}", human_ms(before.duration_ms), human_ms(after.duration_ms)));
    parts.join(", ")
}

/// The comment block: every line starts with `#`, so the file stays the scenario it was.
pub fn render(
    req: &Request,
    target: &Target,
    witness: &Witness,
    summary: &str,
    steps: &[String],
    cut_short: bool,
) -> String {
    let mut lines = vec![
        format!(
            "Shrunk by `sim shrink` from {}, row {}, seed {}: {} on seed {}.",
            req.file,
            req.label,
            req.seed,
            target.still(),
            witness.seed
        ),
        format!("Reduction: {summary}."),
        format!("Replay: sim run {} --algorithm {} --seed {} --trace", req.out_file, req.label, witness.seed),
    ];
    if cut_short {
        lines.push("Cut short (budget spent or interrupted): a longer shrink may go further.".to_string());
    }
    if !witness.detail.is_empty() {
        let first = match target {
            Target::Violation(kind) => format!("First {kind}"),
            Target::Expect(_) => "Judged alone,".to_string(),
        };
        lines.push(format!("{first} on seed {}: {}", witness.seed, witness.detail));
    }
    lines.push("What was removed or simplified, in order:".to_string());
    lines.extend(steps.iter().map(|s| format!("  - {s}")));
    let mut out: String = lines.iter().map(|l| format!("# {l}\n")).collect();
    out.push('\n');
    out
}
