//! `[explore]`: the bounds `sim explore` draws its extra fault schedules within (which fault kinds,
//! how many faults, how long, which targets, how far a clock may step or drift). Every key has a
//! default, so a scenario without the table can be explored too; `sim run` ignores the table.

use crate::scenario::nodes::{selector, Mentions};
use crate::scenario::types::{ExploreSpec, FAULT_KINDS};
use crate::scenario::values::{fraction, int_in, number_in};
use crate::scenario::walk::{quote, Res, Source, Tab};
use crate::setup::Selector;

const KEYS: &[&str] = &[
    "kinds",
    "max_faults",
    "max_duration_ms",
    "targets",
    "max_jump_ms",
    "max_drift_ppm",
    "max_latency_ms",
    "max_loss",
];

/// Fault kinds `sim explore` can draw: every kind but `partition`, whose groups a random draw
/// cannot choose sensibly (`isolate` cuts a target off instead).
pub const EXPLORE_KINDS: &[&str] = &["crash", "pause", "isolate", "clock_jump", "clock_drift", "slow", "loss"];

/// The default targets: every role and random pick, so a schedule never names a node that one
/// row lacks.
pub const DEFAULT_TARGETS: &[&str] = &["leader", "follower", "holder", "waiter", "random-client", "random-server"];

/// Reads `[explore]`; `None` when the file has no such table. `duration_ms` bounds the defaults.
pub(crate) fn explore(src: &Source, root: &Tab, duration_ms: f64, mentions: &mut Mentions) -> Res<Option<ExploreSpec>> {
    let Some(node) = root.get("explore") else {
        return Ok(None);
    };
    let tab = node.as_table(src, &format!("an [explore] table with keys {}", KEYS.join(", ")))?;
    tab.check_keys(src, KEYS)?;
    let mut spec = ExploreSpec::defaults(duration_ms);
    if let Some(n) = tab.get("kinds") {
        let valid = EXPLORE_KINDS.join(", ");
        let items = n.as_array(src, &format!("an array of fault kinds ({valid})"))?;
        if items.is_empty() {
            return Err(n.err(src, format!("expected at least one fault kind ({valid}), found an empty array")));
        }
        let mut kinds = Vec::new();
        for item in &items {
            let kind = item.as_str(src, &format!("a fault kind ({valid})"))?;
            let Some(known) = EXPLORE_KINDS.iter().find(|k| **k == kind) else {
                let why = if FAULT_KINDS.contains(&kind) {
                    format!("`{kind}` faults are not drawn by sim explore (use `isolate` to cut a node off)")
                } else {
                    format!("unknown fault kind {}", quote(kind))
                };
                return Err(item.err(src, format!("{why}; valid kinds here: {valid}")));
            };
            if !kinds.contains(known) {
                kinds.push(*known);
            }
        }
        spec.kinds = kinds;
    }
    if let Some(n) = tab.get("max_faults") {
        spec.max_faults = int_in(src, n, 1, 100)? as u32;
    }
    if let Some(n) = tab.get("max_duration_ms") {
        spec.max_duration_ms = number_in(src, n, 1.0, duration_ms)?;
    }
    if let Some(n) = tab.get("targets") {
        let items = n.as_array(src, "an array of selectors")?;
        if items.is_empty() {
            return Err(n.err(src, "expected at least one selector, found an empty array"));
        }
        spec.targets = items.iter().map(|i| selector(src, i, Some(&mut *mentions))).collect::<Res<Vec<_>>>()?;
    }
    if let Some(n) = tab.get("max_jump_ms") {
        spec.max_jump_ms = number_in(src, n, 0.0, 1e9)?;
    }
    if let Some(n) = tab.get("max_drift_ppm") {
        spec.max_drift_ppm = number_in(src, n, 0.0, 999_999.0)?;
    }
    if let Some(n) = tab.get("max_latency_ms") {
        spec.max_latency_ms = number_in(src, n, 0.0, 1e9)?;
    }
    if let Some(n) = tab.get("max_loss") {
        spec.max_loss = fraction(src, n)?;
    }
    Ok(Some(spec))
}

impl ExploreSpec {
    /// The bounds of a scenario without `[explore]` (or the keys it leaves out).
    pub fn defaults(duration_ms: f64) -> Self {
        ExploreSpec {
            kinds: EXPLORE_KINDS.to_vec(),
            max_faults: 3,
            max_duration_ms: (duration_ms / 4.0).max(1.0),
            targets: DEFAULT_TARGETS.iter().map(|t| Selector::parse(t).expect("a valid selector")).collect(),
            max_jump_ms: 30_000.0,
            max_drift_ppm: 500.0,
            max_latency_ms: 1_000.0,
            max_loss: 0.5,
        }
    }
}
