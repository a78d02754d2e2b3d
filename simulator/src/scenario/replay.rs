//! `[replay]`: a recorded path of choices a run follows exactly, as `sim exhaust` writes one for a
//! counterexample: `events`, the event of each step by key, `delays_ms`, each message's latency
//! in order, and `hold_ms` / `think_ms`, each hold and think time the workload needs, in order
//! (docs/exhaustive.md). The keys are checked when the run follows them (a key
//! no due event has ends the following there, and the trace says so), not here.

use crate::scenario::walk::{Res, Source, Tab};
use crate::setup::ReplaySpec;
use crate::time::MAX_TIME_MS;

const KEYS: &[&str] = &["events", "delays_ms", "hold_ms", "think_ms"];

/// Reads `[replay]`; `None` when the file has no such table.
pub(crate) fn replay(src: &Source, root: &Tab) -> Res<Option<ReplaySpec>> {
    let Some(node) = root.get("replay") else {
        return Ok(None);
    };
    let tab = node.as_table(src, &format!("a [replay] table with keys {}", KEYS.join(", ")))?;
    tab.check_keys(src, KEYS)?;
    let mut spec = ReplaySpec::default();
    if let Some(n) = tab.get("events") {
        for item in n.as_array(src, "an array of event keys (strings such as \"deliver server-0 -> client-1\")")? {
            spec.events.push(
                item.as_str(src, "an event key (a string such as \"timer client-0 workload Think\")")?.to_string(),
            );
        }
    }
    spec.delays_ms = times(src, &tab, "delays_ms", ("latencies", "a latency"))?;
    spec.hold_ms = times(src, &tab, "hold_ms", ("hold times", "a hold time"))?;
    spec.think_ms = times(src, &tab, "think_ms", ("think times", "a think time"))?;
    Ok(Some(spec))
}

/// The list of times `key` (`plural` and `one`, what they are in words), each in [0, 1e12] ms;
/// empty when absent.
fn times(src: &Source, tab: &Tab, key: &str, (plural, one): (&str, &str)) -> Res<Vec<f64>> {
    let Some(n) = tab.get(key) else {
        return Ok(Vec::new());
    };
    let expected = format!("{one} in milliseconds, at least 0 and at most 1e12");
    let mut out = Vec::new();
    for item in n.as_array(src, &format!("an array of {plural} in milliseconds"))? {
        let v = item.as_number(src, &expected)?;
        if !(0.0..=MAX_TIME_MS).contains(&v) {
            return Err(item.err(src, format!("expected {expected}, found {}", crate::scenario::show_number(v))));
        }
        out.push(v);
    }
    Ok(out)
}
