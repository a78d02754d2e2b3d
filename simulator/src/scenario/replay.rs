//! `[replay]`: a recorded path of choices a run follows exactly, as `sim exhaust` writes one for a
//! counterexample: `events`, the event of each step by key, and `delays_ms`, each message's
//! latency in order (docs/exhaustive.md). The keys are checked when the run follows them (a key
//! no due event has ends the following there, and the trace says so), not here.

use crate::scenario::walk::{Res, Source, Tab};
use crate::setup::ReplaySpec;
use crate::time::MAX_TIME_MS;

const KEYS: &[&str] = &["events", "delays_ms"];

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
    if let Some(n) = tab.get("delays_ms") {
        let expected = "a latency in milliseconds, at least 0 and at most 1e12";
        for item in n.as_array(src, "an array of latencies in milliseconds")? {
            let v = item.as_number(src, expected)?;
            if !(0.0..=MAX_TIME_MS).contains(&v) {
                return Err(item.err(src, format!("expected {expected}, found {}", crate::scenario::show_number(v))));
            }
            spec.delays_ms.push(v);
        }
    }
    Ok(Some(spec))
}
